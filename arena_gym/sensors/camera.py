"""Cameras: optics from the declaration, an offscreen renderer pool, one render per sim time.

A camera looks along +x of its mount with z up (Gazebo's convention; sensor_mounts.py
turns the MuJoCo camera accordingly). One render pass gives both RGB and depth (one
`mjr_render`, one `mjr_readPixels`), and only what a spec asks for is rendered: nothing
when no spec names a camera.

A model's own camera (`Optics.clips`) reads depth from the segmentation-colour pass, as
`mujoco.Renderer` does: every drawn geom counts there as opaque, transparent ones too.

Renderers: one per env and resolution (`RendererPool`), each with its own GL context, rebuilt
when a recompile swaps the env's model; all made, used and freed on the pool's own thread, so
closing works from any thread. Shadows, reflections and the skybox are off: they are most of a
software render's cost (docs/performance.md). What a camera draws is its world's: in a
navigation world static geoms, robot visuals and ceilings (groups.CAMERA_GROUPS), not robot
collision hulls, hidden hulls or sites; in a loaded model's world what MuJoCo draws by
default (`mujoco.MjvOption`: geom and site groups 0, 1, 2); `CameraSpec.geomgroups`
chooses the geom groups instead. Cameras draw the env's state after mj_forward (Frames.drawn),
as `mujoco.Renderer` draws it: every camera mode posed as MuJoCo poses it (trackcom and
targetbodycom follow the subtree's centre of mass), tendons and rangefinder rays where
they are now. `MUJOCO_GL`
defaults to `egl`; if no GL context can be made, cameras give no images (readings stay invalid)
and one warning says why, never an exception.

Depth is the distance along the optical axis at each pixel's centre (the renderer has no
multisampling, which would sample off the centres K declares): +inf past the far clip,
-inf before the near one (rendering uses a nearer plane, NEAR_RENDER, to tell "too close"
from "nothing"). A model's own camera clips as MuJoCo does instead (`Optics.clips`): what is
nearer than its near plane (`znear` times the extent) is not drawn, and depth shows what
lies behind it. `points` are depth times each pixel's ray, so they are exact likewise.
"""

from __future__ import annotations

import contextlib
import math
import os
import threading
import warnings
import weakref
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeVar

import mujoco
import numpy as np

from arena_gym.assets.gazebo import SensorDecl
from arena_gym.geometry import groups
from arena_gym.scene.models import ModelInfo
from arena_gym.scene.robot import RobotInfo
from arena_gym.scene.scene import Scene
from arena_gym.scene.sensor_mounts import SensorMount
from arena_gym.sensors import noise
from arena_gym.sensors.model_cameras import model_camera
from arena_gym.sensors.specs import CameraSpec
from arena_gym.sensors.state_access import Frames
from arena_gym.sensors.units import Unit

# env, model, data, eye (the camera's world position) -> a context within which `model`
# shows that env's lights (arena_gym.render.lights.lit: the light table of the env)
Lighting = Callable[[int, mujoco.MjModel, mujoco.MjData, np.ndarray],
                    contextlib.AbstractContextManager]
# what making or freeing a GL context raises when the driver or library is missing
GL_ERRORS = (RuntimeError, OSError, ImportError, ValueError, AttributeError, mujoco.FatalError)
DEFAULT_RATE = 30.0  # Hz, when the declaration gives none
NEAR_RENDER = 0.01  # m: the render's near plane when the declared one is farther
_SEGMENT, _IDCOLOR = mujoco.mjtRndFlag.mjRND_SEGMENT, mujoco.mjtRndFlag.mjRND_IDCOLOR
_OBJ_GEOM, _OBJ_BODY = int(mujoco.mjtObj.mjOBJ_GEOM), int(mujoco.mjtObj.mjOBJ_BODY)
T = TypeVar("T")
# the geom and site groups a camera draws, as mjvOption's masks (NAVIGATION: see above)
Groups = tuple[np.ndarray, np.ndarray]
_MUJOCO = mujoco.MjvOption()
NAVIGATION_GROUPS: Groups = (np.isin(np.arange(mujoco.mjNGROUP), groups.CAMERA_GROUPS).astype(
    np.uint8), np.zeros(mujoco.mjNGROUP, dtype=np.uint8))
