"""The MJX backend on CPU JAX at 2 envs (no GPU here): alignment with the CPU env over 200
control steps, episode sampling, autoreset, determinism, the Gymnasium front end and its
input checks, the implementation switch. One env and one task per module: each jit compile
happens once."""

from __future__ import annotations

import re
import sys

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena_gym.config import load_config
from arena_gym.envs.core import NavigationCore
from arena_gym.mjx.deps import choose_impl
from arena_gym.tasks.sampling import PARKED_Z
from tests.conftest import imported_after

STEPS = 200
N = 2


@pytest.fixture(scope="module")
def envs():
    envs = gym.make_vec("ArenaMujoco-v0", num_envs=N, backend="mjx")
    yield envs
    envs.close()


@pytest.fixture(scope="module")
def task(envs):
    return envs.task


def _actions(t: int) -> np.ndarray:
    """Env 0 wiggles around its start (forward and back, turning both ways); env 1 drives
    on a slow curve until it hits something or reaches its goal."""
    return np.array([[0.1 * np.sin(2 * np.pi * t / 40), 2.0 * np.cos(2 * np.pi * t / 25)],
                     [0.22, 0.4 * np.sin(2 * np.pi * t / 60)]])


@pytest.fixture(scope="module")
def aligned(task):
    """The same two episodes (the CPU env's draws) stepped by both backends with the same
    actions until each episode ends: per step, pose, scan ranges (m), reward, result."""
    import jax.numpy as jnp

    from arena_gym.mjx.sampling import Draw

    cfg = load_config(base="wheeled")
    core = NavigationCore(N, cfg)
    try:
        for e in range(N):
            core.seed(e, 100 + e)
        eps = core.reset_envs(list(range(N)))
        pool = len(task.layout.mocap)
        boxes, placed = np.zeros((N, pool, 3)), np.zeros((N, pool), bool)
        for e, ep in enumerate(eps):
            idx = ep.boxes[:, 0].astype(int)
            boxes[e, idx], placed[e, idx] = ep.boxes[:, 1:4], True
        draws = Draw(jnp.asarray([ep.start for ep in eps], jnp.float32),
                     jnp.asarray([ep.goal for ep in eps], jnp.float32),
                     jnp.asarray(boxes, jnp.float32), jnp.asarray(placed))
        cpu = {k: [] for k in ("pose", "scan", "reward", "result")}
        running = np.ones(N, bool)
        for t in range(STEPS):
            out = core.step(_actions(t), running.copy())
            cpu["pose"].append(core.task.pose[:, [0, 1, 3]].copy())
            cpu["scan"].append(out.obs["scan"] * core.max_range)
            cpu["reward"].append(out.reward.copy())
            cpu["result"].append([out.termination.result(e) if out.termination.ended[e]
                                  else "" for e in range(N)])
            running &= ~out.termination.ended
            if not running.any():
                break
    finally:
        core.close()
    cpu = {k: np.asarray(v) for k, v in cpu.items()}
    return cpu, _record(task, draws, len(cpu["pose"])), draws


def _record(task, draws, steps: int) -> dict[str, np.ndarray]:
    """`task` started from `draws` and stepped with _actions: per step, pose, scan ranges
    (m), reward, result."""
    import jax
    import jax.numpy as jnp

    state = task.start(draws, jnp.stack([jax.random.PRNGKey(e) for e in range(N)]))
    out = {k: [] for k in ("pose", "scan", "reward", "result")}
    names = np.array(["", "goal", "collision", "timeout", "diverged"])
    for t in range(steps):
        state = task.step(state, jnp.asarray(_actions(t), jnp.float32))
        q = np.asarray(state.data.qpos)[:, task.layout.qpos_adr:task.layout.qpos_adr + 7]
        w, z = q[:, 3], q[:, 6]
        out["pose"].append(np.column_stack([q[:, 0], q[:, 1], 2 * np.arctan2(z, w)]))
        out["scan"].append(np.asarray(state.obs["scan"]) * task.layout.range_max)
        out["reward"].append(np.asarray(state.reward, np.float64))
        out["result"].append(list(names[np.asarray(state.result)]))
    return {k: np.asarray(v) for k, v in out.items()}


