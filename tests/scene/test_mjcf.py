"""MJCF models spawn into scenes (Scene.spawn_mjcf) and step in a batch of envs like MuJoCo
alone steps them: an arm with a gripper (tests/scene/mjcf/arm.xml, its gripper included from
gripper.xml, its pedestal an OBJ mesh) and a legged body (quadruped.xml)."""

from __future__ import annotations

import math
import re
import warnings
from pathlib import Path

import mujoco
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena_gym.errors import AssetWarning, SpawnError
from arena_gym.scene import SceneStore
from arena_gym.sim import Simulator

MODELS = Path(__file__).resolve().parent / "mjcf"
ARM, QUADRUPED = MODELS / "arm.xml", MODELS / "quadruped.xml"
ARM_JOINTS = ("yaw", "shoulder", "elbow", "finger_l", "finger_r")
STEPS = 500
CTRL = {"elbow": 0.5, "shoulder": -0.3, "yaw": 0.4, "grip": 0.06}


def _spawn_quietly(scene, name, mjcf, pose=(0.0, 0.0, 0.0)):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AssetWarning)  # the arm sets its own timestep
        return scene.spawn_mjcf(name, mjcf, pose=pose)


def _alone(path: Path, option: mujoco.MjOption) -> tuple[mujoco.MjModel, mujoco.MjData]:
    """The model as MuJoCo compiles it by itself, under the scene's options."""
    spec = mujoco.MjSpec.from_file(str(path))
    spec.option = option
    model = spec.compile()
    return model, mujoco.MjData(model)


def test_an_arm_with_a_gripper_steps_in_a_batch_of_envs_as_mujoco_steps_it_alone():
    store = SceneStore(3)
    yaw = math.pi / 2
    for scene in store:
        info = _spawn_quietly(scene, "arm", ARM, pose=(1.0, -2.0, yaw))
    assert info.joints == [f"env_2/arm/{j}" for j in ARM_JOINTS]
    assert info.sensors == [f"env_2/arm/{s}" for s in (
        "elbow_pos", "wrist_force", "wrist_torque", "grip_width")]
    sim = Simulator(store)
    assert sim.groups() == [("batch", [0, 1, 2])]  # one layout: one mujoco.batch
    for env in range(3):
        for actuator, value in CTRL.items():
            sim.set_ctrl(env, f"arm/{actuator}", value)
    sim.step(STEPS)

    model, data = _alone(ARM, store[0].spec.option)
    for actuator, value in CTRL.items():
        data.actuator(actuator).ctrl = value
    mujoco.mj_step(model, data, nstep=STEPS)
    rotation = np.array([[math.cos(yaw), -math.sin(yaw), 0], [math.sin(yaw), math.cos(yaw), 0],
                         [0, 0, 1]])
    wrist = rotation @ data.body("wrist").xpos + [1.0, -2.0, 0.0]
    for env, scene in enumerate(store):
        live = scene.data
        got = [live.joint(f"env_{env}/arm/{j}").qpos[0] for j in ARM_JOINTS]
        want = [data.joint(j).qpos[0] for j in ARM_JOINTS]
        # the finger equality goes through the constraint solver, which stops at its
        # tolerance (1e-8) from other start points in a larger model: 1e-7 after 1 s
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-6)
        np.testing.assert_allclose(live.body(f"env_{env}/arm/wrist").xpos, wrist, atol=1e-6)
    first = store[0].data.qpos.copy()
    for scene in store:  # the envs among themselves: bit for bit (one batch, one layout)
        np.testing.assert_array_equal(scene.data.qpos, first)
    assert data.joint("elbow").qpos[0] == pytest.approx(0.5, abs=0.05)  # the servo got there
    assert data.joint("finger_l").qpos[0] == pytest.approx(0.03, abs=0.005)  # 0.06 shared


def test_a_legged_body_falls_onto_its_feet_alike_in_every_env():
    store = SceneStore(4)
    for env, scene in enumerate(store):
        _spawn_quietly(scene, "dog", QUADRUPED, pose=(2.0 * env, 1.0, 0.3 * env))
    sim = Simulator(store)
    assert sim.groups() == [("batch", [0, 1, 2, 3])]
    sim.step(1000)  # 2 s
    heights = np.array([store[env].get_pose("dog")[0][2] for env in range(4)])
    # straight legs: two 0.14 m segments and a 0.025 m foot under the torso's centre
    assert heights == pytest.approx(0.305, abs=3e-3)
    np.testing.assert_allclose(heights, heights[0], rtol=0, atol=1e-9)
    xy = [store[env].get_pose("dog")[0][:2] - [2.0 * env, 1.0] for env in range(4)]
    assert np.abs(xy).max() < 1e-3  # fell straight down


