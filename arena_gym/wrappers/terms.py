"""Observation terms: a sensor reading as a `Box`, for the observation wrappers.

A term declares its single-env space exactly and gives the values of selected envs:
non-finite readings are mapped into the space (a lidar's +inf to its max range, -inf to its
min range; an invalid reading reads as "nothing seen" or zeros).

The env contract the wrappers rely on: `env.unwrapped.sensor_suite` is the env's
`arena_gym.sensors.SensorSuite`, the observation space is a `spaces.Dict`, and the env calls
`sensor_suite.reset(env_ids)` when it resets envs (so reset observations are current). A
single env reads row `env.unwrapped.sensor_env` of the suite (0 if absent).
"""

from __future__ import annotations

import numpy as np
from gymnasium import spaces

from arena_gym.sensors import (
    CameraReading,
    CollisionReading,
    ContactReading,
    ImuReading,
    LidarReading,
    Reading,
    SensorError,
    SensorSpec,
    SensorSuite,
)

IMU_DIMS = {"orientation": 4, "angular_velocity": 3, "linear_acceleration": 3}


def sensor_suite(env: object) -> SensorSuite:
    unwrapped = getattr(env, "unwrapped", env)
    suite = getattr(unwrapped, "sensor_suite", None)
    if not isinstance(suite, SensorSuite):
        raise TypeError(
            f"{type(unwrapped).__name__}: expected an env whose `sensor_suite` attribute is a "
            f"SensorSuite, got {type(suite).__name__}"
        )
    return suite


def reading_of(suite: SensorSuite, source: str | SensorSpec, kind: type[Reading]) -> Reading:
    """The reading named by a key of the suite, or added for a spec."""
    reading = suite.add(source) if isinstance(source, SensorSpec) else suite[source]
    if not isinstance(reading, kind):
        raise SensorError(
            f"reading {reading.key!r}: expected a {kind.__name__}, got a {type(reading).__name__}"
        )
    return reading


class Term:
    """An observation term: its Box space and its values for given env rows of a sensor suite's
    reading."""

    space: spaces.Box

    def values(self, envs: np.ndarray) -> np.ndarray:
        """(len(envs), *space.shape) values in the space."""
        raise NotImplementedError


class LidarTerm(Term):
    """Ranges clipped to [range_min, range_max] (+inf: max, -inf: min), optionally
    downsampled to `beams` by taking the minimum of each group of neighbouring beams (an
    obstacle never disappears) and divided by range_max (`normalize`: in [0, 1])."""

    def __init__(self, reading: LidarReading, beams: int | None = None,
                 normalize: bool = True) -> None:
        self.reading, self.normalize = reading, normalize
        p = reading.pattern
        if not np.isfinite(p.range_max):
            raise SensorError(
                f"lidar {reading.key!r}: expected a finite max range for a Box, got inf")
        if beams is not None and (isinstance(beams, bool) or not isinstance(beams, int)
                                  or not 1 <= beams <= p.beams):
            raise SensorError(f"beams: expected an integer in [1, {p.beams}], got {beams!r}")
        self.starts = None if beams in (None, p.beams) else np.linspace(
            0, p.beams, beams, endpoint=False).round().astype(np.int64)
        out = beams or p.beams
        shape = (out,) if p.rings == 1 else (p.rings, out)
        self.space = spaces.Box(0.0, 1.0 if normalize else p.range_max, shape, np.float32)

    def values(self, envs: np.ndarray) -> np.ndarray:
        p = self.reading.pattern
        r = self.reading.ranges[envs]
        r = np.nan_to_num(r, nan=p.range_max, posinf=p.range_max, neginf=p.range_min)
        r = np.clip(r, max(p.range_min, 0.0), p.range_max)
        if self.starts is not None:
            r = np.minimum.reduceat(r, self.starts, axis=-1)
        if self.normalize:
            r = r / p.range_max
        return r.astype(np.float32)


class ImageTerm(Term):
    """RGB images, uint8 (H, W, 3)."""

    def __init__(self, reading: CameraReading) -> None:
        if reading.rgb is None:
            raise SensorError(
                f"camera {reading.key!r}: expected an rgb output, got {list(reading.data)}")
        self.reading = reading
        self.space = spaces.Box(0, 255, (reading.height, reading.width, 3), np.uint8)

    def values(self, envs: np.ndarray) -> np.ndarray:
        return self.reading.rgb[envs].copy()


class DepthTerm(Term):
    """Depth images, float32 (H, W) in [0, far] (or [0, 1] with `normalize`): +inf reads
    far, -inf reads 0 (too close)."""

    def __init__(self, reading: CameraReading, normalize: bool = False) -> None:
        if reading.depth is None:
            raise SensorError(
                f"camera {reading.key!r}: expected a depth output, got {list(reading.data)}")
        self.reading, self.normalize = reading, normalize
        self.far = reading.optics.far
        self.space = spaces.Box(0.0, 1.0 if normalize else self.far,
                                (reading.height, reading.width), np.float32)

    def values(self, envs: np.ndarray) -> np.ndarray:
        d = np.nan_to_num(self.reading.depth[envs], nan=self.far, posinf=self.far, neginf=0.0)
        d = np.clip(d, 0.0, self.far)
        return (d / self.far if self.normalize else d).astype(np.float32)


class ImuTerm(Term):
    """The chosen IMU fields concatenated (orientation 4, angular_velocity 3,
    linear_acceleration 3), float32; zeros before the first reading."""

    def __init__(self, reading: ImuReading,
                 fields: tuple[str, ...] = ("orientation", "angular_velocity",
                                            "linear_acceleration")) -> None:
        bad = [f for f in fields if f not in IMU_DIMS]
        if not fields or bad:
            raise SensorError(f"fields: expected some of {list(IMU_DIMS)}, got {list(fields)}")
        self.reading, self.fields = reading, tuple(fields)
        n = sum(IMU_DIMS[f] for f in self.fields)
        self.space = spaces.Box(-np.inf, np.inf, (n,), np.float32)

    def values(self, envs: np.ndarray) -> np.ndarray:
        parts = [self.reading.data[f][envs] for f in self.fields]
        return np.nan_to_num(np.concatenate(parts, axis=-1), nan=0.0).astype(np.float32)


class ContactTerm(Term):
    """One flag per reading, float32 0 or 1: a collision reading's `collided`, a contact
    reading's "touching anything"."""

    def __init__(self, readings: list[Reading]) -> None:
        for r in readings:
            if not isinstance(r, (CollisionReading, ContactReading)):
                raise SensorError(
                    f"reading {r.key!r}: expected a collision or contact reading, "
                    f"got {type(r).__name__}"
                )
        if not readings:
            raise SensorError(
                "sources: expected at least one collision or contact reading, got none")
        self.readings = readings
        self.space = spaces.Box(0.0, 1.0, (len(readings),), np.float32)

    def values(self, envs: np.ndarray) -> np.ndarray:
        flags = [r.collided[envs] if isinstance(r, CollisionReading) else r.num[envs] > 0
                 for r in self.readings]
        return np.stack(flags, axis=-1).astype(np.float32)
