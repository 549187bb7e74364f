"""Lidar: the ray pattern a declaration gives (or a spec overrides), cast for all envs at once.

Casting: one `Simulator.cast_rays` per carrier rank (below) for every env holding the
lidar: `mujoco.batch.Batch.ray` for batched envs (one call, its own threads), mj_multiRay
on the env's own MjData for the others. No per-env MjData copies. The ray origin and
directions come from the lidar frame's pose at the current state, composed from the
carrier's free joint (qpos) and the frame's fixed offset from the carrier's root body
(a lidar on a moving joint is refused at bind time: its pose would need kinematics).

What a lidar sees (geom groups, arena_gym.geometry.groups): GROUP_STATIC and GROUP_ROBOT; it skips
visuals, ceilings (GROUP_CEILING) and hidden hulls (GROUP_HIDDEN). It never sees the
robot that carries it: for the duration of its cast the carrier's visible geoms are filed
into GROUP_SELF, which no lidar sees, and restored right after. `bodyexclude` excludes one
body and a robot has many; one geom group for all envs (Batch.ray takes one) cannot hold
"every robot but this env's carrier" either, while switching the carrier's groups in the
envs' own models (a Batch reads them in place) makes one pass exact for any robot. Where
the carrier is an env's only robot (the usual case), a cast blind to GROUP_ROBOT sees the
same geoms, and nothing is switched. Envs
with several lidar-carrying robots cast once per carrier rank (its k-th carrier). Only
the envs' own models are touched, inside the sensor sampling, while nothing steps.

Ranges follow REP 117: +inf where nothing is hit within range_max, -inf below range_min.
Beams follow Gazebo's convention: `samples` beams from min_angle to max_angle, both ends
included (a LaserScan's angle_increment is the span / (samples - 1)).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import mujoco
import numpy as np

from arena_gym.assets.gazebo import SensorDecl
from arena_gym.compiled import kernel
from arena_gym.geometry.groups import GROUP_ROBOT, GROUP_SELF, LIDAR_GROUPS
from arena_gym.geometry.rotations import quat_mat, yaw_mat
from arena_gym.scene.robot import RobotInfo
from arena_gym.scene.scene import Scene
from arena_gym.scene.sensor_mounts import SensorMount
from arena_gym.sensors import noise
from arena_gym.sensors.errors import SensorError
from arena_gym.sensors.specs import LidarSpec
from arena_gym.sensors.state_access import Frames
from arena_gym.sensors.units import Unit, robot_geoms

FREE = mujoco.mjtJoint.mjJNT_FREE


def geomgroup_mask(groups: tuple[int, ...]) -> np.ndarray:
    mask = np.zeros(mujoco.mjNGROUP, dtype=np.uint8)
    mask[list(groups)] = 1
    return mask


LIDAR_MASK = geomgroup_mask(LIDAR_GROUPS)
# what a lidar sees when its carrier is the only robot it could see: no robot at all
NO_ROBOT_MASK = geomgroup_mask(tuple(g for g in LIDAR_GROUPS
                                     if g != GROUP_ROBOT))


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


def overridden(decl: SensorDecl | None, spec: LidarSpec) -> SensorDecl:
    """The declaration with the spec's overrides applied (`link` lidars start from none).

    A full ring (its span plus one beam step is 2 pi) stays a full ring when only its beam
    count changes: the last beam stops one new step short of the first."""
    if decl is None:
        decl = SensorDecl(name=spec.link or "lidar", kind="ray", link=spec.link or "")
    samples = decl.samples if spec.num_beams is None else spec.num_beams
    low = decl.min_angle if spec.angle_min is None else spec.angle_min
    high = decl.max_angle if spec.angle_max is None else spec.angle_max
    if spec.num_beams is not None and spec.angle_max is None and decl.samples > 1:
        step = (decl.max_angle - decl.min_angle) / (decl.samples - 1)
        if abs(decl.max_angle - decl.min_angle + step - 2 * math.pi) < 1e-4:  # yaml rounding
            high = low + 2 * math.pi * (samples - 1) / samples
    return replace(
        decl, samples=samples, min_angle=low, max_angle=high,
        min_range=decl.min_range if spec.range_min is None else spec.range_min,
        max_range=decl.max_range if spec.range_max is None else spec.range_max,
    )


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
    """A robot's lidar in every env: the ray pattern placed at the lidar frame and cast for all envs
    at once, blind to its own robot."""

    kind = "lidar"
    in_place = True  # finish writes `out` (the ranges) and keeps one view of it

    def __init__(self, spec: LidarSpec, num_envs: int) -> None:
        super().__init__(spec, num_envs)
        self.spec = spec
        self.pattern: RayPattern | None = None
        self.carrier_root = np.full(num_envs, -1, dtype=np.int64)
        self.carrier: list[np.ndarray] = [np.zeros(0, dtype=np.int64)] * num_envs
        self.carrier_groups: list[np.ndarray] = [np.zeros(0, dtype=np.int32)] * num_envs
        self.group_view: list[np.ndarray] = [np.zeros(0, dtype=np.int32)] * num_envs
        # envs whose robot-group geoms are exactly the carrier's: casting blind to robots
        # there sees what casting with the carrier hidden sees, with no group switching
        self.alone = np.zeros(num_envs, dtype=bool)
        self._all_alone: bool | None = None  # alone.all(), kept until the next bind
        # the lidar frame: the carrier's base joints (qpos address, -1: fixed to the world;
        # width 7: a free joint, 3: a planar base's x, y, yaw) and the frame's fixed pose in
        # the root body's frame (in the world's when fixed; a planar base's frame at z = 0)
        self.qpos_adr = np.full(num_envs, -1, dtype=np.int64)
        self.width = np.full(num_envs, 7, dtype=np.int64)
        self.offset = np.zeros((num_envs, 3))
        self.rotation = np.tile(np.eye(3), (num_envs, 1, 1))
        self.dist = np.zeros((num_envs, 0))
        self.geomid = np.zeros((num_envs, 0), dtype=np.int32)
        self._flat_ranges: np.ndarray | None = None

    def describe(self) -> str:
        if self.spec.link is not None:
            return f"lidar at link {self.spec.link!r} of robot {self.robot!r}"
        return super().describe()

    def find_mount(self, scene: Scene, info: RobotInfo) -> SensorMount | None:
        return None if self.spec.link is not None else super().find_mount(scene, info)

    def _decl(self, mount: SensorMount | None) -> SensorDecl:
        return overridden(mount.decl if mount is not None else None, self.spec)

    def signature(self, mount: SensorMount | None) -> object:
        return ray_pattern(self._decl(mount)).signature

    def _allocate(self, mount: SensorMount | None) -> None:
        self.pattern = ray_pattern(self._decl(mount))
        nray = self.pattern.directions.shape[0]
        self.dist = np.zeros((self.num_envs, nray))
        self.geomid = np.zeros((self.num_envs, nray), dtype=np.int32)
        self._directions = np.empty((self.num_envs, nray, 3))
        self._origins = np.empty((self.num_envs, 3))
        self.ray_origins = np.empty((self.num_envs, nray, 3))  # rays() writes each ray's
        self._all_rows = np.arange(self.num_envs, dtype=np.int64)
        shape = (self.pattern.beams,) if self.pattern.rings == 1 else (
            self.pattern.rings, self.pattern.beams)
        self.out = {"ranges": np.full((self.num_envs, *shape), np.inf, dtype=np.float32)}

    def _bind_env(self, env: int, scene: Scene, info: RobotInfo, mount: SensorMount | None) -> None:
        model = scene.compiled
        root = model.body(info.root_body).id
        self.carrier_root[env] = root
        seen = np.isin(model.geom_group, LIDAR_GROUPS)
        self.carrier[env] = np.flatnonzero(robot_geoms(model, root) & seen)
        self.carrier_groups[env] = model.geom_group[self.carrier[env]].copy()
        self.group_view[env] = model.geom_group  # a view of the model's memory, per compile
        # skinned pedestrians' capsules move in and out of GROUP_ROBOT without a compile
        self._all_alone = self._flat_ranges = None
        self.alone[env] = not scene.pedestrians.skins and np.array_equal(
            np.flatnonzero(model.geom_group == GROUP_ROBOT), self.carrier[env])
        data = mujoco.MjData(model)  # once per compile: the frame's offset at qpos0
        mujoco.mj_kinematics(model, data)
        if mount is not None:
            site = model.site(mount.site).id
            body = int(model.site_bodyid[site])
            pos, mat = data.site_xpos[site], data.site_xmat[site].reshape(3, 3)
        else:
            name = info.prefix + self.spec.link  # type: ignore[operator]
            try:
                body = model.body(name).id
            except KeyError:
                links = sorted(model.body(b).name[len(info.prefix):] for b in range(model.nbody)
                               if model.body(b).name.startswith(info.prefix))
                raise SensorError(f"{self.describe()}: env {scene.env_id} has no link "
                                  f"{self.spec.link!r}; expected one of {links}") from None
            pos, mat = data.xpos[body], data.xmat[body].reshape(3, 3)
        planar = root if info.base == "planar" else -1
        top, adr, width = _rigid_to(model, body, planar, scene.env_id, self.describe())
        if adr < 0:  # fixed to the world: the world pose is the offset
            self.offset[env], self.rotation[env] = pos, mat
        else:
            r_top = data.xmat[top].reshape(3, 3)
            self.offset[env] = r_top.T @ (pos - data.xpos[top])
            self.rotation[env] = r_top.T @ mat
            if width == 3:  # the base turns about z only: its frame taken at the ground
                self.offset[env, 2] += data.xpos[top, 2]
        self.qpos_adr[env], self.width[env] = adr, width

    @property
    def origins(self) -> np.ndarray:
        """(num_envs, 3): where `rays` put each env's lidar origin last."""
        return self._origins

    @property
    def directions(self) -> np.ndarray:
        """(num_envs, nray, 3): the world directions `rays` wrote last."""
        return self._directions

    @property
    def flat_ranges(self) -> np.ndarray:
        """(num_envs, nray) view of the ranges (`out`) that `finish` writes."""
        if self._flat_ranges is None:  # made once per bind
            self._flat_ranges = self.out["ranges"].reshape(self.num_envs, -1)
        return self._flat_ranges

    @property
    def all_alone(self) -> bool:
        """Whether the carrier is the only robot a cast could see in every env."""
        if self._all_alone is None:
            self._all_alone = bool(self.alone.all())
        return self._all_alone

    def rays(self, frames: Frames, envs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """World origins (len(envs), 3) and directions (len(envs), nray, 3) at the current
        state: the free joint's pose composed with the frame's fixed offset (`frames_into`,
        compiled), into buffers the next call overwrites."""
        qpos, rows, adr = self.carriers(frames, envs)
        every = len(envs) == self.num_envs  # envs are sorted and unique: all, in order
        offset, rotation, width = ((self.offset, self.rotation, self.width) if every
                                   else (self.offset[envs], self.rotation[envs], self.width[envs]))
        m = len(envs)
        origins, directions = self._origins[:m], self._directions[:m]
        frames_into(qpos, rows, adr, width, offset, rotation, self.pattern.directions, origins,
                    self.ray_origins[:m], directions)
        return origins, directions

    def carriers(self, frames: Frames, envs: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(qpos rows, each env's row in them, each env's base-joint address there, -1 for
        a frame fixed to the world) of `envs`: every env's bound qpos where one batch group
        holds them all (the usual case), else the values of each env's base joints gathered
        (7 of a free joint, 3 of a planar base)."""
        whole = frames.whole_state("qpos")
        if whole is not None:  # the group's rows are the env ids
            every = len(envs) == self.num_envs
            return (whole, self._all_rows, self.qpos_adr) if every else (
                whole, envs, self.qpos_adr[envs])
        adr = self.qpos_adr[envs]
        moving = adr >= 0
        qpos = np.zeros((len(envs), 7))
        widths = self.width[envs]
        for width in np.unique(widths[moving]).tolist():
            some = moving & (widths == width)
            qpos[some, :width] = frames.rows("qpos", envs[some], adr[some], width)
        return qpos, np.arange(len(envs), dtype=np.int64), np.where(moving, 0, -1)

    def _compute(self, frames: Frames, envs: np.ndarray) -> None:
        cast_lidars([(self, envs)], frames)

    def finish(self, envs: np.ndarray) -> None:
        """REP 117 ranges of `envs` from their casts (`ranges_into`, compiled)."""
        p = self.pattern
        flat = self.flat_ranges
        if len(envs) == self.num_envs:  # envs are sorted and unique: all, in order
            dist, geomid = self.dist, self.geomid
        else:
            dist, geomid = self.dist[envs], self.geomid[envs]
        ranges_into(dist, geomid, p.range_min, p.range_max, envs, flat)

    def _moved(self) -> None:
        self._flat_ranges = None

    def _std(self, spec: LidarSpec) -> float:
        if spec.noise_std != "declared":
            return float(spec.noise_std)
        return float(self.reference.decl.noise_stddev) if self.reference is not None else 0.0

    def noisy(self, spec: LidarSpec) -> bool:  # type: ignore[override]
        return self._std(spec) > 0 or spec.dropout > 0

    def noise(self, values: dict[str, np.ndarray], spec: LidarSpec,  # type: ignore[override]
              rng: np.random.Generator) -> None:
        p = self.pattern
        noise.ranges(values["ranges"], self._std(spec), spec.dropout, p.range_min, p.range_max,
                     rng)


def _rigid_to(model: mujoco.MjModel, body: int, planar: int, env: int, what: str
              ) -> tuple[int, int, int]:
    """(the body the frame rides on rigidly, its base joints' qpos address or -1 when it is
    fixed to the world, their qpos width: 7 for a free joint, 3 for the planar base whose
    root body is `planar`). Any other joint between the frame and the world is refused."""
    walk = body
    while walk > 0:
        first, count = int(model.body_jntadr[walk]), int(model.body_jntnum[walk])
        if count:
            if count == 1 and model.jnt_type[first] == FREE:
                return walk, int(model.jnt_qposadr[first]), 7
            if walk == planar:  # scene/planar_base.py: slide x, slide y, hinge z
                return walk, int(model.jnt_qposadr[first]), 3
            names = [model.joint(first + k).name for k in range(count)]
            raise SensorError(f"{what}: env {env}: expected the lidar rigidly fixed to the "
                              f"robot's base (fixed joints only), got joints {names} on the way")
        walk = int(model.body_parentid[walk])
    return 0, -1, 7


def cast_lidars(jobs: list[tuple[LidarUnit, np.ndarray]], frames: Frames) -> None:
    """Cast every (unit, envs) job: one `Simulator.cast_rays` per unit and carrier rank
    (an env's k-th lidar-carrying robot), the carriers hidden meanwhile."""
    if len(jobs) == 1:  # the usual: one lidar in every env, its carrier alone (as below)
        unit, envs = jobs[0]
        if len(envs) == unit.num_envs and unit.all_alone:  # envs sorted, unique: all
            _cast(unit, envs, NO_ROBOT_MASK, frames)
            unit.finish(envs)
            unit.mark_done(frames, envs)
            return
    jobs = [(u, e) for u, e in jobs if e.size]
    if len(jobs) == 1:  # one lidar: one carrier per env, one rank
        phases = [[jobs[0]]]
    else:
        carriers: dict[int, list[int]] = {}  # env -> carrier roots, in job order
        for unit, unit_envs in jobs:
            for env in unit_envs.tolist():
                roots = carriers.setdefault(env, [])
                if int(unit.carrier_root[env]) not in roots:
                    roots.append(int(unit.carrier_root[env]))
        ranks = max((len(r) for r in carriers.values()), default=0)
        phases = []
        for rank in range(ranks):
            casts = []
            for unit, unit_envs in jobs:
                phase = np.array([e for e in unit_envs.tolist()
                                  if carriers[e].index(int(unit.carrier_root[e])) == rank],
                                 dtype=np.int64)
                if phase.size:
                    casts.append((unit, phase))
            phases.append(casts)
    for casts in phases:
        blind = all(unit.all_alone if len(phase) == unit.num_envs else unit.alone[phase].all()
                    for unit, phase in casts)  # nothing to hide
        mask = NO_ROBOT_MASK if blind else LIDAR_MASK
        saved = [] if blind else [
            (unit.group_view[env], unit.carrier[env], unit.carrier_groups[env])
            for unit, phase in casts for env in phase.tolist()]  # one carrier per env
        try:
            for geom_group, ids, _ in saved:
                geom_group[ids] = GROUP_SELF
            for unit, phase in casts:
                _cast(unit, phase, mask, frames)
        finally:
            for geom_group, ids, kept in reversed(saved):
                geom_group[ids] = kept
    for unit, unit_envs in jobs:
        unit.finish(unit_envs)
        unit.mark_done(frames, unit_envs)


def _cast(unit: LidarUnit, phase: np.ndarray, mask: np.ndarray, frames: Frames) -> None:
    """Cast `unit`'s rays in the envs of `phase` (sorted, unique) into its dist and geomid."""
    origins, directions = unit.rays(frames, phase)
    # beyond range_max a hit reads +inf anyway: the walls need not be cast further
    every = len(phase) == unit.num_envs
    dist, geomid = frames.sim.cast_rays(origins, directions, mask,
                                        env_ids=None if every else phase,
                                        cutoff=unit.pattern.range_max,
                                        ray_origins=unit.ray_origins if every else None)
    if every:
        unit.dist, unit.geomid = dist, geomid
    else:
        unit.dist[phase], unit.geomid[phase] = dist, geomid


@kernel
def frames_into(qpos, rows, adr, width, offset, rotation, local, origins, ray_origins,
                directions):  # pragma: no cover - compiled
    """For every i: the lidar frame at `offset[i]` (3,) and `rotation[i]` (3, 3) in the
    frame of the base joints at qpos[rows[i], adr[i]:adr[i] + width[i]]: a free joint's
    (width 7: position, quaternion w, x, y, z, normalised as mj_kinematics does, a zero one
    read as the identity) or a planar base's (width 3: x, y, yaw, the frame at z = 0), or
    in the world's where adr[i] < 0: its origin into origins[i] and each beam's (a cast takes one
    per ray) into ray_origins[i] (R, 3), the world directions of the beams `local` (R, 3)
    into directions[i] (R, 3)."""
    for i in range(rows.shape[0]):
        o0, o1, o2 = offset[i, 0], offset[i, 1], offset[i, 2]
        r = rotation[i]
        if adr[i] < 0:  # fixed to the world: the offset is the pose
            m00, m01, m02, m10, m11, m12, m20, m21, m22 = (
                r[0, 0], r[0, 1], r[0, 2], r[1, 0], r[1, 1], r[1, 2], r[2, 0], r[2, 1], r[2, 2])
            x0, x1, x2 = o0, o1, o2
        else:
            q = qpos[rows[i], adr[i]:adr[i] + width[i]]
            if width[i] == 3:
                b = yaw_mat(q[2])
                z = 0.0
            else:
                b = quat_mat(q[3], q[4], q[5], q[6])
                z = q[2]
            x0 = q[0] + b[0] * o0 + b[1] * o1 + b[2] * o2
            x1 = q[1] + b[3] * o0 + b[4] * o1 + b[5] * o2
            x2 = z + b[6] * o0 + b[7] * o1 + b[8] * o2
            m00 = b[0] * r[0, 0] + b[1] * r[1, 0] + b[2] * r[2, 0]
            m01 = b[0] * r[0, 1] + b[1] * r[1, 1] + b[2] * r[2, 1]
            m02 = b[0] * r[0, 2] + b[1] * r[1, 2] + b[2] * r[2, 2]
            m10 = b[3] * r[0, 0] + b[4] * r[1, 0] + b[5] * r[2, 0]
            m11 = b[3] * r[0, 1] + b[4] * r[1, 1] + b[5] * r[2, 1]
            m12 = b[3] * r[0, 2] + b[4] * r[1, 2] + b[5] * r[2, 2]
            m20 = b[6] * r[0, 0] + b[7] * r[1, 0] + b[8] * r[2, 0]
            m21 = b[6] * r[0, 1] + b[7] * r[1, 1] + b[8] * r[2, 1]
            m22 = b[6] * r[0, 2] + b[7] * r[1, 2] + b[8] * r[2, 2]
        origins[i, 0], origins[i, 1], origins[i, 2] = x0, x1, x2
        for k in range(local.shape[0]):
            d0, d1, d2 = local[k, 0], local[k, 1], local[k, 2]
            ray_origins[i, k, 0], ray_origins[i, k, 1], ray_origins[i, k, 2] = x0, x1, x2
            directions[i, k, 0] = m00 * d0 + m01 * d1 + m02 * d2
            directions[i, k, 1] = m10 * d0 + m11 * d1 + m12 * d2
            directions[i, k, 2] = m20 * d0 + m21 * d1 + m22 * d2


@kernel
def ranges_into(dist, geomid, range_min, range_max, envs, out):  # pragma: no cover - compiled
    """REP 117 ranges of casts (m, R) into out[envs[i]] (float32): +inf for a miss (geom
    id < 0) or a hit beyond range_max, -inf below range_min, else the distance."""
    for i in range(envs.shape[0]):
        e = envs[i]
        for k in range(dist.shape[1]):
            d = dist[i, k]
            if geomid[i, k] < 0 or d > range_max:
                out[e, k] = np.inf
            elif d < range_min:
                out[e, k] = -np.inf
            else:
                out[e, k] = d
