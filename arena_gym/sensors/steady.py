"""The usual tick of a suite of one lidar and the collision rule, in one compiled call.

`SensorSuite.update` runs, per tick, each channel's schedule, the rebinding checks, each
unit's sample and each channel's publishing in Python, around the compiled functions that
compute the readings. Where the suite holds exactly one lidar reading and one collision
reading, both plain (no noise, delay or averaging), both due at the tick, unmasked, in
every env, with nobody subscribed, the lidar alone in every env (no other robot to hide it from)
and one batch group holding every env in order (the navigation env's case, at any number
of envs), `SteadyTick` makes the same compiled functions in the same order one call: the
lidar's frames (`frames_into`), its cast of the primitive geoms (`GeomRays`' `cast_geoms`),
its REP 117 ranges (`ranges_into`), the collision rule over the tick's window (`window`),
and each reading shown (`shown`). The suite's general path takes over wherever any of
that stops holding, and for a tick whose cast could see a geom GeomRays leaves to MuJoCo
(a mesh, a jointed body): it casts that tick anew.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from arena_gym.compiled import kernel
from arena_gym.scene.robot import COLLISION_HISTORY
from arena_gym.sensors.channel import Channel, shown
from arena_gym.sensors.contact import CollisionUnit, window
from arena_gym.sensors.lidar import NO_ROBOT_MASK, LidarUnit, frames_into, ranges_into
from arena_gym.sensors.state_access import Frames
from arena_gym.sim.geom_rays import cast_geoms


class SteadyTick:
    """The usual tick of `lidar` and `collision` (channels of one suite): `plan` says where
    it applies, `run` takes a tick."""

    def __init__(self, lidar: Channel, collision: Channel) -> None:
        self.lidar, self.collision = lidar, collision
        self.envs = np.arange(lidar.reading.num_envs, dtype=np.int64)
        self._group: Any = None  # the batch group the arguments below are of
        self._args: tuple | None = None
        self._tick: Any = None  # tick's compiled function for those arguments

    @classmethod
    def plan(cls, channels: list[Channel]) -> SteadyTick | None:
        """A SteadyTick where the suite's channels allow one, else None."""
        lidars = [c for c in channels if isinstance(c.unit, LidarUnit)]
        hits = [c for c in channels if isinstance(c.unit, CollisionUnit)]
        if len(channels) != 2 or len(lidars) != 1 or len(hits) != 1:
            return None
        for channel in channels:
            if not (channel.plain and channel.enabled.all()
                    and channel.unit.present.all() and not channel.subscribers
                    and channel.shows_in_place):
                return None
        return cls(lidars[0], hits[0]) if lidars[0].unit.all_alone else None

    def run(self, frames: Frames, clock: float) -> bool:
        """One tick (after the physics) where both readings are due at `clock` (the usual:
        the env samples at each reading's rate or slower), begun on `frames`; False where
        the general path must take it (nothing shown, no schedule moved on then)."""
        lidar, hit = self.lidar, self.collision
        if not (lidar.schedule.is_due(clock) and hit.schedule.is_due(clock)):
            return False
        before = lidar.schedule.next_due, hit.schedule.next_due
        lidar.needs(clock)
        hit.needs(clock)
        frames.begin(forced=False)
        group = frames.whole_group
        if group is not self._group or group is None:
            # the arguments are these very arrays at every tick of the group (the general
            # path's ticks between leave them as they are): built, and their compiled call
            # looked up, once per group
            self._group, self._args = group, self._arguments(group)
            self._tick = None if self._args is None else tick.entry(*self._args, clock,
                                                                   self.envs)
        args = self._args
        touched = -1 if args is None else self._tick(*args, clock, self.envs)
        if touched < 0:  # no such group, or the cast could see a geom GeomRays leaves to
            lidar.schedule.next_due, hit.schedule.next_due = before  # MuJoCo: the general
            return False  # path takes the tick
        lidar.unit.mark_done(frames, self.envs)
        hit.unit.mark_done(frames, self.envs)
        if touched:
            hit.unit.classify(frames, self.envs)
        return True

    def _arguments(self, group: Any) -> tuple | None:
        """The kernel's arguments for `group` (None where it has no GeomRays)."""
        if group is None:
            return None
        prims = group.geom_rays()
        if prims is None:
            return None
        lidar, hit = self.lidar.unit, self.collision.unit
        pattern = lidar.pattern
        n, nray = len(self.envs), pattern.directions.shape[0]
        reach = pattern.range_max if math.isfinite(pattern.range_max) else -1.0
        lidar.dist, lidar.geomid = np.empty((n, nray)), np.empty((n, nray), np.int32)
        frames = (group.bound("qpos"), self.envs, lidar.qpos_adr, lidar.width, lidar.offset,
                  lidar.rotation, pattern.directions, lidar.origins, lidar.ray_origins,
                  lidar.directions)
        cast = (np.asarray(NO_ROBOT_MASK, np.uint8), np.full(n, -1, np.int32), reach,
                self.envs, prims.table, prims.tiles(reach), group.mocap_pos, group.mocap_quat,
                prims.fit(nray), lidar.dist, lidar.geomid, np.empty(n, bool))
        scan = (pattern.range_min, pattern.range_max, self.envs, lidar.flat_ranges)
        collision = (group.bound("history"), group.bound("time"), self.envs, self.envs,
                     hit.since, hit.everything, hit.feet_rings, COLLISION_HISTORY, hit.slabs,
                     hit.out["collided"], hit.out["contacts"], hit.out["kind"], hit.pending,
                     hit.extra)
        readings = tuple(getattr(channel.reading, name) for channel in (self.lidar,
                                                                        self.collision)
                         for name in ("valid", "stamp", "count", "fresh"))
        return frames, cast, scan, collision, readings


@kernel
def tick(frames, cast, scan, collision, readings, clock, envs):  # pragma: no cover - compiled
    """The tick's compiled functions in their order (module docstring): returns -1 where
    the cast could see a geom left to MuJoCo (nothing computed after the cast then), else
    how many envs the collision window found touching."""
    frames_into(*frames)
    if cast_geoms(frames[7], frames[9], *cast) > 0:
        return -1
    ranges_into(cast[9], cast[10], *scan)
    touched = window(*collision)[0]
    shown(readings[0], readings[1], readings[2], readings[3], clock, envs)
    shown(readings[4], readings[5], readings[6], readings[7], clock, envs)
    return touched
