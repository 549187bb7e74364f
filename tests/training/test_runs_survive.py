"""A training run keeps its results: curve.csv grows a row per evaluation, Ctrl-C saves the
model and says how to continue, --resume continues it (model, normaliser, curve, step
count), a folder holding a run is refused unless --overwrite, and each evaluation runs the
process's own model."""

from __future__ import annotations

import csv
import json
import os
import select
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

from arena_gym.cli import main
from tests.conftest import require

ROOT = Path(__file__).resolve().parents[2]
QUICK = ["--num-envs", "2", "--eval-episodes", "2", "--set", "max_episode_steps=20",
         "--no-progress"]


@pytest.fixture(autouse=True)
def sb3():
    return require("stable_baselines3", "pip install 'arena_gym[train]'")


def _curve(out: Path) -> list[dict]:
    with open(out / "curve.csv", newline="") as f:
        return list(csv.DictReader(f))


def _steps(model: Path) -> int:
    with zipfile.ZipFile(model) as archive:
        return json.loads(archive.read("data"))["num_timesteps"]


def _line(proc: subprocess.Popen, prefix: str, timeout: float) -> str:
    """The first stdout line starting with `prefix` (fail at timeout)."""
    deadline, buffer = time.monotonic() + timeout, ""
    fd = proc.stdout.fileno()
    while True:
        for line in buffer.splitlines(keepends=True):
            if line.startswith(prefix) and line.endswith("\n"):
                return line
        left = deadline - time.monotonic()
        assert left > 0, f"no line {prefix!r} in {timeout} s: {buffer[-2000:]}"
        ready, _, _ = select.select([fd], [], [], left)
        chunk = os.read(fd, 65536).decode() if ready else ""
        assert chunk or not ready, f"stdout closed before {prefix!r}: {buffer[-2000:]}"
        buffer += chunk


def test_ctrl_c_saves_the_model_and_resume_continues_the_run(tmp_path, capsys):
    out = tmp_path / "run"
    proc = subprocess.Popen(
        [sys.executable, "-m", "arena_gym.cli", "train", "--minutes", "10", "--eval-every",
         "0.1", "--out", str(out), *QUICK], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        first = _line(proc, "wall_s=", timeout=300)  # the first evaluation ended
        assert len(_curve(out)) >= 1  # its row is on disk already
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=300)
    finally:
        proc.kill()
    err = err.decode()
    assert proc.returncode == 130 and "Traceback" not in err, err[-3000:]
    steps = _steps(out / "final_model.zip")
    assert steps >= int(first.split("env_steps=")[1].split()[0])
    assert err.endswith(
        f"training: stopped at {steps:,} env steps; saved {out / 'final_model.zip'} and its "
        f"normaliser. Continue with: arena-gym train --resume {out}\n"
        "arena-gym: interrupted\n")
    rows = _curve(out)
    normaliser = json.loads((out / "normaliser.json").read_text())

    assert main(["train", "--resume", str(out), "--minutes", "0.05", "--no-progress"]) == 0
    assert capsys.readouterr().out.endswith(f"run folder: {out}\n")
    more = _curve(out)
    assert more[:len(rows)] == rows and len(more) > len(rows)  # the curve goes on
    assert float(more[len(rows)]["wall_s"]) > float(rows[-1]["wall_s"])
    assert int(more[len(rows)]["env_steps"]) > steps  # from the saved step count on
    assert _steps(out / "final_model.zip") > steps
    again = json.loads((out / "normaliser.json").read_text())
    assert again["count"] > normaliser["count"]  # the statistics went on from the saved ones


def test_a_run_folder_is_refused_unless_overwritten_and_evaluations_use_the_own_model(
        tmp_path, capsys):
    from arena_gym.envs.vector_env import ArenaVectorEnv
    from arena_gym.evaluation import evaluate
    from arena_gym.policies import sb3_policy

    out = tmp_path / "run"
    args = ["train", "--minutes", "0.05", "--eval-every", "1000", "--out", str(out), *QUICK]
    assert main(args) == 0
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    assert sorted(before) == ["best_model.zip", "curve.csv", "final_model.zip",
                              "normaliser.json", "run.json"]  # no model file in between
    # the final evaluation ran the final model: an evaluation of the saved file agrees
    env = ArenaVectorEnv(20, max_episode_steps=20)
    saved = evaluate(env, sb3_policy(out / "final_model.zip", env.single_observation_space,
                                     env.single_action_space), 2)
    env.close()
    (row,) = _curve(out)
    assert float(row["eval_success"]) == saved.success
    assert float(row["eval_collision"]) == saved.collision

    capsys.readouterr()
    assert main(args) == 2
    assert capsys.readouterr().err == (
        f"arena-gym: error: out: {str(out)!r} already holds a training run (best_model.zip, "
        "curve.csv, final_model.zip, normaliser.json, run.json, tb); expected a new or empty "
        f"folder, or --overwrite to replace that run, or --resume {out} to continue it\n")
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()} == before
    assert main(["train", "--resume", str(out), "--num-envs", "4"]) == 2
    assert capsys.readouterr().err == (
        "arena-gym: error: --resume: expected only --minutes, --steps and --no-progress with "
        f"it (the run keeps its settings, {out / 'run.json'}), got --num-envs\n")
    assert main([*args, "--overwrite"]) == 0
    assert len(_curve(out)) == 1  # a new run's curve, not the old one's continued
