"""An articulated model written as MJCF (tests/sensors/mjcf/workbench.xml: an arm with a
two-finger gripper, a four-legged body, a camera above the gripper) through the façade in a
batch of envs: stepped alike, its servos moving its joints, and seen by its own camera with
segmentation (issue 34 items 3 and 5); one-shot captures, leases and the frame history."""

from __future__ import annotations

import re
from pathlib import Path

import mujoco
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from arena_gym import Simulation
from arena_gym.sensors import CameraSpec
from arena_gym.sensors.errors import SensorError

WORKBENCH = Path(__file__).resolve().parent / "mjcf" / "workbench.xml"
W, H = 160, 120  # the overhead camera's resolution in the model
GRIPPER = ("finger_l", "finger_r", "palm")


@pytest.fixture
def sim():
    # the model has no floor of its own: its legs stand on the navigation world's ground
    with Simulation(model_path=WORKBENCH, num_envs=3, floor=True) as sim:
        yield sim


def _control(sim: Simulation, **targets: float) -> None:
    for env in range(sim.num_envs):
        for actuator, value in targets.items():
            sim.simulator.set_ctrl(env, f"model/{actuator}", value)


def _kinematics(sim: Simulation, env: int) -> tuple[mujoco.MjModel, mujoco.MjData]:
    """The env's model and a private MjData at its current joint state, kinematics done."""
    model = sim.store[env].compiled
    data = mujoco.MjData(model)
    data.qpos[:] = sim.simulator.state(env, "qpos")
    mujoco.mj_kinematics(model, data)
    mujoco.mj_camlight(model, data)
    return model, data


def _project(data: mujoco.MjData, camera: int, k: np.ndarray, point: np.ndarray) -> np.ndarray:
    """(column, row) of a world point in a MuJoCo camera's image (it looks along its -z,
    image right its +x, image up its +y), row 0 at the top."""
    rel = data.cam_xmat[camera].reshape(3, 3).T @ (point - data.cam_xpos[camera])
    depth = -rel[2]
    return np.array([k[0, 2] + k[0, 0] * rel[0] / depth, k[1, 2] - k[1, 1] * rel[1] / depth])


def _top_face(model: mujoco.MjModel, data: mujoco.MjData, geom: int) -> np.ndarray:
    """The centre of a box geom's face on its local +z side (the one the camera sees)."""
    up = data.geom_xmat[geom].reshape(3, 3)[:, 2]
    return data.geom_xpos[geom] + up * model.geom_size[geom, 2]


def test_the_workbench_steps_alike_in_every_env_and_its_servos_move_its_joints(sim):
    _control(sim, elbow=0.4, finger_l=0.02, finger_r=0.02, fl_knee=0.5)
    sim.step(500)  # 1 s
    qpos = [sim.simulator.state(env, "qpos").copy() for env in range(3)]
    np.testing.assert_allclose(qpos[1], qpos[0], rtol=0, atol=1e-9)
    np.testing.assert_allclose(qpos[2], qpos[0], rtol=0, atol=1e-9)
    model = sim.store[0].compiled
    joint = {name: model.jnt_qposadr[model.joint(f"env_0/model/{name}").id]
             for name in ("elbow", "finger_l", "finger_r", "fl_knee", "yaw")}
    assert qpos[0][joint["elbow"]] == pytest.approx(0.4, abs=0.05)
    assert qpos[0][joint["finger_l"]] == pytest.approx(0.02, abs=0.002)
    assert qpos[0][joint["finger_r"]] == pytest.approx(0.02, abs=0.002)
    assert qpos[0][joint["fl_knee"]] == pytest.approx(0.5, abs=0.1)
    assert abs(qpos[0][joint["yaw"]]) < 1e-3  # not driven: held at 0


