"""Skinned actors (../shared/assets/pedestrians: Gazebo's walk.dae): loaded once, worn by a
pool slot (bones as mocap bodies, a skin per material), the walk clip driven by distance,
drawn by cameras where the capsule stands, the capsule still seen by lidars."""

from __future__ import annotations

import re

import mujoco
import numpy as np
import pytest

from arena_gym.assets import mesh_cache
from arena_gym.geometry import groups
from arena_gym.people.actors import LOADS, load_actor
from arena_gym.people.pedestrians import RADIUS
from arena_gym.scene import Pedestrian, SceneStore
from arena_gym.sensors import LidarSpec, SensorSuite
from arena_gym.sim import Simulator
from arena_gym.worlds import builtin_robot_urdf
from tests.conftest import require


@pytest.fixture()
def actor(assets):
    require("collada", "pip install pycollada")
    return str(assets / "pedestrians" / "actor2.sdf")


def test_the_actor_loads_its_skin_skeleton_and_walk_once(actor):
    asset = load_actor(actor)
    loads = LOADS["count"]
    assert load_actor(actor) is asset and LOADS["count"] == loads  # cached: parsed once
    assert len(asset.bones) == 31 and asset.bones[0] == "Hips"
    assert [p.material for p in asset.parts] == ["eyes-white", "eyes-brown", "eyes-black",
                                                 "skin-mat", "sweater-green", "jeans-blue"]
    top = max(float(p.vertices[:, 2].max()) for p in asset.parts)
    low = min(float(p.vertices[:, 2].min()) for p in asset.parts)
    assert low == pytest.approx(0.0, abs=1e-9) and 1.6 < top < 1.8  # stands, human-sized
    walk = asset.clips["walking"]
    assert walk.duration == pytest.approx(5.75, abs=0.01) and 1.0 < walk.stride < 2.0
    foot = asset.bones.index("LeftFoot")
    x = walk.poses[:, foot, 0, 3]
    assert x.max() - x.min() > 0.4  # the foot swings back and forth along x (forward)...
    hips = walk.poses[:, 0, :3, 3]
    assert np.ptp(hips[:, 0]) < 0.1  # ...while the hips' steady advance is removed


def _world(actor, n=1):
    store = SceneStore(n)
    for env in range(n):
        store[env].spawn_urdf("robot", builtin_robot_urdf())
    sim = Simulator(store)
    return store, sim


def test_bones_follow_the_walk_clip_by_distance_and_skins_build_once(actor):
    store, sim = _world(actor, 2)
    store.spawn_pedestrians([Pedestrian(f"env_{e}/w", (2.0, 0.0, np.pi), actor=actor)
                             for e in range(2)])
    built = [store[e].compile_count for e in range(2)]
    asset = load_actor(actor)
    walk = asset.clips["walking"]
    model = store[0].model
    bones = [model.body(f"env_0/pedestrians/slot_0/bone_{asset.bones.index(b)}").id
             for b in ("Hips", "LeftFoot", "RightFoot")]
    track = []
    for k in range(1, 6):  # 0.1 m per 0.1 s: 1 m/s, walking
        store.update_pedestrians([Pedestrian("env_0/w", (2.0 - 0.1 * k, 0.0, np.pi))])
        sim.step(50)
        track.append(store[0].data.xpos[bones, 0].copy())
    cursor = store.scene(0).pedestrians.cursor[0]
    assert cursor == pytest.approx(0.5 / walk.stride * walk.duration)  # 5 moves of 0.1 m
    track = np.array(track)
    assert np.ptp(track[:, 0]) > 0.35  # the hips went along (0.4 m over these poses)...
    assert min(np.ptp(track[:, 1]), np.ptp(track[:, 2])) < 0.05  # ...one foot stayed planted
    store.delete_pedestrians(["env_0/w"])
    store.spawn_pedestrians([Pedestrian("env_0/again", (1.0, 1.0, 0.0), actor=actor)])
    sim.step(10)
    assert [store[e].compile_count for e in range(2)] == built  # the slot kept its skin
    assert sim.groups() == [("batch", [0, 1])]


