"""A skinned pedestrian over the services, from a real rclpy process: spawned wearing an
actor, posed from joint angles (the bones where the joint rig puts them), then walking its
clip again without angles; bad joint lists and a missing actor answer success=false and
change nothing."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tests.conftest import require

SRV = "arena_gym_interfaces/srv/"
ENV = 0


def ped(x: float, y: float = 0.5, yaw: float = 0.0, **fields) -> dict:
    return {"name": "skinned", "x": x, "y": y, "yaw": yaw, **fields}


def update(probe, *peds: dict) -> dict:
    return probe.call("/mujoco/update_pedestrians", SRV + "UpdatePedestrians", env_id=ENV,
                      pedestrians=list(peds))


def bones(store, count: int) -> np.ndarray:
    """mocap_pos rows (count, 3) of the skinned pedestrian's bone bodies."""
    model, pool = store[ENV].model, store.scene(ENV).pedestrians
    body = pool.bodies[pool.slots["skinned"]]
    return store[ENV].data.mocap_pos[[model.body_mocapid[model.body(f"{body}/bone_{j}").id]
                                      for j in range(count)]].copy()


def state(store) -> bytes:
    data = store[ENV].data
    return data.mocap_pos.tobytes() + data.mocap_quat.tobytes()


@pytest.fixture(scope="module")
def actor(assets) -> str:
    require("collada", "pip install pycollada")
    return str((assets / "pedestrians" / "actor2.sdf").resolve())


@pytest.fixture(scope="module")
def skinned(bridge, probe, actor):
    reply = probe.call("/mujoco/spawn_pedestrians", SRV + "SpawnPedestrians", env_id=ENV,
                       pedestrians=[ped(1.0, actor=actor)])
    assert reply["success"], reply["message"]
    return bridge.sim.store


def test_joint_angles_pose_the_bones_as_the_joint_rig_does(skinned, probe, actor):
    from arena_gym.people.actors import load_actor
    from arena_gym.people.body_joints import NAMES
    from arena_gym.people.joint_rig import joint_rig

    asset, rig = load_actor(actor), joint_rig(actor)
    yaw = 0.4
    reply = update(probe, ped(1.1, yaw=yaw, joint_names=["r_knee"], joint_angles=[-1.2]))
    assert reply["success"], reply["message"]
    pool = skinned.scene(ENV).pedestrians
    assert pool.posed[pool.slots["skinned"]]  # angle mode: the clip is paused
    local = rig.poses(np.array([[-1.2 if n == "r_knee" else 0.0 for n in NAMES]]))[0]
    rot = np.array([[math.cos(yaw), -math.sin(yaw), 0.0], [math.sin(yaw), math.cos(yaw), 0.0],
                    [0.0, 0.0, 1.0]])
    want = local[:, :3, 3] @ rot.T + [1.1, 0.5, 0.0]
    got = bones(skinned, len(asset.bones))
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-9)
    foot = asset.bones.index("RightFoot")
    neutral = rig.neutral[foot, :3, 3] @ rot.T + [1.1, 0.5, 0.0]
    assert np.linalg.norm(got[foot] - neutral) > 0.2  # the bent knee swung the foot back


@pytest.mark.parametrize(("names", "angles", "message"), [
    (["r_knee", "l_knee"], [-1.2],
     "update_pedestrians: Pedestrian 'skinned': expected as many joint_angles as "
     "joint_names, got 1 and 2"),
    (["r_knee", "l_knee", "r_knee"], [-1.2, -0.3, 0.1],
     "update_pedestrians: Pedestrian 'skinned': expected each joint name once, got "
     "'r_knee' more than once"),
])
def test_bad_joint_lists_are_refused_and_change_nothing(skinned, probe, names, angles,
                                                         message):
    before = state(skinned), skinned.scene(ENV).pedestrians.cursor.copy()
    reply = update(probe, ped(1.3, joint_names=names, joint_angles=angles))
    assert (reply["success"], reply["message"]) == (False, message)
    assert (state(skinned), skinned.scene(ENV).pedestrians.cursor.tolist()) == \
        (before[0], before[1].tolist())


def test_a_missing_actor_is_refused(skinned, probe):
    before = list(skinned[ENV].entities), skinned[ENV].compile_count, state(skinned)
    reply = probe.call("/mujoco/spawn_pedestrians", SRV + "SpawnPedestrians", env_id=ENV,
                       pedestrians=[ped(2.0, name="other", actor="/no/such/actor.sdf")])
    assert (reply["success"], reply["message"]) == (
        False, "spawn_pedestrians: actor '/no/such/actor.sdf': expected an existing SDF "
               "file, got none")
    assert (list(skinned[ENV].entities), skinned[ENV].compile_count, state(skinned)) == before


def test_without_angles_the_clip_plays_again(skinned, probe):
    pool = skinned.scene(ENV).pedestrians
    slot = pool.slots["skinned"]
    cursor = pool.cursor[slot]
    reply = update(probe, ped(1.2, joint_names=[], joint_angles=[]))
    assert reply["success"], reply["message"]
    assert not pool.posed[slot]
    assert pool.cursor[slot] > cursor  # walked on: the clip advanced
