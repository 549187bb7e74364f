"""Lidar: the ray pattern a declaration gives, cast for all envs at once.

Casting: per env, a snapshot of the current state (access.py) and `mj_multiRay` from the
sensor site along the pattern's directions, on the worker threads (it releases the GIL);
a fan of FAN_SPLIT rays or more is split into chunks over the threads. No Python loop
over rays.

What a lidar sees (geom groups, builders.py): GROUP_STATIC and GROUP_ROBOT; it skips
visuals, ceilings (GROUP_CEILING) and hidden hulls (GROUP_HIDDEN). It never sees the
robot that carries it: for the duration of its cast the carrier's visible geoms are filed
into GROUP_SELF, which no lidar sees, and restored right after. mj_multiRay has one body
to exclude per call and a robot has many bodies; switching groups makes one pass exact for
any robot and any number of robots per env, with no recasts and no model copies. Only the
envs' own models are touched, inside the sensor hook, while nothing steps or renders.

Ranges follow REP 117: +inf where nothing is hit within range_max, -inf below range_min.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import mujoco
import numpy as np

from arena_gym.scene import builders
from arena_gym.scene.gazebo import SensorDecl
from arena_gym.scene.robot import RobotInfo
from arena_gym.scene.scene import Scene
from arena_gym.scene.sensor_mounts import SensorMount
from arena_gym.sensors import noise
from arena_gym.sensors.access import Frames
from arena_gym.sensors.specs import LidarSpec
from arena_gym.sensors.units import Unit, robot_geoms

FAN_SPLIT = 1024  # rays: fans at least this large are split over the threads
CHUNK = 512  # rays per chunk of a split fan, at least


def geomgroup_mask(groups: tuple[int, ...]) -> np.ndarray:
    mask = np.zeros(mujoco.mjNGROUP, dtype=np.uint8)
    mask[list(groups)] = 1
    return mask


@dataclass(frozen=True)
class RayPattern:
    """Beams (horizontal samples) x rings (vertical samples), both ends of each angle range
    included (Gazebo's convention). `directions` are unit vectors in the sensor frame
    (x forward, y left, z up), ring-major: ring j, beam i is row j * beams + i."""

    beams: int
    rings: int
    angle_min: float
    angle_max: float
    angle_increment: float
    elevations: tuple[float, ...]
    range_min: float
    range_max: float
    directions: np.ndarray

    @property
    def signature(self) -> tuple:
        return ("beams", self.beams, "rings", self.rings, "angles", self.angle_min,
                self.angle_max, self.elevations, "range", self.range_min, self.range_max)


def ray_pattern(decl: SensorDecl) -> RayPattern:
    beams, rings = max(int(decl.samples), 1), max(int(decl.vertical_samples), 1)
    azimuths = np.linspace(decl.min_angle, decl.max_angle, beams) if beams > 1 else np.array(
        [decl.min_angle])
    if rings > 1:
        elevations = np.linspace(decl.vertical_min_angle, decl.vertical_max_angle, rings)
    else:
        elevations = np.array([decl.vertical_min_angle])
    az, el = np.meshgrid(azimuths, elevations)  # (rings, beams)
    directions = np.stack(
        [np.cos(el) * np.cos(az), np.cos(el) * np.sin(az), np.sin(el)], axis=-1
    ).reshape(-1, 3)
    increment = (decl.max_angle - decl.min_angle) / (beams - 1) if beams > 1 else 0.0
    return RayPattern(
        beams=beams, rings=rings, angle_min=float(decl.min_angle),
        angle_max=float(decl.max_angle), angle_increment=float(increment),
        elevations=tuple(float(e) for e in elevations), range_min=float(decl.min_range),
        range_max=float(decl.max_range) if decl.max_range > 0 else math.inf,
        directions=np.ascontiguousarray(directions),
    )


class LidarUnit(Unit):
    kind = "lidar"

    def __init__(self, spec: LidarSpec, num_envs: int) -> None:
        super().__init__(spec, num_envs)
        self.pattern: RayPattern | None = None
        self.site = np.full(num_envs, -1, dtype=np.int64)
        self.carrier_root = np.full(num_envs, -1, dtype=np.int64)
        self.carrier: list[np.ndarray] = [np.zeros(0, dtype=np.int64)] * num_envs

    def signature(self, mount: SensorMount | None) -> object:
        return ray_pattern(mount.decl).signature  # type: ignore[union-attr]

    def _allocate(self, mount: SensorMount | None) -> None:
        self.pattern = ray_pattern(mount.decl)  # type: ignore[union-attr]
        nray = self.pattern.directions.shape[0]
        self.dist = np.zeros((self.num_envs, nray))
        self.geomid = np.zeros((self.num_envs, nray), dtype=np.int32)
        shape = (self.pattern.beams,) if self.pattern.rings == 1 else (
            self.pattern.rings, self.pattern.beams)
        self.out = {"ranges": np.full((self.num_envs, *shape), np.inf, dtype=np.float32)}

    def _bind_env(self, env: int, scene: Scene, info: RobotInfo, mount: SensorMount | None) -> None:
        model = scene._model
        self.site[env] = model.site(mount.site).id  # type: ignore[union-attr]
        root = model.body(info.root_body).id
        self.carrier_root[env] = root
        seen = np.isin(model.geom_group, builders.LIDAR_GROUPS)
        self.carrier[env] = np.flatnonzero(robot_geoms(model, root) & seen)

    def _compute(self, frames: Frames, envs: np.ndarray) -> None:
        cast_lidars([(self, envs)], frames)

    def finish(self, envs: np.ndarray) -> None:
        """REP 117 ranges of `envs` from the raw distances."""
        p = self.pattern
        dist, geomid = self.dist[envs], self.geomid[envs]
        ranges = dist.astype(np.float32)
        ranges[(geomid < 0) | (dist < 0) | (dist > p.range_max)] = np.inf
        ranges[(geomid >= 0) & (dist >= 0) & (dist < p.range_min)] = -np.inf
        self.out["ranges"][envs] = ranges.reshape(len(envs), *self.out["ranges"].shape[1:])

    def noise(self, values: dict[str, np.ndarray], spec: LidarSpec,  # type: ignore[override]
              rng: np.random.Generator) -> None:
        std = self.reference.decl.noise_stddev if spec.noise_std == "declared" else spec.noise_std
        p = self.pattern
        noise.ranges(values["ranges"], float(std), spec.dropout, p.range_min, p.range_max, rng)


def cast_lidars(jobs: list[tuple[LidarUnit, np.ndarray]], frames: Frames) -> None:
    """Cast every (unit, envs) job: snapshots, then one phase per carrier rank (an env's
    k-th lidar-carrying robot), each phase's fans in parallel."""
    workers = frames.workers
    jobs = [(u, e) for u, e in jobs if e.size]
    for env in sorted({int(env) for _, e in jobs for env in e}):
        frames.snapshot(env)  # a few microseconds each: threads would only add overhead
    # carrier rank per (unit, env): the order of its carrier among the env's carriers
    carriers: dict[int, list[int]] = {}
    for unit, unit_envs in jobs:
        for env in unit_envs:
            roots = carriers.setdefault(int(env), [])
            if unit.carrier_root[env] not in roots:
                roots.append(int(unit.carrier_root[env]))
    ranks = max((len(r) for r in carriers.values()), default=0)
    mask = geomgroup_mask(builders.LIDAR_GROUPS)
    for rank in range(ranks):
        calls, hidden = [], []
        for unit, unit_envs in jobs:
            p = unit.pattern
            nray = p.directions.shape[0]
            phase = [int(e) for e in unit_envs if carriers[int(e)].index(int(unit.carrier_root[e])) == rank]
            if not phase:
                continue
            rot = np.stack([frames.snapshot(e).site_xmat[unit.site[e]].reshape(3, 3) for e in phase])
            world = np.matmul(p.directions, rot.transpose(0, 2, 1))  # (k, nray, 3), C order
            splits = _splits(nray, workers.nthread)
            for k, env in enumerate(phase):
                data = frames.snapshot(env)
                model = frames.model(env)
                origin = data.site_xpos[unit.site[env]].copy()
                hidden.append((model, unit.carrier[env]))
                for lo, hi in splits:
                    calls.append(_ray_call(model, data, origin, world[k, lo:hi], mask,
                                           unit.geomid[env, lo:hi], unit.dist[env, lo:hi],
                                           p.range_max))
        saved = [(model, ids, model.geom_group[ids].copy()) for model, ids in hidden]
        try:
            for model, ids, _ in saved:
                model.geom_group[ids] = builders.GROUP_SELF
            workers.run(calls)
        finally:
            for model, ids, groups in reversed(saved):
                model.geom_group[ids] = groups
    for unit, unit_envs in jobs:
        unit.finish(unit_envs)
        unit.mark_done(frames, unit_envs)


def _splits(nray: int, nthread: int) -> list[tuple[int, int]]:
    if nray < FAN_SPLIT or nthread <= 1:
        return [(0, nray)]
    parts = max(1, min(nthread, nray // CHUNK))
    edges = np.linspace(0, nray, parts + 1).round().astype(int)
    return list(zip(edges[:-1].tolist(), edges[1:].tolist()))


def _ray_call(model: mujoco.MjModel, data: mujoco.MjData, origin: np.ndarray, vec: np.ndarray,
              mask: np.ndarray, geomid: np.ndarray, dist: np.ndarray, cutoff: float):
    flat = vec.reshape(-1)
    nray = vec.shape[0]
    cut = float(cutoff) if math.isfinite(cutoff) else mujoco.mjMAXVAL

    def call() -> None:
        mujoco.mj_multiRay(model, data, origin, flat, mask, 1, -1, geomid, dist, None, nray, cut)

    return call
