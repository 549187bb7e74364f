"""The navigation task: rewards, termination, NEXT_STEP autoreset, determinism, curriculum."""

from __future__ import annotations

import re

import mujoco
import numpy as np
import pytest

from arena_gym.config import ConfigError, CurriculumConfig
from arena_gym.envs.single_env import ArenaEnv
from arena_gym.envs.vector_env import ArenaVectorEnv
from arena_gym.tasks.curriculum import Curriculum
from arena_gym.train.evaluation import evaluate
from arena_gym.train.policies import random_policy


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
    assert info["episode_result"]["result"][e] == "collision"
    assert info["reward_terms"]["collision"][e] == -25.0
    assert info["_episode_result"][e] and not info["is_success"][e]
    episode = {key: value[e] for key, value in info["episode_result"].items()}
    assert episode["collisions"] == 1  # the contact that ended it, counted once
    steps = episode["steps"]
    assert episode["trajectory"].shape == (steps + 1, 3)
    assert episode["time"] == pytest.approx(steps * env.cfg.control_dt, rel=1e-12)
    # the recorded trajectory is the path the metrics measured
    hops = np.linalg.norm(np.diff(episode["trajectory"][:, :2], axis=0), axis=1)
    assert episode["path_length"] == pytest.approx(hops.sum(), rel=1e-12) and hops.sum() > 0.1
    env.close()


def test_next_step_autoreset_table():
    """Step t ends an episode; step t+1 resets that env: reward 0, not done, action ignored."""
    env = ArenaVectorEnv(2, max_episode_steps=10)
    obs, _ = env.reset(seed=0)
    action = np.tile([0.1, 0.5], (2, 1))
    for _ in range(9):
        obs, reward, terminated, truncated, _ = env.step(action)
        assert not (terminated | truncated).any()
    obs, reward, terminated, truncated, info = env.step(action)  # step 10: the time limit
    assert truncated.all() and not terminated.any()
    assert list(info["episode_result"]["result"]) == ["timeout", "timeout"]
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
    env = ArenaVectorEnv(2, curriculum={"stages": [[0, 0], [12, 12]], "window": 5},
                         obstacle_pool=12)
    env.reset(seed=0)
    assert (env.core.store[0].data.mocap_pos[:, 2] < 0).all()  # stage 0: every box parked
    env.core.task.curriculum.stage = 1
    env.reset(seed=0)
    placed = (env.core.store[0].data.mocap_pos[:, 2] > 0).sum()
    assert placed >= 10  # 12 asked; a crowded room may drop a few
    env.close()


def test_only_the_placed_pool_boxes_take_part_in_collision_detection():
    # a parked box waits under the ground, where it touches nothing: MuJoCo's broadphase
    # skips it (bits 0); a placed one has its bits as compiled, and the robot meets it
    env = ArenaVectorEnv(2, curriculum={"stages": [[0, 0], [12, 12]], "window": 5},
                         obstacle_pool=12)
    env.reset(seed=0)
    model = env.core.store[0].compiled
    bodies = np.array([model.body(f"env_0/pool/box_{j}").id for j in range(12)])
    geoms = model.body_geomadr[bodies]
    assert model.body_contype[bodies].tolist() == [0] * 12
    assert model.body_conaffinity[bodies].tolist() == [0] * 12
    env.core.task.curriculum.stage = 1
    env.reset(seed=0)
    assert env.core.store[0].compiled is model  # no recompile: bits written in place
    placed = env.core.store[0].data.mocap_pos[model.body_mocapid[bodies], 2] > 0
    assert placed.sum() >= 10  # 12 asked; a crowded room may drop a few
    assert model.body_contype[bodies].tolist() == np.where(
        placed, model.geom_contype[geoms], 0).tolist()
    assert model.body_conaffinity[bodies].tolist() == np.where(
        placed, model.geom_conaffinity[geoms], 0).tolist()
    # the robot stood on a placed box's centre touches it in MuJoCo's collision detection
    box = int(np.flatnonzero(placed)[0])
    data = mujoco.MjData(model)
    data.qpos[:], data.mocap_pos[:] = env.core.store[0].data.qpos, env.core.store[0].data.mocap_pos
    data.mocap_quat[:] = env.core.store[0].data.mocap_quat
    a = env.core.qpos_adr
    data.qpos[a : a + 2] = data.mocap_pos[model.body_mocapid[bodies[box]], :2]
    mujoco.mj_forward(model, data)
    touched = {int(g) for c in data.contact[: data.ncon] for g in c.geom}
    assert int(geoms[box]) in touched
    env.close()


