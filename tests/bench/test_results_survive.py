"""A benchmark run keeps its results: records are appended as episodes end, Ctrl-C or a
later stage's error leaves the records, summary and report of what ended, and a folder that
holds a run is never mixed with another."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from arena_gym.cli import main
from tests.bench.suites import tiny_suite
from tests.envs.test_mechanism_worlds import tiny_room_with_a_door
from tests.interrupts import interrupt, read_until, running

LONG = """\
name: long
seed: 7
envs: 2
stages:
  - name: first
    obstacles: [0, 2]
    episodes: 400
    time_limit: 8
  - name: second
    obstacles: [0, 2]
    episodes: 400
    time_limit: 8
"""


def _rows(path: Path) -> list[dict]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_ctrl_c_keeps_the_episodes_that_ended(tmp_path):
    suite = tiny_suite(tmp_path, LONG)
    out = tmp_path / "run"
    with running("bench", str(suite), "--policy", "reactive", "--out", str(out)) as proc:
        read_until(proc.stderr, r"\| ([3-9]|\d\d+)/800 ", timeout=300)  # the bar: 3 ended
        ended_before = len(_rows(out / "records.csv"))  # appended as they end
        assert ended_before >= 3
        err = interrupt(proc, timeout=120)
    assert proc.returncode == 130 and "Traceback" not in err, err[-3000:]
    records = json.loads((out / "records.json").read_text())
    n = len(records)
    assert ended_before <= n < 800
    assert f"bench: stopped by KeyboardInterrupt after {n} of 800 episodes; the records, " \
           f"summary and report of those are in {out}\narena-gym: interrupted\n" in err
    keys = [(r["stage"] != "first", r["episode"]) for r in records]
    assert keys == sorted(keys)  # by stage, then episode
    rows = _rows(out / "records.csv")
    assert [(r["stage"], int(r["episode"])) for r in rows] == [
        (r["stage"], r["episode"]) for r in records]  # rewritten in order at the stop
    summary = json.loads((out / "summary.json").read_text())
    assert summary["complete"] is False and summary["stopped"] == "KeyboardInterrupt"
    assert sum(s["episodes"] for s in summary["stages"].values()) == n
    report = (out / "report.md").read_text()
    assert f"Partial run: stopped by KeyboardInterrupt after {n} of 800 episodes." in report


def test_a_later_stage_s_error_keeps_the_earlier_stages(tmp_path, capsys):
    world = tiny_room_with_a_door(tmp_path / "tiny")
    suite = tiny_suite(tmp_path, "name: doors\nseed: 7\nenvs: 2\nstages:\n"
                       "  - {name: room, obstacles: 0, episodes: 3, time_limit: 5}\n"
                       f"  - {{name: tiny, world: {world}, obstacles: 0, episodes: 3}}\n")
    out = tmp_path / "run"
    assert main(["bench", str(suite), "--policy", "reactive", "--out", str(out),
                 "--no-progress"]) == 2
    assert capsys.readouterr().err == (
        f"bench: stopped by NoRoomError after 3 of 6 episodes; the records, summary and "
        f"report of those are in {out}\n"
        f"arena-gym: error: world {str(world)!r}: no collision-free start and goal 2.0 m apart "
        "after 40 attempts; expected a world with more free space or fewer obstacles (no "
        "start or goal lies where its doors and elevators move)\n")
    assert [r["stage"] for r in _rows(out / "records.csv")] == ["room"] * 3
    summary = json.loads((out / "summary.json").read_text())
    assert list(summary["stages"]) == ["room"] and summary["stopped"] == "NoRoomError"
    assert "; not run: tiny." in (out / "report.md").read_text()


def test_a_folder_holding_a_run_is_refused_unless_overwritten(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    suite = tiny_suite(tmp_path, "name: tiny\nseed: 7\nenvs: 1\nstages:\n"
                       "  - {name: first, obstacles: 0, episodes: 1, time_limit: 3}\n")
    out = tmp_path / "run"
    args = ["bench", str(suite), "--policy", "reactive", "--no-progress"]
    assert main([*args, "--out", str(out)]) == 0
    first = {p.name: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    capsys.readouterr()
    assert main([*args, "--out", str(out)]) == 2
    assert capsys.readouterr().err == (
        f"arena-gym: error: out: {str(out)!r} already holds a benchmark run (plots, "
        "records.csv, records.json, report.html, report.md, summary.json); expected a new or "
        "empty folder, or --overwrite to replace that run\n")
    assert {p.name: p.read_bytes() for p in out.rglob("*") if p.is_file()} == first

    suite.write_text(suite.read_text().replace("first", "second"))  # another stage's plots
    (out / "notes.txt").write_text("mine")
    assert main([*args, "--out", str(out), "--overwrite"]) == 0
    plots = sorted(p.name for p in (out / "plots").iterdir())
    assert plots == ["distributions.png", "success.png", "trajectories_second.png"]
    assert (out / "notes.txt").read_text() == "mine"  # not the run's: kept

    capsys.readouterr()
    assert main(args) == 0 and main(args) == 0  # the default folder: numbered
    err = capsys.readouterr().err
    assert err == ("bench: runs/bench/tiny-reactive holds a run; this one goes to "
                   "runs/bench/tiny-reactive-2 (--overwrite replaces it instead)\n")
    assert (tmp_path / "runs/bench/tiny-reactive-2/summary.json").is_file()
