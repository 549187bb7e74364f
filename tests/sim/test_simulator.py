"""Lockstep stepping: grouping, ticks and hooks, determinism, control, runtime options."""

from __future__ import annotations

import math
import re
import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena_gym.scene import Prim, SceneStore
from arena_gym.sim import Runner, Simulator
from arena_gym.worlds.default import builtin_robot_urdf
from tests.conftest import snapshot, spawn


def _world(assets, n, extra_box_env=None):
    store = SceneStore(n)
    for env in range(n):
        spawn(store, env, assets, "burger", pose=(0, 0, 0.1 * env))
        store[env].spawn_prims([Prim(f"box{i}", pose=(1.5, i - 1.0, 0.2, 0), scale=(0.4,) * 3)
                                for i in range(3)])
    if extra_box_env is not None:
        store[extra_box_env].spawn_prims([Prim("extra", pose=(-2, 0, 0.2, 0))])
    return store


def test_same_layouts_share_a_batch_and_odd_ones_go_to_the_pool(assets):
    store = _world(assets, 4, extra_box_env=2)
    sim = Simulator(store)
    assert sim.groups() == [("batch", [0, 1, 3]), ("pool", [2])]
    store[2].delete(["extra"])
    assert sim.groups() == [("batch", [0, 1, 2, 3])]  # regrouped after the recompile


def test_batched_and_pooled_envs_step_bit_identically(assets):
    """Env 0 in a Batch and a lone env on its own MjData follow the same trajectory."""
    batched = _world(assets, 3)
    single = _world(assets, 1)
    sims = Simulator(batched), Simulator(single)
    for sim in sims:
        sim.set_cmd_vel(0, "burger", 0.2, 0.7)
    for sim in sims:
        sim.step(300)
    a, b = batched[0].data, single[0].data
    assert a.time == b.time == pytest.approx(0.6)
    assert a.qpos.tobytes() == b.qpos.tobytes()
    assert a.qvel.tobytes() == b.qvel.tobytes()


def test_ticks_run_hooks_at_every_tenth_step(assets):
    store = _world(assets, 2)
    sim = Simulator(store)
    seen = []
    sim.hooks.tick.append(lambda s: seen.append((s.step_count, round(s.clock, 6))))
    sim.step(25)
    sim.step(5)
    assert seen == [(10, 0.02), (20, 0.04), (30, 0.06)]
    assert sim.step_count == 30
    assert store[1].data.time == pytest.approx(0.06)


def test_data_read_after_step_is_current_and_writes_are_stepped_from(assets):
    store = _world(assets, 2)
    sim = Simulator(store)
    sim.step(10)
    data = store[1].data
    assert data.time == pytest.approx(0.02)
    data.qpos[0] += 1.0  # teleport the robot of env 1 by hand
    sim.step(10)
    pos, _ = store[1].get_pose("burger")
    assert pos[0] == pytest.approx(1.0, abs=1e-3)
    assert store[0].get_pose("burger")[0][0] == pytest.approx(0.0, abs=1e-3)


def test_cmd_vel_turns_in_place(assets):
    store = _world(assets, 1)
    sim = Simulator(store)
    sim.set_cmd_vel(0, "burger", 0.0, 1.0)
    sim.step(round(math.pi / 2 / 0.002))
    sim.set_cmd_vel(0, "burger", 0.0, 0.0)
    sim.step(100)
    pos, quat = store[0].get_pose("burger")
    yaw = math.degrees(2 * math.atan2(quat[3], quat[0]))
    assert yaw == pytest.approx(90.0, abs=5.0)
    assert np.linalg.norm(pos[:2]) < 0.03


def test_bad_commands_are_rejected_before_anything_steps(assets):
    store = _world(assets, 1)
    sim = Simulator(store)
    with pytest.raises(ValueError, match=re.escape(
            "cmd_vel for 'burger': expected finite numbers, got (nan, 0.0)")):
        sim.set_cmd_vel(0, "burger", float("nan"), 0.0)
    with pytest.raises(ValueError, match=re.escape(
            "vy=0.1 but the robot is not holonomic; expected (v, omega)")):
        sim.set_cmd_vel(0, "burger", 0.1, 0.1, 0.0)
    with pytest.raises(KeyError, match="unknown entity in env 0 'burgr'; did you mean 'burger'"):
        sim.set_cmd_vel(0, "burgr", 0.1, 0.0)
    with pytest.raises(ValueError, match=re.escape(
            "n: expected an integer number of steps >= 0, got -1")):
        sim.step(-1)


