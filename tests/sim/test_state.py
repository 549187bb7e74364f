"""The Runner as mujoco_ros2_control's container (issue 34 item 4): whole-state snapshots
that restore bit for bit, qfrc_applied staged through the controller and held, and whole
MjData copies and overwrites under the step lock, checked against MuJoCo itself."""

from __future__ import annotations

import re
from pathlib import Path

import mujoco
import numpy as np
import pytest

from arena_gym import Simulation
from arena_gym.scene.requests import Prim
from arena_gym.sim.state import COMPONENTS
from tests.waiting import wait_until

MJCF = Path(__file__).resolve().parents[1] / "scene" / "mjcf"
BOX = """<mujoco><option timestep="0.01"/>
  <worldbody><body name="box" pos="0 0 1"><freejoint name="free"/>
    <geom type="box" size="0.1 0.1 0.1" mass="2"/></body></worldbody></mujoco>"""


@pytest.fixture
def legs():
    """Two envs of a quadruped landing on the floor: contacts, so warmstart matters."""
    with Simulation(model_path=MJCF / "quadruped.xml", num_envs=2) as sim:
        yield sim


def _whole(sim: Simulation, env: int) -> bytes:
    """Env's whole integration state, by MuJoCo's own mj_getState on its MjData."""
    scene = sim.store.scene(env)
    state = np.empty(mujoco.mj_stateSize(scene.model, mujoco.mjtState.mjSTATE_INTEGRATION))
    mujoco.mj_getState(scene.model, scene.data, state, mujoco.mjtState.mjSTATE_INTEGRATION)
    return state.tobytes()


def test_a_snapshot_holds_every_component_as_mujoco_reads_it(legs):
    legs.step(37)
    snap = legs.runner.snapshot(1)
    data, model = legs.store[1].data, legs.store[1].model
    assert [name for name, _ in snap.sizes] == [name for name, _ in COMPONENTS]
    assert snap.values.size == mujoco.mj_stateSize(model, mujoco.mjtState.mjSTATE_INTEGRATION)
    assert snap.values.tobytes() == _whole(legs, 1)
    for name in ("qpos", "qvel", "act", "qacc_warmstart", "ctrl", "qfrc_applied",
                 "xfrc_applied", "mocap_pos", "mocap_quat"):
        assert snap.field(name).tobytes() == getattr(data, name).tobytes(), name
    assert snap.field("time")[0] == data.time and np.abs(snap.field("qacc_warmstart")).sum() > 0
    assert (snap.env, snap.step_count) == (1, 37)
    with pytest.raises(ValueError, match="read-only"):
        snap.field("qpos")[0] = 1.0
    with pytest.raises(KeyError, match=re.escape("state snapshot field: expected one of "
                                                 "['time', 'qpos', ")):
        snap.field("xpos")


def test_a_restored_snapshot_gives_the_same_next_steps_bit_for_bit(legs):
    for env in range(2):
        legs.simulator.set_ctrl(env, "model/fl_knee", 0.6)
    legs.step(37)  # mid-tick, feet in contact by now
    snap = legs.runner.snapshot(0)
    legs.step(23)
    after = _whole(legs, 0)
    legs.runner.restore(snap)
    assert _whole(legs, 0) == snap.values.tobytes()
    legs.step(23)
    assert _whole(legs, 0) == after


def test_a_snapshot_of_an_older_model_or_no_snapshot_is_refused(legs):
    snap = legs.runner.snapshot(1)
    legs.store[1].spawn_prims([Prim("late", pose=(2.0, 2.0, 0.2, 0.0))])
    legs.step(10)
    now = _whole(legs, 1)
    with pytest.raises(ValueError, match=re.escape(
            "snapshot of env 1: expected the model it was captured with (compile 2), got "
            "compile 3 (something was spawned or deleted since); capture it again")):
        legs.runner.restore(snap)
    with pytest.raises(ValueError, match=re.escape(
            "restore: expected a StateSnapshot from runner.snapshot(env), got dict")):
        legs.runner.restore({"qpos": [0.0]})  # type: ignore[arg-type]
    assert _whole(legs, 1) == now


