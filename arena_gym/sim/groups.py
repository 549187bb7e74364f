"""Stepping groups: envs whose models give MjData one layout share a `mujoco.batch.Batch`;
the others step on a thread pool (`mj_step` releases the GIL).

Each group owns the authoritative state of its envs while stepping. A scene's MjData is
brought up to date (`pull`) only when someone reads it, and written back (`push`) before the
next step, so the hot path copies nothing.
"""

from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor

import mujoco
import mujoco.batch
import numpy as np

from arena_gym.scene.scene import Scene
from arena_gym.sim.divergence import (
    after_step,
    auto_reset,
    bad_rows,
    bad_state,
    before_step,
    clock_checks,
)
from arena_gym.sim.geom_rays import GeomRays
from arena_gym.sim.mesh_rays import MeshRays
from arena_gym.sim.ray_copy import RayCopies

_UNSET = object()  # a group's GeomRays before the first cast asks for them
_EVERY_GROUP = np.ones(mujoco.mjNGROUP, np.uint8)  # a cast's mask where none is given

STATE = mujoco.mjtState.mjSTATE_INTEGRATION
_TIME = mujoco.mjtState.mjSTATE_TIME
_MOTION = _TIME | mujoco.mjtState.mjSTATE_QPOS | mujoco.mjtState.mjSTATE_QVEL

# MjModel sizes that describe model-only contents (assets, names), not MjData's layout
_MODEL_ONLY_SIZES = ("nmesh", "ntex", "nhfield", "nnames", "npaths", "nbuffer", "ntext",
                     "nnumeric", "ntuple", "nkey", "nmat", "nskin", "nplugin", "nuser_")


def layout_sizes(model: mujoco.MjModel) -> dict[str, int]:
    """The model's sizes that decide MjData's layout, by name (sorted)."""
    names = sorted(
        n for n in dir(model)
        if n.startswith("n") and isinstance(getattr(model, n), int)
        and not n.startswith(_MODEL_ONLY_SIZES)
    )
    return {n: getattr(model, n) for n in names}


def layout_signature(model: mujoco.MjModel) -> tuple[int, ...]:
    """Sizes that decide MjData's layout: envs with equal signatures can share a Batch."""
    return tuple(layout_sizes(model).values())


