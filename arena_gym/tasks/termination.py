"""How an episode ends: the one goal / collision / timeout / diverged classification.

The env's `terminated`/`truncated`, the reward terms, the episode's `result`, the curriculum
and every consumer (evaluation, the SB3 adapter) read it from here.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields

import numpy as np

from arena_gym.compiled import shared

RESULTS = ("goal", "collision", "timeout", "diverged")


@dataclass(frozen=True)
class Termination:
    """Per env, (num_envs,) bool arrays, at most one of them True per env."""

    reached: np.ndarray  # within goal_radius of the goal: terminated
    collided: np.ndarray  # a robot geom touched something it must not: terminated
    timed_out: np.ndarray  # max_episode_steps reached: truncated
    diverged: np.ndarray  # the physics blew up (Simulator.diverged): truncated
    # `ends` of the flags: computed once (every step reads all three), or given as computed
    terminated: np.ndarray = field(default=None, repr=False)  # type: ignore[assignment]
    truncated: np.ndarray = field(default=None, repr=False)  # type: ignore[assignment]
    ended: np.ndarray = field(default=None, repr=False)  # type: ignore[assignment]

    def __post_init__(self) -> None:
        if self.ended is None:
            for name, value in zip(("terminated", "truncated", "ended"),
                                   ends(self.reached, self.collided, self.timed_out,
                                        self.diverged), strict=True):
                object.__setattr__(self, name, value)

    @classmethod
    def from_rows(cls, rows: np.ndarray) -> Termination:
        """From the compiled step's flags, (7, num_envs) rows in the fields' order (every
        field given: nothing to compute)."""
        end = object.__new__(cls)
        end.__dict__.update(zip(_FIELDS, rows, strict=False))  # (7 rows by construction)
        return end

    def result(self, env: int) -> str:
        """"goal", "collision", "timeout" or "diverged" for an env whose episode ended."""
        flags_of = (self.reached, self.collided, self.timed_out, self.diverged)
        for name, flags in zip(RESULTS, flags_of, strict=True):
            if flags[env]:
                return name
        raise ValueError(f"env {env}: expected an env whose episode ended, got a running one")


_FIELDS = tuple(f.name for f in fields(Termination))


def classify(distance: np.ndarray, goal_radius: float, collided: np.ndarray,
             diverged: np.ndarray, steps: np.ndarray, max_steps: int,
             active: np.ndarray) -> Termination:
    """Divergence first (nothing else of that step is real), then the goal (reached while
    touching counts as reached), then a collision, then the time limit. Inactive envs
    (restarting after NEXT_STEP autoreset) end nothing. numpy or JAX arrays (the MJX
    backend's jit); the env's compiled step runs `end_flags` env by env (tasks/step.py)."""
    return Termination(*end_flags(distance, goal_radius, collided, diverged, steps,
                                  max_steps, active))


@shared
def end_flags(distance, goal_radius, collided, diverged, steps, max_steps, active):
    """classify's (reached, collided, timed_out, diverged) flags: operators only, so that
    numpy, JAX and compiled kernels all run this one definition."""
    diverged = diverged & active
    live = active & ~diverged
    reached = (distance < goal_radius) & live
    on = live & ~reached  # still going after the goal check
    hit = collided & on
    timed_out = (steps >= max_steps) & on & ~collided  # on and not hit
    return reached, hit, timed_out, diverged


@shared
def ends(reached, collided, timed_out, diverged):
    """(terminated, truncated, ended) of classify's flags: operators only, as end_flags."""
    terminated, truncated = reached | collided, timed_out | diverged
    return terminated, truncated, terminated | truncated
