"""Resets of a Runner: model keyframes by name, a captured initial state; the simulator's
reset hooks and physics-step hooks."""

from __future__ import annotations

import re

import numpy as np
import pytest

from arena_gym.scene import Prim, SceneStore
from arena_gym.sim import Runner, Simulator
from tests.sim.driving import driving


def _add_key(store: SceneStore, env: int, name: str, xyz: tuple[float, float, float],
             vx: float) -> tuple[np.ndarray, np.ndarray]:
    """A MuJoCo keyframe in env's model: the robot at xyz, moving at vx."""
    model = store[env].model
    qpos, qvel = model.qpos0.copy(), np.zeros(model.nv)
    qpos[:3], qvel[0] = xyz, vx
    scene = store.scene(env)
    scene.spec.add_key(name=name, qpos=qpos, qvel=qvel)
    scene.compile()
    return qpos, qvel


def _state(sim: Simulator, env: int) -> bytes:
    return sim.state(env, "qpos").tobytes() + sim.state(env, "qvel").tobytes()


def test_a_keyframe_by_name_sets_the_state_it_holds():
    store, sim = driving()
    runner = Runner(sim)
    keys = [_add_key(store, env, "raised", (1.0, 2.0, 0.3 + env), 0.5) for env in range(2)]
    sim.step(50)
    runner.reset_to_keyframe("raised")
    for env, (qpos, qvel) in enumerate(keys):
        assert store[env].data.qpos.tobytes() == qpos.tobytes()
        assert store[env].data.qvel.tobytes() == qvel.tobytes()
        assert store[env].data.time == 0.0
    sim.step(10)  # it steps on from there: falling, moving along x
    assert store[0].get_pose("robot")[0][0] == pytest.approx(1.0 + 0.5 * 0.02, abs=1e-3)


def test_an_unknown_keyframe_resets_no_env():
    store, sim = driving()
    runner = Runner(sim)
    _add_key(store, 0, "raised", (1.0, 2.0, 0.3), 0.0)  # env 1 has none
    sim.step(20)
    before = [_state(sim, env) for env in range(2)]
    with pytest.raises(KeyError, match=re.escape("unknown keyframe in env 0 'raisd'; did you "
                                                 "mean 'raised'?")):
        runner.reset_to_keyframe("raisd")
    with pytest.raises(KeyError, match=re.escape("unknown keyframe in env 1 'raised'")):
        runner.reset_to_keyframe("raised")
    assert [_state(sim, env) for env in range(2)] == before
    runner.reset_to_keyframe("raised", env_ids=[0])
    assert store[0].data.qpos[:3].tolist() == [1.0, 2.0, 0.3]


def test_the_captured_initial_state_comes_back_and_replays_the_same_run():
    store, sim = driving()
    runner = Runner(sim)
    sim.step(40)
    runner.capture_initial_state()
    captured = [_state(sim, env) for env in range(2)]
    sim.step(100)
    after = [_state(sim, env) for env in range(2)]
    assert after != captured
    runner.reset_to_initial_state()
    assert [_state(sim, env) for env in range(2)] == captured
    assert store[1].data.time == pytest.approx(0.08, abs=1e-12)
    sim.step(100)
    assert [_state(sim, env) for env in range(2)] == after


def test_an_initial_state_that_no_longer_fits_is_refused_and_resets_nothing():
    store, sim = driving()
    runner = Runner(sim)
    with pytest.raises(ValueError, match=re.escape(
            "initial state of env 0: expected one captured by capture_initial_state(), got "
            "none")):
        runner.reset_to_initial_state()
    runner.capture_initial_state()
    store[1].spawn_prims([Prim("box", pose=(2.0, 0.0, 0.2, 0.0))])
    sim.step(20)
    before = [_state(sim, env) for env in range(2)]
    with pytest.raises(ValueError, match=re.escape(
            "initial state of env 1: expected the model it was captured with (compile 2), "
            "got compile 3 (something was spawned or deleted since); capture it again")):
        runner.reset_to_initial_state()
    assert [_state(sim, env) for env in range(2)] == before


def test_reset_callbacks_see_every_kind_of_reset_after_it_happened():
    store, sim = driving()
    runner = Runner(sim)
    _add_key(store, 0, "home", (0.5, 0.0, 0.1), 0.0)
    _add_key(store, 1, "home", (0.5, 0.0, 0.1), 0.0)
    seen = []

    def callback(s, env_ids, fill_initial_state):
        seen.append((list(env_ids), [round(s.store[e].data.qpos[0], 6) for e in env_ids],
                     fill_initial_state))

    sim.hooks.reset.append(callback)
    sim.step(100)
    runner.capture_initial_state([1])
    sim.step(100)
    sim.reset_envs([0])
    runner.reset_to_keyframe("home")
    runner.reset_to_initial_state([1])
    sim.hooks.reset.remove(callback)
    sim.reset_envs([0, 1])
    x_at_capture = seen[-1][1][0]
    # as mujoco_ros2_control's ResetCallback: True only for the reset to the initial state
    assert seen == [([0], [0.0], False), ([0, 1], [0.5, 0.5], False),
                    ([1], [x_at_capture], True)]
    assert 0.01 < x_at_capture < 0.1


def test_a_pre_step_callback_runs_before_every_physics_step_and_its_writes_count():
    store, sim = driving(1)
    calls = []

    def before_step(s):
        calls.append(s.step_count)
        s.state(0, "xfrc_applied")[2, 2] = 100.0 if s.step_count < 5 else 0.0  # a kick

    sim.hooks.physics_step.append(before_step)
    sim.step(25)
    assert calls == list(range(25))
    kicked_z = store[0].data.qpos[2]
    sim.hooks.physics_step.remove(before_step)
    sim.step(10)
    assert calls == list(range(25))
    plain, plain_sim = driving(1)
    plain_sim.step(25)
    assert kicked_z > plain[0].data.qpos[2] + 1e-3  # five steps of 100 N up
