"""Lockstep batched stepping of all envs: ticks, hooks, clock, staged control."""

from arena_gym.sim.drive import WheelDrive, wheel_drive
from arena_gym.sim.options import apply_runtime_options
from arena_gym.sim.simulator import SimInfo, Simulator

__all__ = ["SimInfo", "Simulator", "WheelDrive", "apply_runtime_options", "wheel_drive"]
