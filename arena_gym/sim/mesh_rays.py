"""Rays against the meshes a lidar fan passes at leg height, without MuJoCo's mesh walk.

MuJoCo's ray-mesh test walks the mesh's BVH along the whole ray each time a ray crosses
the mesh's box (with no stop at the nearest hit), and a lidar fan at leg height
crosses the box of every table and chair it passes under. Here the casting group casts
the rest without the seen meshes (sim/ray_copy.py), and `MeshRays.hits` tests the meshes:

- A ray reaches only the triangles its segment [0, cutoff] reaches, and a lidar's segments
  stay in a thin height band. Each triangle of a mesh that reaches into the band (a
  table's legs, not its top) gets a circle around its part inside the band, in the mesh
  body's frame; a ray is tested against it only if its azimuth passes within that circle
  (asin(r / d) of the centre's, seen from the ray's origin).
- The test: where the ray crosses the triangle's plane, kept when the crossing lies in
  the triangle and ahead of the origin, on MuJoCo's own float32 vertices in the same
  frames. Distances equal MuJoCo's ray_triangle to round-off; the two can only decide a
  ray differently where it meets an edge or corner exactly (both then see the triangle's
  neighbour at the same distance, but at a silhouette). The nearest hit wins; equal
  distances go to the lower geom id (mj_ray's order).

So the merged result is what a MuJoCo cast of the whole scene reports, to round-off, with
the scene's geom ids (hits beyond the cutoff may read as misses, as `cast_rays` allows).
Circles hold while a mesh's body stands upright (mocap, or welded to the world) at a height
the band was built for; otherwise every triangle of that mesh is tested for the rays that
pass its bounding sphere, which holds in any pose. Transparent meshes and meshes in groups
the cast skips are left out, as mj_ray leaves them out.
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

from arena_gym.geometry.rotations import quat_mats

MESH = mujoco.mjtGeom.mjGEOM_MESH
MARGIN = 1e-4  # m: round-off head room on every circle and band edge
BAND_PAD = 0.02  # m: a band is built this much wider than the casts so far asked for
UPRIGHT = 1e-6  # largest |qx|, |qy| of a body quaternion taken as a turn about z alone
MINVAL = 1e-15  # mjMINVAL


@dataclass
class _Cells:
    """Circles (body frame) and the triangles each stands for, for one height band. Rows
    0..nslot-1 are each mesh's whole-mesh entry (every triangle; its circle is the bounding
    sphere's, posed per cast); then one row per triangle that reaches into the band."""

    band: tuple[float, float]
    slot: np.ndarray  # (C,) flat (env, mesh) slot of each entry
    xy: np.ndarray  # (C, 2) circle centres, body frame (band rows)
    r: np.ndarray  # (C,) circle radii (band rows)
    start: np.ndarray  # (C,) first triangle of the entry
    count: np.ndarray  # (C,)


