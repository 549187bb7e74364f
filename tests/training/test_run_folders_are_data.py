"""A run folder is data (issue 43): --resume takes from run.json only what the command line
would take (no Ray address, no Ray options, gamma in (0, 1], eval_every_s > 0, a config the
config accepts), a damaged normaliser.json or curve.csv is one line naming the file, a
network too large to build is refused before torch allocates it, and two trainings started
together into one --out never both run."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from arena_gym.cli import main
from arena_gym.distributed.settings import DistributedSettings
from arena_gym.train.run_files import TrainSettings, write_run
from tests.conftest import require
from tests.interrupts import running

QUICK = ["--num-envs", "2", "--eval-episodes", "2", "--set", "max_episode_steps=20",
         "--no-progress"]


@pytest.fixture(autouse=True)
def sb3():
    return require("stable_baselines3", "pip install 'arena_gym[train]'")


@pytest.fixture(scope="module")
def trained(tmp_path_factory) -> Path:
    """A real, short training run's folder."""
    require("stable_baselines3", "pip install 'arena_gym[train]'")
    out = tmp_path_factory.mktemp("trained") / "run"
    assert main(["train", "--minutes", "0.05", "--eval-every", "1000", "--out", str(out),
                 *QUICK]) == 0
    return out


def _copy(trained: Path, tmp_path: Path) -> Path:
    run = tmp_path / "run"
    shutil.copytree(trained, run)
    return run


def _files(run: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in run.iterdir() if p.is_file()}


def _resume(run: Path, capsys) -> tuple[int, str]:
    capsys.readouterr()
    code = main(["train", "--resume", str(run), "--minutes", "0.05", "--no-progress"])
    return code, capsys.readouterr().err


@pytest.mark.parametrize(("change", "message"), [
    ({"distributed": {"shards": 2, "on_failure": "raise", "address": "127.0.0.1:6379"}},
     "expected only ['shards', 'on_failure'] in settings.distributed (a run folder is data: "
     "it names no address to connect to nor Ray options; a resumed run joins RAY_ADDRESS or "
     "a local cluster), got {'shards': 2, 'on_failure': 'raise', 'address': "
     "'127.0.0.1:6379'}"),
    ({"distributed": {"shards": 2, "actor_options": {"runtime_env": {"pip": ["x"]}}}},
     "expected only ['shards', 'on_failure'] in settings.distributed (a run folder is data: "
     "it names no address to connect to nor Ray options; a resumed run joins RAY_ADDRESS or "
     "a local cluster), got {'shards': 2, 'actor_options': {'runtime_env': {'pip': ['x']}}}"),
    ({"gamma": 5}, "gamma: expected a number in (0, 1], got 5"),
    ({"eval_every_s": -1}, "eval_every_s: expected a positive number, got -1"),
    ({"net": [100000000]},
     "net: expected 1 to 16 hidden layers of 1 to 16384 units, got (100000000,)"),
    ({"script": "rm -rf ~"}, "expected settings of "),
])
def test_resume_takes_from_run_json_only_what_the_command_line_takes(trained, tmp_path, capsys,
                                                                     change, message):
    run = _copy(trained, tmp_path)
    data = json.loads((run / "run.json").read_text())
    data["settings"].update(change)
    (run / "run.json").write_text(json.dumps(data))
    before = _files(run)
    code, err = _resume(run, capsys)
    assert code == 2
    assert err.startswith(f"arena-gym: error: {run / 'run.json'}: {message}"), err
    assert err.count("\n") == 1 and _files(run) == before


def test_resume_checks_the_env_overrides_as_the_config_does(trained, tmp_path, capsys):
    run = _copy(trained, tmp_path)
    data = json.loads((run / "run.json").read_text())
    data["overrides"]["room_size"] = -3
    (run / "run.json").write_text(json.dumps(data))
    code, err = _resume(run, capsys)
    assert (code, err) == (2, f"arena-gym: error: {run / 'run.json'}: room_size: expected a "
                              "number >= 1 and <= 1000, got -3.0\n")


@pytest.mark.parametrize(("name", "content", "message"), [
    ("normaliser.json", '{"mean": 0.0, "count": 5.0}',
     "expected the reward normaliser's ['mean', 'var', 'count'], got {'mean': 0.0, "
     "'count': 5.0}"),
    ("normaliser.json", '{"mean": 0.0, "var": 1.',
     "expected the reward normaliser's statistics as JSON, got Expecting ',' delimiter: "
     "line 1 column 23 (char 22)"),
    ("curve.csv", "\x00\x01garbage\n1,2\n",
     "expected the curve of a training run (columns wall_s, env_steps, steps_per_s, "
     "train_success, train_collision, train_timeout, eval_success, eval_collision, "
     "eval_timeout, curriculum_stage), got '\\x00\\x01garbage'"),
])
def test_a_damaged_normaliser_or_curve_is_named(trained, tmp_path, capsys, name, content,
                                                 message):
    run = _copy(trained, tmp_path)
    (run / name).write_text(content)
    before = _files(run)
    assert _resume(run, capsys) == (2, f"arena-gym: error: {run / name}: {message}\n")
    assert _files(run) == before


def test_a_network_too_large_to_build_is_one_line(tmp_path, capsys):
    assert main(["train", "--net", "100000000", "--out", str(tmp_path / "run"), *QUICK]) == 2
    assert capsys.readouterr().err == (
        "arena-gym: error: net: expected 1 to 16 hidden layers of 1 to 16384 units, got "
        "(100000000,)\n")
    assert not (tmp_path / "run").exists()


def test_run_json_keeps_no_ray_address_nor_ray_options(tmp_path):
    settings = TrainSettings(distributed=DistributedSettings(
        shards=2, address="auto", actor_options={"num_cpus": 2}))
    write_run(tmp_path, settings, {})
    saved = json.loads((tmp_path / "run.json").read_text())["settings"]["distributed"]
    assert saved == {"shards": 2, "on_failure": "raise"}


def test_two_trainings_started_together_into_one_folder_never_both_run(tmp_path):
    out = tmp_path / "run"
    args = ("train", "--minutes", "0.05", "--eval-every", "1000", "--out", str(out), *QUICK)
    with running(*args) as first, running(*args) as second:
        ends = [(p.wait(timeout=600), p.stderr.read().decode()) for p in (first, second)]
    codes = sorted(code for code, _ in ends)
    assert codes == [0, 2], ends
    refused = next(err for code, err in ends if code == 2)
    assert refused == (f"arena-gym: error: out: {str(out)!r} is being written by another "
                       "training run (it holds the folder's lock); expected a folder no run "
                       "is writing\n")
    rows = (out / "curve.csv").read_text().splitlines()
    assert len(rows) == 2  # the header and the one run's final evaluation
