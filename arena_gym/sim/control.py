"""Staged commands: twists for robots and targets for joint servos, applied at each tick.

Commands are staged by the caller and written into the env's controls when a tick starts;
a control that did not change is not written again (MuJoCo keeps ctrl as state).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from arena_gym.scene.errors import SceneError, unknown
from arena_gym.scene.robot import POS_SUFFIX, VEL_SUFFIX
from arena_gym.scene.store import SceneStore
from arena_gym.sim.drive import WheelDrive, wheel_drive


@dataclass
class _EnvCommands:
    twists: dict[str, tuple[float, float, float]] = field(default_factory=dict)
    joints: dict[str, float] = field(default_factory=dict)  # actuator name -> ctrl
    dirty: bool = False


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

    def drive(self, env_id: int, robot: str) -> WheelDrive:
        """The robot's wheel drive, rebuilt after a recompile."""
        scene = self.store.scene(env_id)
        info = scene.robot(robot)
        key = (env_id, robot)
        cached = self._drives.get(key)
        if cached is None or cached[0] != scene.compile_count:
            model = scene.model if scene.dirty else scene._model  # no state sync needed
            drive = wheel_drive(model, info)
            self._drives[key] = cached = (scene.compile_count, drive)
        return cached[1]

    def set_twist(self, env_id: int, robot: str, twist: tuple[float, ...]) -> None:
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
        if len(drive.actuator_ids) == 0 and len(drive.base_ids) == 0:
            raise SceneError(f"robot {robot!r} has no wheels or planar drive to move it")
        commands = self.commands[env_id]
        commands.twists[robot] = twist  # type: ignore[assignment]
        commands.dirty = True

    def set_joint(self, env_id: int, joint: str, value: float, kind: str) -> None:
        scene = self.store.scene(env_id)
        (value,) = _finite(f"joint command for {joint!r}", (value,))
        suffix = POS_SUFFIX if kind == "position" else VEL_SUFFIX
        full = joint if joint.startswith(scene.prefix) else scene.full_name(joint)
        actuator = full + suffix
        names = [scene.model.actuator(i).name for i in range(scene.model.nu)]
        if actuator not in names:
            servos = sorted({n[: -len(suffix)] for n in names if n.endswith(suffix)})
            raise unknown(f"{kind}-servoed joint in env {env_id}", full, servos)
        commands = self.commands[env_id]
        commands.joints[actuator] = value
        commands.dirty = True

    def invalidate(self, env_id: int) -> None:
        """Rewrite this env's controls at the next tick (after a recompile or regroup)."""
        self.commands[env_id].dirty = True

    def apply(self, ctrl_of: Callable[[int], np.ndarray]) -> None:
        for env_id, commands in enumerate(self.commands):
            if not commands.dirty:
                continue
            ctrl = ctrl_of(env_id)
            scene = self.store.scenes[env_id]
            for robot, twist in list(commands.twists.items()):
                if robot not in scene.entities:  # deleted since
                    del commands.twists[robot]
                    continue
                self.drive(env_id, robot).write(ctrl, twist)
            model = scene._model
            for actuator, value in list(commands.joints.items()):
                try:
                    ctrl[model.actuator(actuator).id] = value
                except KeyError:
                    del commands.joints[actuator]
            commands.dirty = False
