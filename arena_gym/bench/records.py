"""Per-episode records of a benchmark run: records.json (everything, trajectories too) and
records.csv (the scalar columns; social metrics empty in stages without people), one row
per episode. records.csv grows a row as each episode ends (in the order they end); at the
run's end, or when it stops early, both files are written ordered by stage and episode."""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path
from typing import Any

from arena_gym.bench.suite import Stage, Suite
from arena_gym.files import read_text
from arena_gym.tasks.metrics import METRICS, SOCIAL

KEYS = ("suite", "stage", "policy", "episode", "seed", "world", "robot", "obstacles_min",
        "obstacles_max", "pedestrians_min", "pedestrians_max", "result", "hit", *METRICS,
        *SOCIAL, "steps", "start_x", "start_y", "start_yaw", "goal_x", "goal_y")


def episode_record(suite: Suite, stage: Stage, policy: str, seed: int, k: int,
                   episode: dict[str, Any], robot: str) -> dict[str, Any]:
    """The record of a stage's episode k (its env's `episode_result`); `robot` the robot
    the stage's env config names, `seed` the stage's."""
    trajectory = [[float(v) for v in row] for row in episode["trajectory"]]
    record: dict[str, Any] = {
        "suite": suite.name, "stage": stage.name, "policy": policy, "episode": k,
        "seed": seed + k, "world": stage.world, "robot": robot,
        "obstacles_min": stage.obstacles[0], "obstacles_max": stage.obstacles[1],
        "pedestrians_min": stage.pedestrians[0], "pedestrians_max": stage.pedestrians[1],
        "result": str(episode["result"]), "hit": str(episode["hit"]),
    }
    for key in (*METRICS, "steps"):
        value = episode[key]
        record[key] = int(value) if key in ("collisions", "steps") else float(value)
    for key in SOCIAL:  # None: no people in this stage (or none came: no distance)
        value = episode.get(key)
        record[key] = None if value is None or value == float("inf") else (
            int(value) if key == "pedestrian_collisions" else float(value))
    (record["start_x"], record["start_y"], record["start_yaw"]) = trajectory[0]
    record["goal_x"], record["goal_y"] = (float(v) for v in episode["goal"])
    record["trajectory"] = trajectory
    return record


def append_record(out: Path, record: dict[str, Any]) -> None:
    """Append one record to records.csv as its episode ends (the header first): a run
    that is killed keeps every episode that ended."""
    out.mkdir(parents=True, exist_ok=True)
    path = out / "records.csv"
    new = not path.exists()
    with open(path, "a", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=KEYS, extrasaction="ignore")
        if new:
            writer.writeheader()
        writer.writerow(record)


def write_records(out: Path, records: list[dict[str, Any]]) -> None:
    """records.json and records.csv of `records` (in their order), each replaced whole."""
    out.mkdir(parents=True, exist_ok=True)
    tmp = out / ".records.json.tmp"
    tmp.write_text(json.dumps(records) + "\n", encoding="utf-8")
    os.replace(tmp, out / "records.json")
    tmp = out / ".records.csv.tmp"
    with open(tmp, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=KEYS, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(records)
    os.replace(tmp, out / "records.csv")


def read_run(run: str | Path, name: str = "records.json") -> Any:
    """A JSON file of a run folder: records.json (the records) or summary.json; a
    ValueError naming the folder or the file when it is not one."""
    folder = Path(run)
    if folder.exists() and not folder.is_dir():
        raise ValueError(f"{run}: expected a benchmark run folder, got a file")
    path = folder / name
    try:
        text = read_text(path, str(path))  # a regular file under the size bound
    except FileNotFoundError:
        raise ValueError(f"{run}: expected a benchmark run folder with {name}, "
                         f"got none") from None
    except OSError as exc:
        raise ValueError(f"{path}: expected a readable file, got {exc}") from None
    try:
        return json.loads(text)
    except ValueError as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        raise ValueError(f"{path}: expected the JSON {name} of a benchmark run, got "
                         f"{type(exc).__name__}: {reason}") from None