@pytest.mark.parametrize("dt", [0.002, 0.005])
def test_physics_dt_is_configurable(dt):
    env = ArenaVectorEnv(1, physics_dt=dt)
    env.reset(seed=0)
    assert env.core.store[0].model.opt.timestep == dt
    assert env.core.cfg.substeps == round(0.1 / dt)
    env.close()


NO_BOXES = {"curriculum": {"stages": [[0, 0]]}}


def test_reaching_the_goal_pays_the_goal_reward_and_reports_success():
    env = ArenaEnv(**NO_BOXES)
    obs, _ = env.reset(seed=1)
    assert obs["scan"][0] * env.core.max_range > 1.0  # clear ahead (beam 0 looks forward)
    x, y, _, yaw = env.core.task.pose[0]
    env.core.task.goal[0] = (x + 0.8 * np.cos(yaw), y + 0.8 * np.sin(yaw))  # 0.8 m straight ahead
    for t in range(30):
        obs, reward, terminated, truncated, info = env.step(np.array([0.22, 0.0], np.float32))
        if terminated or truncated:
            ended_at = t
            break
    assert terminated and not truncated
    assert info["episode_result"]["result"] == "goal" and info["is_success"] is True
    assert info["reward_terms"]["goal"] == 15.0
    assert reward == pytest.approx(sum(info["reward_terms"].values()), abs=1e-12)
    assert obs["goal"][0] < env.cfg.goal_radius
    assert 0.3 / 0.22 / 0.1 - 1 <= ended_at <= 0.8 / 0.22 / 0.1  # between 0.3 and 0.8 m of driving
    env.close()


def test_holonomic_robot_takes_discrete_and_sideways_actions(assets):
    root = assets / "robots" / "ridgeback"
    robot = {"robot": str(root / "ridgeback.urdf"), "package_paths": [str(root / "packages")],
             **NO_BOXES}
    env = ArenaEnv(action="discrete", **robot)
    assert env.action_space.n == 7 and env.observation_space["last_action"].shape == (3,)
    env.reset(seed=0)
    obs, *_ = env.step(0)  # move_forward: 1.1 m/s
    np.testing.assert_allclose(obs["last_action"], [1.1, 0.0, 0.0])
    env.close()
    env = ArenaEnv(**robot)
    env.reset(seed=0)
    x0, y0, _, yaw = env.core.task.pose[0].copy()
    for _ in range(10):  # 1 s at 0.5 m/s to the left
        env.step(np.array([0.0, 0.5, 0.0], np.float32))
    dx, dy = env.core.task.pose[0, 0] - x0, env.core.task.pose[0, 1] - y0
    forward, left = np.cos(yaw) * dx + np.sin(yaw) * dy, -np.sin(yaw) * dx + np.cos(yaw) * dy
    assert 0.4 < left < 0.55 and abs(forward) < 0.05
    env.close()


