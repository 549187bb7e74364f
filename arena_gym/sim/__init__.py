"""Batched stepping of all envs: ticks, hooks, clock, staged control, and the free-running
container (snapshots, keyframes, initial state, free bodies)."""

from arena_gym.sim.drive import WheelDrive, wheel_drive
from arena_gym.sim.free_bodies import FreeBodyState
from arena_gym.sim.options import apply_runtime_options
from arena_gym.sim.simulator import SimInfo, Simulator

__all__ = ["FreeBodyState", "SimInfo", "Simulator", "WheelDrive", "apply_runtime_options",
           "wheel_drive"]
