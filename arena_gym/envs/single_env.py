"""ArenaEnv: one navigation env (`gymnasium.make("ArenaMujoco-v0")`).

    env = gymnasium.make("ArenaMujoco-v0", physics_dt=0.002)
    obs, info = env.reset(seed=3)   # the same episode as env 3 of a vector env seeded 0
    obs, reward, terminated, truncated, info = env.step(env.action_space.sample())

`info["reward_terms"]` holds each named reward term. When the env ends an episode itself
(goal, collision, its own `max_episode_steps`, a physics divergence) `info["episode_result"]`
holds its result ("goal", "collision", "timeout", "diverged") and metrics, and
`info["is_success"]` whether it reached the goal; a diverged episode also sets
`info["diverged"]`, a collision `info["collision"]`: what was hit ("wall", "obstacle",
"robot"; the sensors' classes, arena_gym.sensors.COLLISION_CLASSES).

`gymnasium.make(..., max_episode_steps=N)` keeps N for Gymnasium's own TimeLimit wrapper and
never tells the env (the spec's default is the config's 300). If N is below the env's own
limit, TimeLimit truncates at step N and that step's info has no `episode_result` (the env did
not end the episode, and the curriculum does not count it). To have the env end and report
episodes at N, set its own limit: `gymnasium.make_vec(..., max_episode_steps=N)` (vector entry
point) or `max_episode_steps: N` in the config file.
"""

from __future__ import annotations

from typing import Any, ClassVar

import gymnasium as gym
import numpy as np

from arena_gym.config import EnvConfig, load_config
from arena_gym.envs.core import NavigationCore
from arena_gym.envs.rendering import RENDER_MODES, check_render_mode
from arena_gym.envs.validation import check_options, check_reset_first
from arena_gym.render.env_view import EnvView


class ArenaEnv(gym.Env):
    """The navigation task in one env. Keyword arguments override the config."""

    metadata: ClassVar[dict[str, Any]] = {"render_modes": list(RENDER_MODES), "render_fps": 10}

    def __init__(self, config: str | None = None, render_mode: str | None = None,
                 **overrides: Any) -> None:
        self.render_mode = check_render_mode(render_mode)
        self._build(load_config(config, **overrides))

    def _build(self, cfg: EnvConfig) -> None:
        self.cfg = cfg
        self.core = NavigationCore(1, cfg)
        self.view = EnvView(self.core, self.render_mode)
        self.metadata = {**self.metadata, "render_fps": self.view.fps}
        self.observation_space = self.core.observation_space
        self.action_space = self.core.action_space
        self._one = np.ones(1, dtype=bool)  # `active`: the env steps
        self._reset_once = False

    def __getstate__(self) -> dict[str, Any]:
        """Pickles as its config: the clone is a fresh env, reset it with a seed."""
        return {"cfg": self.cfg, "render_mode": self.render_mode}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.render_mode = state.get("render_mode")
        self._build(state["cfg"])

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        check_options(options, ())
        super().reset(seed=seed)
        if seed is not None or not self._reset_once:
            self.core.seed(0, seed)
        self.core.reset_envs([0])
        self._reset_once = True
        obs = self.core.observe()
        self.view.after_step()
        return {k: v[0] for k, v in obs.items()}, {}

    def step(self, action: Any):
        if not self._reset_once:
            check_reset_first(self._reset_once)
        space = self.action_space
        if isinstance(space, gym.spaces.Discrete):
            if not space.contains(action):
                raise ValueError(f"action: expected an integer in [0, {space.n}), got {action!r}")
            actions = np.array([int(action)])
        else:
            actions = np.asarray(action)[None]  # checked by the core, as one env's row
        out = self.core.step(actions, self._one)
        info: dict[str, Any] = {"reward_terms": {k: float(v[0]) for k, v in out.terms.items()}}
        if 0 in out.episodes:
            info["episode_result"] = out.episodes[0]
            info["is_success"] = out.episodes[0]["result"] == "goal"
        if out.diverged[0]:
            info["diverged"] = True
        if out.termination.collided[0]:
            info["collision"] = out.hit[0]
        if self.render_mode == "human":
            self.view.after_step()
        return ({k: v[0] for k, v in out.obs.items()}, float(out.reward[0]),
                bool(out.terminated[0]), bool(out.truncated[0]), info)

    def render(self) -> np.ndarray | None:
        """The current frame, (height, width, 3) uint8 (render_mode "rgb_array"; config
        `render` picks the view and size), or None ("human" syncs the viewer instead)."""
        frames = self.view.render([0])
        return frames[0] if frames else None

    @property
    def sensor_suite(self):
        """The SensorSuite the observation wrappers read (arena_gym.wrappers)."""
        return self.core.sensor_suite

    def close(self) -> None:
        self.view.close()
        self.core.close()
