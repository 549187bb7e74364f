"""Which rays of a cast may hit a mesh: the rest skip MuJoCo's mesh test, exactly.

MuJoCo's ray-mesh test walks the mesh's BVH along the whole ray each time a ray crosses
the mesh's box (~2 us), and a lidar fan at leg height crosses the box of every table and
chair it passes under. A ray can only hit triangles its segment [0, cutoff] reaches, and a
lidar's segments stay within a thin height band: the triangles of a mesh that reach into
that band (table legs, not the top) lie inside a few vertical cylinders ("pieces"). A ray
whose direction passes no piece's circle, seen from its origin, cannot hit that mesh within
the cutoff; one that passes none of any mesh is cast with the meshes hidden (their geom
group switched, in place, to one the cast does not see, as the lidar hides its carrier),
and the others are cast again as they are. Every distance and geom id is then MuJoCo's own
for the whole scene (hits beyond the cutoff may read as misses, as `cast_rays` allows).

Pieces are built once per height band, in the mesh body's frame; they hold while a body
stands upright (mocap or welded to the world). A body tilted, or at a height the band was
not built for, falls back to the mesh's bounding sphere, which holds in any pose.
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

MESH = mujoco.mjtGeom.mjGEOM_MESH
CELL = 0.1  # m: band triangles are grouped into pieces by the cell their centre falls in
MARGIN = 1e-4  # m: round-off head room on every circle and band edge
BAND_PAD = 0.02  # m: a band is built this much wider than the first cast asks for
BINS = 2048  # azimuth bins of the candidate test
UPRIGHT = 1e-6  # largest |qx|, |qy| of a body quaternion treated as a turn about z alone


@dataclass
class _Pieces:
    band: tuple[float, float]  # body-frame z range the pieces are valid for
    circles: np.ndarray  # (n, G, P, 3): body-frame x, y, radius; radius < 0 pads


class MeshCull:
    """Use `for_models`; None there means the scenes hold no mesh a cull could skip."""

    def __init__(self, models: list[mujoco.MjModel], geoms: np.ndarray, mocap: np.ndarray,
                 static_pose: np.ndarray) -> None:
        self.models = models
        self.geoms = geoms  # (n, G) visible-group mesh geom ids, -1 pads
        self.mocap = mocap  # (n, G) mocap id of the geom's body, -1 for a static body
        self.static_pose = static_pose  # (n, G, 7) pos, quat of static bodies
        n, g = geoms.shape
        real = geoms >= 0
        safe = np.where(real, geoms, 0)
        rows = np.arange(n)[:, None]
        self.geom_pos = np.stack([m.geom_pos for m in models])[rows, safe]  # (n, G, 3)
        self.geom_quat = np.stack([m.geom_quat for m in models])[rows, safe]
        self.rbound = np.where(real, np.stack([m.geom_rbound for m in models])[rows, safe], -1.0)
        self.zext = np.zeros((n, g, 2))  # body-frame z extent of each mesh
        self.verts: list[list[np.ndarray]] = []  # per env, per geom: (F, 3, 3) body-frame
        for e, m in enumerate(models):
            row = []
            for k in range(g):
                tri = _triangles(m, int(geoms[e, k])) if real[e, k] else np.zeros((0, 3, 3))
                row.append(tri)
                if len(tri):
                    self.zext[e, k] = tri[..., 2].min(), tri[..., 2].max()
            self.verts.append(row)
        self.pieces: _Pieces | None = None

    @classmethod
    def for_models(cls, models: list[mujoco.MjModel]) -> MeshCull | None:
        per_env, mocaps, poses = [], [], []
        for m in models:
            ids = np.flatnonzero(m.geom_type == MESH)
            body = m.geom_bodyid[ids]
            mocap = m.body_mocapid[body]
            static = (m.body_parentid[body] == 0) & (m.body_jntnum[body] == 0) & (body != 0)
            if not ((mocap >= 0) | static | (body == 0)).all():
                return None  # a mesh on a moving body: its pose needs kinematics
            per_env.append(ids)
            mocaps.append(mocap)
            poses.append(np.concatenate([m.body_pos[body], m.body_quat[body]], axis=1))
            poses[-1][body == 0] = (0, 0, 0, 1, 0, 0, 0)
        width = max(len(i) for i in per_env)
        if width == 0:
            return None
        n = len(models)
        geoms = np.full((n, width), -1, dtype=np.int64)
        mocap = np.full((n, width), -1, dtype=np.int64)
        pose = np.zeros((n, width, 7))
        pose[..., 3] = 1
        for e, (ids, mc, ps) in enumerate(zip(per_env, mocaps, poses, strict=True)):
            geoms[e, : len(ids)], mocap[e, : len(ids)], pose[e, : len(ids)] = ids, mc, ps
        return cls(models, geoms, mocap, pose)

    def seen(self, geomgroup: np.ndarray) -> np.ndarray:
        """(n, G) whether each mesh geom is in a group the cast sees, now."""
        real = self.geoms >= 0
        safe = np.where(real, self.geoms, 0)
        groups = np.stack([m.geom_group for m in self.models])[np.arange(len(self.models))[:, None],
                                                                 safe]
        return real & (geomgroup[np.clip(groups, 0, mujoco.mjNGROUP - 1)] != 0)

    def candidates(self, origins: np.ndarray, vecs: np.ndarray, cutoff: float,
                   mocap_pos: np.ndarray, mocap_quat: np.ndarray,
                   seen: np.ndarray) -> np.ndarray:
        """(n, R) True where a ray may hit a seen mesh within `cutoff` (finite)."""
        n, nray = vecs.shape[:2]
        reach = cutoff * vecs[..., 2]
        zlo = origins[:, 2] + np.minimum(reach.min(axis=1), 0.0) - MARGIN
        zhi = origins[:, 2] + np.maximum(reach.max(axis=1), 0.0) + MARGIN
        pos, quat = self._body_poses(mocap_pos, mocap_quat)  # (n, G, 3), (n, G, 4)
        tilt = np.abs(quat[..., 1:3]).max(axis=-1)
        upright = tilt <= UPRIGHT
        lo = zlo[:, None] - pos[..., 2]  # the rays' band in each body's frame
        hi = zhi[:, None] - pos[..., 2]
        apart = upright & ((hi < self.zext[..., 0] - MARGIN) | (lo > self.zext[..., 1] + MARGIN))
        reached = upright & seen & ~apart  # parked below the floor: apart, not reached
        if reached.any():
            self._ensure(float(lo[reached].min()), float(hi[reached].max()))
        pieces = self.pieces
        inside = upright & (lo >= pieces.band[0]) & (hi <= pieces.band[1]) if pieces else \
            np.zeros_like(upright)
        fallback = seen & ~inside & ~apart
        circles = []  # rows: env, x, y, radius (world)
        if pieces is not None and (seen & inside).any():
            c, s = _yaw(quat)
            e, k = np.nonzero(seen & inside)
            loc = pieces.circles[e, k]  # (m, P, 3)
            x = pos[e, k, 0][:, None] + c[e, k][:, None] * loc[..., 0] - s[e, k][:, None] * loc[..., 1]
            y = pos[e, k, 1][:, None] + s[e, k][:, None] * loc[..., 0] + c[e, k][:, None] * loc[..., 1]
            keep = loc[..., 2] >= 0
            circles.append(np.stack([np.broadcast_to(e[:, None], keep.shape)[keep], x[keep],
                                     y[keep], loc[..., 2][keep] + MARGIN], axis=1))
        if fallback.any():
            e, k = np.nonzero(fallback)
            centre = pos[e, k] + _rotate(quat[e, k], self.geom_pos[e, k])
            circles.append(np.stack([e, centre[:, 0], centre[:, 1],
                                     self.rbound[e, k] + MARGIN + tilt[e, k]], axis=1))
        if not circles:
            return np.zeros((n, nray), dtype=bool)
        return _covered(np.concatenate(circles), origins, vecs, cutoff)

    def _body_poses(self, mocap_pos: np.ndarray,
                    mocap_quat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        rows = np.arange(len(self.models))[:, None]
        safe = np.maximum(self.mocap, 0)
        moving = (self.mocap >= 0)[..., None]
        pos = np.where(moving, mocap_pos[rows, safe], self.static_pose[..., :3])
        quat = np.where(moving, mocap_quat[rows, safe], self.static_pose[..., 3:])
        return pos, quat / np.linalg.norm(quat, axis=-1, keepdims=True)

    def _ensure(self, lo: float, hi: float) -> None:
        """Pieces for a band holding [lo, hi] (body frame), built wider than asked."""
        if self.pieces is not None and self.pieces.band[0] <= lo and hi <= self.pieces.band[1]:
            return
        if self.pieces is not None:  # grow: a band that moves keeps the old one's reach
            lo, hi = min(lo, self.pieces.band[0]), max(hi, self.pieces.band[1])
        band = (lo - BAND_PAD, hi + BAND_PAD)
        per = [[_band_circles(t, band) for t in row] for row in self.verts]
        width = max(1, max(len(c) for row in per for c in row))
        n, g = self.geoms.shape
        circles = np.full((n, g, width, 3), -1.0)
        for e, row in enumerate(per):
            for k, c in enumerate(row):
                circles[e, k, : len(c)] = c
        self.pieces = _Pieces(band, circles)


def _triangles(m: mujoco.MjModel, geom: int) -> np.ndarray:
    """(F, 3, 3) the mesh's triangles in its body's frame."""
    mesh = m.geom_dataid[geom]
    vadr, nvert = m.mesh_vertadr[mesh], m.mesh_vertnum[mesh]
    fadr, nface = m.mesh_faceadr[mesh], m.mesh_facenum[mesh]
    vert = m.mesh_vert[vadr : vadr + nvert].astype(float)
    mat = np.empty(9)
    mujoco.mju_quat2Mat(mat, m.geom_quat[geom])
    body = vert @ mat.reshape(3, 3).T + m.geom_pos[geom]
    return body[m.mesh_face[fadr : fadr + nface]]


def _band_circles(tri: np.ndarray, band: tuple[float, float]) -> np.ndarray:
    """(P, 3) circles x, y, r covering the part of every triangle inside the band: each
    part's xy box (the triangle cut to the band's slab) rasterised onto CELL squares, one
    circle per square it touches."""
    z = tri[..., 2]
    tri = tri[(z.max(axis=1) >= band[0] - MARGIN) & (z.min(axis=1) <= band[1] + MARGIN)]
    if not len(tri):
        return np.zeros((0, 3))
    lo, hi = _slab_box(tri, band[0] - MARGIN, band[1] + MARGIN)
    first = np.floor(lo / CELL).astype(np.int64)
    last = np.floor(hi / CELL).astype(np.int64)
    cells = set()
    for (x0, y0), (x1, y1) in zip(first.tolist(), last.tolist(), strict=True):
        cells.update((x, y) for x in range(x0, x1 + 1) for y in range(y0, y1 + 1))
    centre = (np.array(sorted(cells), dtype=float) + 0.5) * CELL
    return np.concatenate([centre, np.full((len(centre), 1), CELL / np.sqrt(2))], axis=1)


def _slab_box(tri: np.ndarray, zlo: float, zhi: float) -> tuple[np.ndarray, np.ndarray]:
    """xy boxes (lo, hi), (F, 2) each, of each triangle's part between zlo and zhi: its
    corners inside the slab and the points where its edges cross the slab's faces."""
    a, b = tri, np.roll(tri, -1, axis=1)  # the three edges a -> b
    points = [np.where(((tri[..., 2] >= zlo) & (tri[..., 2] <= zhi))[..., None],
                       tri[..., :2], np.nan)]
    for level in (zlo, zhi):
        dz = b[..., 2] - a[..., 2]
        with np.errstate(divide="ignore", invalid="ignore"):
            t = (level - a[..., 2]) / dz
        cross = (t >= 0) & (t <= 1) & (dz != 0)
        points.append(np.where(cross[..., None], a[..., :2] + t[..., None] * (b - a)[..., :2],
                               np.nan))
    points = np.concatenate(points, axis=1)  # (F, 9, 2), nan where a point does not exist
    return np.nanmin(points, axis=1), np.nanmax(points, axis=1)


