"""Reward terms of the navigation task: one small function per term, for all envs at once.

Each term maps (weights, what happened in the step) to a (num_envs,) array; the reward is
their sum, and `info["reward_terms"]` carries each term per env (as in MuJoCo Playground).
Terms are looked up in REWARD_TERMS (arena_gym.registry), where a plugin's term registers
like the built-ins below; its weight is the config's `reward.<name>` (its registered default
without one), and a term whose weight is 0 is not computed.

The built-in terms are shared definitions (arena_gym.compiled), written once for numpy
arrays, JAX arrays and scalars with the elementwise functions of arena_gym.geometry.arrays:
the MJX backend evaluates them inside its jit-compiled step, and the env's compiled step
(tasks/step.py) calls `builtin_terms`, every term of BUILTIN in order. A new built-in term
is its function, its line in BUILTIN and its weight in RewardConfig; `Weights` follows
RewardConfig's fields.
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from arena_gym.compiled import Each, shared
from arena_gym.config import RewardConfig
from arena_gym.geometry.arrays import full, where, xp
from arena_gym.registry import REWARD_TERMS


@dataclass
class StepOutcome:
    """What happened to each env in one control step, (num_envs,) arrays."""

    distance_before: np.ndarray
    distance_after: np.ndarray
    reached: np.ndarray  # bool
    collided: np.ndarray  # bool
    min_clearance: np.ndarray  # m from the robot's footprint to the nearest obstacle
    forward_speed: np.ndarray  # commanded, m/s
    action_change: np.ndarray  # |a_t - a_{t-1}| of the normalised action
    # worlds with pedestrians only (None elsewhere: no pedestrian terms)
    pedestrian_distance: np.ndarray | None = None  # m, robot to the nearest person, centres
    hit_pedestrian: np.ndarray | None = None  # bool: the collision was with a person
    speed: np.ndarray | None = None  # m/s the robot moved in the step
    sensors: Any = None  # the env's SensorSuite: sensors[key] is a reading (for plugins' terms)


TermFn = Callable[[RewardConfig, StepOutcome], np.ndarray]


@dataclass(frozen=True)
class RewardTerm:
    """A term: `fn(cfg, outcome)` -> (num_envs,) values. A built-in reads its weight from
    its RewardConfig field; a plugin's from `cfg.weight(name)` (default `weight`).
    `pedestrians`: only in worlds with people."""

    fn: TermFn
    weight: float = 0.0
    pedestrians: bool = False


@shared
def goal(cfg: RewardConfig, out: StepOutcome) -> np.ndarray:
    return where(out.reached, cfg.goal, 0.0)


@shared
def collision(cfg: RewardConfig, out: StepOutcome) -> np.ndarray:
    return where(out.collided, cfg.collision, 0.0)


@shared
def progress(cfg: RewardConfig, out: StepOutcome) -> np.ndarray:
    """Distance gained toward the goal (lost distance weighs progress_away); none in the
    step that ends the episode, whose outcome has its own term."""
    gained = out.distance_before - out.distance_after
    shaped = where(gained >= 0, cfg.progress * gained, cfg.progress_away * gained)
    return where(out.reached | out.collided, 0.0, shaped)


@shared
def safe_distance(cfg: RewardConfig, out: StepOutcome) -> np.ndarray:
    near = out.min_clearance < cfg.safe_distance_m
    return where(near, cfg.safe_distance, 0.0)


@shared
def reverse(cfg: RewardConfig, out: StepOutcome) -> np.ndarray:
    return where(out.forward_speed < 0, cfg.reverse, 0.0)


@shared
def abrupt_velocity(cfg: RewardConfig, out: StepOutcome) -> np.ndarray:
    return cfg.abrupt_velocity * out.action_change


@shared
def time(cfg: RewardConfig, out: StepOutcome) -> np.ndarray:
    return full(out.distance_after, cfg.time)


@shared
def pedestrian_collision(cfg: RewardConfig, out: StepOutcome) -> np.ndarray:
    return where(out.hit_pedestrian, cfg.pedestrian_collision, 0.0)


@shared
def pedestrian_safety(cfg: RewardConfig, out: StepOutcome) -> np.ndarray:
    return where(out.pedestrian_distance < cfg.pedestrian_safety_m,  # type: ignore[operator]
                 cfg.pedestrian_safety, 0.0)


@shared
def pedestrian_speed(cfg: RewardConfig, out: StepOutcome) -> np.ndarray:
    """Speed near people costs: the robot's speed while within pedestrian_safety_m."""
    near = out.pedestrian_distance < cfg.pedestrian_safety_m  # type: ignore[operator]
    return where(near, cfg.pedestrian_speed * abs(out.speed), 0.0)  # type: ignore[arg-type]


# the built-in terms, in the order they register and sum (the compiled step's too)
BUILTIN: tuple[tuple[str, TermFn], ...] = (
    ("goal", goal), ("collision", collision), ("progress", progress),
    ("safe_distance", safe_distance), ("reverse", reverse),
    ("abrupt_velocity", abrupt_velocity), ("time", time))