def _until_end(results: np.ndarray, env: int) -> int:
    """Steps of env's episode, its last one included."""
    ended = np.flatnonzero(results[:, env] != "")
    return int(ended[0]) + 1 if len(ended) else len(results)


def test_the_episodes_end_alike(aligned):
    cpu, mjx, _ = aligned
    for e in range(N):
        n = _until_end(cpu["result"], e)
        assert _until_end(mjx["result"], e) == n
        assert mjx["result"][n - 1, e] == cpu["result"][n - 1, e]
    assert _until_end(cpu["result"], 0) == STEPS  # the wiggling robot runs all 200 steps


def test_trajectories_match_the_cpu_env(aligned):
    cpu, mjx, _ = aligned
    for e in range(N):
        n = _until_end(cpu["result"], e)
        gap = np.hypot(*(cpu["pose"][:n, e, :2] - mjx["pose"][:n, e, :2]).T)
        heading = np.abs(np.angle(np.exp(1j * (cpu["pose"][:n, e, 2] - mjx["pose"][:n, e, 2]))))
        assert gap.max() < POSE_TOL_M, (e, gap.max())
        assert heading.max() < YAW_TOL_RAD, (e, heading.max())


def test_scans_match_the_cpu_env(aligned):
    cpu, mjx, _ = aligned
    for e in range(N):
        n = _until_end(cpu["result"], e)
        diff = np.abs(cpu["scan"][:n, e] - mjx["scan"][:n, e])
        # beams grazing a box edge jump between the box and what lies behind it
        assert np.median(diff) < SCAN_MEDIAN_TOL_M, (e, np.median(diff))
        assert np.mean(diff > SCAN_BEAM_TOL_M) < SCAN_OUTLIERS, (e, np.mean(diff > SCAN_BEAM_TOL_M))


def test_rewards_match_the_cpu_env(aligned):
    cpu, mjx, _ = aligned
    for e in range(N):
        n = _until_end(cpu["result"], e)
        diff = np.abs(cpu["reward"][:n, e] - mjx["reward"][:n, e])
        assert diff.max() < REWARD_TOL, (e, diff.max())
        assert abs(cpu["reward"][:n, e].sum() - mjx["reward"][:n, e].sum()) < RETURN_TOL


# Measured on CPU JAX (float32) against the CPU env (float64), seeds 100 and 101: poses within
# 0.3 mm and 0.0017 rad, scan median 0.04 mm (99th percentile 2 mm; 0.05 % of beams, those
# grazing a box edge, jump by more than 5 cm), rewards equal to 1e-5, both collisions at the
# same step. The bounds leave about 5x of that for other machines' round-off.
POSE_TOL_M = 0.002
YAW_TOL_RAD = 0.01
SCAN_MEDIAN_TOL_M = 0.0005
SCAN_BEAM_TOL_M = 0.05
SCAN_OUTLIERS = 0.005
REWARD_TOL = 0.001
RETURN_TOL = 0.002


WARP_STEPS = 30  # env 1's collision (step 24) and its autoreset included
# Measured (both float32, same model): Warp against JAX within 6e-6 m and 2e-5 rad for the
# wiggling env, 3.5e-5 m and 4e-4 rad for the one driving into a box (its contact solve
# differs most), scan median 2e-5 m (3 of 8640 beams, at box edges, past 5 cm), rewards
# within 4e-6. The bounds are about 5x these.
WARP_POSE_TOL_M = 2e-4
WARP_YAW_TOL_RAD = 2e-3
WARP_SCAN_MEDIAN_TOL_M = 1e-4
WARP_REWARD_TOL = 2e-5


@pytest.fixture(scope="module")
def warp(aligned):
    """The aligned episodes stepped by MuJoCo Warp (through MJX's switch, on Warp's CPU
    device): the task and its record."""
    from arena_gym.mjx.task import MjxTask

    task = MjxTask.make(load_config(base="wheeled"), "warp")
    return task, _record(task, aligned[2], WARP_STEPS)