def test_xml_text_spawns_and_the_model_leaves_with_everything_it_brought():
    store = SceneStore(1)
    scene = store[0]
    bare = scene.model
    counts = (bare.nbody, bare.ngeom, bare.nu, bare.nsensor, bare.ntendon, bare.neq, bare.nmesh)
    _spawn_quietly(scene, "arm", ARM)
    scene.spawn_mjcf("ball", '<mujoco><worldbody><body pos="0 0 1"><freejoint/>'
                     '<geom size="0.1"/></body></worldbody></mujoco>', pose=(3.0, 0.0, 0.0))
    assert scene.get_pose("ball")[0] == pytest.approx([3.0, 0.0, 1.0])
    scene.delete(["arm", "ball"])
    model = scene.model
    assert (model.nbody, model.ngeom, model.nu, model.nsensor, model.ntendon, model.neq,
            model.nmesh) == counts
    _spawn_quietly(scene, "arm", ARM)  # the same names again
    assert scene.model.nu == 4


def test_a_model_that_does_not_compile_leaves_the_scene_as_it_was(tmp_path):
    store = SceneStore(1)
    scene = store[0]
    _spawn_quietly(scene, "arm", ARM)
    before = (scene.compile_count, list(scene.entities), scene.model.nbody)
    bad = tmp_path / "bad.xml"
    bad.write_text('<mujoco><worldbody><body><joint name="j"/><geom size="0.1"/></body>'
                   '</worldbody><actuator><motor joint="nope"/></actuator></mujoco>')
    with pytest.raises(SpawnError, match=re.escape(
            "env 0: model 'bad' (bad.xml) rejected: Error: unknown transmission target 'nope' "
            "for actuator id = 0; Element name '', id 0, line 1")):
        scene.spawn_mjcf("bad", bad)
    assert (scene.compile_count, list(scene.entities), scene.model.nbody) == before
    broken = tmp_path / "broken.xml"
    broken.write_text("<mujoco><worldbody>")
    with pytest.raises(SpawnError, match=re.escape(
            "model 'broken' (broken.xml): MuJoCo rejected the model: XML parse error 14:; "
            "Error=XML_ERROR_MISMATCHED_ELEMENT")):
        scene.spawn_mjcf("broken", broken)
    with pytest.raises(SpawnError, match=re.escape(
            "model 'gone': MJCF file not found: expected a readable file, got")):
        scene.spawn_mjcf("gone", tmp_path / "gone.xml")
    assert (scene.compile_count, list(scene.entities), scene.model.nbody) == before


def test_the_scene_options_apply_and_a_warning_names_those_the_model_set():
    store = SceneStore(1, timestep=0.002)
    with pytest.warns(AssetWarning, match=re.escape(
            "env 0: model 'arm' (arm.xml) sets timestep=0.004; the scene's values apply "
            "(every env steps alike)")):
        store[0].spawn_mjcf("arm", ARM)
    assert store[0].model.opt.timestep == 0.002
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a model that sets no option: no warning
        store[0].spawn_mjcf("dog", QUADRUPED, pose=(3.0, 0.0, 0.0))
    with pytest.warns(AssetWarning, match=re.escape(
            "env 0: model 'ball' (MJCF text) sets gravity=0 0 -1, integrator=mjINT_RK4, "
            "disableflags=mjDSBL_CONTACT, enableflags=mjENBL_ENERGY, memory=1048576; the "
            "scene's values apply (every env steps alike)")):
        store[0].spawn_mjcf("ball", '<mujoco><option integrator="RK4" gravity="0 0 -1">'
                            '<flag contact="disable" energy="enable"/></option>'
                            '<size memory="1M"/><worldbody><body><freejoint/>'
                            '<geom size="0.1"/></body></worldbody></mujoco>', pose=(-3, 0, 0))
    model = store[0].model
    assert model.opt.integrator == mujoco.mjtIntegrator.mjINT_IMPLICITFAST
    assert model.opt.gravity[2] == pytest.approx(-9.81)