def test_the_lidar_sees_a_skinned_pedestrians_capsule(actor):
    store, sim = _world(actor)
    suite = SensorSuite(sim, [LidarSpec("robot", key="scan")], seed=0, hook=False)
    store.spawn_pedestrians([Pedestrian("env_0/w", (1.5, 0.0, np.pi), actor=actor)])
    suite.reset()
    mount = next(m for m in store[0].robot("robot").sensor_mounts if m.kind == "lidar")
    x, _, z = store[0].data.site(mount.site).xpos
    surface = 1.5 - np.sqrt(RADIUS**2 - (RADIUS - z) ** 2)
    assert suite["scan"].ranges[0, 0] == pytest.approx(surface - x, abs=1e-3)


def test_a_slots_capsule_group_follows_its_skin_and_whether_rays_see_it(actor):
    # plain: seen in GROUP_STATIC (lidars, cameras), unseen in GROUP_VISUAL (cameras only);
    # skinned (cameras draw the skin): seen in GROUP_ROBOT (lidars), unseen in GROUP_HIDDEN
    store = SceneStore(1)
    store.spawn_pedestrians([Pedestrian("env_0/plain", (1.5, 0.0, 0.0)),
                             Pedestrian("env_0/person", (3.0, 0.0, 0.0), actor=actor)])
    pool = store.scene(0).pedestrians
    slots = np.array([pool.slot(0, name) for name in ("plain", "person")])
    model = store[0].compiled
    capsules = [model.geom(pool.bodies[k] + "/capsule").id for k in slots]
    expected = {True: [groups.GROUP_STATIC, groups.GROUP_ROBOT],
                False: [groups.GROUP_VISUAL, groups.GROUP_HIDDEN]}
    for seen in (False, True, False):
        pool.set_detection(slots, rays=np.array([seen, seen]))
        assert model.geom_group[capsules].tolist() == expected[seen]


def _render(store) -> np.ndarray:
    model, data = store[0].model, store[0].data
    with mujoco.Renderer(model, 120, 160) as renderer:
        option = mujoco.MjvOption()
        option.geomgroup[:] = 0
        option.geomgroup[list(groups.CAMERA_GROUPS)] = 1  # what the cameras draw
        camera = mujoco.MjvCamera()
        camera.lookat[:] = (1.5, 0.0, 0.9)
        camera.distance, camera.azimuth, camera.elevation = 4.0, 180.0, -5.0
        renderer.update_scene(data, camera, option)
        return renderer.render().astype(float) / 255


def test_cameras_draw_the_skin_where_the_capsule_stands_and_not_the_capsule(actor):
    store = SceneStore(1)
    store.spawn_pedestrians([Pedestrian("env_0/anchor", (0.0, 5.0, 0.0))])  # the pool
    empty = _render(store)
    store.spawn_pedestrians([Pedestrian("env_0/plain", (1.5, 0.0, 0.0))])
    capsule = np.abs(_render(store) - empty).sum(axis=-1) > 0.1
    store.delete_pedestrians(["env_0/plain"])
    store.spawn_pedestrians([Pedestrian("env_0/person", (1.5, 0.0, 0.0), actor=actor)])
    person_img = _render(store)
    person = np.abs(person_img - empty).sum(axis=-1) > 0.1
    overlap = (capsule & person).sum() / person.sum()
    assert person.sum() > 300 and overlap > 0.5  # drawn, and where the capsule stands
    rows, cols = np.nonzero(person)
    c_rows, c_cols = np.nonzero(capsule)
    assert abs(cols.mean() - c_cols.mean()) < 5 and rows.min() <= c_rows.min() + 5
    capsule_rgb = _render_plain_colour(store, capsule)
    person_rgb = person_img[person].mean(axis=0)
    assert np.abs(person_rgb - capsule_rgb).sum() > 0.2  # not the capsule's colour


