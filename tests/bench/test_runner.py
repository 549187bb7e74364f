"""The benchmark runner: records per episode, reproducible, independent of the env count."""

from __future__ import annotations

import csv
import json
import re

import numpy as np
import pytest

from arena_gym.bench.runner import run_suite
from arena_gym.bench.suite import load_suite
from arena_gym.config import ConfigError
from tests.bench.suites import tiny_suite


def test_same_suite_twice_gives_identical_records_whatever_the_env_count(tmp_path):
    suite = load_suite(tiny_suite(tmp_path))
    a = run_suite(suite, "reactive", tmp_path / "a", envs=2, progress=False, report=False)
    b = run_suite(suite, "reactive", tmp_path / "b", envs=2, progress=False, report=False)
    c = run_suite(suite, "reactive", tmp_path / "c", envs=3, progress=False, report=False)
    first = (a / "records.json").read_bytes()
    assert first == (b / "records.json").read_bytes()
    assert first == (c / "records.json").read_bytes()
    assert (a / "records.csv").read_bytes() == (c / "records.csv").read_bytes()
    records = json.loads(first)
    assert [(r["stage"], r["episode"], r["seed"]) for r in records] == [
        ("empty", 0, 7), ("empty", 1, 8), ("empty", 2, 9),
        ("boxes", 0, 1007), ("boxes", 1, 1008), ("boxes", 2, 1009),
        ("people", 0, 2007), ("people", 1, 2008), ("people", 2, 2009)]


def test_records_hold_each_episodes_result_and_metrics(tmp_path):
    suite = load_suite(tiny_suite(tmp_path))
    out = run_suite(suite, "reactive", tmp_path / "run", progress=False, report=False)
    records = json.loads((out / "records.json").read_text())
    with open(out / "records.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == len(records) == 9
    for row, record in zip(rows, records, strict=True):
        assert row["result"] == record["result"] in ("goal", "collision", "timeout")
        assert row["robot"] == record["robot"] == "arena_diffbot"  # the config's robot
        assert float(row["path_length"]) == record["path_length"]  # CSV keeps every digit
        trajectory = np.array(record["trajectory"])
        assert trajectory.shape == (record["steps"] + 1, 3)
        hops = np.linalg.norm(np.diff(trajectory[:, :2], axis=0), axis=1).sum()
        assert record["path_length"] == pytest.approx(hops, rel=1e-12)
        assert record["steps"] <= 80  # time_limit 8 s at control_dt 0.1 s
        if record["result"] == "goal":  # within the goal radius (0.5 m) at the end
            end = trajectory[-1, :2] - [record["goal_x"], record["goal_y"]]
            assert np.hypot(*end) <= 0.5


def test_unknown_stage_key_suggests_the_close_one(tmp_path):
    path = tiny_suite(tmp_path, "stages:\n  - name: a\n    obstacle: [0, 0]\n")
    with pytest.raises(ConfigError, match=re.escape(
            "unknown config key 'stages[0].obstacle'; did you mean 'stages[0].obstacles'?")):
        load_suite(path)


def test_a_stage_the_env_config_refuses_fails_before_any_stage_runs(tmp_path):
    path = tiny_suite(tmp_path, "stages:\n  - name: ok\n    obstacles: 0\n"
                      "  - name: many\n    obstacles: [0, 40]\n")
    with pytest.raises(ConfigError, match=re.escape(
            "curriculum.stages: expected 0 <= min <= max <= obstacle_pool (12), got (0, 40)")):
        run_suite(load_suite(path), "reactive", tmp_path / "run", progress=False)
    assert not (tmp_path / "run").exists()
