"""Staged commands: twists for robots, actuator controls (joint servo targets among them),
applied body forces (xfrc_applied) and generalised forces (qfrc_applied), written at each
tick.

Commands are staged by the caller, from any thread, and written into the env's state when
a tick starts, right before its first step: one path from every command to ctrl,
xfrc_applied and qfrc_applied. A staged control or force stays until it is staged again (an
env reset rewrites it), as mujoco_ros2_control holds its staged qfrc_applied.
Twists are kept per robot name as one (num_envs, 3) array, whether staged one env at a time
(`set_twist`) or for all envs at once (`set_twists`, what the navigation env uses), and
written group by group by one compiled function (`write`) for any envs of a group: one path
from twist to ctrl.

An open-loop control that did not change is not written again (MuJoCo keeps ctrl as
state); a closed-loop drive (a skid steer's yaw-rate loop, see drive.py) is written at every
tick, from the base's measured yaw rate.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from arena_gym.compiled import kernel
from arena_gym.errors import SceneError, unknown
from arena_gym.registry import DRIVES
from arena_gym.scene.robot import POS_SUFFIX, VEL_SUFFIX
from arena_gym.scene.store import SceneStore
from arena_gym.sim import drive as _drive  # noqa: F401 - registers the built-in drives
from arena_gym.sim.drive import WheelDrive
from arena_gym.sim.groups import BatchGroup


@dataclass
class _EnvCommands:
    ctrl: dict[str, float] = field(default_factory=dict)  # actuator name -> ctrl
    forces: dict[str, np.ndarray] = field(default_factory=dict)  # body name -> (6,) wrench
    qfrc: np.ndarray | None = None  # (nv,) qfrc_applied, while the model has nv dofs
    dirty: bool = False


@dataclass
class _Twists:
    """One robot name's staged twists over all envs."""

    values: np.ndarray  # (num_envs, 3): vx, vy, omega
    staged: np.ndarray  # (num_envs,) bool: a twist was staged for this env
    dirty: np.ndarray  # (num_envs,) bool: to be written at the next tick
    integral: np.ndarray  # (num_envs,) yaw-rate loop state (drive.YawLoop)
    all_staged: bool = False  # every env has a twist (the env's case: skips the bookkeeping)
    all_dirty: bool = False  # known: every env is dirty (staged for all at once); else ask

    @classmethod
    def make(cls, n: int) -> _Twists:
        return cls(np.zeros((n, 3)), np.zeros(n, bool), np.zeros(n, bool), np.zeros(n))


@dataclass(frozen=True)
class _Part:
    """Envs of one stepping group whose robot has one drive."""

    drive: WheelDrive
    group: Any  # sim.groups.BatchGroup | PoolGroup
    envs: np.ndarray  # env ids
    rows: np.ndarray  # their rows in the group
    every: bool  # the envs are all envs, in order (their twists need no gather)


def _finite(what: str, values: tuple[float, ...]) -> tuple[float, ...]:
    try:
        out = tuple(float(v) for v in values)
    except (TypeError, ValueError):
        raise ValueError(f"{what}: expected numbers, got {values!r}") from None
    if not all(math.isfinite(v) for v in out):
        raise ValueError(f"{what}: expected finite numbers, got {values!r}")
    return out