def test_a_staged_generalised_force_moves_a_free_body_by_the_closed_form_amount(tmp_path):
    (tmp_path / "box.xml").write_text(BOX)
    with Simulation(model_path=tmp_path / "box.xml", num_envs=2,
                    options={"gravity": "0 0 0"}) as sim:
        model = sim.store[0].model
        dof = int(model.joint("env_0/model/free").dofadr[0])  # x of the free joint
        force, mass, dt, n = 3.0, 2.0, 0.01, 100
        qfrc = np.zeros(model.nv)
        qfrc[dof] = force
        sim.runner.stage_qfrc_applied(0, qfrc)
        x0 = [sim.store[e].data.qpos[0] for e in range(2)]
        sim.step(n)  # written before the first step, held for every one after
        a, t = force / mass, n * dt
        x = sim.store[0].data.qpos[0] - x0[0]
        # MuJoCo's semi-implicit Euler: v_k = k a dt, x_n = a dt^2 n (n + 1) / 2, which is
        # the closed form a t^2 / 2 to within a dt t / 2
        assert x == pytest.approx(a * dt * dt * n * (n + 1) / 2, rel=1e-9)
        assert x == pytest.approx(a * t * t / 2, abs=a * dt * t / 2 + 1e-12)
        assert sim.store[0].data.qvel[0] == pytest.approx(a * t, rel=1e-9)
        assert sim.store[0].data.qfrc_applied.tolist() == qfrc.tolist()
        assert sim.store[1].data.qpos[0] == x0[1]  # only env 0's was staged
        sim.runner.stage_qfrc_applied(0, np.zeros(model.nv))  # zeros stop pushing
        sim.step(n)
        assert sim.store[0].data.qvel[0] == pytest.approx(a * t, rel=1e-9)  # coasts
        with pytest.raises(ValueError, match=re.escape(
                "qfrc_applied of env 1: expected 6 finite numbers (one per dof), got (3,)")):
            sim.runner.stage_qfrc_applied(1, [1.0, 2.0, 3.0])
        with pytest.raises(ValueError, match=re.escape(
                "qfrc_applied of env 1: expected 6 finite numbers (one per dof), got "
                "[nan, 0, 0, 0, 0, 0]")):
            sim.runner.stage_qfrc_applied(1, [float("nan"), 0, 0, 0, 0, 0])
        sim.step(10)
        assert sim.store[1].data.qpos[0] == x0[1]  # nothing was staged


def test_a_copied_data_overwrites_an_env_and_the_run_continues_from_it(legs):
    legs.step(50)
    copied = legs.runner.copy_data(0)
    assert isinstance(copied, mujoco.MjData) and copied.time == legs.store[0].data.time
    assert copied.qpos.tobytes() == legs.store[0].data.qpos.tobytes()
    legs.step(20)
    after = _whole(legs, 0)
    legs.runner.overwrite_data(0, copied)
    legs.step(20)
    assert _whole(legs, 0) == after  # the same 20 steps again, bit for bit
    legs.runner.overwrite_data(1, legs.runner.copy_data(0))  # env 1 becomes env 0
    assert _whole(legs, 1) == _whole(legs, 0)


def test_an_mjdata_that_does_not_fit_is_named_and_changes_nothing(legs):
    legs.step(10)
    before = _whole(legs, 0)
    pendulum = mujoco.MjModel.from_xml_string(
        '<mujoco><worldbody><body><joint name="j"/><geom size="0.1"/></body></worldbody>'
        '</mujoco>')
    nq = legs.store[0].model.nq
    with pytest.raises(ValueError, match=re.escape(
            f"overwrite_data: qpos: expected shape ({nq},) (env 0's model), got (1,)")):
        legs.runner.overwrite_data(0, mujoco.MjData(pendulum))
    with pytest.raises(ValueError, match=re.escape(
            "overwrite_data: expected a mujoco.MjData of env 0's model, got ndarray")):
        legs.runner.overwrite_data(0, np.zeros(3))  # type: ignore[arg-type]
    assert _whole(legs, 0) == before


def test_copies_taken_while_the_loop_runs_are_whole_ticks(legs):
    legs.settings.rt_factor = 0.0
    legs.start()
    tick = legs.simulator.tick_steps * legs.runtime_options.timestep
    times = []

    def copied() -> bool:
        times.append(legs.runner.copy_data(0).time)
        return len(set(times)) >= 5

    wait_until(copied, 60, "five copies at different ticks")
    legs.pause()
    for t in times:  # taken under the step lock: never inside a tick
        assert t / tick == pytest.approx(round(t / tick), abs=1e-6)
