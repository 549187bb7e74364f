"""One control step's evaluation of every env (the numpy env's): the goal's distance and
bearing, how episodes end (tasks/termination.py), the built-in reward terms and their sum,
in one compiled call (tasks/step_kernels.py) over the shared definitions.

Terms after the built-ins (pedestrian terms, plugins' terms) run as `fn(cfg, outcome)` on a
StepOutcome (`remaining_terms`); a built-in replaced in the registry makes every term run
that way.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from arena_gym.config import RewardConfig
from arena_gym.kernel_modules import kernels
from arena_gym.registry import REWARD_TERMS
from arena_gym.tasks.rewards import BUILTIN, TermFn, applying
from arena_gym.tasks.termination import Termination

# RewardConfig's fields the built-in terms read: the kernel's weights, in this order
WEIGHTS = ("goal", "collision", "progress", "progress_away", "safe_distance",
           "safe_distance_m", "reverse", "abrupt_velocity", "time")
_NAMES = tuple(name for name, _ in BUILTIN)
# per config object, asked every step: by identity (a frozen config hashes all its fields),
# the config kept with its entry so that its id stays its own (configs are few)
_WEIGHTS: dict[int, tuple[RewardConfig, np.ndarray]] = {}
_REMAINING: dict[tuple[int, bool], tuple[RewardConfig, int, tuple[bool, list]]] = {}


@dataclass
class Evaluation:
    """One control step's task quantities, (num_envs,) arrays unless noted."""

    polar: np.ndarray  # (num_envs, 2) float64: the goal's distance and bearing
    distance: np.ndarray  # polar[:, 0], contiguous (progress's `before` at the next step)
    termination: Termination
    builtin: np.ndarray  # (len(BUILTIN), num_envs): each built-in term, 0 where not counted
    reward: np.ndarray  # the built-in terms' sum
    change: np.ndarray  # |(twist - last action) / action high|: abrupt_velocity's input
    clearance: np.ndarray  # m from the robot's footprint to the nearest return
    num_ended: int  # envs whose episode ended
    num_collided: int

    def terms(self) -> dict[str, np.ndarray]:
        """The built-in terms by name (rows of `builtin`)."""
        return dict(zip(_NAMES, self.builtin, strict=True))


def evaluate(cfg: RewardConfig, qpos: np.ndarray, pose: np.ndarray, goal: np.ndarray,
             before: np.ndarray, after: np.ndarray | None, goal_radius: float,
             collided: np.ndarray, diverged: np.ndarray, steps: np.ndarray,
             max_steps: int | np.ndarray, active: np.ndarray, twist: np.ndarray,
             last_action: np.ndarray, action_high: np.ndarray, nearest: np.ndarray,
             radius: float) -> Evaluation:
    """The step of n envs from where they are (`pose` (n, 4): x, y, z, yaw, written from
    `qpos` (n, 7): the robots' free joints) and their goals (n, 2): classify's flags (the
    step count steps + active), the built-in terms with progress from `before` to `after`
    (None: the goal's distance now) and the clearance `nearest` range less the robot's
    `radius`; envs inactive or diverged count 0. Then counts the step, in place: each active
    env's `steps` + 1, its `last_action` the twist."""
    kept = _WEIGHTS.get(id(cfg))
    if kept is None or kept[0] is not cfg:
        if len(_WEIGHTS) > 64:  # never let a sweep of configs grow this unbounded
            _WEIGHTS.clear()
        kept = _WEIGHTS[id(cfg)] = (cfg, np.array([getattr(cfg, k) for k in WEIGHTS], float))
    weights = kept[1]
    n = len(pose)
    polar, distance, flags = np.empty((n, 2)), np.empty(n), np.empty((7, n), bool)
    builtin, reward = np.empty((len(BUILTIN), n)), np.empty(n)
    change, clearance = np.empty(n), np.empty(n)
    ended, collisions = kernels("tasks.step_kernels").evaluate(
        qpos, pose, goal, before, after, float(goal_radius), collided, diverged, steps, max_steps,
        active, twist, last_action, action_high, nearest, float(radius), weights, polar,
        distance, flags, builtin, reward, change, clearance)
    return Evaluation(polar, distance, Termination(*flags), builtin, reward, change,
                      clearance, ended, collisions)


def remaining_terms(cfg: RewardConfig, people: bool) -> tuple[bool, list[tuple[str, TermFn]]]:
    """(whether the built-in terms apply as registered, then `Evaluation.builtin` holds
    them; the (name, fn) of the terms left to compute: those after them, or all). Kept
    until the registry changes."""
    kept = _REMAINING.get((id(cfg), people))
    if kept is not None and kept[0] is cfg and kept[1] == REWARD_TERMS.version:
        return kept[2]
    terms = applying(cfg, people)
    intact = tuple(terms[:len(BUILTIN)]) == BUILTIN
    result = (True, terms[len(BUILTIN):]) if intact else (False, terms)
    if len(_REMAINING) > 64:
        _REMAINING.clear()
    _REMAINING[(id(cfg), people)] = (cfg, REWARD_TERMS.version, result)
    return result
