"""MjxVectorEnv: ArenaMujoco-v0 on MJX behind Gymnasium's VectorEnv API (numpy in and out).

    envs = gymnasium.make_vec("ArenaMujoco-v0", num_envs=4096, backend="mjx")
    obs, info = envs.reset(seed=0)          # env i is seeded 0 + i
    obs, reward, terminated, truncated, info = envs.step(envs.action_space.sample())

As the CPU ArenaVectorEnv: same spaces, NEXT_STEP autoreset (inside the jit-compiled step),
actions checked at the boundary with the same errors (arena_gym.envs.validation), per-env
seeds, `reset(options={"reset_mask": m})`. Info: `reward_terms` (mask `_reward_terms`),
and for the episodes that ended `episode_result` = {"result": "goal" | "collision" |
"timeout" | "diverged"} with `is_success`, and `collision` ("wall", "obstacle"), masked
as the CPU env does, with the same episode metrics (arena_gym.tasks.metrics, from the
poses the device returns each step) and `diverged`. The obstacle curriculum is the CPU
env's (arena_gym.tasks.curriculum): ended training episodes advance it, and new episodes
(resets, autoresets) draw their pool box count from its stage.
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
from arena_gym.envs.vector_env import per_env_seeds, step_info
from arena_gym.geometry.rotations import quat_yaw
from arena_gym.mjx.render import MjxView
from arena_gym.mjx.task import MjxTask, select
from arena_gym.tasks import observation
from arena_gym.tasks.curriculum import Curriculum
from arena_gym.tasks.metrics import EpisodeMetrics
from arena_gym.tasks.termination import RESULTS

_RESULTS = np.array(("",) + RESULTS, dtype=object)  # State.result -> name
_HITS = np.array(("", "wall", "obstacle"), dtype=object)  # State.hit -> class
DIVERGED = RESULTS.index("diverged") + 1  # State.result's code


class MjxVectorEnv(VectorEnv):
    """Batched ArenaMujoco-v0 on MJX. Keyword arguments override the config (EnvConfig)."""

    metadata: ClassVar[dict[str, Any]] = {"autoreset_mode": AutoresetMode.NEXT_STEP,
                                          "render_modes": ["rgb_array"]}

    def __init__(self, num_envs: int = 1, config: str | None = None,
                 render_mode: str | None = None, impl: str | None = None,
                 **overrides: Any) -> None:
        check_num_envs(num_envs)
        if render_mode not in (None, "rgb_array"):
            raise ValueError(f"render_mode: the MJX backend draws frames, expected None or "
                             f"'rgb_array', got {render_mode!r}")
        self.render_mode = render_mode
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
        self.curriculum = Curriculum(self.cfg.curriculum)
        self.metrics = EpisodeMetrics(num_envs, self.cfg.max_episode_steps)
        self._stage_sent: tuple[int, int] | None = None  # the range the envs' state holds
        self.view = MjxView(self.task.layout, self.cfg)
        self.metadata = {**self.metadata, "render_fps": 1.0 / self.cfg.control_dt}

    @property
    def curriculum_stage(self) -> int:
        return self.curriculum.stage

    def _obstacles(self) -> Any:
        """(num_envs, 2) the curriculum stage's pool box count range, per env."""
        import jax.numpy as jnp

        self._stage_sent = self.curriculum.obstacles
        return jnp.tile(jnp.asarray(self.curriculum.obstacles, jnp.int32), (self.num_envs, 1))

    def _pose(self) -> np.ndarray:
        """(num_envs, 4) x, y, z, yaw of each robot (as NavigationCore.pose)."""
        a = self.task.layout.qpos_adr
        q = np.asarray(self.state.data.qpos, np.float64)[:, a:a + 7]
        return np.column_stack([q[:, :3], quat_yaw(q[:, 3:7])])

    def reset(self, *, seed: int | list[int] | None = None, options: dict | None = None):
        check_open(self.closed, "reset")
        import jax
        import jax.numpy as jnp

        seeds = per_env_seeds(seed, self.num_envs)
        super().reset(seed=seeds[0])
        mask = reset_mask(options, self.num_envs)
        keys = jnp.stack([jax.random.PRNGKey(self._seed(s)) for s in seeds])
        fresh = self.task.reset(keys, self._obstacles())
        if mask is None or self.state is None:
            self.state = fresh
            mask = np.ones(self.num_envs, bool)
        else:
            self.state = select(jnp.asarray(mask), fresh, self.state)
        self.metrics.reset(np.asarray(mask, bool), self._pose())
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

        state = self.state
        if self._stage_sent != self.curriculum.obstacles:  # the stage moved since
            state = state._replace(obstacles=self._obstacles())
        self.state = s = self.task.step(state, jnp.asarray(actions, jnp.float32))
        obs = _numpy(s.obs)
        reward = np.asarray(s.reward, np.float64)
        terminated, truncated = np.asarray(s.terminated), np.asarray(s.truncated)
        terms = {k: np.asarray(v, np.float64) for k, v in s.terms.items()}
        active, result, hit = np.asarray(s.active), np.asarray(s.result), np.asarray(s.hit)
        pose = self._pose()
        self.metrics.reset(~active, pose)  # the autoreset envs: their new episode's start
        diverged = result == DIVERGED
        self.metrics.update(pose, hit > 0, active, active & ~diverged)
        hits = _HITS[hit]
        goals = np.asarray(s.goal, np.float64)
        episodes = {int(e): self._finish(int(e), _RESULTS[result[e]], hits[e], goals[e])
                    for e in np.flatnonzero(result > 0)}
        info = step_info(terms, active, episodes, diverged, hit > 0, hits, self.num_envs)
        return obs, reward, terminated, truncated, info

    def render(self) -> tuple[np.ndarray, ...] | None:
        """One frame per env, (height, width, 3) uint8 each (render_mode "rgb_array"), drawn
        as the CPU env draws its (arena_gym.mjx.render); None without a render mode."""
        if self.render_mode is None:
            return None
        if self.state is None:
            raise RuntimeError("render() called before reset(): expected env.reset() first")
        return self.view.frames(self.state, list(range(self.num_envs)))

    def close_extras(self, **kwargs: Any) -> None:
        self.view.close()

    def _finish(self, e: int, result: str, hit: str, goal: np.ndarray) -> dict[str, Any]:
        """As NavigationCore._finish: the curriculum counts the result; the episode's
        result, metrics, what a collision hit and its goal."""
        self.curriculum.count(result)
        return {**self.metrics.episode(e, result, self.cfg.control_dt), "hit": hit,
                "goal": goal}

def _action_space(low: np.ndarray, high: np.ndarray):
    from gymnasium import spaces

    return spaces.Box(np.asarray(low, np.float32), np.asarray(high, np.float32))


def _numpy(obs: dict[str, Any]) -> dict[str, np.ndarray]:
    return {k: np.asarray(v) for k, v in obs.items()}
