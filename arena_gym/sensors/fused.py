"""The sensors' part of a compiled env step: one lidar and the collision flag of one robot,
sampled in every env at every tick, by the sensors' own functions.

    tick = suite.fused_update()        # None unless the usual case holds (below)
    # compiled (arena_gym/envs/step.py), on tick.arrays: the lidar's frames (frames_into)
    dist, geomid = tick.cast()         # the ray cast (one C call)
    # compiled: REP 117 ranges (ranges_into), the collision window (window), both readings
    # shown as taken (shown)
    tick.finish(touched)               # the contact list where the window saw a touch

`SensorSuite.update` does the same work through the same functions in any case. The usual
case:
the suite reads exactly one lidar, alone on its robot (no other robot a cast could see),
and one collision flag, each through one plain, unmasked channel computed in place
(Channel.direct), both due at this tick, every env holding the robot, one batch group
holding every env in order.
"""

from __future__ import annotations

from typing import NamedTuple, Protocol

import numpy as np

from arena_gym.scene.robot import COLLISION_HISTORY
from arena_gym.sensors.channel import Channel
from arena_gym.sensors.contact import CollisionUnit
from arena_gym.sensors.lidar import NO_ROBOT_MASK, LidarUnit
from arena_gym.sensors.state_access import Frames
from arena_gym.sim.simulator import Simulator


class Suite(Protocol):
    """What a fused tick reads of its sensor suite (sensors/suite.py's SensorSuite)."""

    frames: Frames
    num_envs: int
    channels: dict[str, Channel]
    sim: Simulator


class TickArrays(NamedTuple):
    """What a compiled tick reads and writes (the units' and readings' own arrays):
    `frames_into`'s qpos ... directions, `ranges_into`'s range_min ... ranges, `window`'s
    history ... extra, `shown`'s books of each reading, and `envs` (every env, in order)."""

    qpos: np.ndarray  # (n, nq) every env's state, live
    rows: np.ndarray  # (n,) each env's row in it: 0 .. n - 1
    adr: np.ndarray  # (n,) the lidar carrier's free joint in each row
    offset: np.ndarray  # (n, 3) the lidar frame on its carrier
    rotation: np.ndarray  # (n, 3, 3)
    local: np.ndarray  # (R, 3) the beams in the lidar's frame
    origins: np.ndarray  # (n, 3) where the next cast starts
    ray_origins: np.ndarray  # (n, R, 3) the same per ray (as a cast takes them)
    directions: np.ndarray  # (n, R, 3) and goes
    range_min: float
    range_max: float
    ranges: np.ndarray  # (n, R) float32: the lidar reading's ranges
    history: np.ndarray  # (n, L) every env's mjData.history, as the last step left it
    time: np.ndarray  # (n,) every env's clock, live
    since: np.ndarray  # (n,) where each env's collision window starts
    everything: np.ndarray  # (n,) the all-contacts ring of each env
    feet: np.ndarray  # (n, F) its feet-on-ground rings, -1 padded
    ring: int  # the rings' slots
    slabs: np.ndarray  # (n,) bool: the env has floor slabs
    collided: np.ndarray  # (n,) bool: the collision reading's
    contacts: np.ndarray  # (n,) int32
    kind: np.ndarray  # (n,) int8
    pending: np.ndarray  # (n,) int8: the class the reset sample saw
    extra: np.ndarray  # (n,) the window's most contacts beyond the feet's
    envs: np.ndarray  # (n,) 0 .. n - 1
    scan_valid: np.ndarray  # the lidar reading's bookkeeping
    scan_stamp: np.ndarray
    scan_count: np.ndarray
    scan_fresh: np.ndarray
    hit_valid: np.ndarray  # the collision reading's
    hit_stamp: np.ndarray
    hit_count: np.ndarray
    hit_fresh: np.ndarray


class FusedTick:
    """The usual tick of a suite (see the module docstring); `make` gives None where it
    does not hold. Its arrays stay valid until the suite plans anew (a channel added or
    enabled, an env recompiled)."""

    def __init__(self, suite: Suite, scan: Channel, hit: Channel) -> None:
        self.suite, self.scan, self.hit = suite, scan, hit
        lidar: LidarUnit = scan.unit  # type: ignore[assignment]
        collision: CollisionUnit = hit.unit  # type: ignore[assignment]
        frames, n = suite.frames, suite.num_envs
        self.group = frames._single
        self.lidar, self.collision = lidar, collision
        envs = np.arange(n, dtype=np.int64)
        scan_reading, hit_reading = scan.reading, hit.reading
        out = collision.out
        self.arrays = TickArrays(
            frames.whole_state("qpos"), envs, lidar.qpos_adr, lidar.offset, lidar.rotation,
            lidar.pattern.directions, lidar._origins, lidar.ray_origins, lidar._directions,
            float(lidar.pattern.range_min), float(lidar.pattern.range_max),
            lidar.out["ranges"].reshape(n, -1), frames.whole("history"),
            frames.whole("time"), collision.since, collision.everything, collision.feet_rings,
            COLLISION_HISTORY, collision.slabs, out["collided"], out["contacts"], out["kind"],
            collision.pending, collision.extra, envs, scan_reading.valid, scan_reading.stamp,
            scan_reading.count, scan_reading.fresh, hit_reading.valid, hit_reading.stamp,
            hit_reading.count, hit_reading.fresh)

    @classmethod
    def make(cls, suite: Suite) -> FusedTick | None:
        channels = list(suite.channels.values())
        if len(channels) != 2 or suite.frames.whole("history") is None:
            return None
        kinds = {type(c.unit): c for c in channels}
        scan, hit = kinds.get(LidarUnit), kinds.get(CollisionUnit)
        if scan is None or hit is None or scan.unit.robot != hit.unit.robot:
            return None
        lidar: LidarUnit = scan.unit  # type: ignore[assignment]
        if not (scan.direct and hit.direct and lidar.all_alone
                and lidar.present.all() and hit.unit.present.all()):
            return None
        return cls(suite, scan, hit)

    def valid(self) -> bool:
        """Whether the arrays are still the live ones (the same batch group, bound)."""
        return self.suite.frames._whole is self.group

    def cast(self) -> tuple[np.ndarray, np.ndarray]:
        """The lidar's rays from `before_cast`'s frames: distances and geom ids (n, R)."""
        lidar = self.lidar
        dist, geomid = self.suite.sim.cast_rays(lidar._origins, lidar._directions,
                                                NO_ROBOT_MASK, cutoff=lidar.pattern.range_max,
                                                ray_origins=lidar.ray_origins)
        lidar.dist, lidar.geomid = dist, geomid
        return dist, geomid

    def finish(self, touched: int) -> None:
        """After the compiled readings: the contact list of the `touched` envs' (window's)."""
        if touched:
            self.collision.classify(self.suite.frames, self.arrays.envs)
