"""Camera frames kept apart from a reading's arrays: one env's planes (rgb, depth, points,
segmentation) of one capture, its capture id and sim time, leased or kept in a bounded
history.

A camera reading's arrays are rewritten by every render. A `CameraFrame` holds read-only
copies of one env's planes at one capture, so later renders never touch it. Its
`capture_id` is the reading's sample count for that env when the frame was shown (1 for
the first frame; +1 per frame, whether the cadence or a one-shot capture rendered it).

    history = FrameHistory(reading, 3)       # SensorSuite.add makes it for CameraSpec.history
    history.last(env, 2)                     # [frame, frame]: newest last, copies

`FrameLease` is a context around one frame: the planes read through it are valid while the
context lasts, and reading them after it ended, or after the frame's generation passed
(Simulation.reload), raises.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from arena_gym.sensors.errors import SensorError
from arena_gym.sensors.readings import CameraReading


class CameraFrame:
    """One env's planes of one camera capture, read-only copies:

        frame.rgb, frame.depth, frame.segmentation, frame.points   # the spec's outputs
        frame.capture_id, frame.stamp (sim time), frame.env, frame.generation

    `check(frame)` (optional) runs before every plane read: a lease's validity."""

    def __init__(self, key: str, env: int, capture_id: int, stamp: float,
                 planes: dict[str, np.ndarray], generation: int = 0,
                 check: Callable[[CameraFrame], None] | None = None) -> None:
        self.key, self.env = key, env
        self.capture_id, self.stamp, self.generation = capture_id, stamp, generation
        self._planes = planes
        self._check = check

    @classmethod
    def take(cls, reading: CameraReading, env: int, generation: int = 0,
             check: Callable[[CameraFrame], None] | None = None) -> CameraFrame:
        """A copy of env's latest frame in `reading` (SensorError: it has none yet)."""
        if not reading.valid[env]:
            raise SensorError(f"camera {reading.key!r}: env {env} has no frame yet (step or "
                              "capture first)")
        planes = {name: _frozen(array[env].copy()) for name, array in reading.data.items()}
        return cls(reading.key, env, int(reading.count[env]), float(reading.stamp[env]),
                   planes, generation, check)

    def plane(self, name: str) -> np.ndarray:
        """The read-only plane `name` (one of the spec's outputs)."""
        if self._check is not None:
            self._check(self)
        array = self._planes.get(name)
        if array is None:
            raise SensorError(f"camera {self.key!r}: expected one of its outputs "
                              f"{sorted(self._planes)}, got {name!r}")
        return array

    @property
    def rgb(self) -> np.ndarray:
        return self.plane("rgb")

    @property
    def depth(self) -> np.ndarray:
        return self.plane("depth")

    @property
    def points(self) -> np.ndarray:
        return self.plane("points")

    @property
    def segmentation(self) -> np.ndarray:
        return self.plane("segmentation")

    def __repr__(self) -> str:
        return (f"CameraFrame({self.key!r}, env={self.env}, capture_id={self.capture_id}, "
                f"stamp={self.stamp:g}, generation={self.generation})")


class FrameLease:
    """`with FrameLease(reading, env, generation, current) as frame:` a copy of env's
    latest frame, valid until the context ends and while `current()` (the owner's
    generation now) equals `generation`; a plane read otherwise raises SensorError."""

    def __init__(self, reading: CameraReading, env: int, generation: int,
                 current: Callable[[], int]) -> None:
        self.frame = CameraFrame.take(reading, env, generation, self._check)
        self._current = current
        self.active = True

    def _check(self, frame: CameraFrame) -> None:
        if not self.active:
            raise SensorError(f"camera {frame.key!r}: lease of capture {frame.capture_id} "
                              "read after its context ended; lease again, or keep a copy")
        now = self._current()
        if now != frame.generation:
            raise SensorError(f"camera {frame.key!r}: lease of capture {frame.capture_id} is "
                              f"from generation {frame.generation}, the simulation is at "
                              f"{now} (reloaded since); lease again")

    def __enter__(self) -> CameraFrame:
        return self.frame

    def __exit__(self, *exc: object) -> None:
        self.active = False


class FrameHistory:
    """The last `length` frames of every env of a camera reading: `record` is the
    reading's subscriber (it copies each frame shown into a ring of preallocated arrays)."""

    def __init__(self, reading: CameraReading, length: int) -> None:
        self.reading, self.length = reading, length
        n = reading.num_envs
        self._ring = {name: np.empty((length, *array.shape), dtype=array.dtype)
                      for name, array in reading.data.items()}
        self._ids = np.zeros((length, n), dtype=np.int64)
        self._stamps = np.full((length, n), np.nan)
        self._kept = np.zeros(n, dtype=np.int64)  # frames recorded per env (all time)

    def record(self, reading: CameraReading, envs: np.ndarray) -> None:
        """Keep the frames `reading` shows now in `envs` (a suite subscriber)."""
        slots = self._kept[envs] % self.length
        for name, ring in self._ring.items():
            ring[slots, envs] = reading.data[name][envs]
        self._ids[slots, envs] = reading.count[envs]
        self._stamps[slots, envs] = reading.stamp[envs]
        self._kept[envs] += 1

    def last(self, env: int, n: int, generation: int = 0) -> list[CameraFrame]:
        """Copies of env's last `n` frames (fewer if fewer were shown), newest last."""
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not (
                1 <= n <= self.length):
            raise SensorError(f"camera {self.reading.key!r}: expected last_n in [1, "
                              f"{self.length}] (the spec's history), got {n!r}")
        kept = int(self._kept[env])
        frames = []
        for k in range(max(0, kept - int(n)), kept):
            slot = k % self.length
            planes = {name: _frozen(ring[slot, env].copy()) for name, ring in self._ring.items()}
            frames.append(CameraFrame(self.reading.key, env, int(self._ids[slot, env]),
                                      float(self._stamps[slot, env]), planes, generation))
        return frames


def _frozen(array: np.ndarray) -> np.ndarray:
    array.flags.writeable = False
    return array
