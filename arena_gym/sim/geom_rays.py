"""Rays against a group's primitive geoms that do not move by joints, compiled, with each
ray tried only against the geoms it can reach.

MuJoCo's ray cast (`Batch.ray`, `mj_ray`) tries every geom of a model for every ray, even
the geoms it skips, so a lidar fan pays for the whole scene on every beam: the room's
boxes and walls, a map's thousand walls, the people, the robot's own pieces. Most of what
a lidar sees is primitive geoms (boxes, capsules, cylinders, spheres, planes) on bodies
that never move by joints: welded to the world (walls, static obstacles, the floor) or to
a mocap body (the obstacle pool, the people). Their poses need no kinematics (the world
pose of a static geom is fixed; a mocap geom's is its mocap pose and its fixed offset),
so `GeomRays.cast` casts them in one compiled pass over every env of a group:

- per env, the candidate geoms: the static ones whose bounding sphere comes within the
  cutoff of some point of the origin's TILE square (kept per square) and of the origin,
  and the mocap ones within the cutoff of the origin, as mj_multiRay culls, a box only
  where the box itself does (a map's long walls lie far nearer their spheres than they
  are); then those a cast skips, read live from each env's model as mj_ray reads them (a
  group the mask leaves out, a transparent colour or material, the excluded body);
- per candidate, the rays whose bearing in the plane passes it (`cull`: its bounding
  circle, a box's outline, an upright capsule's or cylinder's own circle (the people), a
  plane's facing side; with many candidates, a map's walls, the
  rays sorted by bearing once and each candidate's run found by bisection), each tried
  with the arithmetic of MuJoCo's own test (sim/ray_shapes.py), which starts with the same
  bounding-sphere test, unless the ray already hit nearer than any point of that sphere
  or box (the candidates are tried nearest first: a map's far walls, hidden behind the
  near ones, cost a comparison per ray); the nearest hit wins, equal distances going to
  the lower geom id as mj_ray's scan over geoms keeps them.

So the distances equal a MuJoCo cast of those geoms to round-off, with the scene's geom
ids. Every other geom (meshes, heightfields, geoms on bodies with joints: robots, doors)
is left to the caller, who learns per env whether a cast could see any (`rest`). A static
geom's pose is read when the group is made (a recompile makes a new group): a model field
edited in place (geom_pos of a wall, where MuJoCo's own cast would follow it) goes unseen;
the scene's edits recompile.
"""

from __future__ import annotations

import math

import mujoco
import numpy as np

from arena_gym.compiled import kernel, peek, shared
from arena_gym.geometry.rotations import quat_mat
from arena_gym.sim.ray_shapes import (
    BOX,
    CAPSULE,
    CYLINDER,
    MINVAL,
    PLANE,
    PRIMITIVES,
    SPHERE,
    local,
    primitive,
)

TILE = 1.0  # m: origins in one square share one list of candidate static geoms
CULL_MARGIN = 1e-9  # round-off head room of the bearing cull: it never drops a hit
OCCLUDED_MARGIN = 1e-9  # the same for a ray's test skipped behind a nearer hit
EVERY, CONE, WEDGE, FACING = 0, 1, 2, 3  # how a candidate culls rays (`cull`)
WIDE = 0.9  # a box whose bounding circle looks wider than acos(WIDE) is culled by its corners
SORTED_FROM = 24  # candidates from which the rays are tried by bisection on their bearings
_LIKE_INT = np.zeros(0, np.int32)  # peek's element types: geom_group, geom_matid
_LIKE_FLOAT = np.zeros(0, np.float32)  # geom_rgba, mat_rgba


