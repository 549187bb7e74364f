"""Resets of the free-running container: model keyframes by name, a captured initial
state, reset callbacks, and the pre-step callback."""

from __future__ import annotations

import re

import numpy as np
import pytest

from arena_gym.scene import Prim, SceneStore
from arena_gym.sim import Simulator
from arena_gym.worlds import builtin_robot_urdf


def _world(n: int = 2) -> tuple[SceneStore, Simulator]:
    store = SceneStore(n)
    for env in range(n):
        store[env].spawn_urdf("robot", builtin_robot_urdf())
    sim = Simulator(store)
    for env in range(n):
        sim.set_cmd_vel(env, "robot", 0.2, 0.3)
    return store, sim


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
    store, sim = _world()
    keys = [_add_key(store, env, "raised", (1.0, 2.0, 0.3 + env), 0.5) for env in range(2)]
    sim.step(50)
    sim.reset_to_keyframe("raised")
    for env, (qpos, qvel) in enumerate(keys):
        assert store[env].data.qpos.tobytes() == qpos.tobytes()
        assert store[env].data.qvel.tobytes() == qvel.tobytes()
        assert store[env].data.time == 0.0
    sim.step(10)  # it steps on from there: falling, moving along x
    assert store[0].get_pose("robot")[0][0] == pytest.approx(1.0 + 0.5 * 0.02, abs=1e-3)


def test_an_unknown_keyframe_resets_no_env():
    store, sim = _world()
    _add_key(store, 0, "raised", (1.0, 2.0, 0.3), 0.0)  # env 1 has none
    sim.step(20)
    before = [_state(sim, env) for env in range(2)]
    with pytest.raises(KeyError, match=re.escape("unknown keyframe in env 0 'raisd'; did you "
                                                 "mean 'raised'?")):
        sim.reset_to_keyframe("raisd")
    with pytest.raises(KeyError, match=re.escape("unknown keyframe in env 1 'raised'")):
        sim.reset_to_keyframe("raised")
    assert [_state(sim, env) for env in range(2)] == before
    sim.reset_to_keyframe("raised", env_ids=[0])
    assert store[0].data.qpos[:3].tolist() == [1.0, 2.0, 0.3]


def test_the_captured_initial_state_comes_back_and_replays_the_same_run():
    store, sim = _world()
    sim.step(40)
    sim.capture_initial_state()
    captured = [_state(sim, env) for env in range(2)]
    sim.step(100)
    after = [_state(sim, env) for env in range(2)]
    assert after != captured
    sim.reset_to_initial_state()
    assert [_state(sim, env) for env in range(2)] == captured
    assert store[1].data.time == pytest.approx(0.08, abs=1e-12)
    sim.step(100)
    assert [_state(sim, env) for env in range(2)] == after


def test_an_initial_state_that_no_longer_fits_is_refused_and_resets_nothing():
    store, sim = _world()
    with pytest.raises(ValueError, match=re.escape(
            "initial state of env 0: expected one captured by capture_initial_state(), got "
            "none")):
        sim.reset_to_initial_state()
    sim.capture_initial_state()
    store[1].spawn_prims([Prim("box", pose=(2.0, 0.0, 0.2, 0.0))])
    sim.step(20)
    before = [_state(sim, env) for env in range(2)]
    with pytest.raises(ValueError, match=re.escape(
            "initial state of env 1: expected the model it was captured with (compile 2), "
            "got compile 3 (something was spawned or deleted since); capture it again")):
        sim.reset_to_initial_state()
    assert [_state(sim, env) for env in range(2)] == before


def test_reset_callbacks_see_every_kind_of_reset_after_it_happened():
    store, sim = _world()
    _add_key(store, 0, "home", (0.5, 0.0, 0.1), 0.0)
    _add_key(store, 1, "home", (0.5, 0.0, 0.1), 0.0)
    seen = []

    def callback(s, env_ids):
        seen.append((list(env_ids), [round(s.store[e].data.qpos[0], 6) for e in env_ids]))

    sim.add_reset_callback(callback)
    sim.step(100)
    sim.capture_initial_state([1])
    sim.step(100)
    sim.reset_envs([0])
    sim.reset_to_keyframe("home")
    sim.reset_to_initial_state([1])
    sim.remove_reset_callback(callback)
    sim.reset_envs([0, 1])
    x_at_capture = seen[-1][1][0]
    assert seen == [([0], [0.0]), ([0, 1], [0.5, 0.5]), ([1], [x_at_capture])]
    assert 0.01 < x_at_capture < 0.1


def test_a_pre_step_callback_runs_before_every_physics_step_and_its_writes_count():
    store, sim = _world(1)
    calls = []

    def before_step(s):
        calls.append(s.step_count)
        s.state(0, "xfrc_applied")[2, 2] = 100.0 if s.step_count < 5 else 0.0  # a kick

    sim.add_pre_step_callback(before_step)
    sim.step(25)
    assert calls == list(range(25))
    kicked_z = store[0].data.qpos[2]
    sim.remove_pre_step_callback(before_step)
    sim.step(10)
    assert calls == list(range(25))
    plain, plain_sim = _world(1)
    plain_sim.step(25)
    assert kicked_z > plain[0].data.qpos[2] + 1e-3  # five steps of 100 N up
