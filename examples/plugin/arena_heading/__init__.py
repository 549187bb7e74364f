"""An arena_gym plugin in one module: a sensor kind, a reward term and a runtime plugin.

    pip install ./examples/plugin
    env = gymnasium.make_vec("ArenaMujoco-v0", num_envs=4,
                             sensors=[{"kind": "heading"}],           # obs["heading"]
                             reward={"heading_bonus": 0.01},          # info["reward_terms"]
                             plugins=[{"type": "step_counter"}])      # env.unwrapped.core.plugins

The `heading` sensor reads the robot's yaw as (cos, sin) from its free joint; the
`heading_bonus` term pays its weight x cos(yaw) (facing +x); `step_counter` counts steps.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from arena_gym.plugins import Plugin
from arena_gym.registry import REWARD_TERMS, SENSOR_KINDS
from arena_gym.sensors.kinds import SensorKind
from arena_gym.sensors.readings import Reading
from arena_gym.sensors.specs import SensorSpec
from arena_gym.sensors.units import Unit
from arena_gym.tasks.rewards import RewardTerm


@dataclass(frozen=True)
class HeadingSpec(SensorSpec):
    kind: ClassVar[str] = "heading"


class HeadingReading(Reading):
    kind = "heading"

    def __init__(self, key: str, robot: str, sensor: str, num_envs: int, period: float) -> None:
        super().__init__(key, robot, sensor, num_envs, period,
                         {"heading": ((2,), np.dtype(np.float64), np.nan)})


class HeadingUnit(Unit):
    """(cos yaw, sin yaw) of the robot's base: its free joint's quaternion, or a planar
    base's yaw joint (`base: planar`, the env's default)."""

    kind = "heading"

    def __init__(self, spec: HeadingSpec, num_envs: int) -> None:
        super().__init__(spec, num_envs)
        self.qpos_adr = np.zeros(num_envs, dtype=np.int64)
        self.planar = np.zeros(num_envs, dtype=bool)

    def find_mount(self, scene, info):  # read from the state: no declared sensor needed
        return None

    def _allocate(self, mount) -> None:
        self.out = {"heading": np.full((self.num_envs, 2), np.nan)}

    def _bind_env(self, env, scene, info, mount) -> None:
        model = scene.model
        joint = model.body_jntadr[model.body(info.root_body).id]
        self.qpos_adr[env] = model.jnt_qposadr[joint]
        self.planar[env] = info.base == "planar"  # qpos: x, y, yaw

    def _compute(self, frames, envs: np.ndarray) -> None:
        for env in envs:
            a, qpos = self.qpos_adr[env], frames.state(int(env), "qpos")
            if self.planar[env]:
                yaw = qpos[a + 2]
            else:
                w, x, y, z = qpos[a + 3 : a + 7]
                yaw = math.atan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))
            self.out["heading"][env] = (math.cos(yaw), math.sin(yaw))


def heading_bonus(cfg, out) -> np.ndarray:
    """Its weight x cos(yaw): facing +x pays."""
    return cfg.weight("heading_bonus") * out.sensors["heading"].data["heading"][:, 0]


class StepCounter(Plugin):
    """Counts env steps from `start` (a runtime plugin: made per env from its config)."""

    def load(self, env) -> None:
        self.count = int(self.params.get("start", 0))
        self.resets = 0

    def reset(self, env, env_ids) -> None:
        self.resets += len(env_ids)

    def step(self, env) -> None:
        self.count += 1


def register() -> None:
    SENSOR_KINDS.register("heading", SensorKind(
        HeadingSpec,
        unit=lambda spec, num_envs, suite: HeadingUnit(spec, num_envs),
        reading=lambda spec, unit, num_envs, period: HeadingReading(
            spec.reading_key, spec.robot, "", num_envs, period)))
    REWARD_TERMS.register("heading_bonus", RewardTerm(heading_bonus))