# builtin_terms(weights, outcome, values): values[k] = BUILTIN's k-th term; returns their sum
builtin_terms = Each(tuple(fn for _, fn in BUILTIN), "builtin_terms")
# the pedestrian terms, in worlds with people (after the built-ins), the same way
PEDESTRIAN: tuple[tuple[str, TermFn], ...] = (
    ("pedestrian_collision", pedestrian_collision), ("pedestrian_safety", pedestrian_safety),
    ("pedestrian_speed", pedestrian_speed))
pedestrian_terms = Each(tuple(fn for _, fn in PEDESTRIAN), "pedestrian_terms")
# StepOutcome's pedestrian fields, for one env of the compiled step
PeopleOutcome = namedtuple("PeopleOutcome", ("pedestrian_distance", "hit_pedestrian", "speed"))
# RewardConfig's weights as a tuple compiled code reads by name (cfg.goal, ...)
Weights = namedtuple("Weights", [f.name for f in fields(RewardConfig) if f.name != "extra"])
# StepOutcome's fields the built-in terms read, for one env of the compiled step
Outcome = namedtuple("Outcome", ("distance_before", "distance_after", "reached", "collided",
                                 "min_clearance", "forward_speed", "action_change"))
_WEIGHTS: dict[int, tuple[RewardConfig, Any]] = {}


def weights(cfg: RewardConfig) -> Any:
    """cfg's Weights (kept per config object: asked every step)."""
    kept = _WEIGHTS.get(id(cfg))
    if kept is None or kept[0] is not cfg:
        if len(_WEIGHTS) > 64:  # configs are few; never let a sweep grow this unbounded
            _WEIGHTS.clear()
        values = (float(getattr(cfg, name)) for name in Weights._fields)
        kept = _WEIGHTS[id(cfg)] = (cfg, Weights(*values))
    return kept[1]


for _name, _fn in BUILTIN:
    REWARD_TERMS.register(_name, RewardTerm(_fn))
for _name, _fn in PEDESTRIAN:
    REWARD_TERMS.register(_name, RewardTerm(_fn, pedestrians=True))


def reward_terms(cfg: RewardConfig, out: StepOutcome) -> dict[str, np.ndarray]:
    """Every registered term that applies (pedestrian terms in worlds with people; a
    plugin's term while its weight is not 0)."""
    return {name: fn(cfg, out) for name, fn in applying(cfg, out.pedestrian_distance is not None)}


# (config, people) -> (registry version, the terms that apply): asked every step
_APPLYING: dict[tuple[RewardConfig, bool], tuple[int, list[tuple[str, TermFn]]]] = {}


def applying(cfg: RewardConfig, people: bool) -> list[tuple[str, TermFn]]:
    """(name, fn) of the terms reward_terms computes, kept until the registry changes."""
    key = (cfg, people)
    cached = _APPLYING.get(key)
    if cached is None or cached[0] != REWARD_TERMS.version:
        REWARD_TERMS.names()  # the built-ins register on the first lookup: then count them
        terms = [(name, term.fn) for name, term in REWARD_TERMS.items()
                 if (people or not term.pedestrians)
                 and (cfg.is_builtin(name) or cfg.weight(name, term.weight) != 0)]
        if len(_APPLYING) > 64:  # configs are few; never let a sweep grow this unbounded
            _APPLYING.clear()
        _APPLYING[key] = cached = (REWARD_TERMS.version, terms)
    return cached[1]


def checked_term(name: str, fn: TermFn, cfg: RewardConfig, out: StepOutcome,
                 num_envs: int) -> np.ndarray:
    """A term that is not built in (a plugin's, or a replaced built-in) on a step's outcome:
    (num_envs,) finite values, else an error naming the term, where it came from, what was
    expected and what came."""
    where_from = REWARD_TERMS.source(name) or "arena_gym"
    try:
        value = np.asarray(fn(cfg, out), dtype=float)
    except Exception as exc:
        raise RuntimeError(f"reward term {name!r} (from {where_from}) raised "
                           f"{type(exc).__name__}: {exc}") from exc
    if value.shape != (num_envs,):
        try:
            value = np.broadcast_to(value, (num_envs,)).copy()
        except ValueError:
            raise ValueError(f"reward term {name!r} (from {where_from}): expected values of "
                             f"shape ({num_envs},), got shape {value.shape}") from None
    if not np.isfinite(value).all():
        bad = int(np.flatnonzero(~np.isfinite(value))[0])
        raise ValueError(f"reward term {name!r} (from {where_from}): expected finite values, "
                         f"got {value[bad]} in env {bad}")
    return value


def total(terms: dict[str, np.ndarray]) -> np.ndarray:
    values = list(terms.values())
    space = xp(values[0])
    if space is np:  # np.array stacks in C (np.stack's checks cost twice its work): same sum
        return np.add.reduce(np.array(values), axis=0)
    return space.sum(space.stack(values), axis=0)
