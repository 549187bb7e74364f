"""Map walls as geoms of the world body: the robot moves as it did among wall bodies, and
walls keep their names, deletion by prefix and poses."""

from __future__ import annotations

import math
import re
import warnings

import mujoco
import numpy as np
import pytest

from arena_gym.geometry.groups import GROUP_STATIC, WORLD_CONAFFINITY
from arena_gym.scene import SceneError, SceneStore, Wall
from arena_gym.scene.builders import yaw_quat
from arena_gym.sim import Simulator
from arena_gym.worlds.map_cover import walls_from_map
from arena_gym.worlds.occupancy import free_cells, load_map
from tests.conftest import spawn


def add_wall_body(spec: mujoco.MjSpec, name: str, wall: Wall) -> None:
    """How walls were built before (main at 9a0b6f2): one static body per wall."""
    (x0, y0), (x1, y1) = wall.start, wall.end
    body = spec.worldbody.add_body(name=name, pos=[(x0 + x1) / 2, (y0 + y1) / 2, wall.height / 2],
                                   quat=yaw_quat(math.atan2(y1 - y0, x1 - x0)))
    body.add_geom(name=name + "/geom", type=mujoco.mjtGeom.mjGEOM_BOX,
                  size=[wall.length / 2, wall.thickness / 2, wall.height / 2],
                  rgba=list(wall.rgba), group=GROUP_STATIC, conaffinity=WORLD_CONAFFINITY)


def drive(assets, walls: list[Wall], as_bodies: bool, start) -> np.ndarray:
    """The robot's (x, y, yaw) every 0.1 s under a fixed command sequence that runs it into
    a wall and along it."""
    store = SceneStore(1, timestep=0.005)
    spawn(store, 0, assets, "burger", pose=start)
    scene = store.scenes[0]
    if as_bodies:  # the old scene: wall bodies, and no sleeping of static geometry
        scene.spec.option.enableflags &= ~int(mujoco.mjtEnableBit.mjENBL_SLEEP)
        for wall in walls:
            add_wall_body(scene.spec, scene.full_name(wall.name), wall)
        scene.compile()
    else:
        store[0].spawn_walls(walls)
    sim = Simulator(store)
    poses = []
    for k in range(150):  # 15 s
        v, w = (0.22, 0.0) if k < 90 else (0.1, 0.8 * math.sin(k / 7))
        sim.set_cmd_vel(0, "burger", v, w)
        sim.step(20)
        pos, quat = store[0].get_pose("burger")
        poses.append([pos[0], pos[1], 2 * math.atan2(quat[3], quat[0])])
    sim.close()
    return np.array(poses)


def test_trajectory_is_the_same_as_among_wall_bodies_on_experiment_rooms(assets):
    occupancy = load_map(assets / "worlds" / "experiment_rooms" / "map" / "map.yaml")
    walls = walls_from_map(occupancy)
    rows, cols = np.nonzero(free_cells(occupancy, 0.4))
    starts = occupancy.cell_centers(rows, cols)
    # the first free start with a wall 1 m ahead (+x): the robot drives into it
    cells = [occupancy.cell_at(x + 1.0, y) for x, y in starts]
    ahead = [0 <= c < occupancy.shape[1] and occupancy.occupied[r, c] for r, c in cells]
    x, y = starts[ahead.index(True)]
    before = drive(assets, walls, True, (x, y, 0.0))
    after = drive(assets, walls, False, (x, y, 0.0))
    travelled = np.linalg.norm(before[-1, :2] - before[0, :2])
    assert travelled > 0.5  # it moved...
    stuck = np.linalg.norm(np.diff(before[60:90, :2], axis=0), axis=1).max()
    assert stuck < 0.005  # ...and ran into a wall (it stood still under a forward command)
    assert np.abs(after[:, :2] - before[:, :2]).max() < 1e-3  # 1 mm
    assert np.abs(after[:, 2] - before[:, 2]).max() < 1e-3


def test_walls_keep_names_poses_and_deletion_by_prefix():
    store = SceneStore(1)
    store[0].spawn_walls([Wall("map/wall_0", (0, 0), (0, 2)), Wall("map/wall_1", (1, 0), (3, 0)),
                          Wall("room/north", (-3, 3), (3, 3), height=0.5)])
    pos, quat = store[0].get_pose("map/wall_0")
    np.testing.assert_allclose(pos, [0, 1, 0.5])
    np.testing.assert_allclose(quat, yaw_quat(math.pi / 2), atol=1e-12)
    assert store[0].model.geom("env_0/map/wall_1/geom").bodyid == 0  # a geom of the world
    assert store[0].delete(["map/"]) == ["map/wall_0", "map/wall_1"]
    assert list(store[0].entities) == ["room/north"]
    names = [store[0].model.geom(g).name for g in range(store[0].model.ngeom)]
    assert names == ["env_0/room/north/geom", "ground"]  # world geoms first, then the ground body
    with pytest.raises(SceneError, match=re.escape("unknown body in env 0 'map/wall_0'")):
        store[0].get_pose("map/wall_0")


def test_a_moved_static_box_is_seen_where_it_went():
    """Sleeping computes a static body's pose once per MjData: an in-place move renews it."""
    from arena_gym.scene import Prim, PrimEdit

    store = SceneStore(1)
    store[0].spawn_prims([Prim("box", pose=(1, 0, 0.2, 0), scale=(0.4, 0.4, 0.4))])
    sim = Simulator(store)
    sim.step(10)
    store[0].edit_prims([PrimEdit("box", pose=(3, 0, 0.2, 0))])
    dist, _ = sim.cast_rays(np.array([[0.0, 0.0, 0.2]]), np.array([[[1.0, 0.0, 0.0]]]))
    assert dist[0, 0] == pytest.approx(2.8, abs=1e-9)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sim.step(10)
    np.testing.assert_allclose(store[0].data.geom("env_0/box/geom").xpos, [3, 0, 0.2])
