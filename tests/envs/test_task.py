"""The navigation task: rewards, termination, NEXT_STEP autoreset, determinism, curriculum."""

from __future__ import annotations

import numpy as np
import pytest

from arena_gym.config import CurriculumConfig
from arena_gym.envs.single_env import ArenaEnv
from arena_gym.envs.vector_env import ArenaVectorEnv
from arena_gym.tasks.curriculum import Curriculum


def _drive_until_end(env, action, limit=400):
    for t in range(limit):
        out = env.step(action)
        if np.any(out[2] | out[3]):
            return t, out
    raise AssertionError("no episode ended")


def test_reward_is_the_sum_of_its_terms():
    env = ArenaVectorEnv(4, max_episode_steps=50)
    env.reset(seed=2)
    rng = np.random.default_rng(1)
    for _ in range(80):
        _, reward, _, _, info = env.step(rng.uniform(env.action_space.low, env.action_space.high))
        terms = info["reward_terms"]
        assert set(terms) == {"goal", "collision", "progress", "safe_distance", "reverse",
                              "abrupt_velocity", "time"}
        np.testing.assert_allclose(reward, sum(terms.values()), rtol=0, atol=1e-12)
    env.close()


def test_collision_ends_the_episode_with_the_collision_reward():
    env = ArenaVectorEnv(2)
    env.reset(seed=0)
    _, (_, _, terminated, _, info) = _drive_until_end(env, np.tile([0.22, 0.0], (2, 1)))
    e = int(np.flatnonzero(terminated)[0])
    assert info["episode"]["result"][e] == "collision"
    assert info["reward_terms"]["collision"][e] == -15.0
    assert info["_episode"][e]
    assert info["episode"]["path_length"][e] > 0
    env.close()


def test_next_step_autoreset_table():
    """Step t ends an episode; step t+1 resets that env: reward 0, not done, action ignored."""
    env = ArenaVectorEnv(2, max_episode_steps=10)
    obs, _ = env.reset(seed=0)
    action = np.tile([0.1, 0.5], (2, 1))
    for t in range(9):
        obs, reward, terminated, truncated, _ = env.step(action)
        assert not (terminated | truncated).any()
    obs, reward, terminated, truncated, info = env.step(action)  # step 10: the time limit
    assert truncated.all() and not terminated.any()
    assert list(info["episode"]["result"]) == ["timeout", "timeout"]
    obs, reward, terminated, truncated, info = env.step(np.tile([0.22, -2.84], (2, 1)))
    np.testing.assert_array_equal(reward, [0.0, 0.0])
    assert not (terminated | truncated).any()
    assert not info["_reward_terms"].any()
    np.testing.assert_array_equal(obs["last_action"], np.zeros((2, 2)))  # the action was ignored
    assert (obs["goal"][:, 0] >= 2.0).all()  # a new episode: start and goal >= 2 m apart
    obs, reward, terminated, truncated, info = env.step(action)  # the new episode runs
    assert info["_reward_terms"].all()
    np.testing.assert_allclose(obs["last_action"], action)
    env.close()


def test_same_seed_same_episode_bit_for_bit():
    runs = []
    for _ in range(2):
        env = ArenaVectorEnv(3, max_episode_steps=30)
        obs, _ = env.reset(seed=11)
        rng = np.random.default_rng(3)
        trace = [obs["scan"].tobytes()]
        for _ in range(70):
            obs, reward, *_ = env.step(rng.uniform(env.action_space.low, env.action_space.high))
            trace += [obs["scan"].tobytes(), obs["goal"].tobytes(), reward.tobytes()]
        runs.append(trace)
        env.close()
    assert runs[0] == runs[1]


def test_vector_env_i_equals_single_env_seeded_s_plus_i():
    seed, n = 20, 3
    vector = ArenaVectorEnv(n, max_episode_steps=40)
    vobs, _ = vector.reset(seed=seed)
    rng = np.random.default_rng(7)
    actions = [rng.uniform(vector.action_space.low, vector.action_space.high) for _ in range(35)]
    vtrace = [vobs]
    for a in actions:
        vtrace.append(vector.step(a)[0])
    for i in range(n):
        single = ArenaEnv(max_episode_steps=40)
        obs, _ = single.reset(seed=seed + i)
        for t, a in enumerate(actions):
            for key in obs:
                assert obs[key].tobytes() == vtrace[t][key][i].tobytes(), (i, t, key)
            obs, _, terminated, truncated, _ = single.step(a[i])
            if terminated or truncated:
                break
        single.close()
    vector.close()


def test_curriculum_advances_and_falls_back():
    cfg = CurriculumConfig(stages=((0, 2), (2, 4), (4, 8)), advance=0.9, fall_back=0.3, window=10)
    cur = Curriculum(cfg)
    for _ in range(10):
        cur.record(True)
    assert cur.stage == 1 and cur.obstacles == (2, 4)
    for _ in range(9):
        cur.record(True)
    cur.record(False)
    assert cur.stage == 2
    for _ in range(10):
        cur.record(False)
    assert cur.stage == 1


def test_curriculum_stage_sets_the_obstacle_count():
    env = ArenaVectorEnv(2, curriculum={"stages": [[0, 0], [12, 12]], "window": 5}, obstacle_pool=12)
    env.reset(seed=0)
    assert (env.core.store.data(0).mocap_pos[:, 2] < 0).all()  # stage 0: every box parked
    env.core.curriculum.stage = 1
    env.reset(seed=0)
    placed = (env.core.store.data(0).mocap_pos[:, 2] > 0).sum()
    assert placed >= 10  # 12 asked; a crowded room may drop a few
    env.close()


@pytest.mark.parametrize("dt", [0.002, 0.005])
def test_physics_dt_is_configurable(dt):
    env = ArenaVectorEnv(1, physics_dt=dt)
    env.reset(seed=0)
    assert env.core.store.model(0).opt.timestep == dt
    assert env.core.cfg.substeps == round(0.1 / dt)
    env.close()
