"""The lockstep simulator: steps every env of a SceneStore in ticks and calls its hooks.

    sim = Simulator(store)
    sim.set_cmd_vel(0, "burger", 0.2, 0.0)
    sim.step(500)                  # 1 s at dt 0.002, in 50 ticks of 10 steps
    sim.hooks.tick.append(lambda sim: suite.update())   # sim/hooks.py

Free running (a stepping thread, pacing, snapshots, keyframes, initial states) is a Runner
that drives a Simulator (sim/runner.py); lockstep `step(n)` works whether or not a Runner is
paused, for both take one lock. Commands (`set_cmd_vel`, `set_ctrl`, `set_applied_force`,
joint servos) are staged and written at the next tick, right before its first step.
docs/simulation.md has the whole API.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import mujoco
import numpy as np

from arena_gym.errors import unknown
from arena_gym.scene.store import SceneStore
from arena_gym.sim.control import Controller
from arena_gym.sim.groups import BatchGroup, PoolGroup, make_groups
from arena_gym.sim.hooks import Hooks, TickHook, weakly
from arena_gym.sim.options import apply_runtime_options

TICK_STEPS = 10


class SimulatorClosed(RuntimeError):
    """A closed simulator was asked to step (a handle kept past its world's close)."""


@dataclass(frozen=True)
class SavedState:
    """An env's whole integration state (`values`) and the compile of its model it
    belongs to: `Simulator.saved_state(env)`, back with `Simulator.restore({env: saved})`."""

    compile_count: int
    values: np.ndarray


class Simulator:
    """Lockstep batched stepping of all envs of `store` (see the module docstring)."""

    def __init__(self, store: SceneStore, nthread: int = 0, tick_steps: int = TICK_STEPS) -> None:
        if tick_steps < 1:
            raise ValueError(f"tick_steps: expected an integer >= 1, got {tick_steps!r}")
        self.store = store
        self.tick_steps = tick_steps
        self.nthread = nthread or os.cpu_count() or 1
        self.controller = Controller(store)
        self.step_count = 0
        self._clock = 0.0
        self.diverged: list[int] = []  # envs whose physics diverged in the last step() call
        self.hooks = Hooks()  # tick, physics-step and reset hooks, observers (sim/hooks.py)
        self._pool = ThreadPoolExecutor(self.nthread) if self.nthread > 1 else None
        self._groups: list[BatchGroup | PoolGroup] = []
        self._whole: BatchGroup | PoolGroup | None = None  # the one group of every env, in order
        self._opt: Any = None  # env 0's model options (its timestep), kept per grouping
        self._group_of: dict[int, BatchGroup | PoolGroup] = {}
        self._exclusions: dict[tuple[int, int], np.ndarray] = {}  # _exclusion's, by (body, n)
        self._versions: list[int] = [-1] * store.num_envs
        self._stale = [False] * store.num_envs  # scene MjData behind the group's state
        self._touched = [False] * store.num_envs  # scene MjData handed out since last push
        self._lock = threading.RLock()
        self._changed = True  # a scene changed since the last _prepare
        self._any_touched = False
        self.closed = False  # close(): it steps no more (a handle kept from before refuses)
        for scene in store.scenes:
            # weakly: a simulator nobody holds is freed at once (its Batch's memory with
            # it), not when the cyclic collector comes by
            scene.on_access = weakly(self._on_access)
            scene.on_change = weakly(self._on_change)

    def add_envs(self, count: int) -> list[int]:
        """Grow the store by `count` empty envs, at this simulator's clock, stepped from the
        next tick on (a server making an env on first contact); returns their ids. What is
        sized by the env count follows with its own add_envs (SensorSuite.add_envs)."""
        with self._lock:
            new = self.store.add_envs(count)
            for env in new:
                scene = self.store.scenes[env]
                scene.on_access, scene.on_change = self._on_access, self._on_change
            self._versions += [-1] * count
            self._stale += [False] * count
            self._touched += [False] * count
            self.controller.add_envs(count)
            for env in new:
                self.store.scenes[env].data.time = self._clock
            self._changed = True
            return new

    # ------------------------------------------------------------ state sync
    def _on_access(self, env_id: int) -> None:
        if self._stale[env_id]:
            self._group_of[env_id].pull(self.store.scenes[env_id])
            self._stale[env_id] = False
        self._touched[env_id] = True
        self._any_touched = True

    def _on_change(self) -> None:
        self._changed = True

    def _prepare(self) -> None:
        """Compile dirty scenes, regroup after model changes, push hand-edited state."""
        if not (self._changed or self._any_touched):
            return  # the hot path: nothing to do
        if self.closed:  # (close() sets _changed: the hot path leads here)
            raise SimulatorClosed("simulator: closed (by close(), or replaced by a "
                                  "Simulation's reload() or load_from_*); expected the open "
                                  "one (Simulation.simulator)")
        scenes = self.store.scenes
        for scene in scenes:
            scene.flush()
        if any(s.version != v for s, v in zip(scenes, self._versions, strict=True)):
            for scene in scenes:
                self._on_access(scene.env_id)  # bring every MjData up to date first
            self._groups = make_groups(scenes, self.nthread, self._pool)
            self._group_of = {env: g for g in self._groups for env in g.env_ids}
            single = self._groups[0] if len(self._groups) == 1 else None
            self._whole = single if single is not None and single.env_ids == list(
                range(len(scenes))) else None
            self._versions = [s.version for s in scenes]
            self._opt = scenes[0].compiled.opt  # (a new model brings a new version: regroup)
            self._stale = [False] * len(scenes)
            self._touched = [False] * len(scenes)
            for env in range(len(scenes)):
                self.controller.invalidate(env)
        else:
            for env, touched in enumerate(self._touched):
                if touched:
                    self._group_of[env].push(scenes[env])
                    self._touched[env] = False
        self._changed = self._any_touched = False

    def ctrl(self, env_id: int) -> np.ndarray:
        """The live, writable control vector of an env (valid until the next regroup)."""
        return self._group_of[env_id].ctrl_of(env_id)

    def state(self, env_id: int | None, field: str) -> np.ndarray | None:
        """A live, writable view of an env's state field (qpos, qvel, ctrl, mocap_pos,
        mocap_quat, qacc_warmstart, ...), valid until the next regroup (a recompile).
        `env_id` None: every env's, (num_envs, ...), where one batch group holds them all in
        order (the usual case), else None (write through `scatter` then).

        Writes take effect at the next step; read `store[env].data` for derived quantities.
        """
        with self._lock:
            self._prepare()
            if env_id is None:
                if self._whole is None or self._any_touched:
                    return None
                self._stale = [True] * len(self._stale)  # the scenes' MjData fall behind
                return self._whole.bound(field)
            group = self._group_of[env_id]
            if self._touched[env_id]:  # hand edits to MjData go in first, not over these
                group.push(self.store.scenes[env_id])
                self._touched[env_id] = False
            self._stale[env_id] = True
            return group.state_of(env_id, field)

    def gather(self, field: str, cols: np.ndarray | slice) -> np.ndarray:
        """(num_envs, len(cols)): columns of a state or output field (qpos, sensordata, ...)
        of every env, read group by group. For fields whose layout all envs share. An index
        array gives a copy; a slice, when one batch group holds every env (the usual), a
        view of the live state: read it before the next step."""
        with self._lock:
            self._prepare()
            if self._whole is not None:  # the usual case: one read (or view)
                return np.asarray(self._whole.gather(field, cols), dtype=float)
            parts = [(group.env_ids, group.gather(field, cols)) for group in self._groups]
            out = np.empty((self.store.num_envs, parts[0][1].shape[1]))
            for env_ids, values in parts:
                out[env_ids] = values
            return out

    def scatter(self, field: str, cols: np.ndarray, values: np.ndarray) -> None:
        """Write (num_envs, len(cols)) into a state field's columns of every env."""
        with self._lock:
            self._prepare()
            if self._whole is not None and not self._any_touched:  # the usual: one write
                self._whole.scatter(field, cols, values)
                self._stale = [True] * len(self._stale)
                return
            for group in self._groups:
                ids = group.env_ids
                if self._touched_any(ids):
                    for env in ids:
                        self._flush_touched(env)
                group.scatter(field, cols, values[ids])
                for env in ids:
                    self._stale[env] = True

    def _touched_any(self, ids: list[int]) -> bool:
        return any(self._touched[e] for e in ids)

    def _flush_touched(self, env: int) -> None:
        if self._touched[env]:
            self._group_of[env].push(self.store.scenes[env])
            self._touched[env] = False

    def reset_envs(self, env_ids: list[int], keyframe: str | int | None = None) -> None:
        """Reset these envs' state to the model's defaults (qpos0, zero velocities, time 0),
        or to the model keyframe `keyframe`: a full or env-relative name, or an index
        (every env is checked to have it before any is reset). Reset callbacks run after."""
        with self._lock:
            self._prepare()
            keys = None if keyframe is None else self._keyframe_ids(keyframe, env_ids)
            by_group: dict[int, list[int]] = {}
            for env in env_ids:
                by_group.setdefault(id(self._group_of[env]), []).append(env)
            for group in self._groups:
                ids = by_group.get(id(group))
                if ids:
                    group.reset(ids, None if keys is None else [keys[e] for e in ids])
            self._after_reset(list(env_ids), fill_initial_state=False)

    def saved_state(self, env_id: int) -> SavedState:
        """A copy of an env's whole integration state now, for `restore`."""
        with self._lock:
            self._prepare()
            env = self.store.scene(env_id).env_id
            self._flush_touched(env)
            return SavedState(self.store.scenes[env].compile_count,
                              self._group_of[env].get_state(env))

    def restore(self, states: Mapping[int, SavedState], what: str = "saved state",
                fill_initial_state: bool = False) -> None:
        """Put each env (a key) back into its saved state; every one is checked to belong
        to its env's model as it is now (nothing spawned or deleted since) before any is
        written, else ValueError naming `what` and the env. Reset hooks run after, with
        `fill_initial_state` (True: the states are the envs' initial states)."""
        with self._lock:
            self._prepare()
            for env, saved in states.items():
                compiles = self.store.scene(env).compile_count
                if saved.compile_count != compiles:
                    raise ValueError(
                        f"{what} of env {env}: expected the model it was captured with "
                        f"(compile {saved.compile_count}), got compile {compiles} (something "
                        "was spawned or deleted since); capture it again")
            for env, saved in states.items():
                self._group_of[env].set_state(env, saved.values)
            self._after_reset(list(states), fill_initial_state)

    def _after_reset(self, env_ids: list[int], fill_initial_state: bool) -> None:
        for env in env_ids:
            self._stale[env], self._touched[env] = True, False
            self.controller.reset(env)
        for hook in list(self.hooks.reset):
            hook(self, env_ids, fill_initial_state)
        if self.hooks.observers:
            self._prepare()  # what the hooks edited pushed, a recompile regrouped: observed
            self._observe()

    def _keyframe_ids(self, name: str | int, env_ids: list[int]) -> dict[int, int]:
        """The id of keyframe `name` (full or env-relative, an MJCF model's own name for
        it, or an index) in each env's model."""
        ids = {}
        for env in env_ids:
            scene = self.store.scenes[env]
            model = scene.compiled
            names = [model.key(k).name for k in range(model.nkey)]
            if isinstance(name, (int, np.integer)) and not isinstance(name, bool):
                if not 0 <= name < model.nkey:
                    raise IndexError(f"keyframe index {name} in env {env}: expected 0 <= "
                                     f"index < {model.nkey} (keyframes {names})")
                ids[env] = int(name)
                continue
            # full, env-relative, or a loaded model's own name for it ("home": model/home)
            models = [scene.full_name(f"{e}/") for e, entity in scene.entities.items()
                      if entity.kind == "model"]
            for candidate in (name, scene.full_name(name), *(m + name for m in models)):
                key = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_KEY, candidate)
                if key >= 0:
                    ids[env] = key
                    break
            else:
                own = [n.removeprefix(m) for n in names for m in models if n.startswith(m)]
                raise unknown(f"keyframe in env {env}", name, own + names)
        return ids

    def cast_rays(
        self,
        origins: np.ndarray,
        directions: np.ndarray,
        geomgroup: np.ndarray | None = None,
        bodyexclude: np.ndarray | int = -1,
        env_ids: np.ndarray | None = None,
        cutoff: float = np.inf,
        ray_origins: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Rays from one origin per env (n, 3) along (n, R, 3) unit directions, at the
        current state, for `env_ids` (default: every env, n = num_envs): distances (-1 for
        a miss) and geom ids, (n, R) each. Batch groups cast with `Batch.ray`, the others
        with `mj_multiRay` on the env's own MjData (bit-identical); no MjData is copied.
        A map's walls are cast apart (sim/wall_rays.py: the same distances to round-off, at
        a cost that does not grow with the walls), and so are meshes on bodies without
        joints for a whole batch group with a mask and a finite cutoff (sim/mesh_rays.py: the
        triangles a ray's height band reaches, the rest on copies of the scenes without the
        meshes and the geoms the mask skips, sim/ray_copy.py); hits beyond `cutoff` may read
        as misses. `ray_origins` (n, R, 3), where the caller has them: the origins per ray,
        as a cast of every env takes them."""
        with self._lock:
            self._prepare()
            n = self.store.num_envs
            if env_ids is None and self._whole is not None:  # the hot path: one call
                return self._whole.rays(origins, directions, geomgroup,
                                        self._exclusion(bodyexclude, n), None, cutoff,
                                        ray_origins)
            envs = np.arange(n) if env_ids is None else np.asarray(env_ids, dtype=np.int64)
            if env_ids is not None and len(envs) == n and (envs == np.arange(n)).all():
                env_ids = None  # every env: each group casts all its rows
            exclude = self._exclusion(bodyexclude, len(envs))
            if env_ids is None and self._whole is not None:  # every env, named one by one
                return self._whole.rays(origins, directions, geomgroup, exclude, None, cutoff)
            dist = np.empty(directions.shape[:2])
            geomid = np.empty(directions.shape[:2], dtype=np.int32)
            for group in self._groups:
                rows = np.flatnonzero(np.isin(envs, group.env_ids))
                if rows.size:
                    dist[rows], geomid[rows] = group.rays(origins[rows], directions[rows],
                                                          geomgroup, exclude[rows], envs[rows],
                                                          cutoff)
            return dist, geomid

    def _exclusion(self, bodyexclude: np.ndarray | int, n: int) -> np.ndarray:
        """(n,) int32 bodies excluded per env; one body for all: the same read-only array
        every call (a lidar casts every control step)."""
        if not isinstance(bodyexclude, (int, np.integer)):
            return np.broadcast_to(np.asarray(bodyexclude, dtype=np.int32), (n,))
        key = (int(bodyexclude), n)
        exclude = self._exclusions.get(key)
        if exclude is None:
            exclude = self._exclusions[key] = np.full(n, key[0], dtype=np.int32)
            exclude.flags.writeable = False
        return exclude

    @property
    def layout_version(self) -> tuple[int, ...]:
        """Changes whenever views from `state()` or `ctrl()` may have gone stale."""
        return tuple(self._versions)

    def groups(self) -> list[tuple[str, list[int]]]:
        """How envs are stepped now: ("batch", ids) per Batch group, ("pool", ids)."""
        with self._lock:
            self._prepare()
            return [("batch" if isinstance(g, BatchGroup) else "pool", list(g.env_ids))
                    for g in self._groups]

    def stepping_groups(self) -> list[BatchGroup | PoolGroup]:
        """The group objects that hold the envs' state now (after compiling dirty scenes and
        regrouping), for readers such as the sensors; valid until the next model change."""
        with self._lock:
            self._prepare()
            return list(self._groups)

    # ------------------------------------------------------------ stepping
    @property
    def timestep(self) -> float:
        if self._opt is not None and not self._changed:  # nothing recompiled since grouping
            return self._opt.timestep
        scene = self.store.scenes[0]
        scene.flush()  # compiled, but its state left alone (a hook may be reading views)
        return float(scene.compiled.opt.timestep)

    @property
    def clock(self) -> float:
        """Shared sim time: the sum of every step's timestep (timesteps may change)."""
        return self._clock

    def lock(self) -> threading.RLock:
        """The lock every step holds: hold it to read one consistent state between ticks."""
        return self._lock

    def step(self, n: int = TICK_STEPS) -> None:
        """Advance every env by n physics steps; hooks run at every tick boundary.

        Staged commands are written at tick boundaries. With no tick or physics-step hook
        registered, the n steps run as one call per group (same result: commands only
        change between calls then), and observers see the end of the call.
        """
        if n.__class__ is not int and (isinstance(n, bool)
                                       or not isinstance(n, (int, np.integer))) or n < 0:
            raise ValueError(f"n: expected an integer number of steps >= 0, got {n!r}")
        with self._lock:
            if self._changed or self._any_touched:
                self._prepare()
            dt = self._opt.timestep  # read live: an edit of model.opt in place counts
            # ticks: for hooks, and for closed-loop drives (their controls follow the state)
            hooks = self.hooks
            pre_step = hooks.physics_step
            ticked = hooks.editing or self.controller.closed_loop(self._groups)
            if not ticked and n:  # the n steps in one call per group
                self._step_through(int(n), dt)
                return
            before = [g.times() for g in self._groups]
            remaining = int(n)
            while remaining:
                if self.step_count % self.tick_steps == 0 or not ticked:
                    self.controller.apply(self._groups, self.tick_steps * dt if ticked else 0.0)
                if pre_step:
                    chunk = 1
                    self._run_hooks(pre_step)
                elif ticked:
                    chunk = min(remaining, self.tick_steps - self.step_count % self.tick_steps)
                else:
                    chunk = remaining
                for group in self._groups:
                    group.step(chunk)
                self.step_count += chunk
                self._clock += chunk * dt
                remaining -= chunk
                if self.step_count % self.tick_steps == 0:  # a tick completed
                    self._observe()
                    if hooks.tick:
                        self._run_hooks(hooks.tick)
            self._stale = [True] * len(self._stale)
            diverged: list[int] = []
            for group, times in zip(self._groups, before, strict=True):
                diverged += group.diverged_since(times, int(n))
            self.diverged = sorted(diverged) if diverged else diverged

    def _step_through(self, n: int, dt: float) -> None:
        """`step`'s n steps where nothing needs a tick: commands written once, each group
        stepped and checked in one call (the same result: commands only change between
        calls then); observers see the end of the call when it ends on a tick."""
        self.controller.apply(self._groups, 0.0)
        diverged: list[int] = []
        for group in self._groups:
            diverged += group.step_checked(n)
        self.step_count += n
        self._clock += n * dt
        if self.step_count % self.tick_steps == 0 and self.hooks.observers:
            self._observe()
        self._stale = [True] * len(self._stale)
        self.diverged = sorted(diverged) if diverged else diverged

    def _observe(self) -> None:
        """The observers see the groups' state now (under the lock, between steps)."""
        for observer in list(self.hooks.observers):
            observer(self._groups, self.step_count, self._clock)

    def _run_hooks(self, hooks: list[TickHook]) -> None:
        """Hooks (and pre-step callbacks) see this tick's state: a scene's MjData they read
        is pulled fresh, and whatever they edited there is pushed before the next chunk
        steps (else the next step() call would push that mid-call copy over the steps taken
        since). A hook that writes `state()` views touches no scene of that env after the
        write: the push would carry the scene's older copy over it."""
        self._stale = [True] * len(self._stale)
        for hook in list(hooks):
            hook(self)
        if self._any_touched:
            for env in range(len(self._touched)):
                self._flush_touched(env)
            self._any_touched = False

    # ------------------------------------------------------------ control
    def set_cmd_vel(self, env_id: int, robot: str, *twist: float) -> None:
        """Stage a base twist: (v, omega) for a differential drive, (vx, vy, omega) holonomic."""
        self.controller.set_twist(env_id, robot, twist)

    def set_joint_position(self, env_id: int, joint: str, position: float) -> None:
        self.controller.set_joint(env_id, joint, position, "position")

    def set_joint_velocity(self, env_id: int, joint: str, velocity: float) -> None:
        self.controller.set_joint(env_id, joint, velocity, "velocity")

    def set_joints(self, env_id: int, targets: Iterable[tuple[str, float]],
                   kind: str) -> None:
        """Stage the (joint, target) pairs of one command atomically, `kind` "position" or
        "velocity": every entry is checked first; one bad entry stages none, and the error
        names it."""
        self.controller.set_joints(env_id, targets, kind)

    def set_ctrl(self, env_id: int, actuator: str, value: float) -> None:
        """Stage one actuator's control (full or env-relative name)."""
        self.controller.set_ctrl(env_id, actuator, value)

    def set_applied_force(self, env_id: int, body: str, force: tuple[float, float, float],
                          torque: tuple[float, float, float] = (0.0, 0.0, 0.0)) -> None:
        """Stage a body's applied force and torque (MuJoCo's xfrc_applied: world frame, at
        the body's centre of mass); it acts until staged again (zeros to stop)."""
        self.controller.set_force(env_id, body, force, torque)

    # ------------------------------------------------------------ control surface
    def apply_runtime_options(self, patch: Mapping[str, Any]) -> None:
        with self._lock:
            apply_runtime_options(self.store, patch)

    @property
    def settings(self) -> dict[str, Any]:
        """The world's settings now (the runtime options' gravity); a copy."""
        return {"gravity": self.store.scenes[0].model.opt.gravity.tolist()}

    def close(self) -> None:
        """Free the thread pool and hand the scenes their own state back (stop a Runner
        that drives this simulator first). A step after it raises SimulatorClosed."""
        self.closed = self._changed = True
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None
        for scene in self.store.scenes:
            self._on_access(scene.env_id)
            scene.on_access = None
            scene.on_change = None
