"""The `/arena/viewport` contract on the simulator side: a free camera over env 0 whose world
pose is reference * local, rendered by `render.viewport.ViewportCapture` (1920 x 1080 rgb8,
lit by the env's light table).

    view = ViewportControl(sim, lights=lambda env: None)   # runner=: one that runs sim free
    view.set_view(eye=(4, 0, 2), target=(0, 0, 0), fov=1.0)      # one shot, in the reference
    view.set_reference("robot", pose=None, mode=YAW_ONLY)        # follow a body (or a pose)
    view.push((t, local_pose, world_orientation, fov))           # cmd_view keyframes
    frame = view.capture(local_pose, world_orientation=False, fov=0.0)

Poses are (position (3,), quaternion w, x, y, z) with the camera looking along its +x, z up.
A reference entity is a body of env 0: an entity or pedestrian name, a full body name, or a
TF frame id the bridge publishes (`frames`: a robot's link, base or sensor frame; `map` and
odom are the world); an unknown one holds the world frame. Keyframes (cmd_view) are
sampled at wall time, linearly between the two around now (slerp for the orientation), the
last one held; a stream that stops for STREAM_TIMEOUT seconds leaves the camera where it is.
"""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from arena_gym import checks
from arena_gym.render.viewport import Viewport, ViewportCapture
from arena_gym.scene.lights import LightTable
from arena_gym.sim.runner import Runner
from arena_gym.sim.simulator import Simulator

FULL, YAW_ONLY, POSITION_ONLY = 0, 1, 2
PROJECTIONS = ("perspective", "orthographic")
DEFAULT_HFOV = 1.047  # rad
STREAM_TIMEOUT = 0.4  # s of wall time
IDENTITY = (1.0, 0.0, 0.0, 0.0)
Pose = tuple[tuple[float, float, float], tuple[float, float, float, float]]


def lens(what: str, fov: float) -> float:
    """A requested horizontal fov in radians (0 or less: keep the current one); ValueError
    for one that is not a finite number below pi."""
    (fov,) = checks.floats(what, (fov,), 1)
    if fov >= math.pi:
        raise ValueError(f"{what}: expected radians below pi (0 or less: keep the current "
                         f"one), got {fov:g}")
    return fov


def checked(what: str, pose: Pose) -> Pose:
    """A requested pose: a position within MAX_COORD and a quaternion of finite numbers."""
    position, q = pose
    return (checks.pose(f"{what} position", position, 3),  # type: ignore[return-value]
            checks.floats(f"{what} orientation", q, 4))


def qmul(a, b) -> tuple[float, float, float, float]:
    aw, ax, ay, az = a
    bw, bx, by, bz = b
    return (aw * bw - ax * bx - ay * by - az * bz, aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx, aw * bz + ax * by - ay * bx + az * bw)


def rotate(q, v) -> tuple[float, float, float]:
    w, x, y, z = q
    p = qmul(qmul(q, (0.0, *v)), (w, -x, -y, -z))
    return p[1], p[2], p[3]


def unit(q) -> tuple[float, float, float, float]:
    n = math.sqrt(sum(c * c for c in q))
    return IDENTITY if n < 1e-12 else tuple(c / n for c in q)  # type: ignore[return-value]


def yaw_quat(yaw: float) -> tuple[float, float, float, float]:
    return (math.cos(yaw / 2), 0.0, 0.0, math.sin(yaw / 2))


def look_at(eye, target) -> tuple[float, float, float, float]:
    """The orientation (no roll) whose +x points from eye to target."""
    d = np.subtract(target, eye, dtype=float)
    n = float(np.linalg.norm(d))
    if n < 1e-9:
        return IDENTITY
    yaw, pitch = math.atan2(d[1], d[0]), math.asin(max(-1.0, min(1.0, d[2] / n)))
    return qmul(yaw_quat(yaw), (math.cos(-pitch / 2), 0.0, math.sin(-pitch / 2), 0.0))


def slerp(a, b, t: float) -> tuple[float, float, float, float]:
    dot = sum(p * q for p, q in zip(a, b, strict=True))
    if dot < 0:
        b, dot = tuple(-c for c in b), -dot
    if dot > 0.9995:
        return unit(tuple(p + t * (q - p) for p, q in zip(a, b, strict=True)))
    theta = math.acos(dot)
    wa, wb = math.sin((1 - t) * theta), math.sin(t * theta)
    return unit(tuple(wa * p + wb * q for p, q in zip(a, b, strict=True)))


def angles(q) -> tuple[float, float, float]:
    """(yaw, pitch up-positive, roll) of an orientation, as render.viewport.Viewport takes."""
    w, x, y, z = q
    yaw = math.atan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))
    pitch = -math.asin(max(-1.0, min(1.0, 2 * (w * y - z * x))))
    roll = math.atan2(2 * (w * x + y * z), 1 - 2 * (x * x + y * y))
    return yaw, pitch, roll


@dataclass
class Keyframe:
    """One `cmd_view` keyframe of the viewport camera: wall time, pose in the reference frame,
    orientation mode and fov."""

    time: float  # wall seconds
    local: Pose
    world_orientation: bool
    fov: float