def test_path_roots_confine_the_model_and_every_file_it_names(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    (tmp_path / "outside.xml").write_text("<mujoco/>")
    sneaky = root / "sneaky.xml"
    sneaky.write_text('<mujoco><include file="../outside.xml"/></mujoco>')
    meshy = root / "meshy.xml"
    meshy.write_text('<mujoco><asset><mesh file="/etc/passwd"/></asset></mujoco>')
    (root / "parts").mkdir()
    (root / "parts" / "inner.xml").write_text(
        '<mujoco><include file="../../outside.xml"/></mujoco>')
    nested = root / "nested.xml"
    nested.write_text('<mujoco><include file="parts/inner.xml"/></mujoco>')
    store = SceneStore(1, path_roots=[root])
    with pytest.raises(SpawnError, match=re.escape(
            "model 'm' (nested.xml): <include file='../../outside.xml'>: expected a file "
            "inside the allowed roots")):
        store[0].spawn_mjcf("m", nested)  # named by a file that the model includes
    with pytest.raises(SpawnError, match=re.escape(
            "model 'm' (sneaky.xml): <include file='../outside.xml'>: expected a file inside "
            "the allowed roots")):
        store[0].spawn_mjcf("m", sneaky)
    with pytest.raises(SpawnError, match=re.escape(
            "model 'm' (meshy.xml): <mesh file='/etc/passwd'>: expected a file inside the "
            "allowed roots")):
        store[0].spawn_mjcf("m", meshy)
    with pytest.raises(SpawnError, match=re.escape(
            f"model 'm': MJCF file {str(tmp_path / 'outside.xml')!r}: expected a path inside "
            "the allowed roots")):
        store[0].spawn_mjcf("m", tmp_path / "outside.xml")
    # an included file's <compiler meshdir> applies to the whole model (MuJoCo's rule)
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.obj").write_text(
        "v 0 0 0\nv 0.1 0 0\nv 0 0.1 0\nv 0 0 0.1\nf 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 4\n")
    (root / "dirs.xml").write_text('<mujoco><compiler meshdir="../outside"/></mujoco>')
    escaping = root / "escaping.xml"
    escaping.write_text('<mujoco><include file="dirs.xml"/><asset><mesh name="s" '
                        'file="secret.obj"/></asset><worldbody><body><geom type="mesh" '
                        'mesh="s"/></body></worldbody></mujoco>')
    with pytest.raises(SpawnError, match=re.escape(
            "model 'm' (escaping.xml): <mesh file='secret.obj'>: expected a file inside the "
            "allowed roots")):
        store[0].spawn_mjcf("m", escaping)
    assert store[0].entities == {}
    inside = SceneStore(1, path_roots=[MODELS])
    _spawn_quietly(inside[0], "arm", ARM)  # includes and meshes inside the root: fine
    assert inside[0].model.nmesh == 1


_XML = st.one_of(
    st.text(max_size=60),
    st.builds(lambda body: f"<mujoco><worldbody>{body}</worldbody></mujoco>", st.sampled_from([
        '<body><joint type="ball"/></body>', '<geom size="-1"/>', "<body><freejoint/></body>",
        '<body name="a"/><body name="a"/>', "<site/>", "<camera/>", "<light/>", "",
        '<body><geom type="mesh" mesh="none"/></body>', '<body pos="0 0 nan"/>'])))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.one_of(st.text(max_size=8), st.integers(), st.none()), mjcf=_XML,
       pose=st.one_of(st.tuples(st.floats(), st.floats(), st.floats()),
                      st.lists(st.floats(-5, 5), max_size=4), st.text(max_size=3)))
def test_any_request_spawns_or_is_refused_with_the_scene_unchanged(name, mjcf, pose):
    store = SceneStore(1)
    scene = store[0]
    scene.spawn_mjcf("arm", ARM_TEXT)
    before = (scene.compile_count, list(scene.entities), scene.model.nbody, scene.model.nsensor)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", AssetWarning)
            scene.spawn_mjcf(name, mjcf, pose=pose)
    except SpawnError as exc:
        assert "\n" not in str(exc)  # one line
        assert (scene.compile_count, list(scene.entities), scene.model.nbody,
                scene.model.nsensor) == before
    else:
        assert scene.entities[name].kind == "model"
        assert scene.model.nbody >= before[2]


ARM_TEXT = ('<mujoco><worldbody><body name="l" pos="0 0 1"><joint name="j"/><geom size="0.1"/>'
            '<site name="s"/></body></worldbody><sensor><jointpos name="p" joint="j"/>'
            "</sensor></mujoco>")
