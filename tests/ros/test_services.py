"""The scene services a real rclpy process calls: EditPrims, SpawnWalls, SpawnFloors,
SpawnCeilings and UpdatePedestrians change the scene as the store's operations do; a bad
request answers success=false with the store's message, changes nothing, and the bridge
keeps serving."""

from __future__ import annotations

import math

import numpy as np
import pytest

SRV = "arena_gym_interfaces/srv/"


def ahead(store, env: int, distance: float) -> tuple[float, float, float]:
    """(x, y, yaw) `distance` m straight ahead of the env's robot."""
    pos, quat = store[env].get_pose("robot")
    yaw = 2 * math.atan2(quat[3], quat[0])
    return pos[0] + distance * math.cos(yaw), pos[1] + distance * math.sin(yaw), yaw


def scan_ahead(probe, topic: str) -> float:
    """The forward beam of the next 10 Hz scan after 0.1 s of stepping."""
    probe.take(topic)
    probe.step(50)
    return probe.take(topic, 1)[-1]["ranges"][0]


def laser_x(bridge) -> float:
    from arena_gym.ros.frames import mount_transforms

    return next(m for m in mount_transforms(bridge.sim.store, "robot")
                if m["child"] == "laser")["xyz"][0]


@pytest.fixture(scope="module")
def scans(bridge, probe):
    assert probe.listen("/env_1/robot/scan", "sensor_msgs/msg/LaserScan") == 1
    return probe


def test_edit_prims_moves_and_rescales_a_box(bridge, probe):
    store = bridge.sim.store
    box = {"name": "edit_box", "x": 2.0, "y": 2.0, "z": 0.2, "yaw": 0.0,
           "scale": {"x": 0.2, "y": 0.2, "z": 0.4}}
    assert probe.call("/mujoco/spawn_prims", SRV + "SpawnPrims", env_id=0,
                      prims=[box])["success"]
    reply = probe.call("/mujoco/edit_prims", SRV + "EditPrims", env_id=0, edits=[
        {"name": "edit_box", "set_pose": True, "x": 1.5, "y": -2.0, "z": 0.3, "yaw": 0.5,
         "set_scale": True, "scale": {"x": 0.6, "y": 0.2, "z": 0.6}}])
    assert reply["success"], reply["message"]
    probe.step(10)
    pos, quat = store[0].get_pose("edit_box")
    np.testing.assert_allclose(pos, [1.5, -2.0, 0.3], atol=1e-9)
    assert 2 * math.atan2(quat[3], quat[0]) == pytest.approx(0.5, abs=1e-9)
    model = store[0].model
    geom = model.body("env_0/edit_box").geomadr[0]
    np.testing.assert_allclose(model.geom_size[geom], [0.3, 0.1, 0.3])  # half extents


def test_spawn_walls_puts_a_wall_where_the_lidar_sees_it(bridge, scans):
    probe = scans
    x, y, yaw = ahead(bridge.sim.store, 1, 0.6)
    side = (-math.sin(yaw) * 0.5, math.cos(yaw) * 0.5)  # 1 m long, across the heading
    before = scan_ahead(probe, "/env_1/robot/scan")
    reply = probe.call("/mujoco/spawn_walls", SRV + "SpawnWalls", env_id=1, walls=[
        {"name": "probe_wall", "x0": x - side[0], "y0": y - side[1], "x1": x + side[0],
         "y1": y + side[1], "height": 0.5, "thickness": 0.1}])
    assert reply["success"], reply["message"]
    with_wall = scan_ahead(probe, "/env_1/robot/scan")
    assert with_wall == pytest.approx(0.6 - 0.05 - laser_x(bridge), abs=0.04)  # noise 0.01 m
    assert with_wall < before - 0.1
    assert "probe_wall" in list(bridge.sim.store[1].entities) and "probe_wall" not in \
        list(bridge.sim.store[0].entities)


@pytest.mark.parametrize(("service", "kind", "dz"), [
    ("spawn_floors", "SpawnFloors", -0.01), ("spawn_ceilings", "SpawnCeilings", 0.01)])
