"""Camera: depth against known distances, RGB against the projection, the point cloud's
axes, the renderer pool across recompiles, shared renders, and GL failures."""

from __future__ import annotations

import math
import re
import threading

import numpy as np
import pytest

from arena_gym.scene import Prim, SceneStore, Wall
from arena_gym.sensors import CameraSpec, LidarSpec, SensorSuite, camera
from arena_gym.sensors.errors import SensorError
from arena_gym.sim import Simulator
from tests.sensors.worlds import SCAN_HEIGHT, camera_block, lidar_block, probe_urdf

W, H = 64, 48
CAM_Z = SCAN_HEIGHT + 0.1  # the camera block's pose: 0.1 m above the scan link
WALL_X = 3.0  # inner face of the wall ahead


def _world(*, far=50.0, near=0.1, box=True, num_envs=1) -> SceneStore:
    store = SceneStore(num_envs)
    for env in range(num_envs):
        camera = camera_block(width=W, height=H, far=far, near=near)
        store[env].spawn_urdf("probe", probe_urdf(camera, lidar_block(samples=36)))
        store[env].spawn_walls([Wall("ahead", (WALL_X + 0.05, -4), (WALL_X + 0.05, 4), 2.0)])
        if box:  # a red cube, its face 1.4 m ahead, 0.2-0.6 m to the left, at the camera's height
            store[env].spawn_prims([Prim("red", pose=(1.6, 0.4, CAM_Z, 0.0), scale=(0.4, 0.4, 0.4),
                                         rgba=(1.0, 0.0, 0.0, 1.0))])
    return store


def _suite(store, *specs, steps=10):
    sim = Simulator(store)
    suite = SensorSuite(sim, specs=specs, seed=0)
    sim.step(steps)
    return sim, suite


ALL = CameraSpec("probe", outputs=("rgb", "depth", "points"))


