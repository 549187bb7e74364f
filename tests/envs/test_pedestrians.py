"""Walking people in ArenaMujoco-v0: placed per episode through state (no recompile), a
collision with one is a pedestrian collision with its own reward term and metrics, the
k-nearest observation, determinism single or batched, and the default world untouched."""

from __future__ import annotations

import numpy as np
import pytest

from arena_gym.config import RewardConfig, load_config
from arena_gym.envs.vector_env import ArenaVectorEnv
from arena_gym.people.pedestrians import RADIUS
from arena_gym.tasks.metrics import EpisodeMetrics
from arena_gym.tasks.rewards import StepOutcome, reward_terms


def _random_steps(env, n, seed=1):
    rng = np.random.default_rng(seed)
    for _ in range(n):
        out = env.step(rng.uniform(env.action_space.low, env.action_space.high,
                                   (env.num_envs, *env.single_action_space.shape)))
    return out


def test_people_walk_through_episodes_without_a_compile_in_one_batch():
    env = ArenaVectorEnv(2, config="pedestrians", max_episode_steps=40)
    env.reset(seed=0)
    core = env.core
    counts = [core.store[e].compile_count for e in range(2)]
    start = core.task.walkers.crowd.pos.copy()
    assert core.task.walkers.crowd.active.sum(axis=1).tolist() == [8, 8]
    _, _, terminated, truncated, info = _random_steps(env, 100)  # several episodes each
    assert [core.store[e].compile_count for e in range(2)] == counts
    assert core.sim.groups() == [("batch", [0, 1])]
    assert np.hypot(*(core.task.walkers.crowd.pos - start).reshape(-1, 2).T).max() > 0.5
    assert set(info["reward_terms"]) >= {"pedestrian_collision", "pedestrian_safety",
                                         "pedestrian_speed"}
    env.close()


def test_the_default_world_has_no_people_nor_their_terms():
    env = ArenaVectorEnv(2)
    obs, _ = env.reset(seed=0)
    assert env.core.task.walkers is None and sorted(obs) == ["goal", "last_action", "scan"]
    assert not env.core.store.scene(0).pedestrians.built  # no pool: the same model as before
    env.close()


def test_driving_into_a_person_is_a_pedestrian_collision_with_its_term_and_metrics():
    env = ArenaVectorEnv(1, num_pedestrians=1, pedestrian_model="waypoints",
                         observe_pedestrians=2, curriculum={"stages": [[0, 0]]})
    env.reset(seed=3)
    core = env.core
    x, y, _, yaw = core.task.pose[0]
    ahead = (x + 0.6 * np.cos(yaw), y + 0.6 * np.sin(yaw))
    core.task.walkers.place(0, [(*ahead, yaw)], [[ahead]], [0], np.random.default_rng(0))
    obs, _, terminated, _, info = env.step(np.array([[0.0, 0.0]]))
    # robot frame: the person stands 0.6 m straight ahead; the second slot is empty
    np.testing.assert_allclose(obs["pedestrians"][0], [[0.6, 0.0, 0.0, 0.0, 1.0], [0.0] * 5],
                               atol=1e-3)
    assert info["reward_terms"]["pedestrian_safety"][0] == -0.002  # within 1 m
    for _ in range(200):
        obs, _, terminated, _, info = env.step(np.array([[0.22, 0.0]]))
        if terminated[0]:
            break
    assert terminated[0]
    episode = {k: v[0] for k, v in info["episode_result"].items()}
    assert episode["result"] == "collision" and episode["hit"] == "pedestrian"
    assert info["reward_terms"]["pedestrian_collision"][0] == -5.0
    assert episode["pedestrian_collisions"] == 1
    assert episode["min_pedestrian_distance"] < RADIUS + core.params.radius + 0.05
    assert episode["time_in_personal_space"] == pytest.approx(episode["time"])
    assert 0.05 < episode["speed_in_personal_space"] <= 0.22
    env.close()


