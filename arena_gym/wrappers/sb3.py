"""Stable-Baselines3 adapter over a Gymnasium VectorEnv of the navigation task.

SB3 does not take a Gymnasium VectorEnv: it resets an env in the same step its episode ends
and moves the last observation to `info["terminal_observation"]`. This adapter goes through
the vector env's front door only (`step`, and `reset` with `options={"reset_mask": ...}` for
the envs whose episode just ended), so any Gymnasium vector wrapper around the env applies
(RecordEpisodeStatistics, NormalizeReward, observation wrappers) and a collision observation
is never lost. Per env it sets `info["TimeLimit.truncated"]` (truncated, not terminated) and
`info["is_success"]` (read by SB3's EvalCallback), and passes on what the vector env reports
(`episode_result`, `reward_terms`, `diverged`, RecordEpisodeStatistics' `episode`).

    from arena_gym.envs.vector_env import ArenaVectorEnv
    from arena_gym.wrappers.sb3 import ArenaSB3VecEnv
    venv = ArenaSB3VecEnv(ArenaVectorEnv(16), seed=0)   # or gymnasium.make_vec(...), wrapped
    model = stable_baselines3.PPO("MlpPolicy", venv)

With `flat=True` (default) observations are one fixed-scale Box (policy_obs.py); with
`normalized_actions=True` (default) the policy acts in [-1, 1], scaled to the robot's range.
With `prior` (a policy: batched Dict observations -> actions in the robot's units) the
policy's action is a residual: added to the prior's action on the same observation
(`robot_actions`), so a fresh policy, whose mean action is ~0, starts as the prior does.
The vector env must use NEXT_STEP autoreset (Gymnasium's default) and accept `reset_mask`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv

try:
    from stable_baselines3.common.vec_env.base_vec_env import VecEnv
except ImportError as exc:  # pragma: no cover - depends on the install
    raise ImportError(
        "the SB3 adapter needs stable-baselines3: pip install 'arena_gym[train]'"
    ) from exc

from arena_gym.envs.validation import check_actions
from arena_gym.wrappers.policy_obs import flat_space, flatten

Prior = Callable[[dict[str, np.ndarray]], np.ndarray]


def robot_actions(actions: np.ndarray, low: np.ndarray, high: np.ndarray,
                  prior: np.ndarray | None = None) -> np.ndarray:
    """A policy's actions in [-1, 1] in the robot's units: the range's affine map, or with
    `prior` (the prior controller's actions, robot units) that action plus the policy's
    times half the range, clipped to the range. Training and evaluation both map here."""
    half = 0.5 * (high - low)
    if prior is None:
        return low + (actions + 1.0) * half
    return np.clip(prior + actions * half, low, high)



class ArenaSB3VecEnv(VecEnv):
    """A Gymnasium VectorEnv of ArenaMujoco-v0 as an SB3 VecEnv (same-step reset)."""

    def __init__(self, env: VectorEnv, flat: bool = True, normalized_actions: bool = True,
                 seed: int | None = None, prior: Prior | None = None) -> None:
        if not isinstance(env, VectorEnv):
            raise TypeError(f"env: expected a gymnasium VectorEnv, got {type(env).__name__}")
        mode = env.metadata.get("autoreset_mode", AutoresetMode.NEXT_STEP)
        if mode != AutoresetMode.NEXT_STEP:
            raise ValueError(f"env: expected NEXT_STEP autoreset, got {mode}")
        self.env = env
        self.flat = flat
        dict_space = env.single_observation_space
        obs_space = flat_space(dict_space) if flat else dict_space
        action_space = env.single_action_space
        self._box = action_space if isinstance(action_space, spaces.Box) else None
        self.normalized_actions = normalized_actions and self._box is not None
        if self.normalized_actions:
            action_space = spaces.Box(-1.0, 1.0, self._box.shape, np.float32)
        if prior is not None and not self.normalized_actions:
            raise ValueError("prior: expected normalized continuous actions (a residual is "
                             f"added in the robot's units), got {env.single_action_space}")
        super().__init__(env.num_envs, obs_space, action_space)
        self._seed = seed
        self._actions: np.ndarray | None = None
        self.prior = prior
        self._last_obs: dict[str, np.ndarray] | None = None  # what the prior acts on

    def _obs(self, obs: dict[str, np.ndarray]) -> Any:
        return flatten(obs, self.env.single_observation_space) if self.flat else obs

    def reset(self) -> Any:
        obs, _ = self.env.reset(seed=self._seed)
        self._seed = None  # later resets continue each env's generator
        self._last_obs = obs
        return self._obs(obs)

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions)

    def step_wait(self):
        actions = self._actions
        if self.normalized_actions:
            unit = spaces.Box(-1.0, 1.0, (self.num_envs, *self._box.shape))
            actions = check_actions(actions, unit, self.num_envs)
            prior = None
            if self.prior is not None:
                if self._last_obs is None:
                    raise RuntimeError("step: expected reset() before the first step")
                prior = np.asarray(self.prior(self._last_obs), dtype=np.float64)
            # float64, as the env computes twists: a float32 round trip would move the robot
            actions = robot_actions(actions, self._box.low, self._box.high, prior)
        obs, reward, terminated, truncated, info = self.env.step(actions)
        done = np.logical_or(terminated, truncated)
        infos = unbatch(info, self.num_envs)
        if done.any():
            obs = {k: np.array(v) for k, v in obs.items()}  # ours to overwrite
            final = self._obs(obs)
            for e in np.flatnonzero(done):
                item = infos[e]
                item["terminal_observation"] = (final[e] if self.flat
                                                else {k: v[e].copy() for k, v in final.items()})
                item["TimeLimit.truncated"] = bool(truncated[e] and not terminated[e])
                result = item.get("episode_result", {}).get("result")
                item["is_success"] = result == "goal"
            restarted, _ = self.env.reset(options={"reset_mask": done.copy()})
            for key, value in restarted.items():
                obs[key][done] = value[done]
        self._last_obs = obs
        return self._obs(obs), np.asarray(reward, dtype=np.float32), done, infos

    def close(self) -> None:
        self.env.close()

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        return [getattr(self.env.unwrapped, attr_name)] * len(self._indices(indices))

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        setattr(self.env.unwrapped, attr_name, value)

    def env_method(self, method_name: str, *args: Any, indices: Any = None,
                   **kwargs: Any) -> list[Any]:
        result = getattr(self.env.unwrapped, method_name)(*args, **kwargs)
        return [result] * len(self._indices(indices))

    def env_is_wrapped(self, wrapper_class: type, indices: Any = None) -> list[bool]:
        return [False] * len(self._indices(indices))

    def _indices(self, indices: Any) -> list[int]:
        if indices is None:
            return list(range(self.num_envs))
        return [indices] if isinstance(indices, int) else list(indices)

    def seed(self, seed: int | None = None) -> list[int | None]:
        self._seed = seed
        return [None if seed is None else seed + e for e in range(self.num_envs)]


def unbatch(info: dict[str, Any], n: int) -> list[dict[str, Any]]:
    """Gymnasium's masked vector info (`key` with mask `_key`) as one dict per env."""
    out: list[dict[str, Any]] = [{} for _ in range(n)]
    for key, value in info.items():
        if key.startswith("_"):
            continue
        mask = np.asarray(info.get(f"_{key}", np.ones(n, dtype=bool)), dtype=bool)
        for e in np.flatnonzero(mask):
            out[e][key] = _item(value, e)
    return out


def _item(value: Any, e: int) -> Any:
    if isinstance(value, dict):
        return {k: _item(v, e) for k, v in value.items() if not k.startswith("_")}
    item = value[e]
    return item.item() if isinstance(item, np.generic) else item
