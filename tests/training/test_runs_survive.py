"""A training run keeps its results: curve.csv grows a row per evaluation, Ctrl-C saves the
model and says how to continue, --resume continues it (model, normaliser, curve, step
count), a folder holding a run is refused unless --overwrite, and each evaluation runs the
process's own model."""

from __future__ import annotations

import csv
import json
import zipfile
from pathlib import Path

import pytest

from arena_gym.cli import main
from tests.conftest import require
from tests.interrupts import interrupt, read_until, running

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


def test_ctrl_c_saves_the_model_and_resume_continues_the_run(tmp_path, capsys):
    out = tmp_path / "run"
    with running("train", "--minutes", "10", "--eval-every", "0.1", "--out", str(out),
                 *QUICK) as proc:
        # each evaluation prints its line as it ends (not only at the run's end)
        first = read_until(proc.stdout, r"^eval +[\d.]+ min +([\d,]+) env steps +success +\d+% +"
                           r"collision +\d+% +timeout +\d+% +best +\d+%$", timeout=300)
        assert len(_curve(out)) >= 1  # the first evaluation's row is on disk already
        err = interrupt(proc, timeout=300)
    assert proc.returncode == 130 and "Traceback" not in err, err[-3000:]
    steps = _steps(out / "final_model.zip")
    assert steps >= int(first[1].replace(",", ""))
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
    from arena_gym.train.evaluation import evaluate
    from arena_gym.train.policies import sb3_policy

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