def test_reset_mask_restarts_only_the_masked_envs():
    env = ArenaVectorEnv(3, max_episode_steps=50)
    env.reset(seed=0)
    for _ in range(5):
        before, *_ = env.step(np.tile([0.2, 0.3], (3, 1)))
    obs, _ = env.reset(seed=7, options={"reset_mask": np.array([True, False, False])})
    for key in ("scan", "goal", "last_action"):  # envs 1 and 2 kept their episodes
        assert obs[key][1:].tobytes() == before[key][1:].tobytes(), key
    fresh = ArenaEnv(max_episode_steps=50)
    first, _ = fresh.reset(seed=7)  # env 0 runs the episode of seed 7
    for key in first:
        assert obs[key][0].tobytes() == first[key].tobytes(), key
    _, _, _, _, info = env.step(np.tile([0.2, 0.3], (3, 1)))
    assert info["_reward_terms"].all()  # no env was left waiting for an autoreset
    env.close()
    fresh.close()


def _run_with_divergence(blow_up: bool):
    env = ArenaVectorEnv(3, max_episode_steps=100)
    env.reset(seed=4)
    trace = []
    action = np.tile([0.1, 0.2], (3, 1))
    for t in range(8):
        if blow_up and t == 5:
            env.core.sim.state(1, "qvel")[:] = np.nan  # env 1's physics blows up mid-episode
        trace.append(env.step(action))
    env.close()
    return trace


def test_a_diverged_env_ends_truncated_and_the_others_go_on():
    clean, broken = _run_with_divergence(False), _run_with_divergence(True)
    _, reward, terminated, truncated, info = broken[5]
    np.testing.assert_array_equal(truncated, [False, True, False])
    assert not terminated.any()
    np.testing.assert_array_equal(info["diverged"], [False, True, False])
    assert info["episode_result"]["result"][1] == "diverged"
    assert info["_episode_result"].tolist() == [False, True, False]
    assert reward[1] == 0.0 and not info["is_success"][1]
    _, reward, terminated, truncated, info = broken[6]  # env 1 restarts (NEXT_STEP)
    assert not (terminated | truncated).any()
    assert info["_reward_terms"].tolist() == [True, False, True]
    assert broken[6][0]["goal"][1, 0] >= 2.0  # a new episode: start and goal >= 2 m apart
    # envs 0, 2 unaffected
    for (obs_a, rew_a, *_), (obs_b, rew_b, *_) in zip(clean, broken, strict=True):
        for key in obs_a:
            assert obs_a[key][[0, 2]].tobytes() == obs_b[key][[0, 2]].tobytes(), key
        assert rew_a[[0, 2]].tobytes() == rew_b[[0, 2]].tobytes()


def test_only_training_episodes_feed_the_curriculum():
    train = ArenaVectorEnv(2, max_episode_steps=5)
    train.reset(seed=0)
    for _ in range(5):
        train.step(np.zeros((2, 2)))
    assert list(train.curriculum.results) == [False, False]  # two timeouts counted
    train.close()
    held_out = ArenaVectorEnv(2, max_episode_steps=5)
    summary = evaluate(held_out, random_policy(held_out.single_action_space), episodes=4)
    assert summary.timeout + summary.collision == 1.0
    assert list(held_out.curriculum.results) == [] and held_out.curriculum.learning
    held_out.close()


def test_pedestrian_counts_beyond_the_pool_are_rejected():
    with pytest.raises(ConfigError, match=re.escape(
            "num_pedestrians: expected an integer >= 0 and <= 64, got 65")):
        ArenaVectorEnv(1, num_pedestrians=65)
    with pytest.raises(ConfigError, match=re.escape(
            "curriculum.pedestrians: expected 0 <= min <= max <= num_pedestrians (4), got (2, 6)")):
        ArenaVectorEnv(1, num_pedestrians=4, curriculum={"pedestrians": [[2, 6]]})
    with pytest.raises(ConfigError, match=re.escape(
            "observe_pedestrians: expected 0 without pedestrians (num_pedestrians is 0), got 3")):
        ArenaVectorEnv(1, observe_pedestrians=3)
    with pytest.raises(ConfigError, match=re.escape(
            "curriculum.pedestrians: expected one (min, max) per stage (2), got 1")):
        ArenaVectorEnv(1, num_pedestrians=4, curriculum={"stages": [[0, 1], [2, 3]],
                                                         "pedestrians": [[1, 2]]})
