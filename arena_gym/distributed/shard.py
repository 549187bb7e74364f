"""One shard of a distributed run: an ArenaVectorEnv of some of the envs, inside a Ray actor.

A plain class (DistributedVectorEnv makes it a Ray actor with `ray.remote`), so it imports
no Ray and can be driven in-process as well. Its env is the local env unchanged: autoreset,
seeding and infos are that env's. Only the curriculum is the driver's: the shard's own
does not learn, and every call carries the driver's stage, so all shards start their
episodes on the stage one local env of all the envs would be on.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from gymnasium.vector import VectorEnv

from arena_gym.envs.vector_env import ArenaVectorEnv


class ShardEnv:
    """`num_envs` envs of the run; `wrap` (picklable) wraps the ArenaVectorEnv, e.g. with
    the observation wrappers of arena_gym.wrappers.vector."""

    def __init__(self, num_envs: int, config: str | None, overrides: dict[str, Any],
                 render_mode: str | None = None,
                 wrap: Callable[[VectorEnv], VectorEnv] | None = None) -> None:
        env: VectorEnv = ArenaVectorEnv(num_envs, config=config, render_mode=render_mode,
                                        **overrides)
        self.env = wrap(env) if wrap is not None else env
        self.curriculum = self.env.unwrapped.curriculum
        self.curriculum.learning = False  # the driver counts episodes, in global env order

    def spaces(self) -> tuple[Any, Any, dict[str, Any]]:
        return (self.env.single_observation_space, self.env.single_action_space,
                dict(self.env.metadata))

    def reset(self, seeds: list[int | None], mask: np.ndarray | None, stage: int):
        self.curriculum.stage = stage
        options = None if mask is None else {"reset_mask": mask}
        return self.env.reset(seed=seeds, options=options)

    def step(self, actions: np.ndarray, stage: int):
        self.curriculum.stage = stage
        return self.env.step(actions)

    def render(self) -> Any:
        return self.env.render()

    def close(self) -> None:
        self.env.close()