def test_depth_at_the_centre_is_the_distance_to_the_wall_ahead():
    _, suite = _suite(_world(box=False), ALL)
    reading = suite["probe/camera"]
    assert reading.valid.all()
    centre = reading.depth[0, H // 2 - 1 : H // 2 + 1, W // 2 - 1 : W // 2 + 1]
    assert reading.depth.dtype == np.float32 and reading.depth.shape == (1, H, W)
    np.testing.assert_allclose(centre, WALL_X, rtol=0.01)
    assert reading.rgb.dtype == np.uint8 and reading.rgb.shape == (1, H, W, 3)


def test_camera_info_matches_the_declared_optics():
    _, suite = _suite(_world(box=False), ALL)
    reading = suite["probe/camera"]
    f = (W / 2) / math.tan(1.0472 / 2)
    np.testing.assert_allclose(reading.K, [[f, 0, (W - 1) / 2], [0, f, (H - 1) / 2], [0, 0, 1]])
    np.testing.assert_allclose(reading.P[:, :3], reading.K)
    assert reading.period == pytest.approx(1 / 30)


def test_rgb_shows_the_red_box_where_the_projection_puts_it():
    _, suite = _suite(_world(), ALL)
    reading = suite["probe/camera"]
    rgb = reading.rgb[0].astype(int)
    red = (rgb[..., 0] > 120) & (rgb[..., 1] < 60) & (rgb[..., 2] < 60)
    rows, cols = np.nonzero(red)
    assert red.sum() > 150
    k = reading.K
    # the cube's front face: x = 1.4, y in [0.2, 0.6], z in CAM_Z +- 0.2 (camera at x 0)
    u = k[0, 2] - k[0, 0] * np.array([0.6, 0.2]) / 1.4  # left of the image is +y
    v = k[1, 2] - k[1, 1] * np.array([0.2, -0.2]) / 1.4  # up is +z
    assert cols.min() == pytest.approx(u[0], abs=1.5) and cols.max() == pytest.approx(u[1], abs=1.5)
    assert rows.min() == pytest.approx(v[0], abs=1.5) and rows.max() == pytest.approx(v[1], abs=1.5)
    depth = reading.depth[0][red]
    assert np.median(depth) == pytest.approx(1.4, rel=0.01)


def test_point_cloud_axes_are_x_forward_y_left_z_up():
    _, suite = _suite(_world(), ALL)
    reading = suite["probe/camera"]
    points = reading.points[0].reshape(H, W, 3)
    rgb = reading.rgb[0].astype(int)
    red = (rgb[..., 0] > 120) & (rgb[..., 1] < 60)
    box = points[red]
    np.testing.assert_allclose(np.median(box, axis=0), [1.4, 0.4, 0.0], atol=0.03)
    wall = points[H // 2, W // 2]
    np.testing.assert_allclose(wall, [WALL_X, 0.0, 0.0], atol=0.05)
    assert points[0, W // 2, 2] > 0.5 and points[H - 1, W // 2, 2] < 0  # top row up, bottom down


def test_depth_is_plus_inf_past_the_far_clip_and_minus_inf_before_the_near_one():
    store = _world(far=2.5, near=0.5, box=False)
    store[0].spawn_prims([Prim("close", pose=(0.35, -0.1, CAM_Z, 0.0), scale=(0.1, 0.1, 0.1))])
    _, suite = _suite(store, ALL)
    depth = suite["probe/camera"].depth[0]
    assert np.all(depth[H // 2 - 2 : H // 2 + 2, W // 2 - 2 : W // 2 + 2] == np.inf)  # wall at 3 m
    k = suite["probe/camera"].K
    u = round(k[0, 2] + k[0, 0] * 0.1 / 0.3)  # the close box's face: 0.3 m ahead
    assert depth[H // 2, u] == -np.inf


def test_the_renderer_is_rebuilt_when_a_recompile_swaps_the_model():
    sim, suite = _suite(_world(box=False), ALL)
    reading = suite["probe/camera"]
    (first,) = suite.renderers._renderers.values()
    before = reading.depth[0, H // 2, W // 2]
    sim.store[0].spawn_prims([Prim("blocker", pose=(1.0, 0.0, CAM_Z, 0.0), scale=(0.1, 1.0, 1.0))])
    sim.step(20)
    (second,) = suite.renderers._renderers.values()
    assert second is not first and second.model is sim.store.scenes[0].compiled
    assert before == pytest.approx(WALL_X, rel=0.01)
    assert reading.depth[0, H // 2, W // 2] == pytest.approx(0.95, rel=0.01)  # the new box


def on_thread(fn) -> None:
    """Run fn on a thread of its own, to its end; its exception is raised here."""
    errors: list[BaseException] = []

    def run() -> None:
        try:
            fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the caller
            errors.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    if errors:
        raise errors[0]


def test_renderers_made_on_one_thread_close_from_another():
    sim, suite = _suite(_world(box=False), ALL, steps=0)
    on_thread(lambda: sim.step(10))  # the renders run while that thread lives
    (first,) = suite.renderers._renderers.values()
    suite.renderers.close()  # here, on another thread: EGL_BAD_ACCESS if not handed over
    assert len(suite.renderers) == 0 and first.context._context is None  # its EGL context freed
    on_thread(lambda: sim.step(10))  # rendering again after a close
    assert suite["probe/camera"].depth[0, H // 2, W // 2] == pytest.approx(WALL_X, rel=0.01)
    (second,) = suite.renderers._renderers.values()
    on_thread(suite.renderers.close)  # from a third thread
    assert len(suite.renderers) == 0 and second.context._context is None


def count_renders(monkeypatch) -> list[int]:
    """A list that grows by one with every camera render from now on."""
    renders: list[int] = []
    original = camera._Renderer.render

    def counting(self, *args, **kwargs):
        renders.append(1)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(camera._Renderer, "render", counting)
    return renders


def test_specs_naming_one_camera_share_one_render_per_sim_time(monkeypatch):
    renders = count_renders(monkeypatch)
    rgb = CameraSpec("probe", outputs=("rgb",), key="rgb", rate=25.0)
    depth = CameraSpec("probe", outputs=("depth",), key="depth", rate=25.0)
    sim, suite = _suite(_world(box=False), rgb, depth, LidarSpec("probe"), steps=0)
    assert len(suite.renderers) == 0  # nothing rendered before it is due
    sim.step(100)  # ticks at 20, 40, ... 200 ms; due at 0, 40, ... 200 ms: 6 renders
    assert len(renders) == 6
    assert suite["rgb"].count[0] == suite["depth"].count[0] == 6
    assert suite["rgb"].depth is None and suite["depth"].rgb is None


def test_enable_renders_only_the_envs_named_and_none_when_empty(monkeypatch):
    renders = count_renders(monkeypatch)
    sim, suite = _suite(_world(box=False, num_envs=2), CameraSpec("probe", key="cam", rate=25.0),
                        steps=0)
    suite.enable("cam", [])
    sim.step(100)
    assert renders == [] and len(suite.renderers) == 0  # nobody watches: no render at all
    assert suite["cam"].count.tolist() == [0, 0]
    suite.enable("cam", [1])
    sim.step(100)  # at once (0.22 s), then on the 25 Hz grid: 0.24, 0.28, ... 0.4 s; env 1 only
    assert len(renders) == 6 and suite["cam"].count.tolist() == [0, 6]
    assert suite["cam"].valid.tolist() == [False, True]
    suite.enable("cam")
    sim.step(20)  # 0.42 s, 0.44 s: due at 0.44 s in both envs
    assert suite["cam"].count.tolist() == [1, 7]


def test_enable_rejects_unknown_envs_and_changes_nothing():
    sim, suite = _suite(_world(box=False, num_envs=2), CameraSpec("probe", key="cam"), steps=0)
    suite.enable("cam", [0])
    for bad in ([2], [-1], [0.0], [True]):
        with pytest.raises(SensorError, match=re.escape(
                f"enable: expected env ids in [0, 2), got {bad!r}")):
            suite.enable("cam", bad)
    sim.step(10)
    assert suite["cam"].count.tolist() == [1, 0]


def test_no_camera_spec_no_renderer():
    _, suite = _suite(_world(box=False), LidarSpec("probe"))
    assert len(suite.renderers) == 0


def test_a_gl_failure_degrades_to_no_images_with_a_warning(monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("eglInitialize failed")

    monkeypatch.setattr(camera, "_gl_context_class", lambda: broken)
    store = _world(box=False)
    sim = Simulator(store)
    suite = SensorSuite(sim, specs=[ALL, LidarSpec("probe")])
    with pytest.warns(RuntimeWarning, match="camera rendering unavailable .*: RuntimeError: "
                                            "eglInitialize failed; camera readings stay empty"):
        sim.step(10)
    sim.step(10)  # no second warning, no exception
    assert not suite["probe/camera"].valid.any()
    assert suite["probe/lidar"].valid.all()


@pytest.mark.parametrize("pitch", [0.7, 1.1])
def test_depth_of_the_floor_seen_at_an_angle_is_exact_at_every_pixel_centre(pitch):
    """A tilted camera over the bare floor: every pixel's depth is where its ray through
    the pixel centre (K) meets z = 0, to 0.1 mm; multisampling would read 0.375 px off."""
    store = SceneStore(1)
    store[0].spawn_urdf("probe", probe_urdf(camera_block(width=81, height=61, near=0.05,
                                                         far=20.0, pose=f"0 0 0.1 0 {pitch} 0")))
    _, suite = _suite(store, CameraSpec("probe", outputs=("depth", "points")))
    reading = suite["probe/camera"]
    mount = next(m for m in store[0].robot("probe").sensor_mounts if m.kind == "camera")
    model, data = store[0].model, store[0].data
    site = model.site(mount.site).id
    origin, rot = data.site_xpos[site], data.site_xmat[site].reshape(3, 3)
    rays = camera._pixel_rays(suite.units[("camera", "probe", "")].lens).astype(np.float64)
    world = rays @ rot.T
    expected = (-origin[2] / world[:, 2]).reshape(61, 81)
    assert (world[:, 2] < 0).all() and expected.max() < 20.0  # every pixel sees the floor
    np.testing.assert_allclose(reading.depth[0], expected, atol=1e-4, rtol=0)
    hits = origin + reading.points[0].astype(np.float64) @ rot.T
    np.testing.assert_allclose(hits[:, 2], 0.0, atol=2e-4)
