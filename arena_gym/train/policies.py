"""Policies that act on batched Dict observations with actions in the robot's range:
baselines (random, reactive) and a loader for trained SB3 models."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from gymnasium import spaces

from arena_gym.registry import POLICIES
from arena_gym.train.pretrained import is_pretrained, pretrained_file

Policy = Callable[[dict[str, np.ndarray]], np.ndarray]


def random_policy(action_space: spaces.Box | spaces.Discrete, seed: int = 0) -> Policy:
    rng = np.random.default_rng(seed)
    if isinstance(action_space, spaces.Discrete):
        def pick(obs: dict[str, np.ndarray]) -> np.ndarray:
            return rng.integers(0, action_space.n, size=len(obs["goal"]))

        return pick
    low, high = action_space.low, action_space.high

    def act(obs: dict[str, np.ndarray]) -> np.ndarray:
        return rng.uniform(low, high, size=(len(obs["goal"]), len(low)))

    return act


def reactive_policy(action_space: spaces.Box, angles: np.ndarray, max_range: float,
                    radius: float) -> Policy:
    """Turn toward the goal; slow down and steer away from the nearest obstacle ahead.

    A potential-field controller on the scan: the goal (the subgoal on the global path
    where the observation has one) attracts, beams closer than a safety distance repel,
    and the heading error sets the turn rate.
    """
    low, high = action_space.low, action_space.high
    safe = radius + 0.35

    def act(obs: dict[str, np.ndarray]) -> np.ndarray:
        scan = obs["scan"] * max_range if obs["scan"].max() <= 1.0 + 1e-6 else obs["scan"]
        distance, bearing = obs["goal"][:, 0], obs.get("subgoal", obs["goal"])[:, 1]
        attract = np.column_stack([np.cos(bearing), np.sin(bearing)])
        push = np.clip((safe - scan) / safe, 0.0, 1.0) ** 2  # (n, beams)
        repel = -np.column_stack([(push * np.cos(angles)).sum(1), (push * np.sin(angles)).sum(1)])
        direction = attract + 0.6 * repel
        heading = np.arctan2(direction[:, 1], direction[:, 0])
        ahead = np.abs(((angles + np.pi) % (2 * np.pi)) - np.pi) < 0.5
        front = np.where(ahead[None, :], scan, np.inf).min(axis=1)
        v = high[0] * np.clip((front - radius - 0.05) / 0.5, 0.0, 1.0) * np.cos(heading).clip(0, 1)
        v = np.minimum(v, distance)  # do not overshoot
        omega = np.clip(2.0 * heading, low[-1], high[-1])
        action = np.zeros((len(distance), len(low)))
        action[:, 0], action[:, -1] = v, omega
        return np.clip(action, low, high)

    return act


def sb3_policy(path: str | Path, obs_space: spaces.Dict, action_space: spaces.Box,
               deterministic: bool = True, trust: bool = False,
               prior: Policy | None = None) -> Policy:
    """A saved SB3 model trained through ArenaSB3VecEnv (flat obs, actions in [-1, 1]).

    A model trained on a prior (`arena-gym train --prior NAME`: its actions are residuals)
    needs that policy as `prior`; make_policy builds it from the file's record.
    Nothing in the file is unpickled unless `trust` (arena_gym.train.model_files)."""
    try:
        import stable_baselines3  # noqa: F401
    except ImportError as exc:
        raise ImportError(
            "loading a policy needs stable-baselines3: pip install 'arena_gym[train]'") from exc
    from arena_gym.train.model_files import ModelFileError, load_sb3, model_prior
    from arena_gym.wrappers.policy_obs import flat_space, observation_layout

    if not isinstance(action_space, spaces.Box):
        raise ModelFileError(f"model file {str(path)!r}: expected an env with continuous "
                             f"actions (action=continuous), got {action_space}")
    recorded = model_prior(path)
    if (recorded is None) != (prior is None):
        raise ModelFileError(
            f"model file {str(path)!r}: expected " + (
                f"the policy it was trained on as prior ({recorded!r}), got none"
                if prior is None else "no prior (it was trained alone), got one"))
    policy_actions = spaces.Box(-1.0, 1.0, action_space.shape, np.float32)
    model = load_sb3(path, flat_space(obs_space), policy_actions, trust=trust,
                     layout=observation_layout(obs_space))
    return model_policy(model, obs_space, action_space, deterministic, prior)


def model_policy(model: Any, obs_space: spaces.Dict, action_space: spaces.Box,
                 deterministic: bool = True, prior: Policy | None = None) -> Policy:
    """A policy acting with an SB3 model (loaded, or the one a run is training) on batched
    Dict observations: flat observations in, actions in [-1, 1] scaled to the robot's, or
    with `prior` added to that policy's actions (wrappers.sb3.robot_actions)."""
    from arena_gym.wrappers.policy_obs import flatten
    from arena_gym.wrappers.sb3 import robot_actions

    low, high = action_space.low, action_space.high

    def act(obs: dict[str, np.ndarray]) -> np.ndarray:
        base = None if prior is None else np.asarray(prior(obs), dtype=np.float64)
        action, _ = model.predict(flatten(obs, obs_space), deterministic=deterministic)
        return robot_actions(np.clip(action, -1, 1), low, high, base)

    return act