class Controller:
    """Holds staged commands per env and writes them into each env's ctrl."""

    def __init__(self, store: SceneStore) -> None:
        self.store = store
        self.commands = [_EnvCommands() for _ in range(store.num_envs)]
        self._drives: dict[tuple[int, str], tuple[int, WheelDrive]] = {}
        self._twists: dict[str, _Twists] = {}
        self._plans: dict[str, tuple[tuple[Any, ...], list[_Part]]] = {}
        self._checked: dict[str, tuple[tuple[int, ...], np.ndarray]] = {}  # holonomic per env
        self._groups: Sequence[Any] = ()
        self._loop_of: dict[str, tuple[list[_Part], bool]] = {}  # robot -> (plan, has a loop)
        # staging (any thread) and writing (the stepping thread) exclude each other for the
        # microseconds either takes, so a command staged during a write is never lost
        self._staging = threading.Lock()
        self._envs_dirty = False  # some env's controls or forces wait to be written
        self._steady: tuple | None = None  # _apply's usual step (_steady_write)

    def add_envs(self, count: int) -> None:
        """Commands for `count` more envs (the store grew); staged twists kept."""
        with self._staging:
            self.commands += [_EnvCommands() for _ in range(count)]
            for robot, old in list(self._twists.items()):
                grown = _Twists.make(len(self.commands))
                m = len(old.values)
                grown.values[:m], grown.staged[:m] = old.values, old.staged
                grown.dirty[:m], grown.integral[:m] = old.dirty, old.integral
                self._twists[robot] = grown
            self._plans.clear()
            self._checked.clear()
            self._loop_of.clear()
            self._steady = None

    def drive(self, env_id: int, robot: str) -> WheelDrive:
        """The robot's wheel drive, rebuilt after a recompile."""
        scene = self.store.scene(env_id)
        info = scene.robot(robot)
        key = (env_id, robot)
        cached = self._drives.get(key)
        if cached is None or cached[0] != scene.compile_count:
            scene.flush()  # compile pending edits; the compiled model needs no state sync
            model = scene.compiled
            drive = DRIVES[info.drive](model, info)
            if len(drive.actuator_ids) == 0 and len(drive.base_ids) == 0:
                raise SceneError(f"robot {robot!r} has no wheels or planar drive to move it")
            self._drives[key] = cached = (scene.compile_count, drive)
        return cached[1]

    def closed_loop(self, groups: Sequence[Any]) -> bool:
        """A closed-loop drive is commanded: its controls change at every tick."""
        if self._steady is not None and self._steady[0] is groups:
            return False  # (one open-loop robot)
        for robot, staged in self._twists.items():
            if (staged.all_staged or staged.staged.any()) and self._loops(
                    robot, self._plan(robot, groups)):
                return True
        return False

    def _loops(self, robot: str, parts: list[_Part]) -> bool:
        """Whether any part of the robot's plan has a yaw loop (kept with the plan)."""
        cached = self._loop_of.get(robot)
        if cached is None or cached[0] is not parts:
            cached = self._loop_of[robot] = (parts, any(p.drive.yaw_loop is not None
                                                        for p in parts))
        return cached[1]

    # ------------------------------------------------------------ staging
    def set_twist(self, env_id: int, robot: str, twist: tuple[float, ...]) -> None:
        """Stage one env's twist: (v, omega), or (vx, vy, omega) for a holonomic robot."""
        twist = _finite(f"cmd_vel for {robot!r}", twist)
        drive = self.drive(env_id, robot)
        if len(twist) == 2:
            twist = (twist[0], 0.0, twist[1])
        elif len(twist) != 3:
            raise ValueError(
                f"cmd_vel for {robot!r}: expected (v, omega) or (vx, vy, omega), got {twist!r}"
            )
        elif twist[1] != 0.0 and not drive.holonomic:
            raise ValueError(
                f"cmd_vel for {robot!r}: vy={twist[1]} but the robot is not holonomic; "
                "expected (v, omega)"
            )
        with self._staging:
            self._stage(robot, np.array([env_id]), np.array([twist]))

    def set_twists(self, robot: str, twists: np.ndarray) -> None:
        """Stage every env's twist at once: (num_envs, 2) rows (v, omega) or (num_envs, 3)
        rows (vx, vy, omega); vy only where the robot is holonomic. Nothing is staged when
        any row is bad."""
        n = self.store.num_envs
        twists = np.asarray(twists, dtype=float)
        if twists.ndim != 2 or twists.shape[0] != n or twists.shape[1] not in (2, 3):
            raise ValueError(
                f"cmd_vel for {robot!r}: expected an array of shape ({n}, 2) or ({n}, 3), "
                f"got shape {twists.shape}"
            )
        if twists.shape[1] == 2:  # (v, omega): staged as (v, 0, omega), if all are finite
            with self._staging:
                staged = self._staged(robot)
                bad = stage_planar(twists, staged.values)
                if bad >= 0:
                    raise _not_finite(robot, twists, bad)
                self._stage(robot, slice(None), None)
            return
        # a finite sum (one reduction) means every value is finite; else look closer
        if not math.isfinite(np.add.reduce(twists, axis=None)) and not np.isfinite(twists).all():
            raise _not_finite(robot, twists, int(np.flatnonzero(
                ~np.isfinite(twists).all(axis=1))[0]))
        if twists[:, 1].any():
            sideways = (twists[:, 1] != 0.0) & ~self._holonomic(robot)
            if sideways.any():
                e = int(np.flatnonzero(sideways)[0])
                raise ValueError(
                    f"cmd_vel for {robot!r}: vy={twists[e, 1]} in env {e} but the robot is "
                    "not holonomic; expected (v, omega)"
                )
        with self._staging:
            self._stage(robot, slice(None), twists)

    def _holonomic(self, robot: str) -> np.ndarray:
        """(num_envs,) whether the robot is holonomic in each env (checks it is in all)."""
        counts = tuple(s.compile_count for s in self.store.scenes)
        cached = self._checked.get(robot)
        if cached is None or cached[0] != counts:
            flags = np.array([self.drive(e, robot).holonomic for e in range(self.store.num_envs)])
            self._checked[robot] = cached = (counts, flags)
        return cached[1]

    def _staged(self, robot: str) -> _Twists:
        staged = self._twists.get(robot)
        if staged is None:
            staged = self._twists[robot] = _Twists.make(self.store.num_envs)
            self._steady = None  # a second robot: the usual step is no more
        return staged

    def _stage(self, robot: str, envs: np.ndarray | slice, twists: np.ndarray | None) -> None:
        """Stage `twists` (rows (vx, vy, omega); None: written into the values already) for
        `envs`."""
        staged = self._staged(robot)
        if not staged.all_staged:
            if not staged.staged[envs].all():
                self._plans.pop(robot, None)  # an env joins: where it lives is not planned
                self._steady = None
            staged.staged[envs] = True
            staged.all_staged = bool(staged.staged.all())
        if twists is not None:
            staged.values[envs] = twists
        if not staged.all_dirty:
            staged.dirty[envs] = True
            staged.all_dirty = isinstance(envs, slice)  # slice(None): all

    def set_joint(self, env_id: int, joint: str, value: float, kind: str) -> None:
        """Stage a servo target: the ctrl of the joint's position or velocity actuator."""
        self.set_joints(env_id, [(joint, value)], kind)

    def set_joints(self, env_id: int, targets: Iterable[tuple[str, float]], kind: str) -> None:
        """Stage several servo targets as one command: every (joint, value) is checked first
        (a finite value, a joint with a `kind` servo, named once), so one bad entry stages
        none of them and its error names it."""
        scene = self.store.scene(env_id)
        if kind not in ("position", "velocity"):
            raise ValueError(f"joint command kind: expected 'position' or 'velocity', "
                             f"got {kind!r}")
        suffix = POS_SUFFIX if kind == "position" else VEL_SUFFIX
        names = _actuators(scene)
        staged: dict[str, float] = {}
        for joint, value in targets:
            (value,) = _finite(f"joint command for {joint!r}", (value,))
            full = joint if joint.startswith(scene.prefix) else scene.full_name(joint)
            actuator = full + suffix
            if actuator not in names:
                servos = sorted({n[: -len(suffix)] for n in names if n.endswith(suffix)})
                raise unknown(f"{kind}-servoed joint in env {env_id}", full, servos)
            if actuator in staged:
                raise ValueError(f"joint command for {full!r}: expected each joint once, got "
                                 "it twice")
            staged[actuator] = value
        self._stage_env(env_id, "ctrl", staged)

    def set_ctrl(self, env_id: int, actuator: str, value: float) -> None:
        """Stage one actuator's ctrl (a full or an env-relative actuator name)."""
        scene = self.store.scene(env_id)
        (value,) = _finite(f"ctrl for {actuator!r}", (value,))
        names = _actuators(scene)
        full = actuator if actuator in names else scene.full_name(actuator)
        if full not in names:
            raise unknown(f"actuator in env {env_id}", actuator, names)
        self._stage_env(env_id, "ctrl", {full: value})

    def set_force(self, env_id: int, body: str, force: Sequence[float],
                  torque: Sequence[float]) -> None:
        """Stage a body's applied wrench (xfrc_applied: world frame, at its centre of mass)."""
        scene = self.store.scene(env_id)
        wrench = _finite(f"applied force on {body!r}", (*force, *torque))
        if len(wrench) != 6:
            raise ValueError(f"applied force on {body!r}: expected 3 force and 3 torque "
                             f"components, got {tuple(force)!r} and {tuple(torque)!r}")
        self._stage_env(env_id, "forces", {scene.body_name(body): np.array(wrench)})

    def set_qfrc_applied(self, env_id: int, values: Sequence[float]) -> None:
        """Stage an env's whole qfrc_applied (one generalised force per dof, nv of them)."""
        scene = self.store.scene(env_id)
        scene.flush()
        nv = scene.compiled.nv
        try:
            vec = np.array(values, dtype=float)
        except (TypeError, ValueError):
            vec = None
        if vec is None or vec.shape != (nv,) or not np.isfinite(vec).all():
            shown = vec.shape if vec is not None and vec.shape != (nv,) else values
            raise ValueError(f"qfrc_applied of env {env_id}: expected {nv} finite numbers "
                             f"(one per dof), got {shown!r}")
        with self._staging:
            commands = self.commands[env_id]
            commands.qfrc = vec
            commands.dirty = self._envs_dirty = True

    def _stage_env(self, env_id: int, kind: str, values: dict[str, Any]) -> None:
        commands = self.commands[env_id]
        with self._staging:  # all of them or none: a tick never sees half a command
            getattr(commands, kind).update(values)
            commands.dirty = self._envs_dirty = True

    def invalidate(self, env_id: int) -> None:
        """Rewrite this env's controls at the next tick (after a recompile or regroup)."""
        self.commands[env_id].dirty = self._envs_dirty = True
        self._steady = None
        for staged in self._twists.values():
            staged.dirty[env_id] = True  # (all_dirty stays what it was: True stays true)

    def reset(self, env_id: int) -> None:
        """The env starts over: its controls are rewritten, its yaw loops start from rest."""
        self.invalidate(env_id)
        for staged in self._twists.values():
            staged.integral[env_id] = 0.0

    # ------------------------------------------------------------ writing
    def _plan(self, robot: str, groups: Sequence[Any]) -> list[_Part]:
        """Where the robot's staged envs live: per group, per drive (cached per grouping)."""
        cached = self._plans.get(robot)
        if cached is not None and len(cached[0]) == len(groups) and (
                (len(groups) == 1 and cached[0][0] is groups[0])  # the usual: one group
                or all(a is b for a, b in zip(cached[0], groups, strict=True))):
            return cached[1]
        key = tuple(groups)  # by identity: a regroup makes new group objects
        staged = self._twists[robot]
        parts: list[_Part] = []
        for group in groups:
            by_drive: dict[tuple, tuple[WheelDrive, list[int], list[int]]] = {}
            for row, env in enumerate(group.env_ids):
                if not staged.staged[env]:
                    continue
                if robot not in self.store.scenes[env].entities:  # deleted since
                    staged.staged[env] = staged.dirty[env] = staged.all_staged = False
                    staged.all_dirty = False
                    continue
                drive = self.drive(env, robot)
                entry = by_drive.setdefault(drive.key(), (drive, [], []))
                entry[1].append(env)
                entry[2].append(row)
            for drive, envs, rows in by_drive.values():
                every = envs == list(range(self.store.num_envs))
                parts.append(_Part(drive, group, np.array(envs, dtype=np.int64),
                                   np.array(rows, dtype=np.int64), every))
        self._plans[robot] = (key, parts)
        return parts

    def apply(self, groups: Sequence[Any], dt: float) -> None:
        """Write staged commands into the groups' ctrl and xfrc_applied; `dt` seconds pass
        until the next call (the yaw loops integrate over it). `groups` is replaced on
        every regroup."""
        self._groups = groups
        with self._staging:
            self._apply(groups, dt)

    def _apply(self, groups: Sequence[Any], dt: float) -> None:
        steady = self._steady
        if steady is not None and steady[0] is groups and not self._envs_dirty:
            staged = steady[1]
            if staged.all_dirty:  # the usual step: every env's twist staged at once
                write(staged.values, *steady[2])
                staged.dirty.fill(False)
                staged.all_dirty = False
                return
            if not staged.dirty.any():
                return
        for robot, staged in self._twists.items():
            if not (staged.all_staged or staged.staged.any()):
                continue
            parts = self._plan(robot, groups)
            if not (staged.all_dirty or staged.dirty.any() or self._loops(robot, parts)):
                continue  # the hot path of an open-loop drive: ctrl already holds it
            for part in parts:
                self._write(part, staged, dt)
            staged.dirty.fill(False)
            staged.all_dirty = False
        if self._envs_dirty:  # rare (staged controls, a recompile): no loop every tick
            for env_id, commands in enumerate(self.commands):
                if commands.dirty:
                    self._write_env(env_id, commands)
            self._envs_dirty = False
        self._steady = self._steady_write(groups)

    def _steady_write(self, groups: Sequence[Any]) -> tuple | None:
        """(groups, the staged twists, `write`'s arguments after them) where one robot's
        twists are staged in every env, written by one open-loop drive into one batch
        group holding every env in order: `_apply`'s usual step; else None."""
        if len(self._twists) != 1:
            return None
        robot, staged = next(iter(self._twists.items()))
        if not staged.all_staged:
            return None
        parts = self._plan(robot, groups)
        if len(parts) != 1:
            return None
        part = parts[0]
        drive = part.drive
        if not part.every or drive.yaw_loop is not None or not isinstance(part.group,
                                                                         BatchGroup):
            return None
        return groups, staged, (drive.matrix, drive.actuator_ids, drive.base_ids,
                                part.group.ctrl, part.envs, part.rows)

    def _write(self, part: _Part, staged: _Twists, dt: float) -> None:
        drive, group = part.drive, part.group
        twists, envs, rows = staged.values, part.envs, part.rows
        loop = drive.yaw_loop
        if loop is not None:
            measured = _yaw_rates(group, rows, loop.dof)
            integral = staged.integral[envs]
            twists = loop.correct(twists[envs], measured, integral, dt)
            staged.integral[envs] = integral
            envs = np.arange(len(rows))  # rows of the corrected twists
        elif not (staged.all_dirty or (staged.dirty if part.every
                                        else staged.dirty[envs]).all()):
            keep = staged.dirty[envs]
            envs, rows = envs[keep], rows[keep]
        actuators, bases = drive.actuator_ids, drive.base_ids
        if isinstance(group, BatchGroup):
            write(twists, drive.matrix, actuators, bases, group.ctrl, envs, rows)
            return
        for e, r in zip(envs.tolist(), rows.tolist(), strict=True):  # one MjData each
            write(twists, drive.matrix, actuators, bases, group.ctrl_of(group.env_ids[r])[None],
                  np.array([e]), np.zeros(1, dtype=np.int64))

    def _write_env(self, env_id: int, commands: _EnvCommands) -> None:
        """An env's staged actuator controls and body forces, into its group's state."""
        model = self.store.scenes[env_id].compiled
        group = next(g for g in self._groups if env_id in g.env_ids)
        for kind, field_name, find in (("ctrl", "ctrl", model.actuator),
                                       ("forces", "xfrc_applied", model.body)):
            staged = getattr(commands, kind)
            if not staged:
                continue
            target = group.state_of(env_id, field_name)
            for name, value in list(staged.items()):
                try:
                    target[find(name).id] = value
                except KeyError:  # deleted since it was staged
                    del staged[name]
        if commands.qfrc is not None:
            target = group.state_of(env_id, "qfrc_applied")
            if target.shape == commands.qfrc.shape:
                target[:] = commands.qfrc
            else:  # a spawn or delete changed the dofs since: it fits no more
                commands.qfrc = None
        commands.dirty = False


