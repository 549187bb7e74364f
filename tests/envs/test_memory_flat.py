"""Memory stays flat over many envs made, stepped and closed (issue 43 item 11): what an env
builds is freed when it is closed and dropped, at once (by reference counting: no cycle
through a scene, its pedestrian pool or its simulator waits for the cyclic collector, which
seldom runs in a large process such as a test suite)."""

from __future__ import annotations

import gc
import weakref

import gymnasium as gym
import numpy as np

import arena_gym  # noqa: F401 - registers the env
from arena_gym.envs.memory import resident_bytes
from arena_gym.envs.vector_env import ArenaVectorEnv

CYCLES, WARM = 200, 20
GROWTH = 32 * 2**20  # bytes over the 180 cycles after warm-up; one leaked env is ~60 MB


def _cycle(seed: int) -> None:
    env = gym.make_vec("ArenaMujoco-v0", num_envs=2, vectorization_mode="vector_entry_point",
                       max_episode_steps=20)
    env.reset(seed=seed)
    for _ in range(5):
        env.step(np.full((2, 2), 0.1))
    env.close()


def test_two_hundred_envs_made_stepped_and_closed_hold_memory_flat():
    for k in range(WARM):
        _cycle(k)
    before = resident_bytes()
    for k in range(WARM, CYCLES):
        _cycle(k)
    grown = resident_bytes() - before
    assert grown < GROWTH, f"{grown / 2**20:.1f} MiB more after {CYCLES - WARM} cycles"


def test_an_env_dropped_unclosed_is_freed_without_the_cyclic_collector():
    gc.disable()
    try:
        env = ArenaVectorEnv(2, max_episode_steps=20)
        env.reset(seed=0)
        env.step(np.full((2, 2), 0.1))
        parts = [weakref.ref(p) for p in (env, env.core.sim, env.core.store,
                                          env.core.store.scenes[0],
                                          env.core.store.scenes[0].pedestrians)]
        del env
        assert [p() is None for p in parts] == [True] * len(parts)
    finally:
        gc.enable()
