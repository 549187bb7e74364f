"""What a training run is told and what its folder holds, read back as data.

    settings = TrainSettings(num_envs=32, gamma=0.99)        # ValueError naming a bad value
    run = read_run(Path("runs/arena"))                       # run.json: settings, overrides
    stats = read_normaliser(Path("runs/arena/normaliser.json"))
    rows = read_curve(Path("runs/arena"))

A run folder may come from someone else (a colleague's results, a download): it is data.
run.json's settings go through the same checks as the command line's (TrainSettings), its
env overrides through the config's; it never names an address to connect to nor Ray
options to run (`distributed` keeps `shards` and `on_failure` only: a resumed run joins
RAY_ADDRESS or a local cluster). Every file is read as a regular file under the size
bound (arena_gym.files), and an error names the file.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from arena_gym.files import read_text

ALGOS = ("ppo", "sac")
MAX_LAYERS, MAX_UNITS = 16, 16384  # a network's hidden layers, units per layer
RUN_DISTRIBUTED = ("shards", "on_failure")  # what run.json may say of the Ray shards
NORMALISER_KEYS = ("mean", "var", "count")


@dataclass(frozen=True)
class TrainSettings:
    """Everything `arena-gym train` runs with: algorithm, envs, wall-time budget, evaluation
    schedule, output folder and the learner's hyperparameters; each checked as it is made
    (ValueError naming the key, what was expected and what came)."""

    algo: str = "ppo"
    num_envs: int = 64
    minutes: float = 5.0
    timesteps: int | None = None  # env steps; None: the wall-time budget alone ends the run
    seed: int = 0
    eval_every_s: float = 30.0  # wall seconds between evaluations
    eval_episodes: int = 100
    eval_envs: int = 20
    out: str = "runs/arena"
    progress_bar: bool = True
    # PPO
    n_steps: int = 128  # per env: 8192 samples per rollout with 64 envs
    batch_size: int = 512  # SB3 spends ~5 ms per gradient step at any batch up to 512
    n_epochs: int = 10
    learning_rate: float = 5e-4
    gamma: float = 0.99
    net: tuple[int, ...] = (64, 64)
    # the initial log standard deviation of the policy's actions in [-1, 1]; None: the
    # algorithm's (PPO 0, SAC -3). A residual on a prior explores less: -1 on maps
    log_std_init: float | None = None
    # a registered policy (arena_gym.registry.POLICIES, e.g. "reactive") whose action the
    # learned one is added to (a residual, wrappers.sb3.robot_actions); None: it acts alone
    prior: str | None = None
    # None: one local ArenaVectorEnv; else arena_gym.distributed's settings (a mapping like
    # {"shards": 2, "on_failure": "restart"}): the training envs run as Ray actors
    distributed: Mapping[str, Any] | None = None
    overwrite: bool = False  # replace the run `out` holds (else such a folder is refused)

    def __post_init__(self) -> None:
        if self.algo not in ALGOS:
            raise ValueError(f"algo: expected one of {list(ALGOS)}, got {self.algo!r}")
        for key in ("num_envs", "eval_episodes", "eval_envs", "n_steps", "batch_size",
                    "n_epochs"):
            _integer(key, getattr(self, key), 1)
        _integer("seed", self.seed, 0)
        if self.timesteps is not None:
            _integer("timesteps", self.timesteps, 1)
        for key in ("minutes", "eval_every_s", "learning_rate"):
            _number(key, getattr(self, key), "a positive number", lambda v: v > 0)
        _number("gamma", self.gamma, "a number in (0, 1]", lambda v: 0 < v <= 1)
        if self.log_std_init is not None:
            _number("log_std_init", self.log_std_init, "a finite number", lambda v: True)
        net = self.net
        if (not isinstance(net, (tuple, list)) or not 1 <= len(net) <= MAX_LAYERS or any(
                isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_UNITS
                for n in net)):
            raise ValueError(f"net: expected 1 to {MAX_LAYERS} hidden layers of 1 to "
                             f"{MAX_UNITS} units, got {net!r}")
        object.__setattr__(self, "net", tuple(net))
        for key in ("out", "prior"):
            value = getattr(self, key)
            if value is not None and not isinstance(value, str):
                raise ValueError(f"{key}: expected a string, got {value!r}")


def _integer(key: str, value: Any, low: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ValueError(f"{key}: expected an integer >= {low}, got {value!r}")


def _number(key: str, value: Any, expected: str, ok) -> None:
    if (isinstance(value, bool) or not isinstance(value, (int, float))
            or not math.isfinite(value) or not ok(value)):
        raise ValueError(f"{key}: expected {expected}, got {value!r}")


def write_run(out: Path, settings: TrainSettings, overrides: dict[str, Any]) -> None:
    """run.json: the settings (but the folder, the progress bar and overwrite; of
    `distributed` only RUN_DISTRIBUTED) and the env overrides."""
    kept = {k: v for k, v in asdict(settings).items()
            if k not in ("out", "progress_bar", "overwrite")}
    if kept["distributed"] is not None:
        kept["distributed"] = {k: v for k, v in dict(kept["distributed"]).items()
                               if k in RUN_DISTRIBUTED}
    (out / "run.json").write_text(json.dumps({"settings": kept, "overrides": overrides},
                                             indent=1, default=str) + "\n", encoding="utf-8")


def read_run(out: Path) -> dict[str, Any]:
    """run.json of a run folder as {"settings": TrainSettings, "overrides": dict}, every
    value checked as the command line checks it; ValueError naming the file and what is
    wrong."""
    from arena_gym.config import load_config

    path = out / "run.json"
    data = _json(path, "the run.json of a training run")
    if not isinstance(data, Mapping) or not isinstance(data.get("settings"), Mapping) or (
            not isinstance(data.get("overrides"), Mapping)):
        raise ValueError(f"{path}: expected the run.json of a training run (a mapping with "
                         f"settings and overrides), got {_shown(data)}")
    raw = dict(data["settings"])
    known = {f.name for f in fields(TrainSettings)} - {"out", "progress_bar", "overwrite"}
    unknown = sorted(set(raw) - known)
    if unknown:
        raise ValueError(f"{path}: expected settings of {sorted(known)}, got {unknown}")
    distributed = raw.get("distributed")
    if distributed is not None:
        if not isinstance(distributed, Mapping) or set(distributed) - set(RUN_DISTRIBUTED):
            raise ValueError(
                f"{path}: expected only {list(RUN_DISTRIBUTED)} in settings.distributed (a "
                "run folder is data: it names no address to connect to nor Ray options; a "
                f"resumed run joins RAY_ADDRESS or a local cluster), got {_shown(distributed)}")
        from arena_gym.distributed.settings import DistributedSettings

        DistributedSettings(**distributed)  # its own checks
    if isinstance(raw.get("net"), list):
        raw["net"] = tuple(raw["net"])
    try:
        settings = TrainSettings(**raw)
        overrides = dict(data["overrides"])
        load_config(overrides.pop("config", None), **overrides)  # the config's own checks
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None
    return {"settings": settings, "overrides": dict(data["overrides"])}


def read_normaliser(path: Path) -> tuple[float, float, float]:
    """(mean, var, count) of normaliser.json: finite numbers, var and count >= 0."""
    data = _json(path, "the reward normaliser's statistics")
    if not isinstance(data, Mapping) or any(k not in data for k in NORMALISER_KEYS):
        raise ValueError(f"{path}: expected the reward normaliser's {list(NORMALISER_KEYS)}, "
                         f"got {_shown(data)}")
    values = tuple(data[k] for k in NORMALISER_KEYS)
    if any(isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v)
           for v in values) or values[1] < 0 or values[2] < 0:
        raise ValueError(f"{path}: expected finite numbers (var and count >= 0) for "
                         f"{list(NORMALISER_KEYS)}, got {_shown(data)}")
    return tuple(float(v) for v in values)  # type: ignore[return-value]


def read_curve(out: Path, keys: tuple[str, ...]) -> list[dict[str, str]]:
    """curve.csv's rows (none when there is no file); ValueError naming the file when its
    header is not `keys` or its wall_s is not a number."""
    path = out / "curve.csv"
    if not path.exists():
        return []
    lines = list(csv.reader(io.StringIO(_text(path))))
    if lines and tuple(lines[0]) != keys:
        raise ValueError(f"{path}: expected the curve of a training run (columns "
                         f"{', '.join(keys)}), got {_shown(', '.join(lines[0]))}")
    rows = [dict(zip(keys, line, strict=False)) for line in lines[1:] if line]
    for i, row in enumerate(rows):
        try:
            if not math.isfinite(float(row["wall_s"])):
                raise ValueError
        except (TypeError, ValueError):
            raise ValueError(f"{path}: row {i + 1}: expected a number of wall seconds, got "
                             f"{_shown(row.get('wall_s'))}") from None
    return rows


def _text(path: Path) -> str:
    try:
        return read_text(path, str(path))
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: expected a readable UTF-8 file, got {exc}") from None


def _json(path: Path, what: str) -> Any:
    try:
        return json.loads(_text(path))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: expected {what} as JSON, got {exc}") from None


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:80] + "..."
