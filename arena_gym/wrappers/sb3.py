"""Stable-Baselines3 adapter for ArenaVectorEnv.

SB3 does not take a Gymnasium VectorEnv: it resets an env in the same step its episode ends
and moves the last observation to `info["terminal_observation"]`. This adapter does exactly
that, so a collision observation is never lost, and sets `info["TimeLimit.truncated"]` and
`info["is_success"]` (read by SB3's EvalCallback).

    from arena_gym.wrappers.sb3 import ArenaSB3VecEnv
    venv = ArenaSB3VecEnv(num_envs=16)          # keyword arguments go to the env config
    model = stable_baselines3.PPO("MlpPolicy", venv)

With `flat=True` (default) observations are one fixed-scale Box (policy_obs.py); with
`normalized_actions=True` (default) the policy acts in [-1, 1], scaled to the robot's range.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

try:
    from stable_baselines3.common.vec_env.base_vec_env import VecEnv
except ImportError as exc:  # pragma: no cover - depends on the install
    raise ImportError(
        "the SB3 adapter needs stable-baselines3: pip install 'arena_gym[train]'"
    ) from exc

from arena_gym.envs.validation import check_actions
from arena_gym.envs.vector_env import ArenaVectorEnv
from arena_gym.wrappers.policy_obs import flat_space, flatten


class ArenaSB3VecEnv(VecEnv):
    """ArenaVectorEnv's task as an SB3 VecEnv (same-step reset)."""

    def __init__(self, num_envs: int = 16, flat: bool = True, normalized_actions: bool = True,
                 seed: int | None = None, config: str | None = None, **overrides: Any) -> None:
        self.venv = ArenaVectorEnv(num_envs, config=config, **overrides)
        self.core = self.venv.core
        self.flat = flat
        dict_space = self.venv.single_observation_space
        obs_space = flat_space(dict_space) if flat else dict_space
        action_space = self.venv.single_action_space
        self._box = action_space if isinstance(action_space, spaces.Box) else None
        if normalized_actions and self._box is not None:
            action_space = spaces.Box(-1.0, 1.0, self._box.shape, np.float32)
        self.normalized_actions = normalized_actions and self._box is not None
        super().__init__(num_envs, obs_space, action_space)
        self._seed = seed
        self._actions: np.ndarray | None = None

    def _obs(self, obs: dict[str, np.ndarray]) -> Any:
        return flatten(obs, self.venv.single_observation_space) if self.flat else obs

    def _index(self, obs: Any, e: int) -> Any:
        return obs[e] if self.flat else {k: v[e] for k, v in obs.items()}

    def reset(self) -> Any:
        obs, _ = self.venv.reset(seed=self._seed)
        self._seed = None  # later resets continue each env's generator
        return self._obs(obs)

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions)

    def step_wait(self):
        actions = self._actions
        if self.normalized_actions:
            actions = check_actions(actions, spaces.Box(-1, 1, (self.num_envs, *self._box.shape)),
                                    self.num_envs)
            actions = self._box.low + (actions + 1.0) * 0.5 * (self._box.high - self._box.low)
        else:
            actions = check_actions(actions, self.venv.action_space, self.num_envs)
        twist = self.core.twist(actions)
        active = np.ones(self.num_envs, bool)
        obs, reward, terminated, truncated, terms = self.core.step_envs(twist, active)
        done = terminated | truncated
        infos: list[dict[str, Any]] = [
            {"reward_terms": {k: float(v[e]) for k, v in terms.items()}} for e in range(self.num_envs)
        ]
        if done.any():
            flat = self._obs(obs)
            ended = list(np.flatnonzero(done))
            reached = self.core.goal_polar[:, 0] < self.core.cfg.goal_radius
            for e in ended:
                info = infos[e]
                info["terminal_observation"] = self._index(flat, e)
                info["TimeLimit.truncated"] = bool(truncated[e])
                success = bool(terminated[e] and reached[e])
                info["is_success"] = success
                info["episode_metrics"] = self.core.result(e, success, bool(terminated[e]) and not success)
            self.core.reset_envs(ended)
            obs, _ = self.core.observe()
        return self._obs(obs), reward.astype(np.float32), done, infos

    def close(self) -> None:
        self.venv.close()

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        return [getattr(self.venv, attr_name)] * len(self._indices(indices))

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        setattr(self.venv, attr_name, value)

    def env_method(self, method_name: str, *args: Any, indices: Any = None, **kwargs: Any) -> list[Any]:
        result = getattr(self.venv, method_name)(*args, **kwargs)
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