def test_mujoco_warp_steps_the_task_as_the_jax_implementation_does(aligned, warp):
    _, jx, _ = aligned
    task, wp = warp
    assert task.impl == "warp" and type(task.model._impl).__name__ == "ModelWarp"
    for e in range(N):
        n = min(_until_end(jx["result"], e), WARP_STEPS)
        assert _until_end(wp["result"], e) == n
        assert wp["result"][n - 1, e] == jx["result"][n - 1, e]
        gap = np.hypot(*(jx["pose"][:n, e, :2] - wp["pose"][:n, e, :2]).T)
        heading = np.abs(np.angle(np.exp(1j * (jx["pose"][:n, e, 2] - wp["pose"][:n, e, 2]))))
        scan = np.abs(jx["scan"][:n, e] - wp["scan"][:n, e])
        reward = np.abs(jx["reward"][:n, e] - wp["reward"][:n, e])
        assert gap.max() < WARP_POSE_TOL_M, (e, gap.max())
        assert heading.max() < WARP_YAW_TOL_RAD, (e, heading.max())
        assert np.median(scan) < WARP_SCAN_MEDIAN_TOL_M, (e, np.median(scan))
        assert np.mean(scan > SCAN_BEAM_TOL_M) < SCAN_OUTLIERS, (e, np.mean(scan > SCAN_BEAM_TOL_M))
        assert reward.max() < WARP_REWARD_TOL, (e, reward.max())
    assert wp["result"][23, 1] == "collision"  # the contacts of every world, read per env
    assert wp["result"][24, 1] == "" and wp["reward"][24, 1] == 0.0  # autoreset


def test_resets_differ_per_env_and_per_seed_and_repeat_per_seed(envs):
    obs_a, _ = envs.reset(seed=7)
    goal_a = np.asarray(envs.state.goal).copy()
    obs_b, _ = envs.reset(seed=7)
    assert np.array_equal(np.asarray(envs.state.goal), goal_a)
    for key in obs_a:
        assert np.array_equal(obs_a[key], obs_b[key])
    assert np.hypot(*(goal_a[0] - goal_a[1])) > 1e-3  # env 0 and env 1: seeds 7 and 8
    envs.reset(seed=8)
    assert np.allclose(np.asarray(envs.state.goal)[0], goal_a[1])  # env 0 now has seed 8
    assert np.hypot(*(np.asarray(envs.state.goal)[1] - goal_a[1])) > 1e-3


def test_autoreset_samples_a_new_episode_each_time(envs, task):
    import jax.numpy as jnp

    envs.reset(seed=3)
    state = envs.state
    goals = [np.asarray(state.goal)[0].copy()]
    for _ in range(2):  # env 0's episode "ended": its next step restarts it
        state = state._replace(ended=jnp.asarray([True, False]))
        before = np.asarray(state.steps)
        state = task.step(state, jnp.asarray(_actions(0), jnp.float32))
        assert np.asarray(state.steps).tolist() == [0, before[1] + 1]
        assert np.asarray(state.active).tolist() == [False, True]
        assert float(state.reward[0]) == 0.0 and not bool(state.terminated[0])
        goals.append(np.asarray(state.goal)[0].copy())
    assert np.hypot(*(goals[0] - goals[1])) > 1e-3 and np.hypot(*(goals[1] - goals[2])) > 1e-3


def _boxes_placed(envs) -> np.ndarray:
    """Pool boxes in each env's world (the rest parked under the floor)."""
    z = np.asarray(envs.state.data.mocap_pos)[:, envs.task.layout.mocap, 2]
    return np.count_nonzero(z > PARKED_Z / 2, axis=1)


