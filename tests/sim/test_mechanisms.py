"""Doors, gates, plates, caps and elevators moved by the mechanism tick: what the robot
meets (lidar, collisions, its own height), and never a recompile."""

from __future__ import annotations

import math

import numpy as np
import pytest

from arena_gym.people.pedestrians import Pedestrian
from arena_gym.scene import SceneStore
from arena_gym.sensors import CollisionSpec, LidarSpec, SensorSuite
from arena_gym.sim import Simulator
from arena_gym.sim.mechanism_tick import Mechanisms
from arena_gym.worlds import builtin_robot_urdf
from arena_gym.worlds.mechanisms import parse_mechanisms

DOOR_X = 1.5  # the door's centre line; the robot starts at the origin heading +x
THICK = 0.05
MM = 1e-3


def _world(doc: dict, robot=(0.0, 0.0, 0.0), peds=()):
    mechanisms = parse_mechanisms(doc, "test")
    store = SceneStore(1)
    store[0].spawn_urdf("robot", builtin_robot_urdf(), pose=robot)
    mechanisms.spawn(store, 0)
    if peds:
        store.spawn_pedestrians([Pedestrian(f"env_0/p{k}", p) for k, p in enumerate(peds)])
    sim = Simulator(store)
    ticks = Mechanisms(sim, mechanisms)
    suite = SensorSuite(sim, [LidarSpec("robot", key="scan"), CollisionSpec("robot")],
                        seed=0, hook=False)
    suite.reset()
    return store, sim, ticks, suite


def _door(**extra) -> dict:
    return {"name": "door", "pose": [DOOR_X, 0.0, math.pi / 2], "size": [0.9, THICK, 1.0],
            "zone": 1.0, "open_time": 0.5, **extra}


def _drive(store, sim, suite, seconds: float, v: float = 0.22):
    """Drive straight ahead; per 0.1 s: robot x, forward lidar range, collided."""
    sim.set_cmd_vel(0, "robot", v, 0.0)
    rows = []
    for _ in range(round(seconds / 0.1)):
        sim.step(50)
        suite.update()
        rows.append((store[0].get_pose("robot")[0][0], suite["scan"].ranges[0, 0],
                     bool(suite["robot/collision"].collided[0])))
    return np.array(rows)


@pytest.mark.parametrize("motion", ["slide", "swing"])
def test_a_door_opens_as_the_robot_comes_and_closes_after_it_left(motion):
    store, sim, ticks, suite = _world({"doors": [_door(motion=motion)]})
    compiles = store[0].compile_count
    shut_range = suite["scan"].ranges[0, 0]
    lidar_x = shut_range  # the lidar sees the shut door's face
    assert shut_range < DOOR_X - THICK / 2 + MM
    rows = _drive(store, sim, suite, 13.0)
    x, ranges, collided = rows.T
    assert not collided.any()
    assert x[-1] > DOOR_X + 1.0  # through the doorway and out of the zone
    far = x < DOOR_X - 1.0 - 0.25  # not yet near: the lidar still meets the shut door
    np.testing.assert_allclose(ranges[far], lidar_x - (x[far] - x[0]), atol=0.01)
    assert np.isinf(ranges[(x > DOOR_X - 0.5) & (x < DOOR_X)]).all()  # open: nothing ahead
    assert ticks.opening[0, 0] == 0.0  # it left 1 m and more than hold + open_time ago
    pos, quat = store[0].get_pose("door")
    np.testing.assert_allclose(pos, [DOOR_X, 0.0, 0.5], atol=1e-9)
    assert store[0].compile_count == compiles


def test_a_locked_gate_stops_the_robot_until_it_is_unlocked():
    store, sim, ticks, suite = _world({"doors": [_door(locked=True)]})
    compiles = store[0].compile_count
    rows = _drive(store, sim, suite, 9.0)
    x, _, collided = rows.T
    face = DOOR_X - THICK / 2
    assert ticks.opening[0, 0] == 0.0
    assert collided.any()  # it ran into the gate ...
    assert x.max() < face  # ... and never got through
    ticks.set_locked(0, "door", False)
    rows = _drive(store, sim, suite, 3.0)
    assert ticks.opening[0, 0] == 1.0
    assert rows[-1, 0] > face + 0.3  # unlocked: open, and through
    assert store[0].compile_count == compiles


