"""GeomRays against MuJoCo's own cast: every primitive geom type, static, on a mocap body and
on a child of one, in random poses, hit by random rays (level, tilted, vertical) from random
origins, inside geoms too; what a cast skips (groups, transparency, the excluded body); the
cutoff; and what it leaves to MuJoCo (a jointed body, a mesh)."""

from __future__ import annotations

import mujoco
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from arena_gym.sim.geom_rays import GeomRays

TYPES = ("plane", "sphere", "capsule", "ellipsoid", "cylinder", "box")


def _scene(rng: np.random.Generator, count: int) -> mujoco.MjModel:
    """`count` random primitive geoms, every type in turn: static, on mocap bodies, on
    children of mocap bodies; half the static boxes long upright walls, half the capsules
    and cylinders standing upright (people: on a mocap body named "upright", which the
    tests turn about z only); plus a floor, a jointed box and a mesh (left to MuJoCo)."""
    spec = mujoco.MjSpec()
    world = spec.worldbody
    world.add_geom(type=mujoco.mjtGeom.mjGEOM_PLANE, size=[0, 0, 1], pos=[0, 0, -1])
    for k in range(count):
        kind = TYPES[k % len(TYPES)]
        place = (k // len(TYPES)) % 3
        if kind == "plane" and place != 0:
            kind = "box"  # a plane on a moving body is allowed but rare: keep one static
        size = rng.uniform(0.05, 0.6, 3)
        quat = rng.normal(size=4)
        quat /= np.linalg.norm(quat)
        pos = rng.uniform(-2, 2, 3)
        if kind == "box" and place == 0 and rng.random() < 0.5:  # a map's wall
            size[0] = rng.uniform(1.0, 3.0)
            yaw = rng.uniform(-np.pi, np.pi)
            quat = np.array([np.cos(yaw / 2), 0.0, 0.0, np.sin(yaw / 2)])
        # (the draws above stay the same for every geom: a scene's other geoms do not move)
        upright = kind in ("capsule", "cylinder") and place < 2 and (k // 18) % 2 == 0
        if upright:  # a person: its axis the world's z, turned about it
            quat = np.array([np.cos(0.35 * k), 0.0, 0.0, np.sin(0.35 * k)])
            pos[:2] *= 0.1  # off its body's origin
        if place == 0:
            parent = world
        else:
            body = world.add_body(mocap=True, pos=rng.uniform(-2, 2, 3),
                                  quat=rng.normal(size=4), name=f"upright{k}" if upright else "")
            parent = body if place == 1 else body.add_body(pos=rng.uniform(-0.5, 0.5, 3),
                                                           quat=rng.normal(size=4))
        if kind == "plane":
            size[:2] = rng.choice([0.0, 1.5], 2)
        geom = parent.add_geom(type=getattr(mujoco.mjtGeom, f"mjGEOM_{kind.upper()}"),
                               size=size, pos=pos, quat=quat, group=int(rng.integers(0, 3)))
        if rng.random() < 0.1:
            geom.rgba = [1, 1, 1, 0]  # transparent: every cast skips it
    jointed = world.add_body(pos=[0.5, 0.5, 0.2])
    jointed.add_freejoint()
    jointed.add_geom(type=mujoco.mjtGeom.mjGEOM_BOX, size=[0.1, 0.2, 0.3])
    spec.add_mesh(name="tetra", uservert=[0, 0, 0, 0.4, 0, 0, 0, 0.4, 0, 0, 0, 0.4])
    world.add_geom(type=mujoco.mjtGeom.mjGEOM_MESH, meshname="tetra", pos=[-1, -1, 0],
                   group=3)
    return spec.compile()


def _turn_upright(model, data, rng):
    """The "upright" mocap bodies (people) turned about z only (unnormalised, as given)."""
    for b in range(model.nbody):
        if model.body(b).name.startswith("upright"):
            yaw, scale = rng.uniform(-np.pi, np.pi), rng.uniform(0.5, 2.0)
            data.mocap_quat[model.body_mocapid[b]] = scale * np.array(
                [np.cos(yaw / 2), 0.0, 0.0, np.sin(yaw / 2)])


def _mujoco(model, data, origins, directions, mask, exclude):
    n, nray = directions.shape[:2]
    dist, geomid = np.zeros((n, nray)), np.zeros((n, nray), np.int32)
    for i in range(n):
        for r in range(nray):
            g = np.array([-1], np.int32)
            dist[i, r] = mujoco.mj_ray(model, data, origins[i], directions[i, r], mask, 1,
                                       int(exclude[i]), g)
            geomid[i, r] = g[0]
    return dist, geomid


def _directions(rng: np.random.Generator, n: int, nray: int, lengths: bool = False
                ) -> np.ndarray:
    vec = rng.normal(size=(n, nray, 3))
    vec[:, ::4, 2] = 0.0  # level
    vec[:, 1::9, :2] = 0.0  # vertical
    vec[:, 1::9, 2] = np.where(rng.random((n, len(range(1, nray, 9)))) < 0.5, -1.0, 1.0)
    vec /= np.linalg.norm(vec, axis=2, keepdims=True)
    if lengths:  # some of other lengths than 1: distances are in units of their length
        vec *= np.where(rng.random((n, nray, 1)) < 0.25, rng.uniform(0.5, 2.0, (n, nray, 1)),
                        1.0)
    return vec


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), cutoff=st.sampled_from([np.inf, 1.5, 3.0]),
       count=st.sampled_from([18, 48]))  # 48: many candidates, rays tried by bisection
