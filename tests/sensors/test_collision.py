"""The one collision rule (arena_gym.sensors.contact): feet on floors are not collisions,
anything else touching is; contacts inside the sampling window count; what was hit gives
the class. Also what the env reports: its collision flag is this reading."""

from __future__ import annotations

import math

import mujoco
import numpy as np
import pytest

from arena_gym.config import EnvConfig
from arena_gym.envs.core import NavigationCore
from arena_gym.scene import Prim, SceneStore, Slab
from arena_gym.sensors import COLLISION_CLASSES, CollisionSpec, SensorSuite
from arena_gym.sim import Simulator
from arena_gym.worlds import builtin_robot_urdf

SLAB_TOP = 0.05


def _robot_world(*prims: Prim, slab: bool = False) -> tuple[SceneStore, Simulator, SensorSuite]:
    store = SceneStore(2)
    for env in range(2):
        if slab:
            store[env].spawn_floors([Slab("floor", center=(0.0, 0.0, SLAB_TOP), size=(3.0, 3.0))])
        store[env].spawn_urdf("robot", builtin_robot_urdf())
        if prims:
            store[env].spawn_prims(list(prims))
    sim = Simulator(store)
    suite = SensorSuite(sim, [CollisionSpec("robot")], seed=0, hook=False)
    return store, sim, suite


def _control_steps(sim: Simulator, suite: SensorSuite, n: int, steps: int = 20):
    """n control steps of `steps` physics steps, the suite sampled after each: flags (n, envs)."""
    out = []
    for _ in range(n):
        sim.step(steps)
        suite.update()
        out.append(suite["robot/collision"].collided.copy())
    return np.array(out)


def test_the_classes_are_exported_in_order():
    assert COLLISION_CLASSES == ("none", "wall", "obstacle", "robot", "pedestrian")


def test_wheels_on_a_floor_slab_are_no_collision_but_the_chassis_on_it_is():
    store, sim, suite = _robot_world(slab=True)
    for env in range(2):  # the spawn put it on the ground plane, inside the slab: lift it
        qpos = sim.state(env, "qpos")
        qpos[2] += SLAB_TOP
    suite.reset()
    sim.set_cmd_vel(0, "robot", 0.2, 0.3)
    flags = _control_steps(sim, suite, 25)  # 1 s
    assert not flags.any()
    data, model = store[0].data, store[0].model
    slab = model.body("env_0/floor").id
    on_slab = [c for c in data.contact[:data.ncon] if slab in model.geom_bodyid[c.geom]]
    assert len(on_slab) >= 3  # both wheels and the caster stand on the slab, not the ground
    assert math.hypot(*store[0].get_pose("env_0/robot/base_footprint")[0][:2]) > 0.05  # it drove
    # the same robot lying on its side on the slab collides
    qpos = sim.state(1, "qpos")
    qpos[2] += 0.1
    qpos[3:7] = [math.cos(math.pi / 4), math.sin(math.pi / 4), 0.0, 0.0]
    flags = _control_steps(sim, suite, 10)
    assert flags[-1, 1] and suite["robot/collision"].classes[1] == "wall"


def test_a_robot_on_its_side_on_the_ground_collides():
    store, sim, suite = _robot_world()
    qpos = sim.state(0, "qpos")
    qpos[2] += 0.1
    qpos[3:7] = [math.cos(math.pi / 4), math.sin(math.pi / 4), 0.0, 0.0]  # 90 deg about x
    flags = _control_steps(sim, suite, 10)
    assert flags[-1, 0] and not flags[:, 1].any()  # env 1 stands on its wheels
    assert list(suite["robot/collision"].classes) == ["wall", "none"]
    up = store[0].data.xmat[store[0].model.body("env_0/robot/base_footprint").id][8]
    assert abs(up) < 0.2  # it does lie on its side


def test_a_movable_box_is_an_obstacle_and_a_static_one_a_wall():
    moving = Prim("pushme", pose=(0.3, 0.0, 0.1, 0.0), scale=(0.1, 1.0, 0.2), movable=True)
    store, sim, suite = _robot_world(moving)
    for env, x in ((0, 0.3), (1, -5.0)):  # env 1: the box far away, a static one ahead
        sim.state(env, "mocap_pos")[0] = (x, 0.0, 0.1)
    store[1].spawn_prims([Prim("fixed", pose=(0.3, 0.0, 0.1, 0.0), scale=(0.1, 1.0, 0.2))])
    suite.reset()
    for env in range(2):
        sim.set_cmd_vel(env, "robot", 0.2, 0.0)
    flags = _control_steps(sim, suite, 50)  # 2 s: 0.17 m to go
    assert not flags[:5].any() and flags[-1].all()
    assert list(suite["robot/collision"].classes) == ["obstacle", "wall"]


def test_a_contact_inside_the_step_counts_though_it_ends_before_the_step_does():
    """The default robot started 2.5 cm inside a wall is pushed out within its first
    control step: the end state has no contact, the step still is a collision."""
    wall = Prim("wall", pose=(0.077 - 0.025 + 0.05, 0.0, 0.25, 0.0), scale=(0.1, 2.0, 0.5))
    store, sim, suite = _robot_world(wall)
    suite.reset()
    assert suite["robot/collision"].collided.all()
    flags = _control_steps(sim, suite, 1, steps=50)  # 0.1 s
    data = store[0].data
    mujoco.mj_forward(store[0].model, data)
    walls = [c for c in data.contact[:data.ncon]
             if store[0].model.geom(int(c.geom[0])).name.startswith("env_0/wall")
             or store[0].model.geom(int(c.geom[1])).name.startswith("env_0/wall")]
    assert not walls  # pushed out: at the end nothing touches the wall
    assert flags[0].all() and list(suite["robot/collision"].classes) == ["wall", "wall"]
    flags = _control_steps(sim, suite, 1, steps=50)
    assert not flags.any()  # the next step starts clear


@pytest.mark.parametrize("substeps", [20, 50])
def test_the_env_collision_is_the_sensors_collision(substeps):
    cfg = EnvConfig(physics_dt=0.1 / substeps)
    core = NavigationCore(3, cfg)
    core.reset_envs([0, 1, 2])
    rng = np.random.default_rng(0)
    for _ in range(60):
        action = rng.uniform(core.action_space.low, core.action_space.high, (3, 2))
        out = core.step(action, np.ones(3, bool))
        terminated = out.terminated
        collision = core.sensor_suite["collision"]
        reached = core.task.outputs.polar[:, 0] < cfg.goal_radius
        # the goal first (reached while touching counts as reached), then the sensors' flag
        np.testing.assert_array_equal(out.termination.collided, collision.collided & ~reached)
        np.testing.assert_array_equal(terminated, (collision.collided | reached))
        ended = np.flatnonzero(terminated)
        if ended.size:
            core.reset_envs(ended.tolist())
            core.observe()
    core.close()