MUJOCO_GROUPS: Groups = (np.array(_MUJOCO.geomgroup, dtype=np.uint8),
                         np.array(_MUJOCO.sitegroup, dtype=np.uint8))


@dataclass(frozen=True)
class Optics:
    """Resolution, field of view, clip planes and the ROS CameraInfo matrices."""

    width: int
    height: int
    hfov: float  # rad
    near: float
    far: float
    clips: bool = False  # MuJoCo's near plane: nothing nearer is drawn (a model's camera)

    @property
    def fovy(self) -> float:
        return 2 * math.atan(math.tan(self.hfov / 2) * self.height / self.width)

    @property
    def K(self) -> np.ndarray:
        f = (self.width / 2) / math.tan(self.hfov / 2)
        return np.array([[f, 0.0, (self.width - 1) / 2], [0.0, f, (self.height - 1) / 2],
                         [0.0, 0.0, 1.0]])

    @property
    def P(self) -> np.ndarray:
        return np.hstack([self.K, np.zeros((3, 1))])

    @property
    def signature(self) -> tuple:
        return ("resolution", self.width, self.height, "hfov", self.hfov, "clip", self.near,
                self.far, self.clips)


def optics(decl: SensorDecl) -> Optics:
    return Optics(
        width=int(decl.width or 640), height=int(decl.height or 480),
        hfov=float(decl.horizontal_fov or math.radians(60)),
        near=float(decl.near_clip or 0.1), far=float(decl.far_clip or 100.0),
    )


def _gl_context_class() -> type:
    """The GL context class for MUJOCO_GL (default egl), chosen here rather than at
    `import mujoco`, which picked one before any default could be set."""
    backend = os.environ.setdefault("MUJOCO_GL", "egl").strip().lower()
    if backend == "egl":
        from mujoco.egl import GLContext
    elif backend == "osmesa":
        from mujoco.osmesa import GLContext
    else:
        from mujoco.glfw import GLContext
    return GLContext


class Offscreen:
    """An offscreen GL context (MUJOCO_GL, default egl), MjrContext and scene for one model
    and resolution, shadows, reflections and the skybox off: the one way pixels come out of
    MuJoCo here (the camera sensors below, env rendering in arena_gym.render).

    `multisample=False` (sensors) renders one sample per pixel centre, so depth is exact: a
    multisampled depth buffer is resolved off the pixel centres K declares (+0.375 px with
    MuJoCo's default 4 samples: a floor 0.7 m away read 1.6 cm short); RGB then has no
    anti-aliasing, as a Gazebo camera without <anti_aliasing>. `True` keeps the model's
    `offsamples` (smooth edges for frames people watch). After drawing into `scene`,
    `read_rgb()` renders it and gives the pixels (bottom row first, a buffer reused)."""

    def __init__(self, model: mujoco.MjModel, width: int, height: int,
                 multisample: bool = False) -> None:
        self.model, self.width, self.height = model, width, height
        global_ = model.vis.global_
        global_.offwidth = max(global_.offwidth, width)
        global_.offheight = max(global_.offheight, height)
        self.context = _gl_context_class()(width, height)
        self.context.make_current()
        samples = model.vis.quality.offsamples
        if not multisample:
            model.vis.quality.offsamples = 0
        try:
            self.mjr = mujoco.MjrContext(model, mujoco.mjtFontScale.mjFONTSCALE_100.value)
        except Exception:
            self.context.free()
            raise
        finally:
            model.vis.quality.offsamples = samples
        mujoco.mjr_setBuffer(mujoco.mjtFramebuffer.mjFB_OFFSCREEN.value, self.mjr)
        self.scene = mujoco.MjvScene(model, maxgeom=max(1000, 2 * model.ngeom))
        for flag in (mujoco.mjtRndFlag.mjRND_SHADOW, mujoco.mjtRndFlag.mjRND_REFLECTION,
                     mujoco.mjtRndFlag.mjRND_SKYBOX):
            self.scene.flags[flag] = 0
        self.rect = mujoco.MjrRect(0, 0, width, height)
        self._rgb = np.empty((height, width, 3), dtype=np.uint8)

    def read_rgb(self) -> np.ndarray:
        """Render `scene` and read its pixels (bottom row first; the buffer is reused)."""
        self.context.make_current()
        mujoco.mjr_render(self.rect, self.scene, self.mjr)
        mujoco.mjr_readPixels(self._rgb, None, self.rect, self.mjr)
        return self._rgb

    def close(self) -> None:
        try:
            self.context.make_current()
            self.mjr.free()
        finally:
            self.context.free()


