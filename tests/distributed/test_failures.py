"""A dead shard actor (ray.kill mid-run): the documented error, or the shard re-created."""

from __future__ import annotations

import re

import numpy as np
import pytest

from arena_gym.envs.vector_env import ArenaVectorEnv
from tests.distributed.compare import assert_identical
from tests.waiting import wait_until


def make(on_failure: str):
    from arena_gym.distributed import DistributedVectorEnv

    return DistributedVectorEnv(4, distributed={"shards": 2, "on_failure": on_failure},
                                max_episode_steps=50)


def kill(ray, actor) -> None:
    """ray.kill, then wait until calls see the actor dead (a kill is asynchronous)."""
    ray.kill(actor)

    def dead() -> bool:
        try:
            ray.get(actor.spaces.remote())  # side-effect free: the actor is not dead yet
        except ray.exceptions.RayActorError:
            return True
        return False

    wait_until(dead, 60, "the killed actor to stop answering")


def test_a_killed_actor_stops_the_run_naming_its_shard_and_envs(ray_cluster):
    from arena_gym.distributed import ShardDiedError

    env = make("raise")
    env.reset(seed=0)
    env.step(np.zeros((4, 2), np.float32))
    kill(ray_cluster, env.actors[1])
    with pytest.raises(ShardDiedError, match=re.escape("shard 1 (envs 2-3) died: ")) as caught:
        env.step(np.zeros((4, 2), np.float32))
    assert (caught.value.shard, list(caught.value.env_ids)) == (1, [2, 3])
    assert "on_failure': 'restart'" in str(caught.value)
    assert env.closed and env.actors == []  # stopped cleanly: the other actor is gone too
    with pytest.raises(RuntimeError, match=re.escape("step() called after close()")):
        env.step(np.zeros((4, 2), np.float32))


def test_with_restart_the_shard_is_recreated_and_reseeded_deterministically(ray_cluster):
    env, local = make("restart"), ArenaVectorEnv(4, max_episode_steps=50)
    seed = 5
    env.reset(seed=seed)
    local.reset(seed=seed)
    action = np.tile(np.array([0.1, 0.3], np.float32), (4, 1))
    for _ in range(3):
        last, *_ = env.step(action)
        local.step(action)
    dead = env.actors[1]
    kill(ray_cluster, dead)
    obs, reward, terminated, truncated, info = env.step(action)
    want, *_ = local.step(action)
    assert env.actors[1] is not dead and env.restarts == 1
    assert truncated.tolist() == [False, False, True, True] and not terminated.any()
    assert reward[2:].tolist() == [0.0, 0.0]
    assert info["shard_restarted"].tolist() == [False, False, True, True]
    assert_identical({k: v[2:] for k, v in obs.items()}, {k: v[2:] for k, v in last.items()})
    assert_identical({k: v[:2] for k, v in obs.items()}, {k: v[:2] for k, v in want.items()})

    # NEXT_STEP: the next step starts the cut episodes, env i seeded seed + i + 1 * num_envs
    obs, reward, terminated, truncated, info = env.step(action)
    want, *_ = local.step(action)
    fresh = ArenaVectorEnv(2, max_episode_steps=50)
    first, _ = fresh.reset(seed=[seed + 4 + 2, seed + 4 + 3])
    assert_identical({k: v[2:] for k, v in obs.items()}, first)
    assert reward[2:].tolist() == [0.0, 0.0] and not (terminated | truncated).any()
    assert_identical({k: v[:2] for k, v in obs.items()}, {k: v[:2] for k, v in want.items()})
    assert "shard_restarted" not in info

    # and the run goes on: the restarted shard steps like a local env from that reset
    for _ in range(3):
        obs, *_ = env.step(action)
        want_fresh, *_ = fresh.step(action[2:])
        assert_identical({k: v[2:] for k, v in obs.items()}, want_fresh)
    for e in (env, local, fresh):
        e.close()