def _render_plain_colour(store, mask) -> np.ndarray:
    store.delete_pedestrians(["env_0/person"])
    store.spawn_pedestrians([Pedestrian("env_0/plain2", (1.5, 0.0, 0.0))])  # a plain slot
    colour = _render(store)[mask].mean(axis=0)
    return colour


def test_a_gazebo_model_actor_resolves_model_uris_and_loads_its_four_clips(assets):
    require("collada", "pip install pycollada")
    asset = load_actor(assets / "pedestrians" / "MaleVisitorPhone" / "model.sdf")
    assert sorted(asset.clips) == ["idle", "idle_to_walk", "walk", "walk_to_idle"]
    assert len(asset.bones) == 31 and asset.bones[0] == "Spine1"
    walk = asset.clips["walk"]
    assert walk.duration == pytest.approx(1.125, abs=0.01)
    assert 0.3 < walk.stride < 1.5  # a walk in place: the stride its feet sweep
    top = max(float(p.vertices[:, 2].max()) for p in asset.parts)
    assert 1.6 < top < 1.9


def test_an_actor_file_outside_its_folder_is_refused(tmp_path, assets):
    require("collada", "pip install pycollada")
    from arena_gym.scene import SpawnError

    sdf = tmp_path / "evil.sdf"
    sdf.write_text("<sdf><actor name='x'><skin><filename>../walk.dae</filename></skin>"
                   "</actor></sdf>")
    with pytest.raises(SpawnError, match=re.escape(
            f"actor {str(sdf)!r}: file '../walk.dae' is outside the actor's folder")):
        load_actor(sdf)


def test_a_confined_store_refuses_an_actor_outside_its_roots(tmp_path, assets):
    from arena_gym.scene import SpawnError

    store = SceneStore(1, path_roots=[tmp_path])
    actor = str(assets / "pedestrians" / "actor2.sdf")
    with pytest.raises(SpawnError, match=re.escape(
            f"actor {actor!r}: expected a path inside the allowed roots")):
        store.spawn_pedestrians([Pedestrian("env_0/w", (0.0, 0.0, 0.0), actor=actor)])
    assert list(store[0].pedestrians.slots) == [] and not store.scene(0).pedestrians.built


def test_a_second_process_reads_the_actor_from_the_mesh_cache(actor, tmp_path):
    from arena_gym.people.actors import _load

    _load.cache_clear()  # as a fresh process: nothing in memory
    before = LOADS["count"]
    cold = load_actor(actor, cache=tmp_path)
    assert LOADS["count"] == before + 1  # one COLLADA file (skin and walk share it)
    _load.cache_clear()
    warm = load_actor(actor, cache=tmp_path)
    assert LOADS["count"] == before + 1 and warm is not cold  # read back, not parsed
    assert warm.bones == cold.bones and warm.clips.keys() == cold.clips.keys()
    np.testing.assert_array_equal(warm.clips["walking"].poses, cold.clips["walking"].poses)
    for a, b in zip(warm.parts, cold.parts, strict=True):
        assert (a.material, a.rgba) == (b.material, b.rgba)
        np.testing.assert_array_equal(a.vertices, b.vertices)
        for va, vb in zip(a.bone_vertices + a.bone_weights, b.bone_vertices + b.bone_weights,
                          strict=True):
            np.testing.assert_array_equal(va, vb)
    (npz,) = tmp_path.glob("actors/*/actor.npz")
    npz.write_bytes(npz.read_bytes()[:-100])  # truncated: the entry is not trusted
    _load.cache_clear()
    with pytest.warns(mesh_cache.CacheWarning, match=re.escape(
            f"mesh cache entry {str(npz.parent)!r}: actor.npz does not match its hash; "
            "rebuilding it")):
        again = load_actor(actor, cache=tmp_path)
    assert LOADS["count"] == before + 2 and again.bones == cold.bones