def test_ended_episodes_report_the_cpu_envs_metrics_and_advance_the_curriculum(envs):
    import jax.numpy as jnp

    from arena_gym.config import CurriculumConfig
    from arena_gym.tasks.curriculum import Curriculum

    default = envs.curriculum
    # stage 1 has no boxes: one success (window 1, advance 0.5) moves there
    envs.curriculum = Curriculum(CurriculumConfig(stages=((6, 10), (0, 0)), advance=0.5,
                                                  fall_back=0.0, window=1))
    try:
        envs.reset(seed=5)
        assert ((_boxes_placed(envs) >= 6) & (_boxes_placed(envs) <= 10)).all()
        a = envs.task.layout.qpos_adr
        start = np.asarray(envs.state.data.qpos)[:, a:a + 2].copy()
        # env 0's goal where it stands: its first step reaches it
        goal = np.asarray(envs.state.goal).copy()
        goal[0] = start[0]
        envs.state = envs.state._replace(goal=jnp.asarray(goal, jnp.float32))
        _, _, terminated, _, info = envs.step(np.array([[0.2, 0.0], [0.2, 0.0]]))
        assert terminated.tolist() == [True, False]
        after = np.asarray(envs.state.data.qpos)[:, a:a + 2]
        ep = info["episode_result"]
        assert info["_episode_result"].tolist() == [True, False]
        assert info["is_success"][0] and info["_is_success"].tolist() == [True, False]
        cpu = gym.make_vec("ArenaMujoco-v0", num_envs=N, max_episode_steps=1,
                           base="wheeled")
        try:
            cpu.reset(seed=0)
            assert set(ep) == set(cpu.step(np.zeros((N, 2)))[-1]["episode_result"])
        finally:
            cpu.close()
        assert ep["result"][0] == "goal" and ep["steps"][0] == 1 and ep["hit"][0] == ""
        assert ep["time"][0] == pytest.approx(envs.cfg.control_dt)
        np.testing.assert_allclose(ep["trajectory"][0][:, :2], [start[0], after[0]], atol=1e-6)
        assert ep["path_length"][0] == pytest.approx(np.hypot(*(after[0] - start[0])), abs=1e-6)
        assert ep["path_length"][0] > 0.002  # it drove (3.8 mm from rest in 0.1 s)
        np.testing.assert_allclose(ep["goal"][0], goal[0])
        assert envs.curriculum_stage == 1  # the success advanced the curriculum
        envs.step(np.zeros((N, 2)))  # env 0's autoreset draws from stage 1: no boxes
        assert _boxes_placed(envs)[0] == 0 and 6 <= _boxes_placed(envs)[1] <= 10
        envs.reset(seed=6)
        assert _boxes_placed(envs).tolist() == [0, 0]
    finally:
        envs.curriculum = default
        envs.reset(seed=0)


def test_frames_are_the_cpu_envs_frames_of_the_same_state(envs):
    import jax.numpy as jnp

    cpu = gym.make_vec("ArenaMujoco-v0", num_envs=N, render_mode="rgb_array", base="wheeled")
    try:
        obs, _ = cpu.reset(seed=0)
        want = cpu.render()
        snaps = [cpu.view._frames.snapshot(e) for e in range(N)]
        goal = cpu.core.task.goal.copy()
    finally:
        cpu.close()
    envs.reset(seed=0)
    s = envs.state
    data = s.data.replace(
        qpos=jnp.asarray(np.stack([d.qpos for d in snaps]), jnp.float32),
        mocap_pos=jnp.asarray(np.stack([d.mocap_pos for d in snaps]), jnp.float32),
        mocap_quat=jnp.asarray(np.stack([d.mocap_quat for d in snaps]), jnp.float32))
    envs.state = s._replace(data=data, goal=jnp.asarray(goal, jnp.float32),
                            obs={**s.obs, "scan": jnp.asarray(obs["scan"])})
    envs.render_mode = "rgb_array"
    try:
        got = envs.render()
    finally:
        envs.render_mode = None
    assert len(got) == N and got[0].shape == want[0].shape and got[0].dtype == np.uint8
    for e in range(N):
        diff = np.abs(got[e].astype(int) - want[e].astype(int))
        # measured: 2 of 76800 pixels past 8 levels in env 0 (float32 poses), none in env 1
        assert np.mean(diff.max(axis=2) > 8) < 2e-4, (e, np.mean(diff.max(axis=2) > 8))
    # the two envs' robots stand in different places: their frames differ
    assert np.mean(np.abs(got[0].astype(int) - got[1].astype(int)).max(axis=2) > 8) > 0.2


