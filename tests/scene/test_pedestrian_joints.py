"""Skinned pedestrians posed from ROS4HRI joint angles (as Arena's task generator sends
them): the zero stance, a knee turned about its axis, standing on the soles (checked with
MuJoCo's own skin data), clips and angles taking turns, bad angles refused."""

from __future__ import annotations

import math
import pickle
import re
import shutil
import warnings
from pathlib import Path

import mujoco
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena_gym.errors import AssetWarning
from arena_gym.people.actors import load_actor
from arena_gym.people.body_joints import NAMES
from arena_gym.people.joint_rig import forget_rigs, joint_rig
from arena_gym.people.skins import bone_rows
from arena_gym.scene import Pedestrian, SceneError, SceneStore
from tests.conftest import require

SLOT = "env_0/pedestrians/slot_0"


@pytest.fixture()
def actor(assets):
    require("collada", "pip install pycollada")
    return str((assets / "pedestrians" / "actor2.sdf").resolve())


def _spawned(actor, pose=(1.0, 2.0, 0.7)):
    store = SceneStore(1)
    store.spawn_pedestrians([Pedestrian("env_0/w", pose, actor=actor)])
    return store


def _bones(store, count) -> tuple[np.ndarray, np.ndarray]:
    """World positions (bones, 3) and rotations (bones, 3, 3) of slot 0's bone bodies."""
    model, data = store[0].model, store[0].data
    ids = [model.body(f"{SLOT}/bone_{j}").id for j in range(count)]
    return data.xpos[ids].copy(), data.xmat[ids].reshape(-1, 3, 3).copy()


def _placed(pose, local) -> tuple[np.ndarray, np.ndarray]:
    """World positions and rotations of actor-frame poses `local` at pose (x, y, yaw)."""
    c, s = math.cos(pose[2]), math.sin(pose[2])
    rot = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
    return local[:, :3, 3] @ rot.T + [pose[0], pose[1], 0.0], rot @ local[:, :3, :3]


def _skin_lowest(store) -> float:
    """The lowest vertex of slot 0's skins as MuJoCo would draw them: its compiled skin
    data (bind poses, vertices, weights) and the bone bodies' poses, in float64."""
    model, data = store[0].model, store[0].data
    low = np.inf
    for s in range(model.nskin):
        if not model.skin(s).name.startswith(SLOT + "/skin_"):
            continue
        adr, num = model.skin_vertadr[s], model.skin_vertnum[s]
        verts = model.skin_vert[adr:adr + num].astype(float)
        out = np.zeros_like(verts)
        for b in range(model.skin_boneadr[s], model.skin_boneadr[s] + model.skin_bonenum[s]):
            bind = np.empty(9)
            mujoco.mju_quat2Mat(bind, model.skin_bonebindquat[b].astype(float))
            first, n = model.skin_bonevertadr[b], model.skin_bonevertnum[b]
            ids = model.skin_bonevertid[first:first + n]
            w = model.skin_bonevertweight[first:first + n].astype(float)
            body = model.skin_bonebodyid[b]
            local = (verts[ids] - model.skin_bonebindpos[b]) @ bind.reshape(3, 3)
            out[ids] += w[:, None] * (local @ data.xmat[body].reshape(3, 3).T + data.xpos[body])
        low = min(low, float(out[:, 2].min()))
    return low


def test_zero_angles_give_the_arms_down_zero_stance(actor):
    store = _spawned(actor)
    asset, rig = load_actor(actor), joint_rig(actor)
    store.update_pedestrians([Pedestrian("env_0/w", (1.5, 2.0, 0.7),
                                         joints=dict.fromkeys(NAMES, 0.0))])
    pos, rot = _bones(store, len(asset.bones))
    want_pos, want_rot = _placed((1.5, 2.0, 0.7), rig.neutral)
    np.testing.assert_allclose(pos, want_pos, rtol=0, atol=1e-9)
    np.testing.assert_allclose(rot, want_rot, rtol=0, atol=1e-9)
    arm, hand = asset.bones.index("LeftArm"), asset.bones.index("LeftHand")
    assert pos[hand, 2] < pos[arm, 2] - 0.5  # the arms hang (the bind pose is a T-pose)
    assert _skin_lowest(store) == pytest.approx(0.0, abs=1e-6)