def test_every_primitive_in_any_pose_reads_what_mj_ray_reads(seed, cutoff, count):
    rng = np.random.default_rng(seed)
    model = _scene(rng, count)
    data = mujoco.MjData(model)
    data.mocap_pos[:] = rng.uniform(-2, 2, data.mocap_pos.shape)
    data.mocap_quat[:] = rng.normal(size=data.mocap_quat.shape)  # unnormalised, as given
    _turn_upright(model, data, rng)
    data.qpos[:3] = rng.uniform(-1, 1, 3)
    mujoco.mj_kinematics(model, data)
    rays = GeomRays([model])
    n, nray = 6, 40
    origins = rng.uniform(-2.5, 2.5, (n, 3))
    # (a cutoff is in units of each direction's length, as a distance)
    directions = _directions(rng, n, nray, lengths=True)
    mask = rng.integers(0, 2, mujoco.mjNGROUP).astype(np.uint8)
    exclude = np.array([int(rng.integers(-1, model.nbody)) for _ in range(n)], np.int32)
    dist, geomid = np.empty((n, nray)), np.empty((n, nray), np.int32)
    rest = np.zeros(n, bool)
    for i in range(n):  # each origin as its own cast of the one env
        d, g, r = rays.cast(origins[i : i + 1], directions[i : i + 1], mask, exclude[i : i + 1],
                            cutoff, data.mocap_pos[None], data.mocap_quat[None],
                            np.zeros(1, np.int64))
        dist[i], geomid[i], rest[i] = d[0], g[0], r is not None and r[0]
    ref, ref_id = _mujoco(model, data, origins, directions, mask, exclude)
    # where MuJoCo's nearest hit is a geom left to it, GeomRays may see one of its own behind
    mine = np.isin(ref_id, rays.handled[0]) | (ref_id < 0)
    ref = np.where(ref <= cutoff, ref, -1.0)
    ref_id = np.where(ref >= 0, ref_id, -1)
    np.testing.assert_allclose(dist[mine], ref[mine], rtol=0, atol=1e-9)
    np.testing.assert_array_equal(geomid[mine], ref_id[mine])
    # the jointed box (group 0) and the mesh (group 3) are left to MuJoCo: `rest` says
    # whether this cast could see either
    jointed = model.geom_bodyid == model.nbody - 1
    seen_rest = [bool(mask[0] and exclude[i] != model.nbody - 1)
                 or bool(mask[3] and exclude[i] != 0) for i in range(n)]
    assert rest.tolist() == seen_rest
    assert jointed.sum() == 1


def test_many_envs_at_once_and_a_subset_equal_one_at_a_time():
    rng = np.random.default_rng(5)
    models = [_scene(np.random.default_rng(7), 12) for _ in range(4)]  # one layout
    datas = [mujoco.MjData(m) for m in models]
    mocap_pos = rng.uniform(-2, 2, (4, *datas[0].mocap_pos.shape))
    mocap_quat = rng.normal(size=(4, *datas[0].mocap_quat.shape))
    rays = GeomRays(models)
    origins, directions = rng.uniform(-2, 2, (4, 3)), _directions(rng, 4, 30)
    mask, exclude = np.ones(mujoco.mjNGROUP, np.uint8), np.full(4, -1, np.int32)
    every, every_id, _ = rays.cast(origins, directions, mask, exclude, 3.5, mocap_pos,
                                   mocap_quat, np.arange(4, dtype=np.int64))
    some, some_id, _ = rays.cast(origins[[3, 1]], directions[[3, 1]], mask, exclude[:2], 3.5,
                                 mocap_pos, mocap_quat, np.array([3, 1], np.int64))
    np.testing.assert_array_equal(some, every[[3, 1]])
    np.testing.assert_array_equal(some_id, every_id[[3, 1]])
    for e in range(4):
        datas[e].mocap_pos[:], datas[e].mocap_quat[:] = mocap_pos[e], mocap_quat[e]
        mujoco.mj_kinematics(models[e], datas[e])
        ref, ref_id = _mujoco(models[e], datas[e], origins[e : e + 1], directions[e : e + 1],
                              mask, exclude[e : e + 1])
        mine = (np.isin(ref_id, rays.handled[e]) | (ref_id < 0))[0]
        ref = np.where(ref <= 3.5, ref, -1.0)[0]
        np.testing.assert_allclose(every[e][mine], ref[mine], rtol=0, atol=1e-9)
        assert (ref[mine] > 0).sum() > 5  # the fans hit something


