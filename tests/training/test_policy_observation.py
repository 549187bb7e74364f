"""The policy sees every key the config observes: the flat observation grows with the
pedestrians and configured sensor keys, the model file records its observation, and eval
refuses a model trained on another one, naming both."""

from __future__ import annotations

import json
import re
import zipfile

import numpy as np
import pytest
from gymnasium import spaces

from arena_gym.cli import main
from arena_gym.envs.vector_env import ArenaVectorEnv
from tests.conftest import require

PEOPLE = ["--set", "num_pedestrians=2", "--set", "observe_pedestrians=2"]


@pytest.fixture(autouse=True)
def sb3():
    return require("stable_baselines3", "pip install 'arena_gym[train]'")


def test_the_flat_observation_holds_pedestrians_and_sensor_keys():
    from arena_gym.wrappers.policy_obs import PEDESTRIAN_SCALE, PEDESTRIAN_SPEED, flatten
    from arena_gym.wrappers.sb3 import ArenaSB3VecEnv

    env = ArenaVectorEnv(2, num_pedestrians=2, observe_pedestrians=2,
                         sensors=[{"kind": "imu", "key": "imu"}])
    obs, _ = env.reset(seed=0)
    imu = env.single_observation_space["imu"].shape[0]
    venv = ArenaSB3VecEnv(env, seed=0)
    assert venv.observation_space.shape == (90 + 2 + 2 + 2 * 5 + imu,)
    flat = flatten(obs, env.single_observation_space)
    people = flat[:, 94:104].reshape(2, 2, 5)
    scale = [PEDESTRIAN_SCALE] * 2 + [PEDESTRIAN_SPEED] * 2 + [1.0]
    np.testing.assert_allclose(people, np.clip(obs["pedestrians"] / scale, -1, 1), rtol=1e-6)
    assert people[:, :, 4].tolist() == [[1.0, 1.0], [1.0, 1.0]]  # both people present
    np.testing.assert_array_equal(flat[:, 104:], obs["imu"])  # unbounded: as it comes
    venv.close()


def test_a_key_that_is_no_float_vector_is_refused_by_name():
    from arena_gym.wrappers.policy_obs import flat_space

    env = ArenaVectorEnv(1)
    space = spaces.Dict({**env.single_observation_space.spaces,
                         "image": spaces.Box(0, 255, (4, 6, 3), np.uint8)})
    env.close()
    with pytest.raises(ValueError, match=re.escape(
            "policy observation: expected float vectors in the flat observation (Box of one "
            "dimension), got image Box(0, 255, (4, 6, 3), uint8); leave ['image'] out of the "
            "observation, or use a policy for Dict observations (ArenaSB3VecEnv(flat=False), "
            "MultiInputPolicy)")):
        flat_space(space)


def test_a_model_records_its_observation_and_eval_refuses_another(tmp_path, capsys):
    people, plain = tmp_path / "people", tmp_path / "plain"
    for out, extra in ((people, PEOPLE), (plain, [])):
        assert main(["train", "--minutes", "0.05", "--num-envs", "2", "--eval-every", "1000",
                     "--eval-episodes", "2", "--out", str(out), "--no-progress",
                     "--set", "max_episode_steps=20", *extra]) == 0
    capsys.readouterr()
    with zipfile.ZipFile(people / "final_model.zip") as archive:
        data = json.loads(archive.read("data"))
    assert data["arena_observation"] == {"scan": [90], "goal": [2], "last_action": [2],
                                         "pedestrians": [2, 5]}
    assert data["observation_space"]["_shape"] == [104]
    assert main(["eval", str(people / "final_model.zip"), "--episodes", "2", "--num-envs", "2",
                 "--set", "max_episode_steps=5", *PEOPLE]) == 0
    assert "2 episodes: success" in capsys.readouterr().out

    model = plain / "final_model.zip"
    assert main(["eval", str(model), "--episodes", "2", "--num-envs", "2", *PEOPLE]) == 2
    assert capsys.readouterr().err == (
        f"arena-gym: error: model file {str(model)!r}: expected a policy for the env's "
        "observation scan (90), goal (2), last_action (2), pedestrians (2x5), got one trained "
        "on scan (90), goal (2), last_action (2)\n")
    model = people / "final_model.zip"
    assert main(["bench", "default", "--policy", str(model), "--episodes", "1",
                 "--out", str(tmp_path / "bench"), "--no-progress"]) == 2
    assert capsys.readouterr().err.endswith(
        f"arena-gym: error: model file {str(model)!r}: expected a policy for the env's "
        "observation scan (90), goal (2), last_action (2), got one trained on scan (90), "
        "goal (2), last_action (2), pedestrians (2x5)\n")