def test_a_knee_angle_turns_the_shin_about_its_axis_and_the_soles_stay_on_the_floor(actor):
    store = _spawned(actor)
    asset, rig = load_actor(actor), joint_rig(actor)
    pose = (1.0, 2.0, 0.7)
    store.update_pedestrians([Pedestrian("env_0/w", pose, joints={"l_knee": -math.pi / 2})])
    pos, rot = _bones(store, len(asset.bones))
    n_pos, n_rot = _placed(pose, rig.neutral)
    hips, knee, foot = (asset.bones.index(b) for b in ("Hips", "LeftLeg", "LeftFoot"))
    # the knee's axis is the body's -y (ROS4HRI: a knee bends at negative angles), so
    # -90 deg about it is +90 deg about the body's y: the shin swings back to horizontal
    yaw = np.array([[math.cos(0.7), -math.sin(0.7), 0], [math.sin(0.7), math.cos(0.7), 0],
                    [0, 0, 1]])
    turn = yaw @ np.array([[0.0, 0.0, 1.0], [0.0, 1.0, 0.0], [-1.0, 0.0, 0.0]]) @ yaw.T
    lift = pos[hips] - n_pos[hips]  # standing on the soles moves the whole body only
    np.testing.assert_allclose(lift[:2], 0.0, atol=1e-9)
    np.testing.assert_allclose(pos[knee], n_pos[knee] + lift, rtol=0, atol=1e-9)
    np.testing.assert_allclose(pos[foot], pos[knee] + turn @ (n_pos[foot] - n_pos[knee]),
                               rtol=0, atol=1e-9)
    np.testing.assert_allclose(rot[knee], turn @ n_rot[knee], rtol=0, atol=1e-9)
    assert pos[foot, 2] == pytest.approx(pos[knee, 2], abs=0.02)  # the shin is level
    assert _skin_lowest(store) == pytest.approx(0.0, abs=1e-6)


def test_on_tiptoe_the_skeleton_rises_onto_its_toes(actor):
    store = _spawned(actor)
    asset, rig = load_actor(actor), joint_rig(actor)
    store.update_pedestrians([Pedestrian("env_0/w", (1.0, 2.0, 0.7),
                                         joints={"l_ankle": -0.6, "r_ankle": -0.6})])
    pos, _ = _bones(store, len(asset.bones))
    assert pos[0, 2] > rig.neutral[0, 2, 3] + 0.05  # lifted: the toes, not the heels, touch
    assert _skin_lowest(store) == pytest.approx(0.0, abs=1e-6)


def test_angles_pause_the_clip_until_an_update_without_them(actor):
    store = _spawned(actor, (2.0, 0.0, math.pi))
    asset, rig = load_actor(actor), joint_rig(actor)
    walk = asset.clips["walking"]
    pool = store.scene(0).pedestrians
    store.update_pedestrians([Pedestrian("env_0/w", (1.9, 0.0, math.pi))])
    cursor = pool.cursor[0]
    assert cursor == pytest.approx(0.1 / walk.stride * walk.duration)  # walking
    bent = {"l_knee": -0.8, "r_r_hip": 0.4}
    for x in (1.8, 1.7):  # moving with angles: posed from them, the clip stays paused
        store.update_pedestrians([Pedestrian("env_0/w", (x, 0.0, math.pi), joints=bent)])
        assert pool.cursor[0] == cursor
        want = _placed((x, 0.0, math.pi), rig.poses(np.array([[bent.get(n, 0.0)
                                                                for n in NAMES]]))[0])
        np.testing.assert_allclose(_bones(store, len(asset.bones))[0], want[0], atol=1e-9)
    store.update_pedestrians([Pedestrian("env_0/w", (1.6, 0.0, math.pi))])  # clips again
    assert pool.cursor[0] == pytest.approx(cursor + 0.1 / walk.stride * walk.duration)
    want = bone_rows((1.6, 0.0, math.pi), walk, pool.cursor[0], asset)[0]
    np.testing.assert_allclose(_bones(store, len(asset.bones))[0], want, atol=1e-9)