class ViewportControl:
    """The viewport camera of env 0 (see the module docstring)."""

    env = 0

    def __init__(self, sim: Simulator, lights: Callable[[int], LightTable | None],
                 frames: Callable[[str], str | None] = lambda frame: None,
                 runner: Runner | None = None) -> None:
        self.sim, self._lights, self._frames = sim, lights, frames
        self.runner = runner  # the Runner that may run `sim` free (a capture waits for it)
        start = ((0.0, -7.07, 7.07), look_at((0.0, -7.07, 7.07), (0.0, 0.0, 0.0)))
        self.local: Pose = start
        self.world_orientation = False
        self.hfov = DEFAULT_HFOV
        self.orthographic = False
        self.entity = ""
        self.ref_pose: Pose = ((0.0, 0.0, 0.0), IDENTITY)
        self.mode = FULL
        self.keyframes: deque[Keyframe] = deque()
        self._last_key = -math.inf
        self._capture: ViewportCapture | None = None

    # ------------------------------------------------------------ the contract
    def set_view(self, eye, target, fov: float) -> None:
        eye, target = checks.pose("eye", eye, 3), checks.pose("target", target, 3)
        fov = lens("fov", fov)
        self.keyframes.clear()
        self.local, self.world_orientation = (tuple(eye), look_at(eye, target)), False
        if fov > 0:
            self.hfov = fov

    def set_reference(self, entity: str, pose: Pose | None, mode: int) -> str:
        if mode not in (FULL, YAW_ONLY, POSITION_ONLY):
            raise ValueError(f"mode: expected FULL (0), YAW_ONLY (1) or POSITION_ONLY (2), "
                             f"got {mode}")
        if entity:
            self.entity, self.mode = entity, mode
            return f"tracking {entity}"
        self.ref_pose = self.reduced(pose, mode) if pose is not None else self.reference()
        self.entity, self.mode = "", FULL
        return "constant reference set" if pose is not None else "latched current pose"

    def set_projection(self, projection: str) -> None:
        if projection not in PROJECTIONS:
            raise ValueError("projection must be 'perspective' or 'orthographic'")
        self.orthographic = projection == "orthographic"

    def push(self, key: Keyframe) -> None:
        self.keyframes.append(key)
        self._last_key = time.monotonic()

    def push_message(self, message: dict) -> None:
        """A cmd_view keyframe: `time` in seconds of the system clock (ROS time), `pose`
        x, y, z, qw, qx, qy, qz in the reference."""
        (when,) = checks.floats("cmd_view target_time", (message["time"],), 1)
        values = message["pose"]
        position, q = checked("cmd_view pose", (values[:3], values[3:7]))
        self.push(Keyframe(time.monotonic() + (when - time.time()), (position, unit(q)),
                           bool(message["world_orientation"]), lens("cmd_view fov",
                                                                    message["fov"])))

    # ------------------------------------------------------------ poses
    @staticmethod
    def reduced(pose: Pose, mode: int) -> Pose:
        position, q = pose
        if mode == YAW_ONLY:
            return position, yaw_quat(angles(q)[0])
        if mode == POSITION_ONLY:
            return position, IDENTITY
        return position, unit(q)

    def reference(self) -> Pose:
        """The reference's world pose now: the tracked body's (reduced), else the pose."""
        if not self.entity:
            return self.ref_pose
        scene = self.sim.store[self.env]
        try:
            position, q = scene.get_pose(self.entity)
        except (ValueError, KeyError):
            body = self._frames(self.entity)  # a TF frame id: the body it follows
            if not body:
                return (0.0, 0.0, 0.0), IDENTITY  # map, odom, or not (yet) there: the world
            position, q = scene.get_pose(body)
        return self.reduced((tuple(position), tuple(q)), self.mode)

    def _sample(self) -> None:
        """Move `local` along the keyframe stream to now (wall time)."""
        now = time.monotonic()
        keys = self.keyframes
        if not keys or now - self._last_key > STREAM_TIMEOUT + max(0.0, keys[-1].time - now):
            return
        while len(keys) > 1 and keys[1].time <= now:
            keys.popleft()
        a = keys[0]
        b = keys[1] if len(keys) > 1 else a
        t = 0.0 if b is a or b.time <= a.time else min(1.0, max(0.0, (now - a.time) /
                                                                (b.time - a.time)))
        position = tuple(p + t * (q - p) for p, q in zip(a.local[0], b.local[0], strict=True))
        self.local = (position, slerp(a.local[1], b.local[1], t))  # type: ignore[assignment]
        self.world_orientation = b.world_orientation
        if b.fov > 0:
            self.hfov = b.fov

    def world(self) -> Pose:
        """The camera's world pose: reference * local."""
        self._sample()
        (rp, rq), (lp, lq) = self.reference(), self.local
        offset = rotate(rq, lp)
        position = (rp[0] + offset[0], rp[1] + offset[1], rp[2] + offset[2])
        return position, unit(lq if self.world_orientation else qmul(rq, lq))

    def capture(self, local: Pose, world_orientation: bool, fov: float) -> np.ndarray:
        """Snap to `local` (in the reference) and render env 0 from there: (1080, 1920, 3)."""
        local, fov = checked("pose", local), lens("fov", fov)
        self.keyframes.clear()
        self.local, self.world_orientation = (tuple(local[0]), unit(local[1])), world_orientation
        if fov > 0:
            self.hfov = fov
        position, q = self.world()
        yaw, pitch, roll = angles(q)
        view = Viewport(pos=position, yaw=yaw, pitch=pitch, roll=roll,
                        hfov=math.degrees(self.hfov), orthographic=self.orthographic,
                        ortho_width=2 * 10.0 * math.tan(self.hfov / 2))
        if self._capture is None:
            self._capture = ViewportCapture(self.sim, self.runner)
        return self._capture(self.env, view, lights=self._lights(self.env))

    def close(self) -> None:
        if self._capture is not None:
            self._capture.close()
            self._capture = None