def test_render_mode_is_rgb_array_or_none():
    with pytest.raises(ValueError, match=re.escape(
            "render_mode: the MJX backend draws frames, expected None or 'rgb_array', "
            "got 'human'")):
        gym.make_vec("ArenaMujoco-v0", num_envs=1, backend="mjx", render_mode="human")


def test_bad_actions_are_refused_with_the_cpu_envs_errors(envs):
    envs.reset(seed=0)
    steps = np.asarray(envs.state.steps).copy()
    with pytest.raises(ValueError, match=re.escape(
            "actions: expected finite numbers, got nan at [1, 0]")):
        envs.step(np.array([[0.1, 0.0], [np.nan, 0.0]]))
    with pytest.raises(ValueError, match=re.escape(
            "actions: expected shape (2, 2), got (3, 2)")):
        envs.step(np.zeros((3, 2)))
    assert np.array_equal(np.asarray(envs.state.steps), steps)  # nothing stepped


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(shape=st.lists(st.integers(0, 4), min_size=0, max_size=3).map(tuple),
       bad=st.sampled_from([np.nan, np.inf, -np.inf]), where=st.integers(0, 3))
def test_any_bad_action_changes_nothing(envs, shape, bad, where):
    if envs.state is None:
        envs.reset(seed=0)
    steps = np.asarray(envs.state.steps).copy()
    if shape != (N, 2):
        with pytest.raises(ValueError, match=re.escape(
                f"actions: expected shape ({N}, 2), got {shape}")):
            envs.step(np.zeros(shape))
    actions = np.zeros((N, 2))
    actions.flat[where] = bad
    with pytest.raises(ValueError, match=re.escape(
            f"actions: expected finite numbers, got {bad} at {[where // 2, where % 2]}")):
        envs.step(actions)
    assert np.array_equal(np.asarray(envs.state.steps), steps)


def test_the_front_end_speaks_numpy_with_the_cpu_envs_spaces(envs):
    obs, _ = envs.reset(seed=1)
    obs, reward, terminated, truncated, info = envs.step(np.zeros((N, 2)))
    assert envs.observation_space.contains(obs)
    assert isinstance(reward, np.ndarray) and reward.shape == (N,)
    assert set(info["reward_terms"]) == {"goal", "collision", "progress", "safe_distance",
                                         "reverse", "abrupt_velocity", "time"}
    assert np.allclose(sum(info["reward_terms"].values()), reward, atol=1e-6)
    cpu = gym.make_vec("ArenaMujoco-v0", num_envs=N)
    try:
        assert cpu.single_observation_space == envs.single_observation_space
        assert cpu.single_action_space == envs.single_action_space
    finally:
        cpu.close()


def test_unknown_backend_is_refused():
    with pytest.raises(ValueError, match=re.escape(
            "backend: expected one of ('cpu', 'mjx'), got 'gpu'")):
        gym.make_vec("ArenaMujoco-v0", num_envs=1, backend="gpu")


def test_the_implementation_is_jax_on_this_cpu_and_warp_on_a_gpu_with_mujoco_warp(task):
    assert choose_impl() == "jax" and task.impl == "jax"
    assert choose_impl("gpu", warp_installed=True) == "warp"
    assert choose_impl("gpu", warp_installed=False) == "jax"
    assert choose_impl("cpu", warp_installed=True) == "jax"


def test_importing_arena_gym_imports_no_jax():
    assert imported_after("arena_gym, arena_gym.mjx, arena_gym.make", "jax") == []


def test_without_jax_the_backend_says_how_to_install_it(monkeypatch):
    from arena_gym.mjx.deps import INSTALL_HINT, require

    monkeypatch.setitem(sys.modules, "jax", None)
    with pytest.raises(ImportError, match=re.escape(INSTALL_HINT)):
        require()