class _Renderer(Offscreen):
    """A camera sensor's renderer: exact depth, the groups each render asks for."""

    def __init__(self, model: mujoco.MjModel, width: int, height: int) -> None:
        super().__init__(model, width, height)
        self.mjr.readDepthMap = mujoco.mjtDepthMap.mjDEPTH_ZEROFAR
        self.option = mujoco.MjvOption()
        self.camera = mujoco.MjvCamera()
        self.camera.type = mujoco.mjtCamera.mjCAMERA_FIXED
        self._depth = np.empty((height, width), dtype=np.float32)

    def render(self, data: mujoco.MjData, camera: int, lens: Optics,
               rgb: np.ndarray | None, depth: np.ndarray | None,
               lighting: Callable[[], contextlib.AbstractContextManager] | None = None,
               segmentation: np.ndarray | None = None, by_body: bool = False,
               drawn: Groups = NAVIGATION_GROUPS) -> None:
        """Render camera `camera` of `data` once; write the rows asked for (top row first).
        `lighting()`: the context the scene is updated in (the env's lights); `drawn`: the
        geom and site groups drawn.
        `segmentation` (H, W, 2) int32: a second pass of the same scene in MuJoCo's
        segmentation colours (mjRND_SEGMENT, mjRND_IDCOLOR), decoded to (id, mjtObj type)
        per pixel; `by_body`: a geom's body instead of the geom."""
        model = self.model
        extent = max(float(model.stat.extent), 1e-6)
        near = lens.near if lens.clips else min(lens.near, NEAR_RENDER)
        saved = (model.vis.map.znear, model.vis.map.zfar)
        model.vis.map.znear, model.vis.map.zfar = near / extent, lens.far / extent
        try:
            self.context.make_current()
            self.camera.fixedcamid = camera
            self.option.geomgroup[:], self.option.sitegroup[:] = drawn
            with lighting() if lighting is not None else contextlib.nullcontext():
                mujoco.mjv_updateScene(model, data, self.option, None, self.camera,
                                       mujoco.mjtCatBit.mjCAT_ALL.value, self.scene)
            # a model's camera reads depth from the segmentation-colour pass, as
            # mujoco.Renderer does: every geom drawn opaque (transparent ones too)
            segment_depth = depth is not None and lens.clips
            if rgb is not None or (depth is not None and not segment_depth):
                mujoco.mjr_render(self.rect, self.scene, self.mjr)
                mujoco.mjr_readPixels(self._rgb if rgb is not None else None,
                                      None if depth is None or segment_depth else self._depth,
                                      self.rect, self.mjr)
                if rgb is not None:
                    rgb[...] = self._rgb[::-1]
            if segmentation is not None or segment_depth:
                segments = self._segments(by_body, segment_depth)
                if segmentation is not None:
                    segmentation[...] = segments[::-1]
            if depth is not None:
                depth[...] = _linear_depth(self._depth[::-1], near, lens.near, lens.far)
        finally:
            model.vis.map.znear, model.vis.map.zfar = saved

    def _segments(self, by_body: bool, depth: bool = False) -> np.ndarray:
        """The scene drawn again in segmentation colours, decoded (bottom row first): colour
        k + 1 is the scene's geom with segid k, 0 the background. `depth`: read the depth
        buffer of that pass too."""
        flags = self.scene.flags
        flags[_SEGMENT] = flags[_IDCOLOR] = 1
        try:
            mujoco.mjr_render(self.rect, self.scene, self.mjr)
            mujoco.mjr_readPixels(self._rgb, self._depth if depth else None, self.rect,
                                  self.mjr)
        finally:
            flags[_SEGMENT] = flags[_IDCOLOR] = 0
        ngeom = self.scene.ngeom
        table = np.full((ngeom + 1, 2), -1, dtype=np.int32)
        for geom in self.scene.geoms[:ngeom]:
            if geom.segid >= 0:
                table[geom.segid + 1] = (geom.objid, geom.objtype)
        if by_body:
            geoms = table[:, 1] == _OBJ_GEOM
            table[geoms, 0] = self.model.geom_bodyid[table[geoms, 0]]
            table[geoms, 1] = _OBJ_BODY
        pixels = self._rgb.astype(np.int32)
        segid = pixels[..., 0] | (pixels[..., 1] << 8) | (pixels[..., 2] << 16)
        segid[segid > ngeom] = 0  # no such colour is drawn: background
        return table[segid]


