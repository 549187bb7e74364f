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


def test_a_camera_suite_dropped_unclosed_frees_its_renderers_and_gl_thread():
    """Its GL thread held the renderer pool (its initializer, a bound method), so every
    dropped suite kept its GL contexts (~80 MB each with llvmpipe) for the process's life."""
    import threading

    from arena_gym.scene import SceneStore
    from arena_gym.sensors import CameraSpec, SensorSuite
    from arena_gym.sim import Simulator
    from tests.sensors.worlds import camera_block, probe_urdf
    from tests.waiting import wait_until

    def gl_threads() -> list[threading.Thread]:
        return [t for t in threading.enumerate() if t.name.startswith("arena-gl")]

    before = gl_threads()
    store = SceneStore(1)
    store[0].spawn_urdf("probe", probe_urdf(camera_block(width=64, height=48)))
    sim = Simulator(store)
    suite = SensorSuite(sim, specs=[CameraSpec("probe", outputs=("rgb",))], seed=0)
    sim.step(10)
    assert suite["probe/camera"].fresh[0]  # rendered: a renderer and its GL thread exist
    ours = [t for t in gl_threads() if t not in before]
    assert len(ours) == 1
    pool = weakref.ref(suite.renderers)
    gc.disable()
    try:
        del suite, sim, store
        assert pool() is None
    finally:
        gc.enable()
    wait_until(lambda: not ours[0].is_alive(), 30, "the dropped pool's GL thread to end")