def test_joint_servo_commands(assets):
    store = SceneStore(1)
    spawn(store, 0, assets, "ridgeback")
    sim = Simulator(store)
    sim.apply_runtime_options({"gravity": [0, 0, 0]})  # wheels off the hook: the rocker is free
    sim.set_joint_position(0, "ridgeback/front_rocker", 0.05)
    sim.step(500)
    model, data = store[0].model, store[0].data
    rocker = model.joint("env_0/ridgeback/front_rocker").qposadr[0]
    assert data.qpos[rocker] == pytest.approx(0.05, abs=0.03)
    with pytest.raises(KeyError, match="unknown position-servoed joint in env 0 "
                                       "'env_0/ridgeback/front_rockr'"):
        sim.set_joint_position(0, "ridgeback/front_rockr", 0.0)


def test_a_joint_command_with_one_bad_entry_stages_none_of_it(assets):
    store = SceneStore(1)
    spawn(store, 0, assets, "ridgeback")
    sim = Simulator(store)
    sim.apply_runtime_options({"gravity": [0, 0, 0]})
    ctrl = store[0].data.ctrl.copy()
    good = ("ridgeback/front_rocker", 0.05)
    with pytest.raises(KeyError, match=re.escape(
            "unknown position-servoed joint in env 0 'env_0/ridgeback/front_rockr'")):
        sim.set_joints(0, [good, ("ridgeback/front_rockr", 0.0)], "position")
    with pytest.raises(ValueError, match=re.escape(
            "joint command for 'ridgeback/rear_rocker': expected finite numbers, got (nan,)")):
        sim.set_joints(0, [good, ("ridgeback/rear_rocker", math.nan)], "position")
    with pytest.raises(ValueError, match=re.escape(
            "joint command for 'env_0/ridgeback/front_rocker': expected each joint once, "
            "got it twice")):
        sim.set_joints(0, [good, good], "position")
    sim.step(500)
    rocker = store[0].model.joint("env_0/ridgeback/front_rocker").qposadr[0]
    np.testing.assert_array_equal(store[0].data.ctrl, ctrl)  # nothing was staged
    assert abs(store[0].data.qpos[rocker]) < 0.005
    sim.set_joints(0, [good], "position")
    sim.step(500)
    assert store[0].data.qpos[rocker] == pytest.approx(0.05, abs=0.03)


def test_runtime_options_are_validated_before_any_is_applied(assets):
    store = _world(assets, 2)
    sim = Simulator(store)
    before = [snapshot(s) for s in store.scenes]
    with pytest.raises(ValueError, match=re.escape(
            "integrator: expected one of ['discrete', 'euler', 'implicit', 'implicitfast', "
            "'rk4'], got 'verlet'")):
        sim.apply_runtime_options({"timestep": 0.005, "integrator": "verlet"})
    with pytest.raises(ValueError, match=re.escape(
            "gravity: expected 3 finite numbers, got [0, 0]")):
        sim.apply_runtime_options({"gravity": [0, 0]})
    with pytest.raises(ValueError, match=re.escape(
            "contact_disable: unknown option field; did you mean contact_disabled")):
        sim.apply_runtime_options({"contact_disable": True})
    for scene, snap in zip(store.scenes, before, strict=True):
        assert scene.model.opt.timestep == 0.002
        assert scene.spec.to_xml() == snap["xml"]


def test_runtime_options_apply_to_every_env_and_survive_recompiles(assets):
    store = _world(assets, 2)
    sim = Simulator(store)
    sim.apply_runtime_options({"timestep": 0.005, "gravity": [0, 0, -1.62],
                               "warmstart_disabled": True})
    store[1].spawn_prims([Prim("late", pose=(5, 5, 0.2, 0))])
    for env in range(2):
        opt = store[env].model.opt
        assert opt.timestep == 0.005
        assert list(opt.gravity) == [0, 0, -1.62]
        assert opt.disableflags & 512
    sim.step(10)
    assert store[0].data.time == pytest.approx(0.05)
    assert sim.settings["gravity"] == [0, 0, -1.62]


def _loop_turn(runner: Runner) -> int:
    """The step count the free-running loop sees at the top of its next turn (a call run
    between two ticks): once it answers, every tick begun before has ended."""
    sim = runner.sim
    return runner.call_soon(lambda: sim.step_count).result(timeout=60)


