"""MjxVectorEnv: ArenaMujoco-v0 on MJX behind Gymnasium's VectorEnv API (numpy in and out).

    envs = gymnasium.make_vec("ArenaMujoco-v0", num_envs=4096, backend="mjx")
    obs, info = envs.reset(seed=0)          # env i is seeded 0 + i
    obs, reward, terminated, truncated, info = envs.step(envs.action_space.sample())

As the CPU ArenaVectorEnv: same spaces, NEXT_STEP autoreset (inside the jit-compiled step),
actions checked at the boundary with the same errors (arena_gym.envs.validation), per-env
seeds, `reset(options={"reset_mask": m})`. Info: `reward_terms` (mask `_reward_terms`),
and for the episodes that ended `episode_result` = {"result": "goal" | "collision" |
"timeout" | "diverged"} with `is_success`, and `collision` ("wall", "obstacle"), masked
as the CPU env does. Not here (docs/mjx.md): the CPU's per-episode metrics, the obstacle
curriculum's stage changes (its start stage's obstacle range holds), rendering.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from arena_gym.config import EnvConfig, load_config
from arena_gym.envs.validation import (
    check_actions,
    check_num_envs,
    check_open,
    check_reset_first,
    reset_mask,
)
from arena_gym.envs.vector_env import per_env_seeds
from arena_gym.mjx.task import MjxTask, select
from arena_gym.tasks import observation
from arena_gym.tasks.termination import RESULTS

_RESULTS = np.array(("",) + RESULTS, dtype=object)  # State.result -> name
_HITS = np.array(("", "wall", "obstacle"), dtype=object)  # State.hit -> class


class MjxVectorEnv(VectorEnv):
    """Batched ArenaMujoco-v0 on MJX. Keyword arguments override the config (EnvConfig)."""

    metadata: ClassVar[dict[str, Any]] = {"autoreset_mode": AutoresetMode.NEXT_STEP,
                                          "render_modes": []}

    def __init__(self, num_envs: int = 1, config: str | None = None,
                 render_mode: str | None = None, impl: str | None = None,
                 **overrides: Any) -> None:
        check_num_envs(num_envs)
        if render_mode is not None:
            raise ValueError(f"render_mode: the MJX backend renders nothing, expected None, "
                             f"got {render_mode!r}")
        self.cfg: EnvConfig = load_config(config, **overrides)
        self.num_envs = num_envs
        self.task = MjxTask.make(self.cfg, impl)
        lay = self.task.layout
        high_scan = 1.0 if self.cfg.scan.normalize else lay.range_max
        self.single_observation_space = observation.observation_space(
            self.task.num_beams, high_scan, tuple(lay.low), tuple(lay.high))
        self.single_action_space = _action_space(lay.low, lay.high)
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self.state = None  # the batched arena_gym.mjx.State after the first reset
        self._entropy = np.random.SeedSequence()

    def reset(self, *, seed: int | list[int] | None = None, options: dict | None = None):
        check_open(self.closed, "reset")
        import jax
        import jax.numpy as jnp

        seeds = per_env_seeds(seed, self.num_envs)
        super().reset(seed=seeds[0])
        mask = reset_mask(options, self.num_envs)
        keys = jnp.stack([jax.random.PRNGKey(self._seed(s)) for s in seeds])
        fresh = self.task.reset(keys)
        if mask is None or self.state is None:
            self.state = fresh
        else:
            self.state = select(jnp.asarray(mask), fresh, self.state)
        return _numpy(self.state.obs), {}

    def _seed(self, seed: int | None) -> int:
        if seed is not None:
            return seed
        return int(self._entropy.spawn(1)[0].generate_state(1)[0])

    def step(self, actions: Any):
        check_open(self.closed, "step")
        check_reset_first(self.state is not None)
        actions = check_actions(actions, self.action_space, self.num_envs)
        import jax.numpy as jnp

        self.state = self.task.step(self.state, jnp.asarray(actions, jnp.float32))
        s = self.state
        obs = _numpy(s.obs)
        reward = np.asarray(s.reward, np.float64)
        terminated, truncated = np.asarray(s.terminated), np.asarray(s.truncated)
        info: dict[str, Any] = {"reward_terms": {k: np.asarray(v, np.float64)
                                                 for k, v in s.terms.items()},
                                "_reward_terms": np.asarray(s.active)}
        result = np.asarray(s.result)
        ended = result > 0
        if ended.any():
            names = _RESULTS[result]
            info["episode_result"] = {"result": np.where(ended, names, "").astype(object)}
            info["_episode_result"] = ended
            info["is_success"], info["_is_success"] = names == "goal", ended.copy()
        hit = np.asarray(s.hit)
        if (hit > 0).any():
            info["collision"], info["_collision"] = _HITS[hit], hit > 0
        return obs, reward, terminated, truncated, info


def _action_space(low: np.ndarray, high: np.ndarray):
    from gymnasium import spaces

    return spaces.Box(np.asarray(low, np.float32), np.asarray(high, np.float32))


def _numpy(obs: dict[str, Any]) -> dict[str, np.ndarray]:
    return {k: np.asarray(v) for k, v in obs.items()}
