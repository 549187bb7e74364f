"""The command line: user mistakes are one line (`arena-gym: error: ...`, exit 2), checked
before any work; model files load without unpickling unless --trust-model."""

from __future__ import annotations

import base64
import json
import os
import pickle
import re
import zipfile

import numpy as np
import pytest

from arena_gym.cli import main
from arena_gym.envs.vector_env import ArenaVectorEnv
from arena_gym.train.model_files import ModelFileError
from arena_gym.train.policies import sb3_policy
from tests.bounded import cli


class _Payload:
    """Unpickling this runs a command: it creates the marker file."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """A real `arena-gym train` run (a few seconds), its folder and stderr."""
    out = tmp_path_factory.mktemp("train") / "run"
    return out


def _train(out, capsys):
    code = main(["train", "--minutes", "0.05", "--num-envs", "4", "--eval-every", "1000",
                 "--out", str(out), "--set", "max_episode_steps=20"])
    return code, capsys.readouterr()


def _craft(src, dst, key, marker, member="data"):
    """A copy of model `src` whose JSON entry `key` is a pickle that runs a command."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for item in zin.namelist():
            content = zin.read(item)
            if item == "data":
                data = json.loads(content)
                entry = data[key] if isinstance(data.get(key), dict) else {":type:": "<class 'x'>"}
                entry[":serialized:"] = base64.b64encode(pickle.dumps(_Payload(marker))).decode()
                data[key] = entry
                content = json.dumps(data).encode()
            zout.writestr(item, content)


def test_train_then_eval_safely(run, tmp_path, capsys):
    code, printed = _train(run, capsys)
    assert code == 0
    # the progress bar measures the 3 s budget, not the learn() upper bound
    assert "/3 s" in printed.err and "50,000,000" not in printed.err
    model = run / "final_model.zip"
    assert main(["eval", str(model), "--episodes", "2", "--num-envs", "2",
                 "--set", "max_episode_steps=5"]) == 0  # our own run: no --trust-model
    assert "2 episodes: success" in capsys.readouterr().out

    env = ArenaVectorEnv(2, max_episode_steps=5)
    obs, _ = env.reset(seed=0)
    safe = sb3_policy(model, env.single_observation_space, env.single_action_space)
    trusted = sb3_policy(model, env.single_observation_space, env.single_action_space, trust=True)
    assert np.array_equal(safe(obs), trusted(obs))  # the same weights, nothing unpickled

    marker = tmp_path / "ran"
    ignored = tmp_path / "ignored.zip"  # the payload sits where the env's space replaces it
    _craft(model, ignored, "observation_space", marker)
    policy = sb3_policy(ignored, env.single_observation_space, env.single_action_space)
    assert np.array_equal(policy(obs), safe(obs)) and not marker.exists()

    crafted = tmp_path / "crafted.zip"
    _craft(model, crafted, "policy_kwargs", marker)
    message = (f"model file {str(crafted)!r}: entry 'policy_kwargs' is pickled Python, which "
               "could run code; pass --trust-model (trust=True) only for a file you made or trust")
    with pytest.raises(ModelFileError, match=re.escape(message)):
        sb3_policy(crafted, env.single_observation_space, env.single_action_space)
    env.close()
    assert main(["eval", str(crafted), "--episodes", "2", "--num-envs", "2"]) == 2
    assert capsys.readouterr().err == f"arena-gym: error: {message}\n"
    assert not marker.exists()


def test_pickled_weights_are_refused(run, tmp_path, capsys):
    import torch

    model = run / "final_model.zip"
    if not model.is_file():
        _train(run, capsys)
    crafted = tmp_path / "weights.zip"
    with zipfile.ZipFile(model) as zin, zipfile.ZipFile(crafted, "w") as zout:
        for item in zin.namelist():
            content = zin.read(item)
            if item == "policy.pth":
                path = tmp_path / "policy.pth"
                torch.save({"x": _Payload(str(tmp_path / "ran"))}, path)
                content = path.read_bytes()
            zout.writestr(item, content)
    assert main(["eval", str(crafted), "--episodes", "2", "--num-envs", "2"]) == 2
    assert capsys.readouterr().err == (
        f"arena-gym: error: model file {str(crafted)!r}: its weights hold pickled Python, which "
        "could run code; pass --trust-model (trust=True) only for a file you made or trust\n")
    assert not (tmp_path / "ran").exists()