def test_an_elevator_carries_the_robot_standing_in_it_to_the_destination_height():
    lift = {"name": "lift", "pose": [0.0, 0.0, 0.3], "size": [1.0, 1.0],
            "levels": [0.0, 1.2], "speed": 0.5, "dwell": 0.5}
    store, sim, ticks, suite = _world({"elevators": [lift]})
    compiles = store[0].compile_count
    sim.step(100)
    z0 = store[0].get_pose("robot")[0][2]
    sim.step(round(0.2 / 0.002))  # 0.4 s: the dwell is not over, still at the start
    assert ticks.cabin_z[0, 0] == 0.0
    sim.step(round(3.0 / 0.002))  # 1.2 m at 0.5 m/s after the dwell, then at rest
    pos = store[0].get_pose("robot")[0]
    assert ticks.cabin_z[0, 0] == pytest.approx(1.2)
    assert pos[2] - z0 == pytest.approx(1.2, abs=0.005)
    np.testing.assert_allclose(pos[:2], [0.0, 0.0], atol=0.005)  # carried, not tossed
    cabin = store[0].get_pose("lift")[0]
    assert cabin[2] == pytest.approx(1.2 - 0.05)
    sim.step(round(3.0 / 0.002))  # served: it waits at the destination for new riders
    assert ticks.cabin_z[0, 0] == pytest.approx(1.2)
    assert store[0].compile_count == compiles


def test_a_pressure_plate_drives_its_door_and_a_cap_keeps_a_full_room_shut():
    plated = _door(name="plated", pose=[0.0, 5.0, 0.0], plate=[-3.0, -3.0, 0.4], zone=0.5)
    capped = _door(name="capped", cap={"zone": [3.0, -1.0, 5.0, 1.0], "max": 2})
    store, sim, ticks, suite = _world({"doors": [plated, capped]},
                                      peds=[(-3.1, -3.0, 0.0), (4.0, 0.0, 0.0), (4.5, 0.5, 0.0)])
    compiles = store[0].compile_count
    sim.set_cmd_vel(0, "robot", 0.22, 0.0)
    sim.step(round(5.0 / 0.002))  # the robot stands at the capped door's zone
    assert ticks.opening[0, 0] == 1.0  # someone on the plate
    assert ticks.counts[0, 1] == 2 and ticks.opening[0, 1] == 0.0  # full room: shut
    store.delete_pedestrians(["p0", "p2"], env_id=0)
    sim.step(round(1.0 / 0.002))
    assert ticks.opening[0, 0] == 0.0  # the plate is clear: shut after hold + open_time
    assert ticks.counts[0, 1] == 1 and ticks.opening[0, 1] == 1.0
    assert store[0].compile_count == compiles


def test_no_mechanisms_registers_no_tick():
    store, sim, ticks, _ = _world({})
    assert sim._hooks == []
    ticks.close()


def test_batched_envs_each_open_their_own_door():
    doc = {"doors": [_door()]}
    mechanisms = parse_mechanisms(doc, "test")
    store = SceneStore(3)
    for e, x in enumerate((0.0, -3.0, 0.0)):
        store[e].spawn_urdf("robot", builtin_robot_urdf(), pose=(x, 0.0, 0.0))
        mechanisms.spawn(store, e)
    sim = Simulator(store)
    ticks = Mechanisms(sim, mechanisms)
    assert sim.groups() == [("batch", [0, 1, 2])]
    for e in range(3):
        sim.set_cmd_vel(e, "robot", 0.22, 0.0)
    sim.step(round(4.0 / 0.002))  # envs 0 and 2 reach the zone, env 1 stays 3 m short
    np.testing.assert_array_equal(ticks.opening[:, 0], [1.0, 0.0, 1.0])
    doors = [store[e].get_pose("door")[0] for e in range(3)]
    np.testing.assert_allclose([d[1] for d in doors], [0.9, 0.0, 0.9], atol=1e-9)  # slid
    robots = [store[e].get_pose("robot")[0][0] for e in range(3)]
    assert robots[0] == robots[2] > 0.8  # through the open doorway, not stopped
    assert robots[1] + 3.0 == pytest.approx(robots[0], abs=1e-9)  # the same drive, 3 m back