def test_colours_and_groups_are_read_live_at_every_cast():
    spec = mujoco.MjSpec()
    body = spec.worldbody.add_body(mocap=True, pos=[1.0, 0, 0])
    body.add_geom(type=mujoco.mjtGeom.mjGEOM_BOX, size=[0.1, 0.5, 0.5])
    model = spec.compile()
    data = mujoco.MjData(model)
    mujoco.mj_kinematics(model, data)
    rays = GeomRays([model])
    args = (np.zeros((1, 3)), np.array([[[1.0, 0, 0]]]), np.array([1, 0, 0, 0, 0, 0], np.uint8),
            np.array([-1], np.int32), np.inf, data.mocap_pos[None], data.mocap_quat[None],
            np.zeros(1, np.int64))
    assert rays.cast(*args)[0][0, 0] == 0.9
    model.geom_rgba[0, 3] = 0.0
    assert rays.cast(*args)[0][0, 0] == -1.0  # transparent: unseen, as by mj_ray
    model.geom_rgba[0, 3] = 1.0
    model.geom_group[0] = 2
    assert rays.cast(*args)[0][0, 0] == -1.0  # a group the mask leaves out
    model.geom_group[0] = 0
    data.mocap_pos[0] = [2.0, 0, 0]  # the mocap pose is state: read at the cast
    assert rays.cast(*args)[0][0, 0] == 1.9


def test_a_maps_walls_within_the_cutoff_read_what_mj_ray_reads():
    # many long upright walls around lidar origins, fans level and tilted: the walls hidden
    # behind nearer ones and those whose bounding sphere (not the wall) reaches the cutoff
    misses = hits = 0
    for seed in range(6):
        rng = np.random.default_rng(seed)
        spec = mujoco.MjSpec()
        for _ in range(40):
            yaw = rng.uniform(-np.pi, np.pi)
            spec.worldbody.add_geom(type=mujoco.mjtGeom.mjGEOM_BOX,
                                    size=[rng.uniform(0.5, 4.0), rng.uniform(0.03, 0.2), 0.5],
                                    pos=[*rng.uniform(-6, 6, 2), 0.5],
                                    quat=[np.cos(yaw / 2), 0, 0, np.sin(yaw / 2)])
        model = spec.compile()
        data = mujoco.MjData(model)
        mujoco.mj_kinematics(model, data)
        rays = GeomRays([model])
        n, nray = 8, 90
        origins = np.column_stack([rng.uniform(-5, 5, (n, 2)), np.full(n, 0.3)])
        angles = np.linspace(-np.pi, np.pi, nray, endpoint=False)
        directions = np.stack([np.cos(angles), np.sin(angles),
                               np.where(np.arange(nray) % 5 == 0, 0.2, 0.0)], axis=1)
        directions = np.repeat((directions / np.linalg.norm(directions, axis=1,
                                                            keepdims=True))[None], n, axis=0)
        mask, exclude = np.ones(mujoco.mjNGROUP, np.uint8), np.full(n, -1, np.int32)
        ref, ref_id = _mujoco(model, data, origins, directions, mask, exclude)
        for cutoff in (np.inf, 3.5, 1.5):
            dist, geomid, _ = rays.cast(origins, directions, mask, exclude, cutoff,
                                        data.mocap_pos[None].repeat(n, 0),
                                        data.mocap_quat[None].repeat(n, 0),
                                        np.zeros(n, np.int64))
            within = np.where(ref <= cutoff, ref, -1.0)
            np.testing.assert_allclose(dist, within, rtol=0, atol=1e-9)
            np.testing.assert_array_equal(geomid, np.where(within >= 0, ref_id, -1))
            hits += int((within > 0.7 * min(cutoff, 10.0)).sum())
            misses += int((within < 0).sum())
    assert hits > 100 and misses > 100  # far hits and misses both met