def _linear_depth(buffer: np.ndarray, near: float, clip_near: float, far: float) -> np.ndarray:
    """Metres along the optical axis from a reversed-z (mjDEPTH_ZEROFAR) depth buffer."""
    z = buffer.astype(np.float64)
    c = 0.5 * (far + near) / (far - near) - 0.5
    d = far * near / (far - near)
    with np.errstate(divide="ignore"):
        metres = d / (z + c)
    metres[z <= 0.0] = np.inf
    metres[metres >= far * (1 - 1e-5)] = np.inf
    metres[metres < clip_near] = -np.inf
    return metres.astype(np.float32)


class RendererPool:
    """Renderers by (env, width, height), rebuilt when the env's model object changes.

    Every GL call (making, rendering, freeing) runs on the pool's own thread, started with
    the first render: an EGL context stays current on the thread that last made it current,
    and no other thread may make it current, not even to free it (EGL_BAD_ACCESS, also
    after that thread has ended). So whichever threads sample the cameras, `close()` works
    from any thread: it hands the freeing to the thread that owns the contexts.

    `lighting` (None: the model's own lights): how an env's cameras are lit, set by whoever
    holds that env's light table (the ROS bridge: its lights services' tables), applied as
    the viewport applies it (render/lights.py: the lamps seen from each camera)."""

    def __init__(self) -> None:
        self.lighting: Lighting | None = None
        self._renderers: dict[tuple[int, int, int], _Renderer] = {}
        self.failure: str | None = None  # why GL is unavailable, once it failed
        self._gl: ThreadPoolExecutor | None = None
        # the GL thread's id, in a list its initializer fills: the thread holds the list,
        # not the pool, so a pool nobody holds is freed (its finalizer frees the renderers)
        self._ident: list[int | None] = [None]
        self._finalizer: weakref.finalize | None = None
        self._pid = os.getpid()  # a forked child has no GL thread: it starts its own

    def _on_gl(self, fn: Callable[..., T], *args: Any) -> T:
        """fn(*args) on the GL thread (its exceptions raised here)."""
        if threading.get_ident() == self._ident[0]:
            return fn(*args)
        if self._pid != os.getpid():  # forked: the parent's thread and contexts are not ours
            if self._finalizer is not None:
                self._finalizer.detach()
            self._renderers, self._gl, self._pid = {}, None, os.getpid()
        if self._gl is None:
            self._gl = ThreadPoolExecutor(1, thread_name_prefix="arena-gl",
                                          initializer=_mark, initargs=(self._ident,))
            self._finalizer = weakref.finalize(self, _release, self._gl, self._renderers)
        return self._gl.submit(fn, *args).result()

    def render(self, shots: list[tuple[int, mujoco.MjModel, mujoco.MjData, int, Groups]],
               lens: Optics, rgb: np.ndarray | None, depth: np.ndarray | None,
               segmentation: np.ndarray | None = None, by_body: bool = False) -> list[bool]:
        """Render each (env, model, data, camera id, groups drawn) into row env of `rgb`,
        `depth` and `segmentation` (each may be None; `by_body`: ids of bodies, not geoms),
        on the GL thread: one hand-over for all envs. Whether each rendered (False: GL is
        unavailable)."""
        return self._on_gl(self._render, shots, lens, rgb, depth, segmentation, by_body)

    def _render(self, shots: list[tuple[int, mujoco.MjModel, mujoco.MjData, int, Groups]],
                lens: Optics, rgb: np.ndarray | None, depth: np.ndarray | None,
                segmentation: np.ndarray | None, by_body: bool) -> list[bool]:
        done = []
        lighting = self.lighting
        for env, model, data, camera, drawn in shots:
            renderer = self.get(env, model, lens.width, lens.height)
            if renderer is not None:
                lit = None if lighting is None else (
                    lambda env=env, model=model, data=data, camera=camera: lighting(
                        env, model, data, data.cam_xpos[camera]))
                renderer.render(data, camera, lens, None if rgb is None else rgb[env],
                                None if depth is None else depth[env], lit,
                                None if segmentation is None else segmentation[env], by_body,
                                drawn)
            done.append(renderer is not None)
        return done

    def get(self, env: int, model: mujoco.MjModel, width: int, height: int) -> _Renderer | None:
        """The renderer of (env, width, height) for `model` (call on the GL thread)."""
        if self.failure is not None:
            return None
        key = (env, width, height)
        renderer = self._renderers.get(key)
        if renderer is not None and renderer.model is model:
            return renderer
        if renderer is not None:
            renderer.close()
            del self._renderers[key]
        try:
            renderer = _Renderer(model, width, height)
        except GL_ERRORS as exc:  # any GL or driver failure: degrade, never crash
            self.failure = f"{type(exc).__name__}: {exc}".strip()
            warnings.warn(
                f"camera rendering unavailable (MUJOCO_GL={os.environ.get('MUJOCO_GL')!r}): "
                f"{self.failure}; camera readings stay empty",
                RuntimeWarning, stacklevel=2,
            )
            return None
        self._renderers[key] = renderer
        return renderer

    def __len__(self) -> int:
        return len(self._renderers)

    def close(self) -> None:
        """Free every renderer (from any thread) and stop the GL thread."""
        if self._gl is not None and self._pid == os.getpid():
            self._on_gl(self._free)
            if threading.get_ident() != self._ident[0]:
                self._gl.shutdown(wait=True)
                self._gl, self._ident[0] = None, None
                if self._finalizer is not None:
                    self._finalizer.detach()
        self._renderers.clear()

    def _free(self) -> None:
        _free(self._renderers)