def _yaw_rates(group: Any, rows: np.ndarray, dof: int) -> np.ndarray:
    """The base's yaw rate (qvel[dof]) in these rows of the group: a Batch's rows share one
    layout, a pool's envs may not (the robot's dof is only in the rows that hold it)."""
    if isinstance(group, BatchGroup):
        return group.gather("qvel", np.array([dof]))[rows, 0]
    return np.array([group.state_of(group.env_ids[r], "qvel")[dof] for r in rows.tolist()])


def _actuators(scene: Any) -> list[str]:
    """Actuator names of the env's model (the compiled one: no state sync from a staging
    thread while the stepping thread runs)."""
    scene.flush()
    model = scene.compiled
    return [model.actuator(i).name for i in range(model.nu)]


@kernel
def write(twists, matrix, actuators, bases, ctrl, envs, rows):  # pragma: no cover - compiled
    """For every i: ctrl[rows[i], actuators] = matrix @ twists[envs[i]] (each wheel's speed
    from a twist (vx, vy, omega)) and ctrl[rows[i], bases] = twists[envs[i]] (a planar
    drive's three actuators); twists (n, 3), matrix (nwheel, 3), ctrl (rows, nu)."""
    for i in range(envs.shape[0]):
        e, r = envs[i], rows[i]
        vx, vy, omega = twists[e, 0], twists[e, 1], twists[e, 2]
        for w in range(matrix.shape[0]):
            ctrl[r, actuators[w]] = matrix[w, 0] * vx + matrix[w, 1] * vy + matrix[w, 2] * omega
        for b in range(bases.shape[0]):
            ctrl[r, bases[b]] = twists[e, b]


def _not_finite(robot: str, twists: np.ndarray, env: int) -> ValueError:
    return ValueError(f"cmd_vel for {robot!r}: expected finite numbers, "
                      f"got {tuple(twists[env].tolist())} in env {env}")


@kernel
def stage_planar(twists, values):  # pragma: no cover - compiled
    """values[i] = (v, 0, omega) of every row (v, omega) of twists (n, 2), where every value
    is finite; returns the first row that is not (nothing written then), else -1."""
    for i in range(twists.shape[0]):
        if not (np.isfinite(twists[i, 0]) and np.isfinite(twists[i, 1])):
            return i
    for i in range(twists.shape[0]):
        values[i, 0], values[i, 1], values[i, 2] = twists[i, 0], 0.0, twists[i, 1]
    return -1