def _state(store) -> bytes:
    data = store[0].data
    return data.mocap_pos.tobytes() + data.mocap_quat.tobytes()


def test_bad_angles_are_refused_and_change_nothing(actor):
    store = _spawned(actor)
    store.update_pedestrians([Pedestrian("env_0/w", (1.0, 2.0, 0.7), joints={"waist": 0.3})])
    before = _state(store)
    with pytest.raises(SceneError, match=re.escape(
            "Pedestrian 'env_0/w' joint 'l_knee': expected a finite angle (rad), got nan")):
        store.update_pedestrians([Pedestrian("env_0/w", (1.2, 2.0, 0.7),
                                             joints={"l_knee": float("nan")})])
    with pytest.raises(SceneError, match=re.escape(
            "Pedestrian 'env_0/w' joints: unknown joint 'knee_left'; expected one of "
            + ", ".join(NAMES))):
        store.update_pedestrians([Pedestrian("env_0/w", (1.2, 2.0, 0.7),
                                             joints={"knee_left": -0.5})])
    assert _state(store) == before


def test_a_skeleton_without_a_joint_table_is_refused_before_anything_moves(actor, tmp_path):
    folder = tmp_path / "odd"
    folder.mkdir()
    shutil.copy(actor, folder / "odd.sdf")
    dae = (Path(actor).parent / "walk.dae").read_text()
    (folder / "walk.dae").write_text(dae.replace("LeftArm", "ArmL"))  # an unknown family
    odd = str(folder / "odd.sdf")
    store = SceneStore(1)
    store.spawn_pedestrians([Pedestrian("env_0/w", (1.0, 2.0, 0.0), actor=odd)])
    before = _state(store)
    bones = ", ".join(load_actor(odd).bones)
    with pytest.raises(SceneError, match=re.escape(
            "actor 'odd': expected a skeleton with a joint table (cmu (Gazebo's walk.dae); "
            f"visitor (MaleVisitorPhone)), got one with bones {bones}")):
        store.update_pedestrians([Pedestrian("env_0/w", (1.5, 2.0, 0.0), joints={})])
    assert _state(store) == before


def test_a_joint_the_skeleton_lacks_is_reported_once(assets):
    require("collada", "pip install pycollada")
    visitor = str((assets / "pedestrians" / "MaleVisitorPhone" / "model.sdf").resolve())
    forget_rigs()  # a fresh rig: nothing reported yet
    store = _spawned(visitor)
    angles = {"l_y_collar": 0.2, "l_knee": -0.5}
    with pytest.warns(AssetWarning, match=re.escape(
            "actor 'model': its skeleton (visitor) has no bone for joint 'l_y_collar'; that "
            "angle is ignored")):
        store.update_pedestrians([Pedestrian("env_0/w", (1.0, 2.0, 0.0), joints=angles)])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a second report would fail here
        store.update_pedestrians([Pedestrian("env_0/w", (1.1, 2.0, 0.0), joints=angles)])


names = st.one_of(st.sampled_from(NAMES), st.text(max_size=8))
values = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.sampled_from(["x", None]))


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(names, values, max_size=4))
def test_random_joint_angles_are_kept_as_given_or_refused_with_the_first_problem(joints):
    bad = next(((n, v) for n, v in joints.items() if n not in NAMES
                or not isinstance(v, float) or not math.isfinite(v)), None)
    if bad is None:
        ped = Pedestrian("env_0/p", joints=joints)
        assert dict(ped.joints) == joints and pickle.loads(pickle.dumps(ped)) == ped
        return
    name, value = bad
    if name not in NAMES:
        text = f"joints: unknown joint {name!r}; expected one of {', '.join(NAMES)}"
    elif isinstance(value, float):
        text = f"joint {name!r}: expected a finite angle (rad), got {value!r}"
    else:
        text = f"joint {name!r}: expected an angle (rad), got {value!r}"
    with pytest.raises(SceneError, match=re.escape(f"Pedestrian 'env_0/p' {text}")):
        Pedestrian("env_0/p", joints=joints)