class BatchGroup:
    """Envs with one MjData layout, stepped by one persistent Batch."""

    def __init__(self, scenes: list[Scene], nthread: int) -> None:
        self.scenes = scenes
        self.env_ids = [s.env_id for s in scenes]
        self.row = {env: i for i, env in enumerate(self.env_ids)}
        models = [s.compiled for s in scenes]
        self.batch = mujoco.batch.Batch(models[0], len(models), nthread=nthread, persistent=True)
        self.batch.set_models(models)
        # With sleeping on (builders.base_world) MuJoCo poses static bodies once per MjData;
        # the batch posed them from models[0] before set_models. A reset poses them anew,
        # from each simulation's own model, at its next step (the pushes below set state).
        self.batch.reset(list(range(len(models))))
        self._bound: dict[str, np.ndarray] = {}
        self.ctrl = self.bound("ctrl")
        self.errored: set[int] = set()  # rows MuJoCo raised in since the last check
        # timesteps are fixed for a group's life (an option change regroups)
        self.dt = np.array([s.compiled.opt.timestep for s in scenes])
        self.nthread = nthread
        self._prims: object = _UNSET
        self._rows = np.arange(len(models), dtype=np.int64)
        self._checked: tuple[np.ndarray, np.ndarray] | None = None  # _checked_exclusion's
        self._meshes: dict[bytes, MeshRays | None] = {}  # per geomgroup mask
        self._copies: dict[bytes, RayCopies | None] = {}  # likewise
        # the thread casting on the copies beside the mesh test (made on first use; its
        # thread ends when the group is dropped)
        self._caster: ThreadPoolExecutor | None = None
        # the fields step checks before and after stepping: three each (bad_rows')
        motion = _motion_fields(self.batch, models[0])
        empty = np.zeros((len(models), 0))
        self.checks_before = (self.ctrl, *motion, empty)[:3]
        self.checks_after = (*motion, self.bound("qacc"), empty)[:3]
        n = len(models)
        self.bad = np.zeros(n, dtype=bool)  # rows the last state check found bad (reset)
        self.lag = np.zeros(n, dtype=bool)  # rows whose clock fell behind (clock_checks)
        self.fresh = np.zeros(n, dtype=bool)  # rows whose clock started at 0 (ditto)
        self.every = np.ones(n, dtype=bool)  # every row (clock_checks' `checked`)
        self.time = self.bound("time")
        self.mocap_pos, self.mocap_quat = self.bound("mocap_pos"), self.bound("mocap_quat")
        self.before = np.zeros(n)  # the clocks before step_checked's steps
        # step_checked's two compiled checks, looked up once: their arguments are the arrays
        # above, fixed for the group's life, and the number of steps (numba's typing of
        # every argument at each call costs more than the checks of one env)
        self._checks: tuple | None = None
        self._scratch: mujoco.MjData | None = None  # a row's whole MjData, to read warnings
        self._rays: tuple | None = None  # (shape, origins buffer) of the last full cast
        # (key, bodyexclude, the read-only array it came from or None) likewise
        self._exclude: tuple[tuple, np.ndarray, np.ndarray | None] | None = None
        for scene in scenes:
            self.push(scene)

    def push(self, scene: Scene) -> None:
        row = self.row[scene.env_id]
        mujoco.mj_getState(scene.compiled, scene.compiled_data, self.batch.state[row], STATE)

    def pull(self, scene: Scene) -> None:
        self.batch.get_data(self.row[scene.env_id], scene.compiled_data)

    def ctrl_of(self, env_id: int) -> np.ndarray:
        return self.ctrl[self.row[env_id]]

    def bound(self, field: str) -> np.ndarray:
        """Batch.bind, cached: the views live as long as the batch."""
        view = self._bound.get(field)
        if view is None:
            view = self._bound[field] = self.batch.bind(field)
        return view

    def state_of(self, env_id: int, field: str) -> np.ndarray:
        return self.bound(field)[self.row[env_id]]

    def gather(self, field: str, cols: np.ndarray | slice) -> np.ndarray:
        """(n, len(cols)) of a field's columns, all envs of the group in one read (a view of
        the live state for a slice)."""
        return self.bound(field)[:, cols]

    def scatter(self, field: str, cols: np.ndarray, values: np.ndarray) -> None:
        self.bound(field)[:, cols] = values

    def reset(self, env_ids: list[int], keyframes: list[int] | None = None) -> None:
        """To the models' defaults, or to keyframe ids (one per env; -1: defaults)."""
        rows = [self.row[e] for e in env_ids]
        if keyframes is None:
            self.batch.reset(rows, stage=mujoco.mjtStage.mjSTAGE_NONE)
        else:
            self.batch.reset(rows, keyframe=np.asarray(keyframes, dtype=np.int32),
                             stage=mujoco.mjtStage.mjSTAGE_NONE)

    def get_state(self, env_id: int) -> np.ndarray:
        """A copy of the env's integration state (mjSTATE_INTEGRATION)."""
        return self.batch.state[self.row[env_id]].copy()

    def set_state(self, env_id: int, state: np.ndarray) -> None:
        self.batch.state[self.row[env_id]] = state

    def rays(self, origins: np.ndarray, vecs: np.ndarray, geomgroup: np.ndarray | None,
             bodyexclude: np.ndarray, env_ids: np.ndarray | None,
             cutoff: float = np.inf, ray_origins: np.ndarray | None = None
             ) -> tuple[np.ndarray, np.ndarray]:
        """Cast from each env's origin (n, 3) along vecs (n, R, 3): dist, geomid (n, R), for
        `env_ids` of the group (None: all of them, in order; then `ray_origins` (n, R, 3),
        given, are the origins per ray). The primitive geoms of static and mocap bodies
        (walls, boxes, people, the floor) go through GeomRays; whatever else a cast could
        see (meshes, bodies with joints) through MuJoCo, meshes through MeshRays for all of
        the group's envs; hits beyond `cutoff` may then read as misses."""
        prims = self.geom_rays()
        if prims is None:
            return self._mujoco_rays(origins, vecs, geomgroup, bodyexclude, env_ids, cutoff,
                                     ray_origins)
        rows = self._rows if env_ids is None else np.array([self.row[int(e)] for e in env_ids],
                                                           dtype=np.int64)
        exclude = self._checked_exclusion(bodyexclude, len(rows))
        if (exclude is None or getattr(vecs, "ndim", 0) != 3 or vecs.shape[2] != 3
                or getattr(origins, "shape", None) != (len(rows), 3)
                or vecs.shape[0] != len(rows)):
            return self.batch.ray(np.asarray(origins)[:, None, :], vecs, geomgroup=geomgroup,
                                  bodyexclude=np.asarray(bodyexclude)[:, None],
                                  ids=rows)  # raises its error for what it would refuse
        mask = _EVERY_GROUP if geomgroup is None else geomgroup
        dist, geomid, rest = prims.cast(origins, vecs, mask, exclude, cutoff, self.mocap_pos,
                                        self.mocap_quat, rows)
        if rest is not None:  # some env could see a geom of another kind: MuJoCo's cast too
            some = np.flatnonzero(rest)
            ids = None if len(some) == len(rows) and env_ids is None else [
                self.env_ids[r] for r in rows[some]]
            more, more_id = self._mujoco_rays(
                origins[some], vecs[some], geomgroup, bodyexclude[some], ids, cutoff,
                None if ids is not None else ray_origins)
            dist[some], geomid[some] = nearer(dist[some], geomid[some], more, more_id)
        return dist, geomid

    def geom_rays(self) -> GeomRays | None:
        """The group's GeomRays (made on first use), None where its models have no geom of
        theirs."""
        if self._prims is _UNSET:
            self._prims = GeomRays.for_models([s.compiled for s in self.scenes])
        return self._prims  # type: ignore[return-value]

    def _checked_exclusion(self, bodyexclude: np.ndarray, n: int) -> np.ndarray | None:
        """`bodyexclude` as (n,) int32 body ids, None where Batch.ray would refuse it; kept
        for the read-only array Simulator.cast_rays passes every cast (it cannot change)."""
        kept = self._checked
        if kept is not None and kept[0] is bodyexclude:
            return kept[1]
        bodies = np.asarray(bodyexclude)
        if bodies.shape != (n,) or ((bodies < -1) | (bodies >= self.batch.model.nbody)).any():
            return None
        exclude = bodies.astype(np.int32)
        if bodies.base is None and not bodies.flags.writeable:
            self._checked = (bodyexclude, exclude)
        return exclude

    def _mujoco_rays(self, origins: np.ndarray, vecs: np.ndarray, geomgroup: np.ndarray | None,
                     bodyexclude: np.ndarray, env_ids: list[int] | None, cutoff: float,
                     ray_origins: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        """MuJoCo's cast (meshes by MeshRays for all envs with a cutoff)."""
        nray = vecs.shape[1]
        rows = None if env_ids is None else [self.row[int(e)] for e in env_ids]
        if rows is None:
            return self._ray_all(origins, vecs, geomgroup, bodyexclude, cutoff, ray_origins)
        exclude = bodyexclude[:, None] if (bodyexclude == -1).all() else np.repeat(
            bodyexclude[:, None], nray, axis=1)
        return self.batch.ray(origins[:, None, :], vecs, geomgroup=geomgroup, flg_static=True,
                              bodyexclude=exclude, ids=rows)

    def _ray_all(self, origins: np.ndarray, vecs: np.ndarray, geomgroup: np.ndarray | None,
                 bodyexclude: np.ndarray, cutoff: float = np.inf,
                 ray_origins: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Batch.ray over every row, through its binding, with the arrays Batch.ray would
        prepare (contiguous (n, nray, 3) origins, (n, nray) int32 exclusions) kept between
        calls: a lidar casts every control step, and Batch.ray broadcasts, copies and
        range-checks them anew each time. Shapes or ids it would refuse go to Batch.ray."""
        n, nray = vecs.shape[:2]
        if n != len(self.env_ids) or vecs.shape[2:] != (3,) or np.shape(origins) != (n, 3):
            return self.batch.ray(origins[:, None, :], vecs, geomgroup=geomgroup,
                                  bodyexclude=bodyexclude[:, None])  # raises its error
        shape = (n, nray, 3)
        if (ray_origins is not None and ray_origins.shape == shape and ray_origins.dtype
                == np.float64 and ray_origins.flags.c_contiguous):
            pnt = ray_origins  # laid out by the caller
        else:
            if self._rays is None or self._rays[0] != shape:
                self._rays = (shape, np.empty(shape))
            pnt = self._rays[1]
            pnt[:] = np.asarray(origins, dtype=np.float64)[:, None, :]  # each env's, per ray
        kept = self._exclude
        if kept is None or kept[0][1] != nray or (kept[2] is not bodyexclude
                                                  and kept[0][0] != bodyexclude.tobytes()):
            bodies = np.asarray(bodyexclude)
            if ((bodies < -1) | (bodies >= self.batch.model.nbody)).any():
                return self.batch.ray(origins[:, None, :], vecs, geomgroup=geomgroup,
                                      bodyexclude=bodies[:, None])  # raises its error
            # the array itself too: Simulator.cast_rays passes the same one, and a read-only
            # one owning its memory cannot have changed (then no bytes to compare)
            same = (bodyexclude if bodyexclude.base is None and not bodyexclude.flags.writeable
                    else None)
            self._exclude = ((bodyexclude.tobytes(), nray), np.ascontiguousarray(
                np.broadcast_to(bodies[:, None], (n, nray)), np.int32), same)
        if geomgroup is not None:
            geomgroup = np.ascontiguousarray(geomgroup, dtype=np.uint8)
        vec = np.ascontiguousarray(vecs, dtype=np.float64)
        prims = self._prims if isinstance(self._prims, GeomRays) else None
        cull = None
        if geomgroup is not None and math.isfinite(cutoff):
            key = geomgroup.tobytes()  # (six bytes: cheaper to ask than the array)
            cull = self._meshes.get(key, _UNSET) if not all(key) else None  # all: no cull
            if cull is _UNSET:
                cull = self._meshes[key] = MeshRays.for_models(
                    [s.compiled for s in self.scenes], geomgroup)
        if cull is None and prims is None:
            return self._cast(pnt, vec, geomgroup, self._exclude[1])
        return self._cast_apart(cull, prims, origins, pnt, vec, geomgroup, self._exclude[1],
                                cutoff)

    def _cast(self, pnt: np.ndarray, vec: np.ndarray, geomgroup: np.ndarray | None,
              exclude: np.ndarray,
              batch: mujoco.batch.Batch | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Batch.ray's own kernel over every row (of the group's batch, or of `batch`) on
        prepared contiguous arrays."""
        batch = self.batch if batch is None else batch
        dist, geomid = np.empty(vec.shape[:2]), np.empty(vec.shape[:2], np.int32)
        failed = batch._b.ray(None, pnt, vec, geomgroup, True, exclude, dist, geomid, None)
        if failed:
            batch._check(None, failed)  # raises Batch.ray's SimulationError
        return dist, geomid

    def _cast_apart(self, meshes: MeshRays | None, prims: GeomRays | None, origins: np.ndarray,
                    pnt: np.ndarray, vec: np.ndarray, geomgroup: np.ndarray | None,
                    exclude: np.ndarray, cutoff: float) -> tuple[np.ndarray, np.ndarray]:
        """Every ray without the seen meshes and the geoms GeomRays casts (its caller's),
        the meshes by `MeshRays` (sim/mesh_rays.py), the nearer hit per ray (the lower
        geom id on a tie, as mj_ray): with the caller's, MuJoCo's values for the whole
        scene. On copies of the scenes that lack them and the geoms the mask skips
        (sim/ray_copy.py), or, while a skipped geom is switched into a seen group, on the
        scenes themselves (with the meshes switched to a group the mask skips)."""
        seen = meshes.seen(geomgroup) if meshes is not None else None
        if seen is not None and not seen.any():
            meshes = seen = None
        if (meshes is None and prims is None) or (exclude != -1).any():  # MuJoCo's own cast
            return self._cast(pnt, vec, geomgroup, exclude)
        mask = _EVERY_GROUP if geomgroup is None else geomgroup
        key = mask.tobytes() + (b"meshes" if meshes is not None else b"")
        if key not in self._copies:
            skipped = [np.flatnonzero(mask[np.clip(s.compiled.geom_group, 0,
                                                   mujoco.mjNGROUP - 1)] == 0)
                       for s in self.scenes]
            drop = [np.union1d(k, prims.handled[e]) if prims is not None else k
                    for e, k in enumerate(skipped)]
            if meshes is not None:
                drop = [np.union1d(k, g[g >= 0]) for k, g in zip(drop, meshes.geoms,
                                                                 strict=True)]
            self._copies[key] = RayCopies.build(self.scenes, drop, self.nthread,
                                                skipped=skipped)
        copies = self._copies[key]

        def mesh_hits() -> tuple[np.ndarray, np.ndarray]:
            return meshes.hits(origins, vec, cutoff, self.bound("mocap_pos"),  # type: ignore
                               self.bound("mocap_quat"), seen)

        if copies is not None and copies.dropped_unseen(mask):
            copies.sync(list(range(len(self.scenes))), self.batch.state)
            if meshes is None:
                dist, geomid = self._cast(pnt, vec, geomgroup, exclude, copies.batch)
                return dist, copies.to_scene(None, geomid)
            # MuJoCo's cast on the copies releases the GIL: it runs on a worker thread while
            # this one tests the meshes (numpy, one thread); both only read the states
            if self._caster is None:
                self._caster = ThreadPoolExecutor(1, thread_name_prefix="arena-rays")
            rest = self._caster.submit(self._cast, pnt, vec, geomgroup, exclude, copies.batch)
            near, which = mesh_hits()
            dist, geomid = rest.result()
            geomid = copies.to_scene(None, geomid)
        elif meshes is None:  # the scenes' own groups are switched: the whole scene
            return self._cast(pnt, vec, geomgroup, exclude)
        else:  # likewise, with the meshes switched out of the cast
            dist, geomid = self._cast_hiding(meshes.geoms, seen, pnt, vec, mask, exclude)
            near, which = mesh_hits()
        return nearer(dist, geomid, near, which)

    def _cast_hiding(self, geoms: np.ndarray, seen: np.ndarray, pnt: np.ndarray,
                     vec: np.ndarray, geomgroup: np.ndarray,
                     exclude: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """`_cast` with the seen geoms (n, G) switched, for the cast, to a group it skips."""
        hidden = int(np.flatnonzero(geomgroup == 0)[0])
        models = [s.compiled for s in self.scenes]
        switched = [(m, geoms[i][seen[i]]) for i, m in enumerate(models) if seen[i].any()]
        saved = [m.geom_group[ids].copy() for m, ids in switched]
        try:
            for m, ids in switched:
                m.geom_group[ids] = hidden
            return self._cast(pnt, vec, geomgroup, exclude)
        finally:
            for (m, ids), groups in zip(switched, saved, strict=True):
                m.geom_group[ids] = groups

    def times(self) -> np.ndarray:
        return self.bound("time").copy()

    def diverged_since(self, times: np.ndarray, steps: int) -> list[int]:
        """Envs reset as diverged (by `step`'s checks, or MuJoCo's auto-reset: their clock
        fell behind `times` over the last `steps` steps, or it started at 0 and MuJoCo's
        warnings say it reset them), or MuJoCo raised in."""
        lagging, fresh = clock_checks(times, self.bound("time"), self.dt, steps, self.every,
                                      self.lag, self.fresh)
        if fresh:
            lagging += self.check_fresh()
        return self.take_diverged(lagging)

    def check_fresh(self) -> int:
        """Mark `lag` the rows of `fresh` that MuJoCo's auto-reset reset in their first step
        (their warning counters); returns how many."""
        if self._scratch is None:
            self._scratch = mujoco.MjData(self.scenes[0].compiled)
        found = 0
        for row in np.flatnonzero(self.fresh).tolist():
            if not self.lag[row] and row not in self.errored:
                self.batch.get_data(row, self._scratch)
                if auto_reset(self._scratch):
                    self.lag[row] = True
                    found += 1
        return found

    def take_diverged(self, lagging: int) -> list[int]:
        """The env ids of the rows that `lag` (`lagging` of them) or were reset as diverged
        since the last call, sorted; forgets the latter."""
        if not (lagging or self.errored):
            return []
        rows = set(np.flatnonzero(self.lag).tolist()) if lagging else set()
        rows |= self.errored
        self.errored = set()
        return sorted(self.env_ids[i] for i in rows)

    def step_checked(self, nstep: int) -> list[int]:
        """`step` and `diverged_since` in one: `nstep` physics steps, then the env ids
        reset as diverged in them (sorted)."""
        nstep = int(nstep)
        if self._checks is None:
            self._checks = (
                before_step.entry(*self.checks_before, self.bad, self.time, self.before),
                after_step.entry(*self.checks_after, self.bad, self.before, self.time, self.dt,
                                 nstep, self.lag, self.fresh))
        check_before, check_after = self._checks
        if check_before(*self.checks_before, self.bad, self.time, self.before):
            self.reset_bad()
        self.physics(nstep)
        bad, lagging, fresh = check_after(*self.checks_after, self.bad, self.before, self.time,
                                          self.dt, nstep, self.lag, self.fresh)
        if bad:
            self.reset_bad()
        if fresh:
            lagging += self.check_fresh()
        return self.take_diverged(lagging)

    def step(self, nstep: int) -> None:
        """`nstep` physics steps. Checked before (a bad control MuJoCo would zero with only a
        warning, or a bad state written since the last step, which MuJoCo's auto-reset would
        hide when the env's clock is at 0) and after (whatever MuJoCo's auto-reset flag says):
        bad rows are reset and counted as diverged."""
        if bad_rows(*self.checks_before, self.bad):
            self.reset_bad()
        self.physics(nstep)
        if bad_rows(*self.checks_after, self.bad):
            self.reset_bad()

    def physics(self, nstep: int) -> None:
        """The batch's step; the rows MuJoCo raised in are reset (the others went on)."""
        try:
            failed = self.batch._b.step(None, nstep, 0)  # Batch.step's own call, all rows
            if failed:
                self.batch._check(None, failed)  # raises Batch.step's SimulationError
        except mujoco.batch.SimulationError as exc:
            self.batch.reset(exc.ids)
            self.errored.update(int(i) for i in exc.ids)

    def reset_bad(self) -> None:
        """Reset the rows marked `bad` to their model's defaults, as diverged."""
        rows = np.flatnonzero(self.bad).tolist()
        if rows:
            self.batch.reset(rows)
            self.errored.update(rows)


def nearer(dist: np.ndarray, geomid: np.ndarray, other: np.ndarray, other_id: np.ndarray
           ) -> tuple[np.ndarray, np.ndarray]:
    """Per ray the nearer of two casts' hits (-1: a miss), the lower geom id on a tie (as
    mj_ray's scan over geoms keeps it)."""
    wins = (other >= 0) & ((dist < 0) | (other < dist) | ((other == dist) & (other_id < geomid)))
    return np.where(wins, other, dist), np.where(wins, other_id, geomid)


def _motion_fields(batch: mujoco.batch.Batch, model: mujoco.MjModel) -> tuple[np.ndarray, ...]:
    """qpos and qvel of every row as one view of the batch's state (mj_getState lays the
    components out in mjtState's order: time, qpos, qvel, ...), to check both at once;
    the two bound fields where the state is laid out otherwise."""
    qpos, qvel = batch.bind("qpos"), batch.bind("qvel")
    start, stop = mujoco.mj_stateSize(model, _TIME), mujoco.mj_stateSize(model, _MOTION)
    both = batch.state[:, start:stop]
    address = both.__array_interface__["data"][0]
    if (qpos.__array_interface__["data"][0] == address and both.shape[1] == model.nq + model.nv
            and qvel.__array_interface__["data"][0] == address + model.nq * both.itemsize):
        return (both,)
    return qpos, qvel


class PoolGroup:
    """Envs stepped one MjData each, on a thread pool."""

    def __init__(self, scenes: list[Scene], pool: ThreadPoolExecutor | None) -> None:
        self.scenes = scenes
        self.env_ids = [s.env_id for s in scenes]
        self.pool = pool
        self.errored: set[int] = set()  # envs reset as diverged since the last check
        self._prims: list = [_UNSET] * len(scenes)  # one GeomRays (or None) per scene

    def push(self, scene: Scene) -> None:  # the scene's own MjData is the state
        pass

    def pull(self, scene: Scene) -> None:
        pass

    def ctrl_of(self, env_id: int) -> np.ndarray:
        return self.scenes[self.env_ids.index(env_id)].compiled_data.ctrl

    def state_of(self, env_id: int, field: str) -> np.ndarray:
        return getattr(self.scenes[self.env_ids.index(env_id)].compiled_data, field)

    def gather(self, field: str, cols: np.ndarray) -> np.ndarray:
        return np.stack([getattr(s.compiled_data, field)[cols] for s in self.scenes])

    def scatter(self, field: str, cols: np.ndarray, values: np.ndarray) -> None:
        for scene, row in zip(self.scenes, values, strict=True):
            getattr(scene.compiled_data, field)[cols] = row

    def rays(self, origins: np.ndarray, vecs: np.ndarray, geomgroup: np.ndarray | None,
             bodyexclude: np.ndarray, env_ids: np.ndarray | None,
             cutoff: float = np.inf, ray_origins: np.ndarray | None = None
             ) -> tuple[np.ndarray, np.ndarray]:
        """As BatchGroup.rays, one MjData at a time (`ray_origins` unused: mj_multiRay
        takes one origin per env)."""
        n, nray = vecs.shape[:2]
        dist, geomid = np.empty((n, nray)), np.empty((n, nray), dtype=np.int32)
        index = (list(range(len(self.scenes))) if env_ids is None
                 else [self.env_ids.index(int(e)) for e in env_ids])

        def cast(i: int) -> None:
            scene = self.scenes[index[i]]
            model, data = scene.compiled, scene.compiled_data
            if self._prims[index[i]] is _UNSET:
                self._prims[index[i]] = GeomRays.for_models([model])
            prims = self._prims[index[i]]
            if prims is not None:
                near, which, rest = prims.cast(
                    origins[i : i + 1], vecs[i : i + 1],
                    _EVERY_GROUP if geomgroup is None else geomgroup,
                    np.asarray(bodyexclude[i : i + 1], np.int32), cutoff,
                    data.mocap_pos[None], data.mocap_quat[None], np.zeros(1, np.int64))
                dist[i], geomid[i] = near[0], which[0]
                if rest is None:
                    return
            mujoco.mj_kinematics(model, data)
            more, more_id = np.empty(nray), np.empty(nray, dtype=np.int32)
            mujoco.mj_multiRay(model, data, origins[i], vecs[i].ravel(), geomgroup, 1,
                               int(bodyexclude[i]), more_id, more, None, nray, 1e9)
            if prims is None:
                dist[i], geomid[i] = more, more_id
            else:
                dist[i], geomid[i] = nearer(dist[i], geomid[i], more, more_id)

        if self.pool is None or n == 1:
            for i in range(n):
                cast(i)
        else:
            list(self.pool.map(cast, range(n)))
        return dist, geomid

    def reset(self, env_ids: list[int], keyframes: list[int] | None = None) -> None:
        for i, env in enumerate(env_ids):
            scene = self.scenes[self.env_ids.index(env)]
            key = -1 if keyframes is None else keyframes[i]
            if key < 0:
                mujoco.mj_resetData(scene.compiled, scene.compiled_data)
            else:
                mujoco.mj_resetDataKeyframe(scene.compiled, scene.compiled_data, key)

    def get_state(self, env_id: int) -> np.ndarray:
        scene = self.scenes[self.env_ids.index(env_id)]
        state = np.empty(mujoco.mj_stateSize(scene.compiled, STATE))
        mujoco.mj_getState(scene.compiled, scene.compiled_data, state, STATE)
        return state

    def set_state(self, env_id: int, state: np.ndarray) -> None:
        scene = self.scenes[self.env_ids.index(env_id)]
        mujoco.mj_setState(scene.compiled, scene.compiled_data, state, STATE)

    def times(self) -> np.ndarray:
        return np.array([s.compiled_data.time for s in self.scenes])

    def diverged_since(self, times: np.ndarray, steps: int) -> list[int]:
        """As BatchGroup.diverged_since: envs reset by `step`'s checks or MuJoCo's."""
        n = len(self.scenes)
        dt = np.array([s.compiled.opt.timestep for s in self.scenes])
        lag, fresh = np.zeros(n, dtype=bool), np.zeros(n, dtype=bool)
        clock_checks(times, self.times(), dt, steps, np.ones(n, dtype=bool), lag, fresh)
        bad = lag | fresh & np.array([auto_reset(s.compiled_data) for s in self.scenes], dtype=bool)
        rows = {self.env_ids[i] for i in np.flatnonzero(bad).tolist()} | self.errored
        self.errored = set()
        return sorted(rows)

    def step_checked(self, nstep: int) -> list[int]:
        """As BatchGroup.step_checked."""
        times = self.times()
        self.step(nstep)
        return self.diverged_since(times, nstep)

    def step(self, nstep: int) -> None:
        one = np.zeros(1, dtype=bool)
        for scene in self.scenes:  # as BatchGroup.step: bad controls and bad written state
            d = scene.compiled_data
            if bad_rows(d.ctrl[None], d.qpos[None], d.qvel[None], one):
                self._reset(scene)
        if self.pool is None or len(self.scenes) == 1:
            for scene in self.scenes:
                mujoco.mj_step(scene.compiled, scene.compiled_data, nstep)
        else:
            list(self.pool.map(lambda s: mujoco.mj_step(s.compiled, s.compiled_data, nstep),
                               self.scenes))
        for scene in self.scenes:  # whatever MuJoCo's auto-reset flag says
            if bad_state(scene.compiled_data):
                self._reset(scene)

    def _reset(self, scene: Scene) -> None:
        mujoco.mj_resetData(scene.compiled, scene.compiled_data)
        self.errored.add(scene.env_id)


def make_groups(
    scenes: list[Scene], nthread: int, pool: ThreadPoolExecutor | None
) -> list[BatchGroup | PoolGroup]:
    by_layout: dict[tuple[int, ...], list[Scene]] = {}
    odd: list[Scene] = [s for s in scenes if s.steps_alone]  # a Python sensor callback's
    for scene in scenes:
        if not scene.steps_alone:
            by_layout.setdefault(layout_signature(scene.compiled), []).append(scene)
    groups: list[BatchGroup | PoolGroup] = []
    for members in by_layout.values():
        if len(members) < 2 and len(by_layout) > 1:  # one env of one layout steps in a
            odd += members  # batch too (the envs' one path); odd ones share a thread pool
            continue
        try:
            groups.append(BatchGroup(members, nthread))
        except ValueError:  # a layout difference the signature missed
            odd += members
    if odd:
        groups.append(PoolGroup(odd, pool))
    return groups
