"""The MJX backend's model adaptation, measured in C MuJoCo (no JAX needed): where the
adapted robot (sphere chassis and lidar housing, wheels touching the floor only) collides
and the CPU env's does not."""

from __future__ import annotations

import re

import mujoco
import numpy as np
import pytest

from arena_gym.config import load_config
from arena_gym.geometry.rotations import yaw_quat
from arena_gym.mjx.model import UnsupportedConfig, build_layout, check_config

SPEED = 2.84  # rad/s, the arena_diffbot's fastest turn


@pytest.fixture(scope="module")
def layout():
    return build_layout(load_config(base="wheeled"))


def _turn_collides(layout, model: mujoco.MjModel, gap: float, seconds: float = 0.6) -> bool:
    """Turn on the spot with the robot's centre `gap` m from the north wall's face (pool
    parked): whether the collision rule fires at any physics step."""
    data = mujoco.MjData(model)
    a = layout.qpos_adr
    data.qpos[a:a + 7] = [0.0, layout.room.half_inner - gap, layout.spawn_z, *yaw_quat(0.0)]
    data.ctrl[layout.actuators] = layout.drive @ np.array([0.0, 0.0, SPEED])
    for _ in range(round(seconds / model.opt.timestep)):
        mujoco.mj_step(model, data)
        geoms = data.contact.geom[:data.ncon]
        hit = (data.contact.dist[:data.ncon] < 0) & layout.collision[geoms[:, 0], geoms[:, 1]]
        if hit.any():
            return True
    return False


def test_the_adapted_robot_misses_only_the_wheel_rims_band(layout):
    # the rims reach hypot(0.085, 0.033) = 0.091 m from the centre when turning, the chassis
    # 0.075 m: within that band only the CPU robot touches the wall
    cpu, mjx = layout.cpu_model, layout.model
    assert _turn_collides(layout, cpu, 0.070) and _turn_collides(layout, mjx, 0.070)
    assert _turn_collides(layout, cpu, 0.085) and not _turn_collides(layout, mjx, 0.085)
    assert not _turn_collides(layout, cpu, 0.095) and not _turn_collides(layout, mjx, 0.095)


def test_no_cylinder_touches_a_box_in_the_adapted_model(layout):
    # MJX has no cylinder-box collision: every cylinder left collides with the plane only
    m = layout.model
    cyl = m.geom_type == mujoco.mjtGeom.mjGEOM_CYLINDER
    box = m.geom_type == mujoco.mjtGeom.mjGEOM_BOX
    for c in np.flatnonzero(cyl):
        for b in np.flatnonzero(box):
            assert not (m.geom_contype[c] & m.geom_conaffinity[b]
                        or m.geom_contype[b] & m.geom_conaffinity[c])
    assert m.nsensor == 0 and m.nmat >= 1


def test_rolling_on_the_floor_is_unchanged(layout):
    # the wheels keep their cylinders on the floor: 2 s of a curve end where the CPU's does
    ends = []
    for model in (layout.cpu_model, layout.model):
        data = mujoco.MjData(model)
        a = layout.qpos_adr
        data.qpos[a:a + 7] = [0.0, 0.0, layout.spawn_z, *yaw_quat(0.0)]
        data.ctrl[layout.actuators] = layout.drive @ np.array([0.2, 0.0, 1.0])
        for _ in range(round(2.0 / model.opt.timestep)):
            mujoco.mj_step(model, data)
        ends.append(data.qpos[a:a + 3].copy())
    assert np.abs(ends[0] - ends[1]).max() < 1e-6


def test_unsupported_configs_are_refused_by_name():
    with pytest.raises(UnsupportedConfig, match=re.escape(
            "num_pedestrians: the MJX backend expects 0, got 3")):
        check_config(load_config(num_pedestrians=3, base="wheeled"))
    with pytest.raises(UnsupportedConfig, match=re.escape(
            "action: the MJX backend expects 'continuous', got 'discrete'")):
        check_config(load_config(action="discrete", base="wheeled"))
    with pytest.raises(UnsupportedConfig, match=re.escape(
            "base: the MJX backend expects 'wheeled' (base=\"wheeled\"), got 'planar'")):
        check_config(load_config(base="planar"))
