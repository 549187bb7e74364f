"""The simulator side of the `/mujoco/*` services: one function per command, each a thin
call of the scene store's or simulator's public method (they validate). A failure is an
answer (success False, the error's text), never the end of the server."""

from __future__ import annotations

import fnmatch
from collections.abc import Callable
from pathlib import Path
from typing import Any

from arena_gym.people.pedestrians import Pedestrian
from arena_gym.ros.files import package_paths
from arena_gym.ros.topic_names import robot_name
from arena_gym.scene.requests import Prim, PrimEdit, Slab, Wall
from arena_gym.sim.runner import Runner
from arena_gym.sim.simulator import Simulator

Reply = dict[str, Any]


class Commands:
    """Executes commands on `sim`; `robot` is the bridged robot (cmd_vel's target; None: the
    bridge has none, an Arena session)."""

    def __init__(self, sim: Simulator, robot: str | None, on_reset: Callable[[int], None],
                 runner: Runner | None = None) -> None:
        self.sim, self.store, self.robot = sim, sim.store, robot
        self.runner = runner  # the initial states (reset, reset_to_keyframe)
        self.paused = True
        self.package_paths: tuple[Path, ...] = ()  # where package:// URIs resolve first
        self._on_reset = on_reset

    def run(self, message: dict) -> Reply:
        op = message.get("op", "")
        handler = getattr(self, f"_{op}", None)
        if handler is None:
            return {"success": False, "message": f"unknown command {op!r}"}
        try:
            return {"success": True, "message": "", **(handler(message) or {})}
        except (ValueError, KeyError, TypeError, IndexError, OSError) as exc:
            text = str(exc.args[0]) if isinstance(exc, KeyError) and exc.args else str(exc)
            text = (text or type(exc).__name__).removeprefix(f"{op}: ")  # the store's own
            return {"success": False, "message": f"{op}: {text}"}

    def _env(self, message: dict) -> int:
        env = message.get("env")
        n = self.store.num_envs
        if not isinstance(env, int) or not 0 <= env < n:
            raise ValueError(f"unknown env_id {env!r}: expected 0 <= env_id < {n}")
        return env

    # ------------------------------------------------------------ simulation
    def _pause(self, message: dict) -> Reply:
        self.paused = True
        return {"message": f"paused at {self.sim.clock:.3f} s"}

    def _unpause(self, message: dict) -> Reply:
        self.paused = False
        return {"message": f"running from {self.sim.clock:.3f} s"}

    def _cmd_vel(self, message: dict) -> Reply:
        vx, vy, wz = message["twist"]
        twist = (vx, wz) if vy == 0.0 else (vx, vy, wz)
        self.sim.set_cmd_vel(self._env(message), message.get("robot", self.robot), *twist)
        return {}

    def _joint_commands(self, message: dict) -> Reply:
        """mujoco/joint_commands_{velocity,position}: names relative to the robot, through
        the simulator's joint servos (the one control path), all entries or none."""
        env, mode = self._env(message), message["mode"]
        names, values = list(message["names"]), list(message["values"])
        if len(names) != len(values):
            raise ValueError(f"expected one {mode} per joint name ({len(names)} names), "
                             f"got {len(values)}")
        prefix = self.store[env].robot(message.get("robot", self.robot)).prefix
        # one command, applied whole: a bad entry rejects it all (the error names it)
        self.sim.set_joints(env, [(prefix + n, v) for n, v in zip(names, values, strict=True)],
                            mode)
        return {}

    def _reset(self, message: dict) -> Reply:
        """mujoco_ros's `reset`: every env back to its initial state (as the bridge
        started), or none when one no longer fits its model."""
        return self._to_initial(list(range(self.store.num_envs)))

    def _reset_to_keyframe(self, message: dict) -> Reply:
        """Envs (env_id, -1: every env) to a keyframe by name, or by index when the name is
        empty; with neither, to their initial state (mujoco_ros2_control's ResetWorld)."""
        n = self.store.num_envs
        envs = list(range(n)) if message.get("env") == -1 else [self._env(message)]
        name, index = message.get("keyframe", ""), message.get("index", -1)
        if not name and index < 0:
            return self._to_initial(envs)
        key: str | int = name or int(index)
        self._runner().reset_to_keyframe(key, envs)
        for env in envs:
            self._on_reset(env)
        shown = repr(name) if name else f"#{index}"
        return {"message": f"{_which(envs)} reset to keyframe {shown}"}

    def _to_initial(self, envs: list[int]) -> Reply:
        self._runner().reset_to_initial_state(envs)
        for env in envs:
            self._on_reset(env)
        return {"message": f"{_which(envs)} reset to the initial state"}

    def _runner(self) -> Runner:
        if self.runner is None:
            raise ValueError("expected a bridge whose runner keeps the initial states, got "
                             "commands without one")
        return self.runner

    # ------------------------------------------------------------ scene
    def _reset_world(self, message: dict) -> Reply:
        env = self._env(message)
        self.store[env].delete([n for n in list(self.store[env].entities) if n != self.robot])
        self.store.delete_pedestrians(list(self.store[env].pedestrians.slots), env)  # free again
        self.sim.reset_envs([env])
        self._on_reset(env)
        return {}

    def _spawn_prims(self, message: dict) -> Reply:
        env = self._env(message)
        prims = [Prim(p["name"], pose=tuple(p["pose"]), scale=tuple(p["scale"]),
                      movable=bool(p["movable"])) for p in message["prims"]]
        if not prims:
            raise ValueError("expected at least one prim, got none")
        taken = set(self.store[env].entities) & {p.name for p in prims}
        if taken:
            raise ValueError(f"names already in env {env}: {sorted(taken)}")
        return {"names": self.store[env].spawn_prims(prims)}

    def _edit_prims(self, message: dict) -> Reply:
        env = self._env(message)
        edits = [PrimEdit(e["name"], pose=None if e["pose"] is None else tuple(e["pose"]),
                          scale=None if e["scale"] is None else tuple(e["scale"]))
                 for e in message["edits"]]
        if not edits:
            raise ValueError("expected at least one edit, got none")
        self.store[env].edit_prims(edits)
        return {}

    def _spawn_walls(self, message: dict) -> Reply:
        env = self._env(message)
        self.store[env].spawn_walls([Wall(w["name"], tuple(w["start"]), tuple(w["end"]),
                                          w["height"], w["thickness"])
                                     for w in message["walls"]])
        return {}

    def _slabs(self, message: dict) -> list[Slab]:
        return [Slab(s["name"], tuple(s["center"]), tuple(s["size"])) for s in message["slabs"]]

    def _spawn_floors(self, message: dict) -> Reply:
        self.store[self._env(message)].spawn_floors(self._slabs(message))
        return {}

    def _spawn_ceilings(self, message: dict) -> Reply:
        self.store[self._env(message)].spawn_ceilings(self._slabs(message))
        return {}

    def _delete_prims(self, message: dict) -> Reply:
        """Names, fnmatch patterns ('box*') or prefixes ending in '/' (DeletePrims.srv); the
        bridged robot stays (a pattern passes it over, its name is refused)."""
        env = self._env(message)
        names = list(message["names"])
        if self.robot in names:
            raise ValueError(f"{self.robot!r} is the bridged robot; expected other names")
        have = list(self.store[env].entities)
        selected = [n for n in names if not _pattern(n)]
        for pattern in filter(_pattern, names):
            matched = [n for n in fnmatch.filter(have, pattern) if n != self.robot]
            if not matched:
                raise ValueError(f"nothing in env {env} matches {pattern!r}; it has {have}")
            selected += matched
        deleted = self.store[env].delete(list(dict.fromkeys(selected)))
        if not deleted:
            raise ValueError(f"nothing in env {env} matches {names}; it has {have}")
        return {"deleted": deleted}

    def _spawn_urdf(self, message: dict) -> Reply:
        env = self._env(message)
        robot_name(message["name"], self.store.num_envs)  # its topics: ROS's rules
        urdf = message["urdf"]
        self.store[env].spawn_urdf(message["name"], urdf, pose=tuple(message["pose"]),
                              package_paths=self.packages(urdf))
        return {}

    def packages(self, urdf: str) -> list[Path]:
        """Where a spawned URDF's package:// URIs resolve (files.package_paths)."""
        return package_paths(urdf, self.store.scenes[0].path_roots, self.package_paths)

    def _peds(self, message: dict) -> list[Pedestrian]:
        return [_ped(p) for p in message["pedestrians"]]

    def _spawn_pedestrians(self, message: dict) -> Reply:
        env = self._env(message)
        peds = self._peds(message)
        self.store.spawn_pedestrians(peds, env)
        return {"names": [p.name for p in peds]}

    def _move_pedestrians(self, message: dict) -> Reply:
        self.store.move_pedestrians(self._peds(message), self._env(message))
        return {}

    def _update_pedestrians(self, message: dict) -> Reply:
        self.store.update_pedestrians(self._peds(message), self._env(message))
        return {}

    def _delete_pedestrians(self, message: dict) -> Reply:
        env = self._env(message)
        return {"deleted": self.store.delete_pedestrians(message["names"], env).get(env, [])}


def _which(envs: list[int]) -> str:
    return f"env {envs[0]}" if len(envs) == 1 else f"all {len(envs)} envs"


def _pattern(name: str) -> bool:
    """Whether a DeletePrims name is an fnmatch pattern (holds *, ? or [)."""
    return isinstance(name, str) and any(c in name for c in "*?[")


def _ped(p: dict) -> Pedestrian:
    """A Pedestrian message's fields as the store's request: an empty actor is a capsule,
    empty joint lists play the clips (Pedestrian.msg)."""
    names, angles = list(p["joint_names"]), list(p["joint_angles"])
    if len(names) != len(angles):
        raise ValueError(f"Pedestrian {p['name']!r}: expected as many joint_angles as "
                         f"joint_names, got {len(angles)} and {len(names)}")
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ValueError(f"Pedestrian {p['name']!r}: expected each joint name once, got "
                         f"{', '.join(map(repr, twice))} more than once")
    return Pedestrian(p["name"], pose=(p["x"], p["y"], p["yaw"]), actor=p["actor"] or None,
                      joints=dict(zip(names, angles, strict=True)) or None)