def test_same_seed_same_people_single_or_batched():
    batched = ArenaVectorEnv(2, config="pedestrians")
    single = ArenaVectorEnv(1, config="pedestrians")
    batched.reset(seed=5)
    single.reset(seed=6)  # env 1 of the batch is seeded 5 + 1
    rng = np.random.default_rng(0)
    for _ in range(30):
        a = rng.uniform(single.action_space.low, single.action_space.high)
        batched.step(np.concatenate([a, a]))
        single.step(a)
    crowd_b, crowd_s = batched.core.task.walkers.crowd, single.core.task.walkers.crowd
    assert crowd_b.pos[1].tobytes() == crowd_s.pos[0].tobytes()
    assert batched.core.task.pose[1].tobytes() == single.core.task.pose[0].tobytes()
    batched.close()
    single.close()


def test_pedestrian_terms_and_metrics_follow_their_formulas():
    cfg = RewardConfig()
    base = dict(distance_before=np.zeros(3), distance_after=np.zeros(3),
                reached=np.zeros(3, bool), collided=np.array([True, False, False]),
                min_clearance=np.ones(3), forward_speed=np.zeros(3), action_change=np.zeros(3))
    assert "pedestrian_safety" not in reward_terms(cfg, StepOutcome(**base))
    out = StepOutcome(**base, pedestrian_distance=np.array([0.4, 0.99, 1.5]),
                      hit_pedestrian=np.array([True, False, False]),
                      speed=np.array([0.0, 0.2, 0.2]))
    terms = reward_terms(cfg, out)
    np.testing.assert_allclose(terms["pedestrian_collision"], [-5.0, 0, 0])
    np.testing.assert_allclose(terms["pedestrian_safety"], [-0.002, -0.002, 0])
    np.testing.assert_allclose(terms["pedestrian_speed"], [0, -0.005 * 0.2, 0])
    metrics = EpisodeMetrics(1, max_steps=10, pedestrians=True, personal_space=1.0)
    on = np.array([True])
    metrics.reset(on, np.zeros((1, 4)))
    for d, v in ((2.0, 0.2), (0.8, 0.1), (0.5, 0.3), (1.2, 0.2)):
        metrics.update_pedestrians(np.array([d]), np.array([v]), np.array([False]), on)
        metrics.update(np.zeros((1, 4)), np.zeros(1, bool), on, on)
    episode = metrics.episode(0, "timeout", 0.1)
    assert episode["time_in_personal_space"] == pytest.approx(0.2)
    assert episode["min_pedestrian_distance"] == 0.5
    assert episode["speed_in_personal_space"] == pytest.approx(0.2)
    assert episode["pedestrian_collisions"] == 0


def test_the_pedestrians_config_loads_with_its_people():
    cfg = load_config("pedestrians")
    assert (cfg.num_pedestrians, cfg.curriculum.pedestrians, cfg.curriculum.stages) == (
        8, ((8, 8),), ((6, 10),))


def test_evaluation_reports_the_social_metrics():
    from arena_gym.train.evaluation import evaluate
    from arena_gym.train.policies import random_policy

    env = ArenaVectorEnv(2, config="pedestrians", max_episode_steps=30)
    summary = evaluate(env, random_policy(env.single_action_space), episodes=4)
    assert set(summary.social) == {"time_in_personal_space", "min_pedestrian_distance",
                                   "speed_in_personal_space", "pedestrian_collision_rate"}
    assert 0 < summary.social["min_pedestrian_distance"] < np.inf
    assert 0 <= summary.social["time_in_personal_space"] <= 30 * 0.1
    assert "pedestrian collisions" in summary.line()
    plain = ArenaVectorEnv(2, max_episode_steps=30)
    assert evaluate(plain, random_policy(plain.single_action_space), episodes=2).social == {}
    env.close()
    plain.close()
