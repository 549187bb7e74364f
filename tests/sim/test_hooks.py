"""Tick hooks in batched envs: what a hook reads of a scene is that tick's state, and
reading never reverts the physics."""

from __future__ import annotations

import numpy as np

from arena_gym.scene import SceneStore
from arena_gym.sim import Simulator
from arena_gym.worlds import builtin_robot_urdf


def _driving(n: int, hook=None) -> tuple[SceneStore, Simulator]:
    store = SceneStore(n)
    for e in range(n):
        store[e].spawn_urdf("robot", builtin_robot_urdf())
    sim = Simulator(store)
    if hook is not None:
        sim.add_tick_hook(hook)
    for e in range(n):
        sim.set_cmd_vel(e, "robot", 0.2, 0.1 * e)
    return store, sim


def test_a_hook_reading_scenes_sees_each_tick_and_changes_nothing():
    seen = []

    def hook(sim):
        seen.append([sim.store[e].data.time for e in range(3)] + [sim.timestep])

    store, sim = _driving(3, hook)
    plain_store, plain = _driving(3)
    assert sim.groups() == [("batch", [0, 1, 2])]
    sim.step(200)
    plain.step(200)
    np.testing.assert_allclose(np.array(seen)[:, 0], 0.02 * np.arange(1, 21))
    for e in range(3):
        assert store[e].data.qpos.tobytes() == plain_store[e].data.qpos.tobytes()