def test_free_running_ticks_until_paused_and_lockstep_steps_while_paused(assets):
    """Paced at factor 1 the loop ticks after unpause (a tick hook signals the clock it
    waits for), pausing stops it between two ticks, and lockstep steps still work. How
    closely it keeps real time is measured in benchmarks/free_running.py, not here."""
    store = _world(assets, 2)
    sim = Simulator(store)
    runner = Runner(sim)
    runner.rt_factor = 1.0
    sim.step(sim.tick_steps)  # compile, group and warm up now, not in a paced tick
    start = sim.step_count
    passed = threading.Event()
    sim.hooks.tick.append(lambda s: s.clock >= 0.3 and passed.set())
    runner.start(paused=True)
    try:
        assert (_loop_turn(runner), _loop_turn(runner)) == (start, start)  # two turns, no tick
        assert runner.info.paused and not runner.running
        runner.unpause()
        assert runner.running
        assert passed.wait(timeout=120), f"the clock stayed at {sim.clock} s, below 0.3 s"
        runner.pause()
        stopped = _loop_turn(runner)  # a tick under way when pause() came has ended
        assert stopped >= 150 and stopped % sim.tick_steps == 0
        assert (_loop_turn(runner), _loop_turn(runner)) == (stopped, stopped)  # paused turns
        info = runner.info
        assert info.paused and info.step_count == stopped
        assert info.clock == sim.clock == pytest.approx(stopped * 0.002)
        assert info.rt_factor_target == 1.0 and info.rt_factor_measured > 0.0
        sim.step(10)  # lockstep works while paused
        assert sim.step_count == stopped + 10
    finally:
        runner.close()
        sim.close()
    assert runner.error is None


def test_clock_sums_steps_when_the_timestep_changes(assets):
    store = _world(assets, 2)
    sim = Simulator(store)
    sim.step(500)
    sim.apply_runtime_options({"timestep": 0.005})
    sim.step(100)
    assert sim.clock == pytest.approx(1.5)
    assert store[1].data.time == pytest.approx(1.5)


@pytest.mark.parametrize("num_envs", [1, 3])
def test_diverging_env_is_reset_and_reported_while_others_go_on(assets, num_envs):
    store = _world(assets, num_envs)
    sim = Simulator(store)
    for env in range(num_envs):
        sim.set_cmd_vel(env, "burger", 0.2, 0.0)
    sim.step(50)
    bad = num_envs - 1
    store[bad].data.qvel[:3] = 1e30  # physics cannot survive this
    sim.step(50)
    assert sim.diverged == [bad]
    assert np.all(np.isfinite(store[bad].data.qpos))
    for env in range(num_envs - 1):
        assert store[env].data.time == pytest.approx(0.2)
        assert store[env].get_pose("burger")[0][0] > 0.005
    sim.step(10)
    assert sim.diverged == []


def test_state_views_write_through_and_reset_restores_defaults(assets):
    store = _world(assets, 3)
    sim = Simulator(store)
    sim.step(20)
    for env in (0, 2):
        qpos = sim.state(env, "qpos")
        qpos[0] = 5.0 + env  # teleport along x
    _ = store[1].data  # a read in between must not undo the writes
    sim.step(10)
    assert store[0].get_pose("burger")[0][0] == pytest.approx(5.0, abs=1e-3)
    assert store[2].get_pose("burger")[0][0] == pytest.approx(7.0, abs=1e-3)
    sim.reset_envs([2])
    assert store[2].data.time == 0.0
    assert store[2].get_pose("burger")[0][0] == pytest.approx(0.0, abs=1e-9)
    assert store[0].get_pose("burger")[0][0] == pytest.approx(5.0, abs=1e-3)


@pytest.fixture(scope="module")
def wheeled():
    """One env of the built-in robot (wheel velocity servos), shared by the examples: a
    rejected command leaves it as it was."""
    store = SceneStore(1)
    store[0].spawn_urdf("robot", builtin_robot_urdf())
    sim = Simulator(store)
    return sim, store[0].data.ctrl.copy()


WHEELS = st.sampled_from(["wheel_left_joint", "wheel_right_joint"])


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(WHEELS, st.floats(-5, 5)), max_size=2, unique_by=lambda t: t[0]),
       st.one_of(st.tuples(st.text("abcdefghijklmnopqrstuvwxyz_0123456789", max_size=8)
                           .filter(lambda n: not n.startswith("wheel_")),
                           st.floats(-5, 5)),
                 st.tuples(WHEELS, st.sampled_from([math.nan, math.inf, -math.inf]))),
       st.integers(0, 2))
def test_a_joint_command_with_any_bad_entry_changes_nothing(wheeled, good, bad, at):
    sim, ctrl = wheeled
    targets = [(f"robot/{n}", v) for n, v in good if n != bad[0]]
    targets.insert(min(at, len(targets)), (f"robot/{bad[0]}", bad[1]))
    with pytest.raises((KeyError, ValueError), match=re.escape(repr(f"robot/{bad[0]}")[1:-1])):
        sim.set_joints(0, targets, "velocity")
    sim.step(10)
    np.testing.assert_array_equal(sim.store[0].data.ctrl, ctrl)
