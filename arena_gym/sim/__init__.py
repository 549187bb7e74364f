"""Batched stepping of all envs: the lockstep Simulator (ticks, hooks, clock, staged
control) and the Runner that drives it free-running (thread, pacing, snapshots, keyframes,
initial state, free bodies)."""

from arena_gym.sim.drive import WheelDrive, wheel_drive
from arena_gym.sim.free_bodies import FreeBodyState
from arena_gym.sim.hooks import Hooks
from arena_gym.sim.options import apply_runtime_options
from arena_gym.sim.runner import Runner, SimInfo
from arena_gym.sim.simulator import SavedState, Simulator

__all__ = ["FreeBodyState", "Hooks", "Runner", "SavedState", "SimInfo", "Simulator",
           "WheelDrive", "apply_runtime_options", "wheel_drive"]