# A named policy: factory(env, seed) -> Policy, `env` an ArenaVectorEnv (possibly wrapped).
PolicyFactory = Callable[[Any, int], Policy]


def _random(env: Any, seed: int) -> Policy:
    return random_policy(env.single_action_space, seed=seed)


def _reactive(env: Any, seed: int) -> Policy:
    core = env.unwrapped.core
    if core.cfg.action != "continuous":
        raise ValueError(f"reactive: expected action=continuous, got {core.cfg.action}")
    return reactive_policy(env.single_action_space, core.scan_angles, core.max_range,
                           core.params.radius)


POLICIES.register("random", _random)
POLICIES.register("reactive", _reactive)


def is_named(name: str) -> bool:
    """Whether `name` is a registered policy (not a model file or module:attribute)."""
    return name in POLICIES


def make_policy(name: str, env: Any, seed: int = 0, trust: bool = False) -> Policy:
    """The policy a command line names for `env` (an ArenaVectorEnv, possibly wrapped): a
    registered name (arena_gym.registry.POLICIES: "random", "reactive", and plugins'), a
    shipped policy ("pretrained:room", "pretrained:maps": train/pretrained.py), a
    model .zip saved by `arena-gym train`, or "module:attribute", any importable callable
    obs -> action (batched Dict observations in, (num_envs, dim) actions in the robot's
    range out): the plug-in points for other planners."""
    if is_named(name):
        return POLICIES[name](env, seed)
    if ":" in name and not name.endswith(".zip") and not is_pretrained(name):
        return _imported(name)
    from arena_gym.train.model_files import model_prior

    shipped = is_pretrained(name)
    path = pretrained_file(name) if shipped else name
    recorded = model_prior(path)
    prior = None if recorded is None else make_prior(recorded, env, seed)
    return sb3_policy(path, env.single_observation_space, env.single_action_space,
                      trust=trust and not shipped, prior=prior)


def check_prior(name: str) -> None:
    """ValueError naming the registered policies unless `name` is one (a prior)."""
    if not is_named(name):
        raise ValueError(f"prior {name!r}: expected a registered policy, one of "
                         f"{', '.join(POLICIES.names())}")


def make_prior(name: str, env: Any, seed: int = 0) -> Policy:
    """The registered policy `name` as the prior a residual model adds to."""
    check_prior(name)
    return POLICIES[name](env, seed)


def _imported(name: str) -> Policy:
    import importlib

    module, _, attr = name.partition(":")
    try:
        target: Any = importlib.import_module(module)
        for part in attr.split("."):
            target = getattr(target, part)
    except (ImportError, AttributeError) as exc:
        raise ValueError(f"policy {name!r}: expected an importable module:attribute, "
                         f"got {type(exc).__name__}: {exc}") from None
    if not callable(target):
        raise ValueError(f"policy {name!r}: expected a callable obs -> action, "
                         f"got {type(target).__name__}")
    return target