def test_spawn_slabs_at_the_requested_height(bridge, probe, service, kind, dz):
    name = f"probe_{service}"
    reply = probe.call(f"/mujoco/{service}", SRV + kind, env_id=0, slabs=[
        {"name": name, "x": 0.5, "y": -0.5, "z": 2.0, "size_x": 1.0, "size_y": 2.0}])
    assert reply["success"], reply["message"]
    probe.step(10)
    pos, _ = bridge.sim.store[0].get_pose(name)
    # 2 cm thick: a floor's top face, a ceiling's bottom face at the requested height
    np.testing.assert_allclose(pos, [0.5, -0.5, 2.0 + dz], atol=1e-9)


def test_update_pedestrians_moves_a_pedestrian(bridge, probe):
    store = bridge.sim.store
    ped = {"name": "walker", "x": 1.0, "y": 1.0, "yaw": 0.0}
    assert probe.call("/mujoco/spawn_pedestrians", SRV + "SpawnPedestrians", env_id=1,
                      pedestrians=[ped])["success"]
    probe.step(10)
    reply = probe.call("/mujoco/update_pedestrians", SRV + "UpdatePedestrians", env_id=1,
                       pedestrians=[{"name": "walker", "x": 1.2, "y": 0.9, "yaw": 0.5}])
    assert reply["success"], reply["message"]
    probe.step(10)
    slot = store.scene(1).pedestrians.slots["walker"]
    np.testing.assert_allclose(store[1].data.mocap_pos[slot][:2], [1.2, 0.9], atol=1e-9)


BAD = [
    ("edit_prims", "EditPrims", {"env_id": 0, "edits": [
        {"name": "robot", "set_pose": True}]},
     "edit_prims: 'robot' is a robot, expected a prim"),
    ("edit_prims", "EditPrims", {"env_id": 0, "edits": [{"name": "no_such_box",
                                                         "set_pose": True}]},
     "edit_prims: unknown entity in env 0 'no_such_box'"),
    ("edit_prims", "EditPrims", {"env_id": 0, "edits": [{"name": "b"}]},
     "edit_prims: PrimEdit 'b': expected a pose or a scale, got neither"),
    ("edit_prims", "EditPrims", {"env_id": 3, "edits": [{"name": "b", "set_pose": True}]},
     "edit_prims: unknown env_id 3: expected 0 <= env_id < 2"),
    ("spawn_walls", "SpawnWalls", {"env_id": 1, "walls": [
        {"name": "w", "x0": 1.0, "y0": 1.0, "x1": 1.0, "y1": 1.0}]},
     "spawn_walls: Wall 'w': start and end must differ, got (1.0, 1.0)"),
    ("spawn_walls", "SpawnWalls", {"env_id": 1, "walls": [
        {"name": "robot", "x0": 1.0, "y0": 1.0, "x1": 2.0, "y1": 1.0}]},
     "spawn_walls: env 1: duplicate name 'robot': a robot of that name exists"),
    ("spawn_floors", "SpawnFloors", {"env_id": 0, "slabs": [
        {"name": "f", "size_x": 0.0, "size_y": 3.0}]},
     "spawn_floors: Slab 'f' size: expected sizes > 0, got (0.0, 3.0)"),
    ("spawn_ceilings", "SpawnCeilings", {"env_id": 0, "slabs": [
        {"name": "c", "size_x": 1.0, "size_y": -3.0}]},
     "spawn_ceilings: Slab 'c' size: expected sizes > 0, got (1.0, -3.0)"),
    ("update_pedestrians", "UpdatePedestrians", {"env_id": 1, "pedestrians": [
        {"name": "nobody", "x": 1.0}]},
     "update_pedestrians: unknown pedestrian in env 1 'nobody'"),
]


@pytest.mark.parametrize(("service", "kind", "request_", "message"), BAD,
                         ids=[f"{b[0]}-{i}" for i, b in enumerate(BAD)])
def test_bad_scene_requests_fail_with_the_stores_message(bridge, probe, service, kind,
                                                         request_, message):
    store = bridge.sim.store
    before = [list(store[e].entities) for e in range(2)], [store[e].compile_count for e in range(2)]
    reply = probe.call(f"/mujoco/{service}", SRV + kind, **request_)
    assert reply["success"] is False
    assert reply["message"] == message
    assert ([list(store[e].entities) for e in range(2)],
            [store[e].compile_count for e in range(2)]) == before  # nothing changed
    assert probe.step(10)["success"]  # still serving