def test_segmentation_shows_each_gripper_geom_where_the_projection_puts_it(sim):
    _control(sim, finger_l=0.015, finger_r=0.015)
    sim.step(250)
    spec = CameraSpec("model", "overhead", key="seg", outputs=("rgb", "depth", "segmentation"))
    reading = sim.cameras.add(spec)
    sim.cameras.capture("seg", 0)
    assert reading.segmentation.shape == (3, H, W, 2) and reading.segmentation.dtype == np.int32
    model, data = _kinematics(sim, 0)
    camera = model.camera("env_0/model/overhead").id
    seg = reading.segmentation[0]
    for name in GRIPPER:
        geom = model.geom(f"env_0/model/{name}").id
        mask = (seg[..., 0] == geom) & (seg[..., 1] == mujoco.mjtObj.mjOBJ_GEOM)
        assert mask.sum() > 30, name
        rows, cols = np.nonzero(mask)
        expected = _project(data, camera, reading.K, _top_face(model, data, geom))
        np.testing.assert_allclose([cols.mean(), rows.mean()], expected, atol=1.5, err_msg=name)
        above = data.cam_xpos[camera][2] - _top_face(model, data, geom)[2]
        assert np.median(reading.depth[0][mask]) == pytest.approx(above, abs=0.003), name
    ground = model.geom("ground").id
    assert (seg[..., 0] == ground).mean() > 0.5  # the floor fills most of the view
    assert not ((seg[..., 0] == -1) ^ (seg[..., 1] == -1)).any()  # background is (-1, -1)


def test_segmentation_by_body_gives_each_geoms_body(sim):
    sim.cameras.add(CameraSpec("model", "overhead", key="geoms", outputs=("segmentation",)))
    sim.cameras.add(CameraSpec("model", "overhead", key="bodies", outputs=("segmentation",),
                               segment_by="body"))
    sim.step(20)
    model = sim.store[0].compiled
    geoms = sim.sensor_suite["geoms"].segmentation[0]
    bodies = sim.sensor_suite["bodies"].segmentation[0]
    drawn = geoms[..., 0] >= 0
    assert drawn.all()  # the floor is everywhere behind the arm
    np.testing.assert_array_equal(bodies[..., 0], model.geom_bodyid[geoms[..., 0]])
    assert (bodies[..., 1] == mujoco.mjtObj.mjOBJ_BODY).all()
    finger = model.body("env_0/model/finger_l").id
    assert (bodies[..., 0] == finger).sum() == (
        geoms[..., 0] == model.geom("env_0/model/finger_l").id).sum() > 30


def _turn_and_capture(sim: Simulation, yaw: float, env: int) -> tuple[int, float]:
    _control(sim, yaw=yaw)
    sim.step(100)
    return sim.cameras.capture("cam", env), sim.simulator.clock


def test_captures_count_by_one_a_lease_survives_later_captures_and_the_buffer_keeps_three(sim):
    sim.cameras.add(CameraSpec("model", "overhead", key="cam", history=3))
    sim.sensor_suite.enable("cam", [])  # no cadence: only captures render
    first, t0 = _turn_and_capture(sim, 0.0, 1)
    kept = sim.cameras.copy_rgb("cam", 1)
    with sim.cameras.lease("cam", 1) as frame:
        later = [_turn_and_capture(sim, 0.3 * k, 1) for k in range(1, 5)]
        latest = sim.cameras.copy_rgb("cam", 1)
        assert not np.array_equal(latest, kept)  # the arm turned: the frame changed
        np.testing.assert_array_equal(frame.rgb, kept)  # the lease still shows capture 1
        assert (frame.capture_id, frame.generation, frame.stamp) == (1, 1, t0)
        with pytest.raises(ValueError, match="read-only"):
            frame.rgb[0, 0, 0] = 0
    assert [first] + [i for i, _ in later] == [1, 2, 3, 4, 5]
    with pytest.raises(SensorError, match=re.escape(
            "camera 'cam': lease of capture 1 read after its context ended; lease again, or "
            "keep a copy")):
        _ = frame.rgb
    frames = sim.cameras.buffer("cam", 1, 3)
    assert [f.capture_id for f in frames] == [3, 4, 5]
    assert [f.stamp for f in frames] == [t for _, t in later[1:]]
    np.testing.assert_array_equal(frames[-1].rgb, latest)
    assert sim.cameras.buffer("cam", 0, 3) == []  # env 0: nothing captured


