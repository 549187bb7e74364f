"""The tools users reach for first, on the single env, the sync vector env and the batched
vector env (where the tool exists for it): RecordVideo, RecordEpisodeStatistics across
episode ends, Flatten + Normalize, FrameStack, check_environments_match. (SB3's
make_vec_env + PPO: tests/training/test_sb3.py; TimeAwareObservation, RecordEpisodeStatistics
with NormalizeReward: tests/envs/test_gym_api.py.)"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_match import check_environments_match
from gymnasium.wrappers import vector as vw

import arena_gym  # noqa: F401  (registers the id)

ID = "ArenaMujoco-v0"
SHORT = {"max_episode_steps": 15, "render": {"width": 96, "height": 64}}
FORWARD = np.array([0.3, 0.1], dtype=np.float32)


def _vec(mode: str, n: int = 2, **kwargs) -> gym.vector.VectorEnv:
    return gym.make_vec(ID, num_envs=n, vectorization_mode=mode, **SHORT, **kwargs)


def _decoded(path) -> np.ndarray:
    import imageio.v3 as iio

    return np.stack(list(iio.imiter(path)))


def test_record_video_single_env_writes_a_playable_mp4(tmp_path):
    env = gym.make(ID, render_mode="rgb_array", **SHORT)
    env = gym.wrappers.RecordVideo(env, str(tmp_path / "videos"), episode_trigger=lambda _: True)
    env.reset(seed=0)
    steps = 0
    while True:
        steps += 1
        _, _, terminated, truncated, _ = env.step(FORWARD)
        if terminated or truncated:
            break
    env.close()
    (video,) = (tmp_path / "videos").glob("*.mp4")
    frames = _decoded(video)
    assert frames.shape[1:] == (64, 96, 3) and len(frames) == steps + 1


@pytest.mark.parametrize("mode", ["vector_entry_point", "sync"])
def test_record_video_vector_env_writes_a_playable_mp4(tmp_path, mode):
    envs = vw.RecordVideo(_vec(mode, render_mode="rgb_array"), str(tmp_path / "videos"),
                          record_first_only=True, episode_trigger=lambda _: True)
    envs.reset(seed=0)
    for _ in range(16):  # past env 0's first episode end (15 steps)
        envs.step(np.stack([FORWARD, FORWARD]))
    envs.close()
    videos = sorted((tmp_path / "videos").glob("*.mp4"))
    assert videos
    frames = _decoded(videos[0])
    assert frames.shape[1:] == (64, 96, 3) and len(frames) >= 15


def test_record_episode_statistics_single_env_across_episode_ends():
    env = gym.wrappers.RecordEpisodeStatistics(gym.make(ID, **SHORT))
    env.reset(seed=0)
    returns, total, ends = [], 0.0, 0
    for _ in range(40):
        _, reward, terminated, truncated, info = env.step(FORWARD)
        total += reward
        if terminated or truncated:
            assert info["episode"]["r"] == pytest.approx(total)
            returns.append(total)
            total, ends = 0.0, ends + 1
            env.reset()
    assert ends >= 2 and list(env.return_queue) == pytest.approx(returns)
    env.close()


@pytest.mark.parametrize("mode", ["vector_entry_point", "sync"])
def test_record_episode_statistics_vector_env_across_episode_ends(mode):
    envs = vw.RecordEpisodeStatistics(_vec(mode))
    envs.reset(seed=0)
    lengths = []
    for _ in range(40):
        *_, info = envs.step(np.stack([FORWARD, FORWARD]))
        if "_episode" in info:
            lengths += list(info["episode"]["l"][info["_episode"]])
    assert len(lengths) >= 2 and all(1 <= n <= 15 for n in lengths)
    envs.close()


def test_flatten_and_normalize_observation_single_env():
    env = gym.make(ID, **SHORT)
    env = gym.wrappers.NormalizeObservation(gym.wrappers.FlattenObservation(env))
    obs, _ = env.reset(seed=0)
    assert obs.shape == (90 + 2 + 2,)
    for _ in range(10):
        obs, *_ = env.step(FORWARD)
    rms = env.obs_rms
    assert rms.count > 10 and np.all(np.abs(obs) < 10)
    env.close()


@pytest.mark.parametrize("mode", ["vector_entry_point", "sync"])
def test_flatten_and_normalize_observation_vector_env(mode):
    envs = vw.NormalizeObservation(vw.FlattenObservation(_vec(mode)))
    obs, _ = envs.reset(seed=0)
    assert obs.shape == (2, 94)
    for _ in range(10):
        obs, *_ = envs.step(np.stack([FORWARD, FORWARD]))
    assert np.all(np.isfinite(obs)) and envs.obs_rms.count > 20
    envs.close()


def test_frame_stack_observation_keeps_the_last_frames():
    env = gym.wrappers.FrameStackObservation(gym.make(ID, **SHORT), stack_size=3)
    obs, _ = env.reset(seed=0)
    scans = [obs["scan"][-1]]
    for _ in range(3):
        obs, *_ = env.step(FORWARD)
        scans.append(obs["scan"][-1])
    assert obs["scan"].shape == (3, 90)
    np.testing.assert_array_equal(obs["scan"], np.stack(scans[-3:]))
    env.close()


def test_frame_stack_observation_in_the_sync_vector_env():
    envs = gym.make_vec(ID, num_envs=2, vectorization_mode="sync",
                        wrappers=[lambda e: gym.wrappers.FrameStackObservation(e, 2)], **SHORT)
    obs, _ = envs.reset(seed=0)
    first = obs["scan"][:, -1].copy()
    obs, *_ = envs.step(np.stack([FORWARD, FORWARD]))
    assert obs["scan"].shape == (2, 2, 90)
    np.testing.assert_array_equal(obs["scan"][:, 0], first)
    envs.close()


def test_check_environments_match_with_and_without_rendering():
    plain = gym.make(ID, **SHORT)
    rendered = gym.make(ID, render_mode="rgb_array", **SHORT)
    check_environments_match(plain, rendered, num_steps=30, seed=3, skip_render=True)
    twin = gym.make(ID, render_mode="rgb_array", **SHORT)
    check_environments_match(rendered, twin, num_steps=10, seed=3)  # frames compared too
    for env in (plain, rendered, twin):
        env.close()
