"""The sim tests' small world: `n` envs of the built-in robot, each driving a curve."""

from __future__ import annotations

from arena_gym.scene import SceneStore
from arena_gym.sim import Simulator
from arena_gym.worlds import builtin_robot_urdf


def driving(n: int = 2) -> tuple[SceneStore, Simulator]:
    """A store of `n` envs with one robot each, and its simulator with every robot's
    twist (0.2 m/s, 0.3 rad/s) staged."""
    store = SceneStore(n)
    for env in range(n):
        store[env].spawn_urdf("robot", builtin_robot_urdf())
    sim = Simulator(store)
    for env in range(n):
        sim.set_cmd_vel(env, "robot", 0.2, 0.3)
    return store, sim