def test_a_lease_read_after_reload_raises_and_the_camera_is_back_in_the_new_load(sim):
    generation = sim.load_count
    sim.cameras.add(CameraSpec("model", "overhead", key="cam", outputs=("rgb", "segmentation")))
    sim.step(20)
    captured = sim.cameras.capture("cam", 2)  # after the cadence's frames
    with sim.cameras.lease("cam", 2) as frame:
        assert frame.segmentation.shape == (H, W, 2) and frame.capture_id == captured > 1
        sim.reload()
        with pytest.raises(SensorError, match=re.escape(
                f"camera 'cam': lease of capture {captured} is from generation {generation}, the "
                f"simulation is at {generation + 1} (reloaded since); lease again")):
            _ = frame.rgb
    assert sim.cameras.capture("cam", 2) == 1  # added again: a new reading, counting anew
    with sim.cameras.lease("cam", 2) as again:
        assert again.generation == generation + 1 and again.rgb.shape == (H, W, 3)


def test_a_camera_the_model_lacks_is_named_with_close_names(sim):
    with pytest.raises(SensorError, match=re.escape(
            "env 0: model 'model' has no camera named 'overhed'; did you mean 'overhead'? "
            "(it has ['overhead'])")):
        sim.cameras.add(CameraSpec("model", "overhed"))
    assert "model/overhed" not in sim.sensor_suite and not sim.sensor_suite.units  # nothing added


def test_buffers_captures_and_leases_say_what_they_expected(sim):
    sim.cameras.add(CameraSpec("model", "overhead", key="cam", history=2))
    sim.cameras.add(CameraSpec("model", "overhead", key="plain", outputs=("depth",)))
    with pytest.raises(SensorError, match=re.escape(
            "camera 'cam': expected last_n in [1, 2] (the spec's history), got 3")):
        sim.cameras.buffer("cam", 0, 3)
    with pytest.raises(SensorError, match=re.escape(
            "camera 'plain': expected a spec with history > 0 (frames kept per env), got "
            "history=0")):
        sim.cameras.buffer("plain", 0, 1)
    with pytest.raises(SensorError, match=re.escape("env: expected an env id in [0, 3), got 3")):
        sim.cameras.capture("cam", 3)
    with pytest.raises(SensorError, match=re.escape(
            "camera 'plain': env 1 has no frame yet (step or capture first)")):
        sim.cameras.lease("plain", 1)
    sim.cameras.capture("plain", 1)
    with sim.cameras.lease("plain", 1) as frame, pytest.raises(SensorError, match=re.escape(
            "camera 'plain': expected one of its outputs ['depth'], got 'rgb'")):
        _ = frame.rgb


@given(st.one_of(st.integers(max_value=-1), st.integers(min_value=1025), st.floats(),
                 st.text(), st.booleans(), st.none()))
def test_a_camera_history_outside_its_range_is_refused(history):
    with pytest.raises(SensorError, match=re.escape(
            f"CameraSpec.history: expected an integer in [0, 1024] (frames kept per env), "
            f"got {history!r}")):
        CameraSpec("model", history=history)


@given(st.text().filter(lambda s: s not in ("geom", "body")))
def test_segment_by_names_geom_or_body(segment_by):
    with pytest.raises(SensorError, match=re.escape(
            f"CameraSpec.segment_by: expected one of ['geom', 'body'], got {segment_by!r}")):
        CameraSpec("model", outputs=("segmentation",), segment_by=segment_by)