def _mark(ident: list[int | None]) -> None:
    ident[0] = threading.get_ident()


def _free(renderers: dict[tuple[int, int, int], _Renderer]) -> None:
    for renderer in renderers.values():
        with contextlib.suppress(*GL_ERRORS):  # closing must not mask the caller's error
            renderer.close()
    renderers.clear()


def _release(gl: ThreadPoolExecutor, renderers: dict[tuple[int, int, int], _Renderer]) -> None:
    """A pool dropped unclosed: its renderers freed on their GL thread, the thread ended."""
    with contextlib.suppress(RuntimeError):  # (at interpreter exit no call is taken)
        gl.submit(_free, renderers)
    gl.shutdown(wait=False)


class CameraUnit(Unit):
    """A robot's camera, or an MJCF model's own `<camera>` (model_cameras.py), in every
    env: renders the outputs its specs ask for (rgb, depth, points, segmentation) through
    the renderer pool."""

    kind = "camera"
    entity_kinds = ("robot", "model")
    can_fail = True  # an env without a renderer (no GL context) gives no sample
    default_rate = DEFAULT_RATE

    def __init__(self, spec: CameraSpec, num_envs: int, pool: RendererPool) -> None:
        super().__init__(spec, num_envs)
        self.pool = pool
        self.outputs: set[str] = set()
        self.camera = np.full(num_envs, -1, dtype=np.int64)
        self.lens: Optics | None = None
        self.by_body = "segmentation" in spec.outputs and spec.segment_by == "body"
        self.resolution = spec.resolution
        self.geomgroups = spec.geomgroups
        self.drawn: list[Groups] = [NAVIGATION_GROUPS] * num_envs  # per env: its world's

    def robot_info(self, scene: Scene) -> RobotInfo | None:
        entity = scene.entities.get(self.robot)
        if entity is None or entity.kind not in self.entity_kinds:
            return None
        return entity.record  # type: ignore[return-value]

    def find_mount(self, scene: Scene, info: RobotInfo) -> SensorMount | None:
        if isinstance(info, ModelInfo):
            return model_camera(scene, info, self.sensor)
        return super().find_mount(scene, info)

    def join(self, spec: CameraSpec) -> None:  # type: ignore[override]
        self.want(spec.outputs)

    def want(self, outputs: tuple[str, ...]) -> None:
        """Render these outputs from now on (the union of what the specs ask for)."""
        new = set(outputs) - self.outputs
        self.outputs |= set(outputs)
        if new and self.lens is not None:
            self._allocate(self.reference)

    def signature(self, mount: SensorMount | None) -> object:
        return self._optics(mount).signature

    def _optics(self, mount: SensorMount | None) -> Optics:
        """The mount's optics at the spec's resolution, if it sets one: a model camera
        keeps its vertical field of view (MuJoCo's fovy) and clips as MuJoCo does; a
        robot's keeps its horizontal field of view."""
        lens = optics(mount.decl)  # type: ignore[union-attr]
        model = mount.source == "mjcf"  # type: ignore[union-attr]
        width, height = self.resolution or (lens.width, lens.height)
        hfov = lens.hfov
        if model and self.resolution is not None:
            hfov = 2 * math.atan(math.tan(lens.fovy / 2) * width / height)
        return Optics(width, height, hfov, lens.near, lens.far, clips=model)

    def _allocate(self, mount: SensorMount | None) -> None:
        self.lens = lens = self._optics(mount)
        n, h, w = self.num_envs, lens.height, lens.width
        self.out = {}
        if "rgb" in self.outputs:
            self.out["rgb"] = np.zeros((n, h, w, 3), dtype=np.uint8)
        if self.outputs & {"depth", "points"}:
            self.out["depth"] = np.full((n, h, w), np.inf, dtype=np.float32)
        if "points" in self.outputs:
            self.out["points"] = np.full((n, h * w, 3), np.nan, dtype=np.float32)
            self._rays = _pixel_rays(lens)
        if "segmentation" in self.outputs:
            self.out["segmentation"] = np.full((n, h, w, 2), -1, dtype=np.int32)

    def _bind_env(self, env: int, scene: Scene, info: RobotInfo, mount: SensorMount | None) -> None:
        self.camera[env] = scene.compiled.camera(mount.camera).id  # type: ignore[union-attr]
        geoms, sites = NAVIGATION_GROUPS if scene.navigation else MUJOCO_GROUPS
        if self.geomgroups is not None:
            geoms = np.isin(np.arange(mujoco.mjNGROUP), self.geomgroups).astype(np.uint8)
        self.drawn[env] = (geoms, sites)

    def _compute(self, frames: Frames, envs: np.ndarray) -> None:
        shots = [(int(env), frames.model(int(env)), frames.drawn(int(env)),
                  int(self.camera[env]), self.drawn[env]) for env in envs]
        depth = self.out.get("depth")
        done = self.pool.render(shots, self.lens, self.out.get("rgb"), depth,
                                self.out.get("segmentation"), self.by_body)
        for env, ok in zip(envs, done, strict=True):
            self.ok[env] = ok
            if ok and "points" in self.out:
                d = np.where(np.isfinite(depth[env]), depth[env], np.nan).reshape(-1, 1)
                self.out["points"][env] = d * self._rays

    def noise(self, values: dict[str, np.ndarray], spec: CameraSpec,  # type: ignore[override]
              rng: np.random.Generator) -> None:
        if "rgb" in values:
            noise.image(values["rgb"], spec.rgb_noise_std, rng)
        if "depth" in values:
            noise.gaussian(values["depth"], spec.depth_noise_std, rng)


def _pixel_rays(lens: Optics) -> np.ndarray:
    """Per pixel (row-major, top row first), the sensor-frame point at unit depth:
    x forward = 1, y left = -(u - cx) / fx, z up = -(v - cy) / fy."""
    k = lens.K
    v, u = np.mgrid[0 : lens.height, 0 : lens.width]
    y = -(u - k[0, 2]) / k[0, 0]
    z = -(v - k[1, 2]) / k[1, 1]
    return np.stack([np.ones_like(y), y, z], axis=-1).reshape(-1, 3).astype(np.float32)
