"""ArenaVectorEnv: N navigation envs stepped in lockstep by one simulator.

    envs = gymnasium.make_vec("ArenaMujoco-v0", num_envs=16,
                              vectorization_mode="vector_entry_point")
    obs, info = envs.reset(seed=0)          # env i is seeded 0 + i
    obs, reward, terminated, truncated, info = envs.step(envs.action_space.sample())

Autoreset is NEXT_STEP (Gymnasium's default): the step after an episode ends resets that env,
ignores its action and returns the first observation with reward 0.
`reset(options={"reset_mask": m})` starts new episodes in the envs of the bool mask m only.

Info, in Gymnasium's masked style (the merge of what ArenaEnv reports per env):
`info["reward_terms"]` holds each named reward term (`_reward_terms`: the envs that stepped);
at an episode's end `info["episode_result"]` holds its result ("goal", "collision",
"timeout", "diverged"), Arena's metrics (arena_gym.tasks.metrics), its trajectory and
goal, and `info["is_success"]` whether it reached the goal, both masked by
`info["_episode_result"]`; an env whose physics diverged ends its episode truncated
with `info["diverged"]` True (mask `_diverged`), the other envs go on; a collision that ends
an episode names what was hit in `info["collision"]` ("wall", "obstacle", "robot"; mask
`_collision`, also the episode result's "hit"). `info["episode"]` is
left to Gymnasium's RecordEpisodeStatistics.

`max_episode_steps` given to `gymnasium.make_vec` reaches this env's config: it truncates
episodes at that step and reports their result.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from arena_gym.config import EnvConfig, load_config
from arena_gym.envs.core import NavigationCore, StepResult
from arena_gym.envs.memory import check_memory
from arena_gym.envs.rendering import RENDER_MODES, check_render_mode
from arena_gym.envs.validation import (
    check_actions,
    check_num_envs,
    check_open,
    check_reset_first,
    reset_mask,
)
from arena_gym.render.env_view import EnvView
from arena_gym.tasks.curriculum import Curriculum


class ArenaVectorEnv(VectorEnv):
    """Batched ArenaMujoco-v0. Keyword arguments override the config (see EnvConfig)."""

    metadata: ClassVar[dict[str, Any]] = {"autoreset_mode": AutoresetMode.NEXT_STEP,
                                          "render_modes": list(RENDER_MODES),
                                          "render_fps": 10}

    def __init__(self, num_envs: int = 1, config: str | None = None,
                 render_mode: str | None = None, **overrides: Any) -> None:
        check_num_envs(num_envs)
        self.render_mode = check_render_mode(render_mode)
        self.cfg: EnvConfig = load_config(config, **overrides)
        self.num_envs = num_envs
        check_memory(num_envs, lambda n: NavigationCore(n, self.cfg))  # a bound, before
        self.core = NavigationCore(num_envs, self.cfg)
        self.view = EnvView(self.core, self.render_mode)
        self.metadata = {**self.metadata, "render_fps": self.view.fps}
        self.single_observation_space = self.core.observation_space
        self.single_action_space = self.core.action_space
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self._ended = np.zeros(num_envs, dtype=bool)
        self._restarting: list[int] = []  # the envs of _ended, in order (the next step's resets)
        # `active` when none restarts (writable, as ~_ended is: kernels compile for one kind)
        self._every = np.ones(num_envs, dtype=bool)
        self._reset_once = False

    def reset(self, *, seed: int | list[int] | None = None, options: dict | None = None):
        check_open(self.closed, "reset")
        seeds = per_env_seeds(seed, self.num_envs)
        super().reset(seed=seeds[0])  # Gymnasium's own generator takes one int
        mask = reset_mask(options, self.num_envs)
        mask = np.ones(self.num_envs, bool) if mask is None else mask
        envs = list(np.flatnonzero(mask))
        for e in envs:
            if seeds[e] is not None or not self._reset_once:
                self.core.seed(e, seeds[e])
        self.core.reset_envs(envs)
        self._ended[mask] = False
        self._restarting = [e for e in self._restarting if not mask[e]]
        self._reset_once = True
        obs, _ = self.core.observe()
        self.view.after_step()
        return obs, {}

    def step(self, actions: Any):
        check_open(self.closed, "step")
        check_reset_first(self._reset_once)
        actions = check_actions(actions, self.action_space, self.num_envs)
        twist = self.core.twist(actions)
        restarting = self._restarting
        active = ~self._ended if restarting else self._every
        self.core.advance(twist, active)
        if restarting:  # after the physics, so they return the reset observation
            self.core.reset_envs(restarting)
        out = self.core.evaluate(twist, active)
        self._ended = out.termination.ended
        self._restarting = list(out.episodes)  # an episode's result for every env that ended
        self.view.after_step()
        return out.obs, out.reward, out.terminated, out.truncated, _info(out, self.num_envs)

    def render(self) -> tuple[np.ndarray, ...] | None:
        """One frame per env, (height, width, 3) uint8 each (render_mode "rgb_array"), or
        None ("human" shows env 0 in MuJoCo's viewer)."""
        return self.view.render(list(range(self.num_envs)))

    @property
    def curriculum(self) -> Curriculum:
        """The obstacle curriculum; only training episodes advance it (see Curriculum.paused)."""
        return self.core.curriculum

    @property
    def curriculum_stage(self) -> int:
        return self.core.curriculum.stage

    @property
    def sensor_suite(self):
        """The SensorSuite the observation wrappers read (arena_gym.wrappers.vector)."""
        return self.core.sensor_suite

    def close_extras(self, **kwargs: Any) -> None:
        self.view.close()
        self.core.close()


def per_env_seeds(seed: int | list[int] | None, n: int) -> list[int | None]:
    """Per-env seeds: None, an int (env i gets seed + i) or a list of num_envs ints >= 0."""
    if seed is None:
        return [None] * n
    if isinstance(seed, (list, tuple, np.ndarray)):
        if len(seed) != n:
            raise ValueError(f"seed: expected {n} seeds, got {len(seed)}")
        return [_one_seed(s, seed) for s in seed]
    return [_one_seed(seed, seed) + i for i in range(n)]


def _one_seed(value: Any, given: Any) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value < 0:
        raise ValueError(f"seed: expected an integer >= 0 or a list of them, got {given!r}")
    return int(value)


def _info(out: StepResult, n: int) -> dict[str, Any]:
    return step_info(out.terms, out.active, out.episodes,
                     out.diverged if out.num_diverged else None,
                     out.termination.collided if out.num_collided else None, out.hit, n)


def step_info(terms: dict[str, np.ndarray], active: np.ndarray,
              episodes: dict[int, dict[str, Any]], diverged: np.ndarray | None,
              collided: np.ndarray | None, hit: np.ndarray, n: int) -> dict[str, Any]:
    """A vector env's step info: reward terms, and the results of the episodes that ended
    (env -> NavigationCore._finish's dict), as masked arrays. The MJX backend's too.
    `diverged`, `collided`: None where the caller knows no env did."""
    info: dict[str, Any] = {"reward_terms": terms, "_reward_terms": active}
    if episodes:
        ended = np.zeros(n, dtype=bool)
        ended[list(episodes)] = True
        first = next(iter(episodes.values()))
        results: dict[str, np.ndarray] = {
            key: np.full(n, "", dtype=object) if isinstance(value, str)
            else np.zeros(n, dtype=type(value))
            for key, value in first.items()
        }
        for e, episode in episodes.items():
            for key, value in episode.items():
                results[key][e] = value
        info["episode_result"], info["_episode_result"] = results, ended
        info["is_success"] = results["result"] == "goal"
        info["_is_success"] = ended.copy()
    if diverged is not None and diverged.any():
        info["diverged"], info["_diverged"] = diverged.copy(), diverged.copy()
    if collided is not None and collided.any():
        info["collision"], info["_collision"] = hit.copy(), collided.copy()
    return info