class MeshRays:
    """The seen meshes on bodies that do not move by joints (mocap, or welded to the world),
    tested apart; use `for_models` (None: no such mesh)."""

    def __init__(self, models: list[mujoco.MjModel], geoms: np.ndarray, mocap: np.ndarray,
                 static_pose: np.ndarray) -> None:
        self.models = models
        self.geoms = geoms  # (n, G) mesh geom ids, -1 pads
        self.mocap = mocap  # (n, G) mocap id of the geom's body, -1 for a static body
        self.static_pose = static_pose  # (n, G, 7) pos, quat of static bodies
        n, g = geoms.shape
        real = geoms >= 0
        rows = np.arange(n)[:, None]
        safe = np.where(real, geoms, 0)
        self.geom_pos = np.stack([m.geom_pos for m in models])[rows, safe].reshape(-1, 3)
        self.rbound = np.stack([m.geom_rbound for m in models])[rows, safe].ravel()
        self.zext = np.zeros((n, g, 2))  # body-frame z extent of each mesh
        body, slots, first = [], [], np.zeros(n * g + 1, dtype=np.int64)
        for e, m in enumerate(models):
            for k in range(g):
                slot = e * g + k
                size = 0
                if real[e, k]:
                    geom = int(geoms[e, k])
                    body.append(_to_body(_mesh(m, geom), m.geom_pos[geom], m.geom_quat[geom]))
                    slots.append(np.full(len(body[-1]), slot))
                    self.zext[e, k] = body[-1][..., 2].min(), body[-1][..., 2].max()
                    size = len(body[-1])
                first[slot + 1] = first[slot] + size
        self.body = np.concatenate(body)  # (T, 3, 3) body-frame vertices
        self.tri_slot = np.concatenate(slots)
        self.first = first  # slot -> its triangles' range
        self.planes = _planes(self.body)  # (T, 13) body frame: v0, normal, offset, bary
        self.world = self.planes.copy()  # the same, posed (per slot, as bodies move)
        self.pose = np.full((n * g, 7), np.nan)  # the pose `world` holds for each slot
        self.centre = np.zeros((n * g, 2))  # each slot's posed bounding-sphere centre, xy
        self.cells: _Cells | None = None
        self.cell_xy = np.zeros((0, 2))  # posed band circle centres
        self._active: tuple | None = None  # (selection, pose count, circles): _circles'
        self._posed_at = 0  # counts pose changes
        self._last_mocap: tuple | None = None  # _posed's

    @classmethod
    def for_models(cls, models: list[mujoco.MjModel], geomgroup: np.ndarray) -> MeshRays | None:
        """Over the mesh geoms in groups `geomgroup` sees, on bodies without joints."""
        per_env, mocaps, poses = [], [], []
        for m in models:
            group = np.clip(m.geom_group, 0, mujoco.mjNGROUP - 1)
            body = m.geom_bodyid
            fixed = (m.body_mocapid[body] >= 0) | ((m.body_parentid[body] == 0)
                                                   & (m.body_jntnum[body] == 0)) | (body == 0)
            ids = np.flatnonzero((m.geom_type == MESH) & (geomgroup[group] != 0) & fixed)
            body = m.geom_bodyid[ids]
            pose = np.concatenate([m.body_pos[body], m.body_quat[body]], axis=1)
            pose[body == 0] = (0, 0, 0, 1, 0, 0, 0)
            per_env.append(ids)
            mocaps.append(m.body_mocapid[body])
            poses.append(pose)
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
        """(n, G) whether each mesh geom is one a cast with `geomgroup` sees, now: in a seen
        group and not transparent (mj_ray skips geoms whose colour or material has alpha 0)."""
        real = self.geoms >= 0
        rows, ids = np.arange(len(self.models))[:, None], np.where(real, self.geoms, 0)
        group = np.stack([m.geom_group for m in self.models])[rows, ids]
        alpha = np.stack([m.geom_rgba[:, 3] for m in self.models])[rows, ids]
        mat = np.stack([m.geom_matid for m in self.models])[rows, ids]
        if (mat >= 0).any():  # a material's colour overrides the geom's
            if len({m.nmat for m in self.models}) == 1:
                alpha = np.where(mat >= 0, np.stack([m.mat_rgba[:, 3] for m in self.models])[
                    rows, np.maximum(mat, 0)], alpha)
            else:
                for e, m in enumerate(self.models):
                    own = mat[e] >= 0
                    alpha[e, own] = m.mat_rgba[mat[e, own], 3]
        return real & (geomgroup[np.clip(group, 0, mujoco.mjNGROUP - 1)] != 0) & (alpha != 0)

    def hits(self, origins: np.ndarray, vecs: np.ndarray, cutoff: float,
             mocap_pos: np.ndarray, mocap_quat: np.ndarray,
             seen: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Nearest hit of each ray (n, R) on the seen meshes: distance and geom id (-1, -1
        for none); exact for every hit within `cutoff` (finite)."""
        n, nray = vecs.shape[:2]
        g = self.geoms.shape[1]
        dist = np.full((n, nray), -1.0)
        geomid = np.full((n, nray), -1, dtype=np.int32)
        reach = cutoff * vecs[..., 2]
        zlo = origins[:, 2] + np.minimum(reach.min(axis=1), 0.0) - MARGIN
        zhi = origins[:, 2] + np.maximum(reach.max(axis=1), 0.0) + MARGIN
        pose, tilt = self._posed(mocap_pos, mocap_quat)  # (nslot, 7), (nslot,)
        upright = tilt <= UPRIGHT
        lo = (zlo[:, None] - pose[:, 2].reshape(n, g)).ravel()  # the band, body frames
        hi = (zhi[:, None] - pose[:, 2].reshape(n, g)).ravel()
        zext = self.zext.reshape(-1, 2)
        apart = upright & ((hi < zext[:, 0] - MARGIN) | (lo > zext[:, 1] + MARGIN))
        seen = seen.ravel()
        reached = upright & seen & ~apart  # parked below the floor: apart, not reached
        if reached.any():
            self._ensure(float(lo[reached].min()), float(hi[reached].max()))
        elif self.cells is None:  # none upright in reach: only whole meshes are tested
            self._ensure(float(zlo.min()), float(zhi.max()))
        cells = self.cells
        self._pose_world(pose)
        inside = upright & (lo >= cells.band[0]) & (hi <= cells.band[1])
        whole = seen & ~apart & ~inside
        entry, env, cx, cy, r = self._circles(whole, seen & inside, tilt)
        if not entry.size:
            return dist, geomid
        ray, pick = _passing(env, cx, cy, r, origins, vecs, cutoff)
        if not ray.size:
            return dist, geomid
        entry = entry[pick]
        count = cells.count[entry]  # (ray, triangle) rows: every triangle of the entry
        if (count == 1).all():
            tri = cells.start[entry]
        else:
            ray = np.repeat(ray, count)
            tri = np.repeat(cells.start[entry] - np.cumsum(count) + count, count) + np.arange(
                count.sum())
        sol = _triangle(origins[ray // nray], vecs.reshape(-1, 3)[ray], self.world[tri])
        good = sol >= 0
        if not good.any():
            return dist, geomid
        ray, sol = ray[good], sol[good]
        gid = self.geoms.ravel()[self.tri_slot[tri[good]]].astype(np.int32)
        # nearest per ray; on equal distances the lower geom id (mj_ray keeps the first)
        order = np.lexsort((gid, sol, ray))
        ray, sol, gid = ray[order], sol[order], gid[order]
        first = np.ones(len(ray), dtype=bool)
        first[1:] = ray[1:] != ray[:-1]
        dist.ravel()[ray[first]] = sol[first]
        geomid.ravel()[ray[first]] = gid[first]
        return dist, geomid

    def _posed(self, mocap_pos: np.ndarray,
               mocap_quat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(nslot, 7) each mesh body's pos and unit quat, as mj_kinematics poses it, and its
        lean (largest |qx|, |qy|); kept while the mocap state stays the same."""
        last = self._last_mocap
        if last is not None and np.array_equal(last[0], mocap_pos) \
                and np.array_equal(last[1], mocap_quat):
            return last[2], last[3]
        rows = np.arange(len(self.models))[:, None]
        safe = np.maximum(self.mocap, 0)
        moving = (self.mocap >= 0)[..., None]
        pos = np.where(moving, mocap_pos[rows, safe], self.static_pose[..., :3])
        quat = np.where(moving, mocap_quat[rows, safe], self.static_pose[..., 3:])
        quat = quat / np.linalg.norm(quat, axis=-1, keepdims=True)
        pose = np.concatenate([pos, quat], axis=-1).reshape(-1, 7)
        tilt = np.abs(pose[:, 4:6]).max(axis=1)
        self._last_mocap = (mocap_pos.copy(), mocap_quat.copy(), pose, tilt)
        return pose, tilt

    def _pose_world(self, pose: np.ndarray) -> None:
        """Bring the posed triangles and circles of slots whose body moved up to date."""
        moved = np.flatnonzero((pose != self.pose).any(axis=1))
        if not moved.size:
            return
        self._posed_at += 1
        self.pose[moved] = pose[moved]
        mat = quat_mats(pose[moved, 3:])  # (m, 3, 3)
        pos = pose[moved, :3]
        self.centre[moved] = (pos + np.einsum("mij,mj->mi", mat, self.geom_pos[moved]))[:, :2]
        count = self.first[moved + 1] - self.first[moved]
        tri = np.repeat(self.first[moved] - np.cumsum(count) + count, count) + np.arange(
            count.sum())
        which = np.repeat(np.arange(len(moved)), count)
        rot, at = mat[which], pos[which]
        body = self.planes[tri]
        w_v0 = np.einsum("mij,mj->mi", rot, body[:, 0:3]) + at
        w_normal = np.einsum("mij,mj->mi", rot, body[:, 3:6])
        self.world[tri, 0:3] = w_v0
        self.world[tri, 3:6] = w_normal
        self.world[tri, 6] = np.einsum("mi,mi->m", w_normal, w_v0)
        self.world[tri, 7:13] = np.einsum("mki,mji->mkj", body[:, 7:13].reshape(-1, 2, 3),
                                          rot).reshape(-1, 6)  # bary R'
        cells = self.cells
        if cells is not None:
            row = np.flatnonzero(np.isin(cells.slot, moved))
            row = row[row >= len(self.pose)]
            local = np.searchsorted(moved, cells.slot[row])
            xy = cells.xy[row]
            m = mat[local]
            self.cell_xy[row] = pos[local, :2] + np.einsum("mij,mj->mi", m[:, :2, :2], xy)

    def _circles(self, whole: np.ndarray, band: np.ndarray,
                 tilt: np.ndarray) -> tuple[np.ndarray, ...]:
        """The entries to test (whole meshes, and band rows of in-band meshes) with each
        one's env and posed circle (x, y, radius with head room); kept while neither the
        selection nor a pose changes."""
        key = whole.tobytes() + band.tobytes()
        kept = self._active
        if kept is not None and kept[0] == key and kept[1] == self._posed_at:
            return kept[2]
        cells, nslot = self.cells, len(whole)
        entry = np.flatnonzero(np.concatenate([whole, band[cells.slot[nslot:]]]))
        slot = cells.slot[entry]
        inband = entry >= nslot
        cx = np.where(inband, self.cell_xy[entry, 0], self.centre[slot, 0])
        cy = np.where(inband, self.cell_xy[entry, 1], self.centre[slot, 1])
        r = np.where(inband, cells.r[entry], self.rbound[slot] + tilt[slot]) + MARGIN
        circles = (entry, slot // self.geoms.shape[1], cx, cy, r)
        self._active = (key, self._posed_at, circles)
        return circles

    def _ensure(self, lo: float, hi: float) -> None:
        """Cells for a band holding [lo, hi] (body frame), built a little wider."""
        if self.cells is not None and self.cells.band[0] <= lo and hi <= self.cells.band[1]:
            return
        if self.cells is not None:  # grow: a band that moves keeps the old one's reach
            lo, hi = min(lo, self.cells.band[0]), max(hi, self.cells.band[1])
        band = (lo - BAND_PAD, hi + BAND_PAD)
        nslot = len(self.first) - 1
        z = self.body[..., 2]
        reach = np.flatnonzero((z.max(axis=1) >= band[0] - MARGIN)
                               & (z.min(axis=1) <= band[1] + MARGIN))
        lo_xy, hi_xy = _slab_box(self.body[reach], band[0] - MARGIN, band[1] + MARGIN)
        self.cells = _Cells(
            band,
            slot=np.concatenate([np.arange(nslot), self.tri_slot[reach]]),
            xy=np.concatenate([np.zeros((nslot, 2)), (lo_xy + hi_xy) / 2]),
            r=np.concatenate([np.zeros(nslot), np.linalg.norm(hi_xy - lo_xy, axis=1) / 2]),
            start=np.concatenate([self.first[:-1], reach]),
            count=np.concatenate([np.diff(self.first), np.ones(len(reach), dtype=np.int64)]))
        self.cell_xy = np.zeros((len(self.cells.slot), 2))
        self.pose[:] = np.nan  # pose the new circles on the next cast
        self._active = None


def _mesh(m: mujoco.MjModel, geom: int) -> np.ndarray:
    """(F, 3, 3) the mesh's triangles in its own frame, as MuJoCo reads them (float32)."""
    mesh = m.geom_dataid[geom]
    vadr, fadr, nface = m.mesh_vertadr[mesh], m.mesh_faceadr[mesh], m.mesh_facenum[mesh]
    vert = m.mesh_vert[vadr : vadr + m.mesh_vertnum[mesh]].astype(np.float64)
    return vert[m.mesh_face[fadr : fadr + nface]]


def _planes(tri: np.ndarray) -> np.ndarray:
    """(T, 13) per triangle: a corner v0 (3), the plane's normal (3) and offset (normal . v0),
    and the (2, 3) map from a point's offset to v0 to its coordinates along the two edges
    from v0 (6); NaN there for a triangle without area (MuJoCo never hits those)."""
    v0 = tri[:, 0]
    e1, e2 = tri[:, 1] - v0, tri[:, 2] - v0
    normal = np.cross(e1, e2)
    g11, g12, g22 = (e1 * e1).sum(1), (e1 * e2).sum(1), (e2 * e2).sum(1)
    det = g11 * g22 - g12 * g12
    inv = np.where(det > 1e-24, 1.0 / np.where(det > 1e-24, det, 1.0), np.nan)[:, None]
    bary = np.concatenate([(g22[:, None] * e1 - g12[:, None] * e2) * inv,
                           (g11[:, None] * e2 - g12[:, None] * e1) * inv], axis=1)
    return np.concatenate([v0, normal, (normal * v0).sum(1)[:, None], bary], axis=1)


def _triangle(pnt: np.ndarray, vec: np.ndarray, tri: np.ndarray) -> np.ndarray:
    """Distance along each ray (row) to its triangle (a row of `_planes`), -1 for a miss:
    the plane's crossing, kept when it lies in the triangle (edge coordinates u, w >= 0,
    u + w <= 1) ahead of the origin. MuJoCo's ray_triangle decides the same but on an edge,
    where the two sides' round-offs differ."""
    normal = tri[:, 3:6]
    denom = np.einsum("mi,mi->m", vec, normal)
    with np.errstate(divide="ignore", invalid="ignore"):  # rays along the plane: misses
        x = (tri[:, 6] - np.einsum("mi,mi->m", pnt, normal)) / denom
        off = pnt + x[:, None] * vec - tri[:, 0:3]
        u = np.einsum("mi,mi->m", tri[:, 7:10], off)
        w = np.einsum("mi,mi->m", tri[:, 10:13], off)
    hit = (np.abs(denom) >= MINVAL) & (x >= 0) & (u >= 0) & (w >= 0) & (u + w <= 1)
    return np.where(hit, x, -1.0)


def _to_body(tri: np.ndarray, pos: np.ndarray, quat: np.ndarray) -> np.ndarray:
    mat = np.empty(9)
    mujoco.mju_quat2Mat(mat, quat)
    return tri @ mat.reshape(3, 3).T + pos


def _slab_box(tri: np.ndarray, zlo: float, zhi: float) -> tuple[np.ndarray, np.ndarray]:
    """xy boxes (lo, hi), (F, 2) each, of each triangle's part between zlo and zhi: its
    corners inside the slab and the points where its edges cross the slab's faces."""
    a, b = tri, np.roll(tri, -1, axis=1)  # the three edges a -> b
    points = [np.where(((tri[..., 2] >= zlo) & (tri[..., 2] <= zhi))[..., None],
                       tri[..., :2], np.nan)]
    dz = b[..., 2] - a[..., 2]
    for level in (zlo, zhi):
        with np.errstate(divide="ignore", invalid="ignore"):  # edges level with z: no cut
            t = (level - a[..., 2]) / dz
            cut = a[..., :2] + t[..., None] * (b - a)[..., :2]
        cross = (t >= 0) & (t <= 1) & (dz != 0)
        points.append(np.where(cross[..., None], cut, np.nan))
    points = np.concatenate(points, axis=1)  # (F, 9, 2), nan where a point does not exist
    return np.nanmin(points, axis=1), np.nanmax(points, axis=1)


def _passing(env: np.ndarray, cx: np.ndarray, cy: np.ndarray, r: np.ndarray,
             origins: np.ndarray, vecs: np.ndarray,
             cutoff: float) -> tuple[np.ndarray, np.ndarray]:
    """(ray, circle) pairs, as flat ray index (env * R + beam) and circle index, where the
    ray's horizontal trace may pass within the circle of its env before `cutoff` (a trace
    runs at most cutoff times the longest horizontal part of the env's directions): by
    azimuth, within asin(r / d) of the centre's seen from outside, any azimuth from inside.
    A superset: exact as a filter."""
    n, nray = vecs.shape[:2]
    dx, dy = cx - origins[env, 0], cy - origins[env, 1]
    d = np.hypot(dx, dy)
    travel = cutoff * np.sqrt((vecs[..., :2] ** 2).sum(axis=2).max(axis=1))  # (n,)
    keep = np.flatnonzero(d - r <= travel[env])
    env, dx, dy, r, d = env[keep], dx[keep], dy[keep], r[keep], d[keep]
    azimuth = np.arctan2(vecs[..., 1], vecs[..., 0])  # (n, R) in [-pi, pi]
    # one sorted line for all envs: env e's azimuths live in [8e - pi, 8e + pi]
    key = (azimuth + 8.0 * np.arange(n)[:, None]).ravel()
    order = np.argsort(key, kind="stable")
    line = key[order]
    around = d <= r
    half = np.where(around, 4.0, np.arcsin(np.minimum(r / np.maximum(d, 1e-300), 1.0)) + 1e-9)
    centre = np.arctan2(dy, dx)
    starts, ends, owner = [], [], []
    for shift in (0.0, 2 * np.pi, -2 * np.pi):  # an interval may wrap past +-pi
        a = np.maximum(centre - half + shift, -np.pi)
        b = np.minimum(centre + half + shift, np.pi)
        ok = np.flatnonzero((a <= b) & ((shift == 0.0) | ~around))
        base = 8.0 * env[ok]
        starts.append(np.searchsorted(line, base + a[ok], side="left"))
        ends.append(np.searchsorted(line, base + b[ok], side="right"))
        owner.append(ok)
    starts, ends, owner = np.concatenate(starts), np.concatenate(ends), np.concatenate(owner)
    count = ends - starts
    circle = np.repeat(owner, count)
    at = np.arange(circle.size) - np.repeat(np.cumsum(count) - count, count)
    ray = order[np.repeat(starts, count) + at]
    return ray, keep[circle]