def _yaw(quat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """cos and sin of an upright quaternion's turn about z."""
    w, z = quat[..., 0], quat[..., 3]
    return w * w - z * z, 2 * w * z


def _rotate(quat: np.ndarray, vec: np.ndarray) -> np.ndarray:
    w, u = quat[:, :1], quat[:, 1:]
    t = 2 * np.cross(u, vec)
    return vec + w * t + np.cross(u, t)


def _covered(circles: np.ndarray, origins: np.ndarray, vecs: np.ndarray,
             cutoff: float) -> np.ndarray:
    """(n, R) whether each ray's horizontal trace may pass within a circle of its env before
    `cutoff` (a ray's horizontal travel is at most its 3D travel). Circles as (env, x, y, r)
    rows. By angle: a ray from outside a circle passes within it only if its azimuth is
    within asin(r / d) of the centre's; each circle marks the BINS azimuth bins its interval
    touches, and a ray in a marked bin is a candidate (a superset: exact as a filter)."""
    n, nray = vecs.shape[:2]
    env = circles[:, 0].astype(np.int64)
    dx = circles[:, 1] - origins[env, 0]
    dy = circles[:, 2] - origins[env, 1]
    r = circles[:, 3]
    d = np.hypot(dx, dy)
    keep = d - r <= cutoff
    around = keep & (d <= r)  # the origin inside a circle: every azimuth
    keep &= ~around
    env, d, r = env[keep], d[keep], r[keep]
    half = np.arcsin(r / d) * (BINS / (2 * np.pi)) + 1.0  # in bins, a bin of head room
    centre = (np.arctan2(dy[keep], dx[keep]) + np.pi) * (BINS / (2 * np.pi))
    first = np.floor(centre - half).astype(np.int64)
    last = np.floor(centre + half).astype(np.int64) + 1  # exclusive
    width = np.minimum(last - first, BINS)
    first %= BINS
    # an interval that wraps past the last bin: its tail goes to the env's first bins
    over = np.maximum(first + width - BINS, 0)
    steps = np.zeros((n, BINS + 1))
    np.add.at(steps, (env, first), 1.0)
    np.add.at(steps, (env, first + width - over), -1.0)
    np.add.at(steps, (env, np.zeros_like(env)), (over > 0).astype(float))
    np.add.at(steps, (env, over), -(over > 0).astype(float))
    marked = np.cumsum(steps[:, :BINS], axis=1) > 0.5
    marked[circles[around, 0].astype(np.int64)] = True
    azimuth = np.arctan2(vecs[..., 1], vecs[..., 0])
    index = np.minimum(((azimuth + np.pi) * (BINS / (2 * np.pi))).astype(np.int64), BINS - 1)
    return np.take_along_axis(marked, index, axis=1)