class GeomRays:
    """The primitive geoms of a group's models on static or mocap bodies (`for_models`),
    cast by `cast`. Models must outlive it (their group, colour and material arrays are read
    live at every cast).

    Per env, one row per geom (static ones first, then mocap ones; `counts` (n, 2): how
    many static, how many in all), packed for the compiled cast: `ints` (n, G, 4) geom id,
    type, body, mocap id (-1: static); `reals` (n, G, 16) size (3), bounding radius, position
    (3) and row-major rotation (9), in the world for a static geom, in its mocap body's frame
    for a mocap one; `rest` (n, R, 2) the geoms left to the caller and their bodies."""

    def __init__(self, models: list[mujoco.MjModel]) -> None:
        self.models = models
        n = len(models)
        tables = [_table(m) for m in models]
        width = max(max(len(t[0]) for t in tables), 1)
        rest = max(max(len(t[-1]) for t in tables), 1)
        self.ints = np.full((n, width, 4), -1, np.int32)
        self.reals = np.zeros((n, width, 16))
        self.counts = np.zeros((n, 2), np.int32)
        self.rest = np.full((n, rest, 2), -1, np.int32)
        for e, (geoms, roots, pos, mat, others) in enumerate(tables):
            k, m = len(geoms), models[e]
            self.ints[e, :k] = np.column_stack([geoms, m.geom_type[geoms], m.geom_bodyid[geoms],
                                                roots])
            self.reals[e, :k] = np.column_stack([m.geom_size[geoms], m.geom_rbound[geoms], pos,
                                                 mat])
            self.counts[e] = int((roots < 0).sum()), k
            self.rest[e, :len(others)] = np.column_stack([others, m.geom_bodyid[others]])
        self.handled = [np.asarray(t[0], np.int64) for t in tables]
        live = [(m.geom_group, m.geom_matid, m.geom_rgba, m.mat_rgba) for m in models]
        for arrays in live:
            if not all(a.flags.c_contiguous for a in arrays):  # peek reads them flat
                raise ValueError("GeomRays: a model's group or colour arrays are not "
                                 "contiguous")
        addresses = np.array([[a.ctypes.data for a in arrays] for arrays in live],
                             dtype=np.int64)
        self.table = (self.ints, self.reals, self.counts, self.rest, addresses)
        self._tiles: dict[float, tuple[np.ndarray, ...]] = {}
        # a cast's scratch: each env's candidates (world pose, size, reach; type, id), and
        # per ray its bearing and best hit (made for the fan's size)
        self.scratch = (np.zeros((width, 17)), np.zeros((width, 3), np.int32),
                        np.zeros((0, 6)), np.zeros((0, 4), np.int32))

    @classmethod
    def for_models(cls, models: list[mujoco.MjModel]) -> GeomRays | None:
        """None where no model has such a geom (MuJoCo's cast is then all there is)."""
        caster = cls(models)
        return caster if (caster.counts[:, 1] > 0).any() else None

    def tiles(self, cutoff: float) -> tuple[np.ndarray, ...]:
        """Per env, the grid of TILE squares over its static geoms and each square's
        candidates within `cutoff` (CSR: first, items), made once per cutoff (-1: none, every
        static geom a candidate): (origin (n, 2), shape and offset (n, 3): squares along x
        and y, the env's first entry in `first`; first, items)."""
        made = self._tiles.get(cutoff)
        if made is None:
            made = self._tiles[cutoff] = _NO_TILES if cutoff < 0 else _tiles(
                self, cutoff * (1.0 + CULL_MARGIN) + CULL_MARGIN)  # as far as cast_geoms's
        return made

    def fit(self, nray: int) -> tuple[np.ndarray, ...]:
        """The scratch, its per-ray part sized for `nray` rays: per ray its unit bearing, a
        flag (0: vertical), its best hit, its bearing's pseudo-angle and its direction's
        length; its best hit's geom, and two lists of rays (in order of bearing; to try)."""
        if len(self.scratch[3]) != nray:
            self.scratch = (*self.scratch[:2], np.zeros((nray, 6)),
                            np.zeros((nray, 4), np.int32))
        return self.scratch

    def cast(self, origins: np.ndarray, vecs: np.ndarray, geomgroup: np.ndarray,
             bodyexclude: np.ndarray, cutoff: float, mocap_pos: np.ndarray,
             mocap_quat: np.ndarray, rows: np.ndarray
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """Rays from one origin per row (m, 3) along directions (m, R, 3) in the envs `rows`
        (m,) of the group, against its primitive static and mocap geoms, skipping the
        groups `geomgroup` (6,) leaves out and the body `bodyexclude` (m,) of each; the
        mocap poses are every env's (n, nmocap, 3) and (n, nmocap, 4). Returns distances
        and geom ids (-1 for a miss), (m, R), and per row whether the cast could see a geom
        left to the caller (None where no row could). Hits beyond `cutoff` (in units of
        each direction's length, as the distances) read as misses."""
        m, nray = vecs.shape[:2]
        dist, geomid = np.empty((m, nray)), np.empty((m, nray), np.int32)
        rest = np.empty(m, bool)
        reach = float(cutoff) if cutoff < math.inf else -1.0
        if geomgroup.dtype != np.uint8:
            geomgroup = np.asarray(geomgroup, np.uint8)
        seen = cast_geoms(origins, vecs, geomgroup, bodyexclude, reach, rows, self.table,
                          self.tiles(reach), mocap_pos, mocap_quat, self.fit(nray), dist,
                          geomid, rest)
        return dist, geomid, rest if seen else None


def _table(model: mujoco.MjModel) -> tuple[np.ndarray, ...]:
    """(handled geoms, static first then mocap, in id order within each; their mocap ids,
    -1 for static; their poses: static in the world, mocap in the mocap body's frame; the
    geoms left over)."""
    data = mujoco.MjData(model)
    mujoco.mj_kinematics(model, data)  # static poses are final; mocap ones at mocap 0
    root = model.body_weldid[model.geom_bodyid]
    mocap = model.body_mocapid[root]
    kinds = np.isin(model.geom_type, PRIMITIVES)
    static, moving = kinds & (root == 0), kinds & (mocap >= 0)
    geoms = np.concatenate([np.flatnonzero(static), np.flatnonzero(moving)]).astype(np.int32)
    roots = np.where(root[geoms] == 0, -1, mocap[geoms]).astype(np.int32)
    pos, mat = data.geom_xpos[geoms].copy(), data.geom_xmat[geoms].copy()
    for i in np.flatnonzero(roots >= 0):  # into the frame of the mocap body
        body = root[geoms[i]]
        r = data.xmat[body].reshape(3, 3)
        pos[i] = r.T @ (pos[i] - data.xpos[body])
        mat[i] = (r.T @ mat[i].reshape(3, 3)).ravel()
    others = np.flatnonzero(~(static | moving)).astype(np.int32)
    return geoms, roots, pos, mat, others


_NO_TILES = (np.zeros((1, 2)), np.zeros((1, 3), np.int64), np.zeros(1, np.int64),
             np.zeros(1, np.int32))


def _tiles(rays: GeomRays, cutoff: float) -> tuple[np.ndarray, ...]:
    """GeomRays.tiles, made: each env's static geoms (planes in every square) listed for
    the squares of a grid over their bounding circles grown by `cutoff`; an origin off the
    grid tries them all. Envs with the same static geoms share one grid."""
    n = len(rays.models)
    origin, shape = np.zeros((n, 2)), np.zeros((n, 3), np.int64)
    firsts, items, cells, total = [], [], 0, 0
    made: dict[bytes, int] = {}  # static table -> the env whose grid it has
    for e in range(n):
        k = int(rays.counts[e, 0])
        kind, reals = rays.ints[e, :k, 1], rays.reals[e, :k]
        key = kind.tobytes() + reals.tobytes()
        if key in made:
            twin = made[key]
            origin[e], shape[e] = origin[twin], shape[twin]
            continue
        made[key] = e
        centre, radius = reals[:, 4:6], reals[:, 3]
        finite = kind != PLANE
        if not finite.any():
            lo = np.zeros(2)
            size = np.ones(2, np.int64)
        else:
            grow = radius[finite] + cutoff
            lo = (centre[finite] - grow[:, None]).min(axis=0)
            hi = (centre[finite] + grow[:, None]).max(axis=0)
            size = np.maximum(np.ceil((hi - lo) / TILE).astype(np.int64), 1)
        origin[e], shape[e] = lo, (size[0], size[1], cells)
        ix, iy = np.meshgrid(np.arange(size[0]), np.arange(size[1]), indexing="ij")
        x0, y0 = lo[0] + ix.ravel() * TILE, lo[1] + iy.ravel() * TILE
        # distance from each square to each geom's centre, against reach + its radius
        dx = np.maximum(np.maximum(x0[:, None] - centre[None, :, 0], 0.0),
                        centre[None, :, 0] - (x0[:, None] + TILE))
        dy = np.maximum(np.maximum(y0[:, None] - centre[None, :, 1], 0.0),
                        centre[None, :, 1] - (y0[:, None] + TILE))
        near = (np.hypot(dx, dy) <= radius[None, :] + cutoff) | ~finite[None, :]
        counts = near.sum(axis=1)
        firsts.append(total + np.concatenate([[0], np.cumsum(counts)]))
        total += int(counts.sum())
        # square by square, each square's geoms nearest to its centre first (planes
        # first of all): a cast's sort of them by their distance from its origin then
        # finds them nearly in order
        gap = np.hypot(x0[:, None] + TILE / 2 - centre[None, :, 0],
                       y0[:, None] + TILE / 2 - centre[None, :, 1]) - radius[None, :]
        order = np.argsort(np.where(near, np.where(finite[None, :], gap, -np.inf), np.inf),
                           axis=1, kind="stable")
        items.append(order[np.arange(k)[None, :] < counts[:, None]].astype(np.int32))
        cells += len(x0) + 1
    return (origin, shape, np.concatenate(firsts).astype(np.int64),
            np.concatenate(items) if total else np.zeros(1, np.int32))


@kernel
def cast_geoms(origins, vecs, mask, exclude, reach, rows, table, tiles, mocap_pos, mocap_quat,
               scratch, dist, geomid, rest):  # pragma: no cover - compiled
    """GeomRays.cast's pass over the rows (see the module docstring): `table`, `tiles` and
    `scratch` as GeomRays keeps them; returns how many rows could see a geom left to the
    caller."""
    ints, reals, counts, rest_geoms, addresses = table
    tile_origin, tile_shape, tile_first, tile_items = tiles
    cand, cand_id, per_ray, rays = scratch
    seen_rows = 0
    for i in range(rows.shape[0]):
        e = rows[i]
        o0, o1, o2 = origins[i, 0], origins[i, 1], origins[i, 2]
        live = addresses[e]
        # every ray's bearing (unit, in the plane; none for a (near) vertical one), no hit;
        # how far the cutoff (in units of each ray's length) reaches from the origin
        nray = vecs.shape[1]
        far = 0.0
        for ray in range(nray):
            v0, v1, v2 = vecs[i, ray, 0], vecs[i, ray, 1], vecs[i, ray, 2]
            per_ray[ray, 5] = math.sqrt(v0 * v0 + v1 * v1 + v2 * v2)
            far = max(far, per_ray[ray, 5])
            flat = math.sqrt(v0 * v0 + v1 * v1)
            if flat > CULL_MARGIN:
                per_ray[ray, 0], per_ray[ray, 1], per_ray[ray, 2] = v0 / flat, v1 / flat, 1.0
            else:
                per_ray[ray, 2] = 0.0
            per_ray[ray, 3], rays[ray, 0] = -1.0, -1
        unit = far <= 1.0 + CULL_MARGIN  # the squares' lists are made for unit rays
        far = reach * far * (1.0 + CULL_MARGIN) + CULL_MARGIN if reach >= 0 else -1.0
        k = 0
        # the static geoms of the origin's square (all of them off the grid, uncut, or
        # where a ray is longer than the squares' lists allow for)
        first, last, use_tiles = 0, counts[e, 0], False
        if reach >= 0 and unit:
            tx = int(math.floor((o0 - tile_origin[e, 0]) / TILE))
            ty = int(math.floor((o1 - tile_origin[e, 1]) / TILE))
            if 0 <= tx < tile_shape[e, 0] and 0 <= ty < tile_shape[e, 1]:
                cell = tile_shape[e, 2] + tx * tile_shape[e, 1] + ty
                first, last, use_tiles = tile_first[cell], tile_first[cell + 1], True
        for j in range(first, last):
            slot = tile_items[j] if use_tiles else j
            row = ints[e, slot]
            r = reals[e, slot]
            near = -math.inf
            if row[1] != PLANE:
                near = math.sqrt((r[4] - o0) ** 2 + (r[5] - o1) ** 2 + (r[6] - o2) ** 2) - r[3]
                if far >= 0 and near > far:
                    continue
                if row[1] == BOX:  # a long wall lies far nearer its sphere than it is
                    near = max(near, box_distance(r, 4, 7, r, o0, o1, o2))
                    if far >= 0 and near > far:
                        continue
            if seen(live, row[0], row[2], mask, exclude[i]):
                for a in range(3):
                    cand[k, a] = r[4 + a]
                    cand[k, 3 + a] = r[a]
                cand[k, 6] = r[3]
                for a in range(9):
                    cand[k, 7 + a] = r[7 + a]
                cand[k, 16] = near
                cand_id[k, 0], cand_id[k, 1] = row[1], row[0]
                k += 1
        # the mocap geoms within reach, posed from their mocap body
        for slot in range(counts[e, 0], counts[e, 1]):
            row = ints[e, slot]
            if not seen(live, row[0], row[2], mask, exclude[i]):
                continue
            q = mocap_quat[e, row[3]]
            m = quat_mat(q[0], q[1], q[2], q[3])
            p, g = mocap_pos[e, row[3]], reals[e, slot]
            x0 = p[0] + m[0] * g[4] + m[1] * g[5] + m[2] * g[6]
            x1 = p[1] + m[3] * g[4] + m[4] * g[5] + m[5] * g[6]
            x2 = p[2] + m[6] * g[4] + m[7] * g[5] + m[8] * g[6]
            near = -math.inf
            if row[1] != PLANE:
                near = math.sqrt((x0 - o0) ** 2 + (x1 - o1) ** 2 + (x2 - o2) ** 2) - g[3]
                if far >= 0 and near > far:
                    continue
            cand[k, 0], cand[k, 1], cand[k, 2] = x0, x1, x2
            cand[k, 16] = near
            for a in range(3):
                cand[k, 3 + a] = g[a]
                for b in range(3):
                    cand[k, 7 + 3 * a + b] = (m[3 * a] * g[7 + b] + m[3 * a + 1] * g[10 + b]
                                              + m[3 * a + 2] * g[13 + b])
            cand[k, 6] = g[3]
            if row[1] == BOX:
                cand[k, 16] = near = max(near, box_distance(cand[k], 0, 7, g, o0, o1, o2))
                if far >= 0 and near > far:
                    continue
            cand_id[k, 0], cand_id[k, 1] = row[1], row[0]
            k += 1
        # nearest first (cand_id[:, 2]): a ray's hits skip the geoms behind them
        for c in range(k):
            j = c - 1
            while j >= 0 and cand[cand_id[j, 2], 16] > cand[c, 16]:
                cand_id[j + 1, 2] = cand_id[j, 2]
                j -= 1
            cand_id[j + 1, 2] = c
        # many candidates: the rays in order of bearing, each candidate trying only the run
        # of them within its angle (found by bisection) and the vertical ones
        sorted_rays = k >= SORTED_FROM
        nflat = sort_bearings(per_ray, rays, nray) if sorted_rays else 0
        for ci in range(k):
            c = cand_id[ci, 2]
            kind_c, geom_c = cand_id[c, 0], cand_id[c, 1]
            p0, p1, p2 = cand[c, 0], cand[c, 1], cand[c, 2]
            s0, s1, s2 = cand[c, 3], cand[c, 4], cand[c, 5]
            m0, m1, m2, m3, m4, m5, m6, m7, m8 = (
                cand[c, 7], cand[c, 8], cand[c, 9], cand[c, 10], cand[c, 11], cand[c, 12],
                cand[c, 13], cand[c, 14], cand[c, 15])
            mode, a0, a1, a2, a3 = cull(kind_c, p0, p1, m0, m1, m2, m3, m4, m5, s0, s1, s2,
                                        cand[c, 6], o0, o1, o2)
            # the rays to try (rays[:, 2]): those whose bearing passes the candidate's
            visits = 0
            if sorted_rays and (mode == CONE or mode == WEDGE):
                visits = rays_within(per_ray, rays, nflat, nray, mode, a0, a1, a2, a3)
            else:
                for ray in range(nray):
                    w0, w1 = per_ray[ray, 0], per_ray[ray, 1]
                    if mode == CONE:
                        if per_ray[ray, 2] != 0 and a0 * w0 + a1 * w1 < a2:
                            continue
                    elif mode == WEDGE:
                        if per_ray[ray, 2] != 0 and (a0 * w1 - a1 * w0 < -CULL_MARGIN
                                                     or w0 * a3 - w1 * a2 < -CULL_MARGIN):
                            continue
                    elif mode == FACING:  # a plane: only rays toward its front face
                        if (a0 * vecs[i, ray, 0] + a1 * vecs[i, ray, 1]
                                + m8 * vecs[i, ray, 2]) > -MINVAL:
                            continue
                    rays[visits, 2] = ray
                    visits += 1
            # the origin in the geom's frame (the same for every ray)
            l0, l1, l2, _, _, _ = local(p0, p1, p2, m0, m1, m2, m3, m4, m5, m6, m7, m8,
                                        o0, o1, o2, 0.0, 0.0, 0.0)
            # a ray that already hit nearer than any point of the geom (its bounding
            # sphere; a box itself) cannot hit it nearer (candidates come nearest first:
            # a map's far walls behind the near ones are passed over)
            near = cand[c, 16] * (1.0 - OCCLUDED_MARGIN) - OCCLUDED_MARGIN
            for t in range(visits):
                ray = rays[t, 2]
                best = per_ray[ray, 3]
                if best >= 0 and best * per_ray[ray, 5] < near:
                    continue
                v0, v1, v2 = vecs[i, ray, 0], vecs[i, ray, 1], vecs[i, ray, 2]
                d = primitive(kind_c, s0, s1, s2, l0, l1, l2, m0 * v0 + m3 * v1 + m6 * v2,
                              m1 * v0 + m4 * v1 + m7 * v2, m2 * v0 + m5 * v1 + m8 * v2)
                if d >= 0 and (reach < 0 or d <= reach) and (
                        best < 0 or d < best or (d == best and geom_c < rays[ray, 0])):
                    per_ray[ray, 3], rays[ray, 0] = d, geom_c
        for ray in range(nray):
            dist[i, ray], geomid[i, ray] = per_ray[ray, 3], rays[ray, 0]
        # whether any geom left to the caller could be seen
        seen_rest = False
        for j in range(rest_geoms.shape[1]):
            g = rest_geoms[e, j, 0]
            if g < 0:
                break
            if seen(live, g, rest_geoms[e, j, 1], mask, exclude[i]):
                seen_rest = True
                break
        rest[i] = seen_rest
        seen_rows += seen_rest
    return seen_rows


@shared
def box_distance(pose, at, mat_at, size, o0, o1, o2):  # pragma: no cover - compiled
    """The distance from (o0, o1, o2) to a box of half sizes size[0:3] centred at
    pose[at:at + 3], turned by the row-major matrix pose[mat_at:mat_at + 9]: the point in
    the box's frame (`local`, as the rays' tests take it), then its excess over the box."""
    q = mat_at
    l0, l1, l2, _, _, _ = local(pose[at], pose[at + 1], pose[at + 2], pose[q], pose[q + 1],
                                pose[q + 2], pose[q + 3], pose[q + 4], pose[q + 5],
                                pose[q + 6], pose[q + 7], pose[q + 8], o0, o1, o2,
                                0.0, 0.0, 0.0)
    g0, g1 = max(abs(l0) - size[0], 0.0), max(abs(l1) - size[1], 0.0)
    g2 = max(abs(l2) - size[2], 0.0)
    return math.sqrt(g0 * g0 + g1 * g1 + g2 * g2)


@shared
def seen(live, g, geom_body, mask, exclude):  # pragma: no cover - compiled
    """Whether a cast sees geom g: mj_ray's elimination (body, transparency, group) on the
    env's live arrays (addresses of geom_group, geom_matid, geom_rgba, mat_rgba)."""
    if geom_body == exclude:
        return False
    mat = peek(live[1], g, _LIKE_INT)
    if mat < 0:
        if peek(live[2], 4 * g + 3, _LIKE_FLOAT) == 0:
            return False
    elif peek(live[3], 4 * mat + 3, _LIKE_FLOAT) == 0:
        return False
    group = min(5, max(0, peek(live[0], g, _LIKE_INT)))
    return mask[group] != 0


@shared
def cull(kind, p0, p1, m0, m1, m2, m3, m4, m5, s0, s1, s2, reach, o0, o1, o2):
    """How a candidate geom culls the rays from (o0, o1, o2): by bearing, which never drops
    a ray that meets it (a ray meeting a geom meets its bounding sphere, and its bearing
    passes the sphere's circle in the plane, and the box's outline there; a capsule or
    cylinder standing upright, a person, lies within its radius of its axis in the plane,
    which any ray's bearing that meets it passes within that radius of). Returns (mode,
    a0..a3): CONE (unit bearing a0, a1 of the circle's centre, cosine a2 of its half
    angle), WEDGE (a box's outline between the unit bearings (a0, a1) and (a2, a3),
    counter-clockwise), FACING (a plane: its normal a0..a2) or EVERY (the origin over it).
    The geom at (p0, p1) turned by the matrix whose first two rows are m0..m5."""
    if kind == PLANE:
        return FACING, m2, m5, 0.0, 0.0
    dx, dy = p0 - o0, p1 - o1
    d = math.sqrt(dx * dx + dy * dy)
    upright = m2 == 0.0 and m5 == 0.0 and (kind == CAPSULE or kind == CYLINDER)
    r = s0 if kind == SPHERE or upright else reach
    if d <= CULL_MARGIN:
        return EVERY, 0.0, 0.0, 0.0, 0.0
    ux, uy = dx / d, dy / d
    cone = -1.0 if d <= r * (1 + CULL_MARGIN) + CULL_MARGIN else (
        math.sqrt(1.0 - (r / d) ** 2) - CULL_MARGIN)
    if kind != BOX or cone > WIDE:
        return (CONE, ux, uy, cone, 0.0) if cone > -1.0 else (EVERY, 0.0, 0.0, 0.0, 0.0)
    # the bearings of the box's corners about the centre's (eight; four where its z axis
    # is vertical): within less than a half turn where the origin is outside the box's
    # outline in the plane. The extreme two by a pseudo-angle (monotonic in the angle),
    # then their angles
    lx = ly = hx = hy = 0.0
    low_key, high_key = math.inf, -math.inf
    corners = 4 if m2 == 0.0 and m5 == 0.0 else 8
    for corner in range(corners):
        a = s0 if corner & 1 else -s0
        b = s1 if corner & 2 else -s1
        z = s2 if corner & 4 else -s2
        x = dx + m0 * a + m1 * b + m2 * z
        y = dy + m3 * a + m4 * b + m5 * z
        along, across = ux * x + uy * y, ux * y - uy * x
        key = pseudo_angle(along, across)
        if key < low_key:
            low_key, lx, ly = key, along, across
        if key > high_key:
            high_key, hx, hy = key, along, across
    # (a corner straight behind reads +pi, as its pseudo-angle: -0.0 across too)
    low = math.pi if ly == 0.0 and lx < 0.0 else math.atan2(ly, lx)
    high = math.pi if hy == 0.0 and hx < 0.0 else math.atan2(hy, hx)
    if high - low >= math.pi - 1e-6:
        return (CONE, ux, uy, cone, 0.0) if cone > -1.0 else (EVERY, 0.0, 0.0, 0.0, 0.0)
    low, high = low - CULL_MARGIN, high + CULL_MARGIN
    c0, s0, c1, s1 = math.cos(low), math.sin(low), math.cos(high), math.sin(high)
    return WEDGE, ux * c0 - uy * s0, uy * c0 + ux * s0, ux * c1 - uy * s1, uy * c1 + ux * s1


@shared
def pseudo_angle(along, across):
    """A number in [-2, 2] that grows with the angle atan2(across, along) over (-pi, pi]
    (the diamond angle): the order of bearings without their trigonometry."""
    size = abs(along) + abs(across)
    if size == 0.0:
        return 0.0
    t = across / size
    if along >= 0.0:
        return t
    return 2.0 - t if across >= 0.0 else -2.0 - t


@shared
def sort_bearings(per_ray, rays, nray):  # pragma: no cover - compiled
    """The rays that have a bearing (per_ray[:, 2] != 0) in order of their bearing's
    pseudo-angle (into per_ray[:, 4]) as rays[:nflat, 1], the others after them (as
    rays[nflat:, 1]); returns nflat. A fan turned about z is a sorted run turned: found in
    one pass; any other order is sorted by insertion."""
    nflat = 0
    for ray in range(nray):
        if per_ray[ray, 2] != 0:
            per_ray[ray, 4] = pseudo_angle(per_ray[ray, 0], per_ray[ray, 1])
            rays[nflat, 1] = ray
            nflat += 1
    rest = nflat
    for ray in range(nray):
        if per_ray[ray, 2] == 0:
            rays[rest, 1] = ray
            rest += 1
    if nflat < 2:
        return nflat
    low = 0  # where the smallest bearing sits: the run starts there
    for t in range(1, nflat):
        if per_ray[rays[t, 1], 4] < per_ray[rays[low, 1], 4]:
            low = t
    ordered = True
    for t in range(1, nflat):
        if per_ray[rays[(low + t) % nflat, 1], 4] < per_ray[rays[(low + t - 1) % nflat, 1], 4]:
            ordered = False
            break
    if ordered:
        for t in range(nflat):  # rays[:, 3] as the spare list for the turn
            rays[t, 3] = rays[(low + t) % nflat, 1]
        for t in range(nflat):
            rays[t, 1] = rays[t, 3]
        return nflat
    for t in range(1, nflat):
        ray = rays[t, 1]
        angle = per_ray[ray, 4]
        j = t - 1
        while j >= 0 and per_ray[rays[j, 1], 4] > angle:
            rays[j + 1, 1] = rays[j, 1]
            j -= 1
        rays[j + 1, 1] = ray
    return nflat


@shared
def first_at(per_ray, rays, nflat, angle):  # pragma: no cover - compiled
    """The first position in the sorted rays (rays[:nflat, 1]) whose bearing's
    pseudo-angle is >= angle."""
    lo, hi = 0, nflat
    while lo < hi:
        mid = (lo + hi) // 2
        if per_ray[rays[mid, 1], 4] < angle:
            lo = mid + 1
        else:
            hi = mid
    return lo


@shared
def rays_within(per_ray, rays, nflat, nray, mode, a0, a1, a2, a3):  # pragma: no cover
    """The rays whose bearing lies within a candidate's CONE or WEDGE (see `cull`), and the
    vertical ones, into rays[:, 2]; returns how many. The bearings' interval in
    pseudo-angles (per_ray[:, 4]), widened by CULL_MARGIN (a pseudo-angle grows no faster
    than the angle: the widening covers as much angle), in at most two runs of the sorted
    rays (where it wraps at pi). A cone wider than a half turn takes every bearing."""
    every = False
    if mode == CONE:
        if a2 < 0.0:
            every = True
        s = math.sqrt(max(0.0, 1.0 - a2 * a2))  # the half angle's sine; a2 its cosine
        low = pseudo_angle(a0 * a2 + a1 * s, a1 * a2 - a0 * s)
        high = pseudo_angle(a0 * a2 - a1 * s, a1 * a2 + a0 * s)
    else:  # less than a half turn (cull's bound)
        low, high = pseudo_angle(a0, a1), pseudo_angle(a2, a3)
    low -= CULL_MARGIN
    high += CULL_MARGIN
    if high < low:  # within a half turn: it wraps at pi
        high += 4.0
    count = 0
    if every:
        for t in range(nflat):
            rays[count, 2] = rays[t, 1]
            count += 1
    else:
        if low < -2.0:
            low += 4.0
            high += 4.0
        t = first_at(per_ray, rays, nflat, low)
        while t < nflat and per_ray[rays[t, 1], 4] <= high:
            rays[count, 2] = rays[t, 1]
            count += 1
            t += 1
        if high > 2.0:  # the interval wraps: on from -pi
            t = 0
            while t < nflat and per_ray[rays[t, 1], 4] <= high - 4.0:
                rays[count, 2] = rays[t, 1]
                count += 1
                t += 1
    for t in range(nflat, nray):  # vertical rays: no bearing to cull by
        rays[count, 2] = rays[t, 1]
        count += 1
    return count
