"""DistributedVectorEnv: ArenaMujoco-v0's envs split into shards, each a Ray actor.

    from arena_gym.distributed import DistributedVectorEnv
    envs = DistributedVectorEnv(32, distributed={"shards": 4}, config="staged")
    obs, info = envs.reset(seed=0)          # env i is seeded 0 + i, whichever shard holds it
    obs, reward, terminated, truncated, info = envs.step(envs.action_space.sample())

Shard k holds a contiguous slice of the env ids (arena_gym.distributed.settings) as one
ArenaVectorEnv inside a Ray actor. A step sends every shard its slice of the actions, then
one `ray.get` gathers all shards (they step in parallel, in lockstep) and the batches are
concatenated in env order. Everything is the local env's: NEXT_STEP autoreset, `reset_mask`,
seeds `s + i`, the infos (gather.py), so a run equals `ArenaVectorEnv(num_envs)` bit for bit.
The curriculum is the driver's (`curriculum`): it counts every shard's episodes in env order
and each call carries its stage to the shards, as the one local env would use it.

A shard whose actor dies (its node went away, it was killed, it crashed):
- on_failure="raise" (default): the env closes its other actors and raises ShardDiedError,
  e.g. "shard 1 (envs 4-7) died: ...";
- on_failure="restart": a new actor is made for the shard. The step that found it dead
  returns, for its envs, the last observation, reward 0 and truncated True (their episodes
  were cut off), with `info["shard_restarted"]` (mask `_shard_restarted`) True; the next
  step starts their new episodes (NEXT_STEP, as after any episode end), env i seeded
  `seed + i + r * num_envs` on the run's r-th restart (`seed` the last int given to
  `reset`; unseeded runs restart unseeded). A shard dying inside `reset` is re-made and
  reset at once, with the seeds that reset asked for (else the restart seeds).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar

import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from arena_gym.config import load_config
from arena_gym.distributed.gather import concat_obs, merge_infos
from arena_gym.distributed.settings import (
    DistributedSettings,
    import_ray,
    init_ray,
    shard_slices,
)
from arena_gym.distributed.shard import ShardEnv
from arena_gym.envs.rendering import RENDER_MODES, check_render_mode
from arena_gym.envs.validation import (
    check_actions,
    check_num_envs,
    check_open,
    check_reset_first,
    reset_mask,
)
from arena_gym.envs.vector_env import per_env_seeds
from arena_gym.tasks.curriculum import Curriculum


class ShardDiedError(ConnectionError):
    """A shard's Ray actor died (the env lost its connection to those envs); `shard` and
    `env_ids` name it. An OSError, so `arena-gym` reports it as one line."""

    def __init__(self, shard: int, env_ids: range, cause: BaseException) -> None:
        self.shard, self.env_ids = shard, env_ids
        reason = str(cause).strip().splitlines()[0] if str(cause).strip() else type(cause).__name__
        super().__init__(
            f"shard {shard} (envs {env_ids[0]}-{env_ids[-1]}) died: {reason}. The env is "
            "closed; distributed={'on_failure': 'restart'} re-creates a dead shard instead")


class DistributedVectorEnv(VectorEnv):
    """ArenaMujoco-v0 over Ray actors. Keyword arguments override the config (EnvConfig);
    `distributed` is a DistributedSettings or its mapping; `wrap` wraps each shard's env."""

    metadata: ClassVar[dict[str, Any]] = {"autoreset_mode": AutoresetMode.NEXT_STEP,
                                          "render_modes": list(RENDER_MODES),
                                          "render_fps": 10}

    def __init__(self, num_envs: int = 2, distributed: DistributedSettings | Mapping | None = None,
                 config: str | None = None, render_mode: str | None = None,
                 wrap: Callable[[VectorEnv], VectorEnv] | None = None,
                 **overrides: Any) -> None:
        check_num_envs(num_envs)
        self.settings = DistributedSettings.parse(distributed or {})
        self.slices = shard_slices(num_envs, self.settings.shards)
        self.render_mode = check_render_mode(render_mode)
        cfg = load_config(config, **overrides)  # a bad config fails here, before any actor
        self.num_envs = num_envs
        self._curriculum = Curriculum(cfg.curriculum)
        self._ray = import_ray()
        if not self._ray.is_initialized():
            init_ray(self._ray, self.settings.address)
        self._remote = self._ray.remote(ShardEnv).options(**self.settings.actor_options)
        self._args = (config, dict(overrides), render_mode, wrap)
        self.actors = [self._make_actor(ids) for ids in self.slices]
        obs_space, act_space, metadata = self._get(
            [a.spaces.remote() for a in self.actors])[0]
        self.metadata = {**self.metadata, "render_fps": metadata["render_fps"]}
        self.single_observation_space, self.single_action_space = obs_space, act_space
        self.observation_space = batch_space(obs_space, num_envs)
        self.action_space = batch_space(act_space, num_envs)
        self.restarts = 0
        self._base_seed: int | None = None
        # restarted shards whose envs start on the next call -> those envs' seeds
        self._pending: dict[int, list[int] | None] = {}
        self._last_obs: list[Any] = [None] * len(self.slices)
        self._reset_once = False

    # ------------------------------------------------------------------ API
    def reset(self, *, seed: int | list[int] | None = None, options: dict | None = None):
        check_open(self.closed, "reset")
        seeds = per_env_seeds(seed, self.num_envs)
        super().reset(seed=seeds[0])
        mask = reset_mask(options, self.num_envs)
        if isinstance(seed, (int, np.integer)):
            self._base_seed = int(seed)
        for k, restart_seeds in sorted(self._pending.items()):  # a new actor never reset
            self._get([self.actors[k].reset.remote(restart_seeds, None, self._curriculum.stage)])
        self._pending.clear()

        def call(k: int, ids: range, full: bool):
            part = [seeds[i] for i in ids]
            part = None if all(s is None for s in part) else part
            if full and part is None:
                part = self._restart_seeds(k)
            sub = None if mask is None or full else mask[ids.start:ids.stop]
            return self.actors[k].reset.remote(part, sub, self._curriculum.stage)

        results, restarted = self._gather(call)
        obs = [r[0] for r in results]
        self._last_obs = obs
        self._reset_once = True
        info = merge_infos([r[1] for r in results], [len(s) for s in self.slices])
        if restarted.any():
            info["shard_restarted"], info["_shard_restarted"] = restarted, restarted.copy()
        return concat_obs(obs), info

    def step(self, actions: Any):
        check_open(self.closed, "step")
        check_reset_first(self._reset_once)
        actions = check_actions(actions, self.action_space, self.num_envs)
        stage = self._curriculum.stage
        pending, self._pending = self._pending, {}

        def call(k: int, ids: range, full: bool):
            if k in pending:  # NEXT_STEP: the envs whose episodes the restart cut start now
                return self.actors[k].reset.remote(pending[k], None, stage)
            return self.actors[k].step.remote(actions[ids.start:ids.stop], stage)

        results, restarted = self._gather(call, stepping=True)
        sizes = [len(s) for s in self.slices]
        parts = []
        for k, (ids, r) in enumerate(zip(self.slices, results, strict=True)):
            if k in pending or restarted[ids.start]:
                n = len(ids)
                zeros, cut = np.zeros(n), np.full(n, bool(restarted[ids.start]))
                r = (r[0], zeros, np.zeros(n, bool), cut, {})
            parts.append(r)
        obs = [p[0] for p in parts]
        self._last_obs = obs
        info = merge_infos([p[4] for p in parts], sizes)
        self._count_episodes(info)
        if restarted.any():
            info["shard_restarted"], info["_shard_restarted"] = restarted, restarted.copy()
        return (concat_obs(obs), np.concatenate([p[1] for p in parts]),
                np.concatenate([p[2] for p in parts]), np.concatenate([p[3] for p in parts]),
                info)

    def render(self) -> tuple[np.ndarray, ...] | None:
        """One frame per env from every shard ("rgb_array"); None otherwise."""
        frames = self._get([a.render.remote() for a in self.actors])
        if frames[0] is None:
            return None
        return tuple(f for shard in frames for f in shard)

    @property
    def curriculum(self) -> Curriculum:
        """The run's curriculum: every shard's training episodes advance it, in env order."""
        return self._curriculum

    @property
    def curriculum_stage(self) -> int:
        return self._curriculum.stage

    def close_extras(self, **kwargs: Any) -> None:
        for actor in self.actors:
            self._ray.kill(actor)  # no graceful call: a dead actor must not block closing
        self.actors = []

    # ------------------------------------------------------------------ internals
    def _make_actor(self, ids: range):
        return self._remote.remote(len(ids), *self._args)

    def _get(self, refs: list) -> list:
        return self._ray.get(refs)

    def _gather(self, call: Callable, stepping: bool = False) -> tuple[list, np.ndarray]:
        """Every shard's `call`, gathered in one ray.get; a dead shard raises or restarts.
        Returns the results and the mask of envs whose shard was restarted."""
        refs = [call(k, ids, False) for k, ids in enumerate(self.slices)]
        restarted = np.zeros(self.num_envs, bool)
        try:
            return self._get(refs), restarted
        except self._ray.exceptions.RayActorError:
            pass
        results = []
        for k, (ids, ref) in enumerate(zip(self.slices, refs, strict=True)):
            try:
                results.append(self._get([ref])[0])
                continue
            except self._ray.exceptions.RayActorError as exc:
                if self.settings.on_failure == "raise":
                    self.close()
                    raise ShardDiedError(k, ids, exc) from exc
            self.restarts += 1
            self._ray.kill(self.actors[k])
            self.actors[k] = self._make_actor(ids)
            restarted[ids.start:ids.stop] = True
            if stepping:  # the cut episodes end now; the new ones start on the next step
                self._pending[k] = self._restart_seeds(k)
                results.append((self._last_obs[k], None, None, None, {}))
            else:
                results.append(self._get([call(k, ids, True)])[0])
        return results, restarted

    def _restart_seeds(self, k: int) -> list[int] | None:
        if self._base_seed is None:
            return None
        offset = self._base_seed + self.restarts * self.num_envs
        return [offset + i for i in self.slices[k]]

    def _count_episodes(self, info: dict[str, Any]) -> None:
        if "episode_result" in info:
            results = info["episode_result"]["result"]
            for e in np.flatnonzero(info["_episode_result"]):
                self._curriculum.count(results[e])