@pytest.mark.parametrize("argv, message", [
    (["train", "--set", "nosuchkey=1"], "unknown config key 'nosuchkey'"),
    (["train", "--config", "/missing.yaml"],
     "/missing.yaml: expected an existing YAML file, got no such file"),
    (["train", "--set", "obstacle_pool=0"],
     "obstacle_pool: expected an integer >= 1 and <= 1000, got 0"),
    (["train", "--set", "room_size"], "--set: expected KEY=VALUE, got 'room_size'"),
    (["eval", "missing.zip"],
     "model file 'missing.zip': expected an existing .zip file, got no such file"),
    (["eval", "notes.txt"],
     "model file 'notes.txt': expected a Stable-Baselines3 zip, "
     "got BadZipFile: File is not a zip file"),
    (["demo", "--seed", "-5"], "argument --seed: expected an integer >= 0, got -5"),
    (["demo", "--num-envs", "two"], "argument --num-envs: expected an integer >= 1, got two"),
    (["eval", "reactive", "--set", "action=discrete"],
     "reactive: expected action=continuous, got discrete"),
    (["fly"],
     "argument COMMAND: invalid choice: 'fly' (choose from 'demo', 'train', 'eval', 'bench', "
     "'view', 'version', 'plugins', 'ros', 'bridge', 'record')"),
    (["bridge", "--world", "moon"], "--world: expected default or empty, a ROS map.yaml path "
     "or one of ['random'], got 'moon'"),
    (["record", "--robot", "/no/robot.urdf"],
     "--robot: expected 'builtin' or a URDF file, got '/no/robot.urdf'"),
    (["eval", "random", "--set", "sensors=[{kind: sonar}]"],
     "unknown sensor kind 'sonar' (expected one of ['camera', 'collision', 'contact', 'imu', "
     "'lidar', 'mujoco', 'odometry']; built-ins register when arena_gym.sensors is "
     "imported)"),
    (["eval", "random", "--set", "plugins=[{type: wind}]"],
     "unknown plugin 'wind' (expected one of []; built-ins register when arena_gym.plugins is "
     "imported)"),
    (["train", "--gamma", "5"], "gamma: expected a number in (0, 1], got 5.0"),
])
def test_user_mistakes_are_one_line_and_leave_no_files(tmp_path, monkeypatch, capsys, argv,
                                                       message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "notes.txt").write_text("not a model")
    assert main(argv) == 2
    printed = capsys.readouterr()
    assert printed.err == f"arena-gym: error: {message}\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]  # no runs/arena


def test_an_evaluation_too_long_to_keep_is_refused_before_anything_is_allocated():
    """A billion episodes' results would take 8 GB before the first episode: refused (in a
    child of 2 GiB address space: a process that allocates them fails there)."""
    done = cli("eval", "random", "--episodes", "1000000000")
    assert (done.returncode, done.stderr) == (
        2, "arena-gym: error: episodes: expected an integer in 1..1,000,000 (each keeps its "
           "result), got 1000000000\n")


def test_debug_shows_the_traceback(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match=re.escape("unknown config key 'nosuchkey'")):
        main(["train", "--set", "nosuchkey=1", "--debug"])


def test_random_baseline_runs_with_discrete_actions(capsys):
    assert main(["eval", "random", "--set", "action=discrete", "--episodes", "2",
                 "--num-envs", "2", "--set", "max_episode_steps=5"]) == 0
    assert capsys.readouterr().out.startswith("random: 2 episodes: success")


def test_a_zip_bomb_is_refused_before_anything_is_unpacked(run, tmp_path, capsys):
    model = run / "final_model.zip"
    if not model.is_file():
        _train(run, capsys)
    bomb = tmp_path / "bomb.zip"
    with zipfile.ZipFile(model) as zin, zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as zout:
        for item in zin.namelist():
            content = zin.read(item)
            if item == "data":  # still valid JSON: 200 MB of blanks after the object
                content += b" " * 200_000_000
            zout.writestr(item, content)
    with zipfile.ZipFile(bomb) as archive:  # the weights are stored: no zip inside expands
        unpacked = sum(info.file_size for info in archive.infolist())
    assert bomb.stat().st_size < 1_000_000 and unpacked > 200_000_000
    assert main(["eval", str(bomb), "--episodes", "2", "--num-envs", "2"]) == 2
    assert capsys.readouterr().err == (
        f"arena-gym: error: model file {str(bomb)!r}: expected at most 100 MB unpacked "
        f"(arena_gym.train.model_files.MAX_UNPACKED_BYTES), got {unpacked / 1e6:.1f} MB\n")
