"""Every file a config, suite, scenario, map, mechanisms file or SRDF names is a regular file
under a size bound before it is read (issue 43 item 3): a symlink to /dev/zero, a FIFO and a
file past the bound are each one error naming the file, what was expected and what came.

The readers run in a bounded child process (tests/bounded.py): one that reads /dev/zero
without bound or blocks on a FIFO fails there, not the machine."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from arena_gym.files import MAX_TEXT_BYTES
from tests.bounded import bounded_child, cli

LOADERS = {  # how each kind of file is read, and how its errors name it
    "config": ("from arena_gym.config import load_config as load", "{path}"),
    "suite": ("from arena_gym.bench.suite import load_suite as load", "{path}"),
    "scenario": ("from arena_gym.worlds.scenario import load_scenario as load",
                 "scenario {path}"),
    "map": ("from arena_gym.worlds.occupancy import load_map as load", "map yaml {path}"),
    "mechanisms": ("from arena_gym.worlds.mechanisms import load_mechanisms as load",
                   "{path}"),
    "srdf": ("from arena_gym.assets.srdf import disabled_pairs\n"
             "load = lambda p: disabled_pairs(p, ['a'])", "SRDF {path!r}"),
}


def _errors(path: Path) -> dict[str, str]:
    """Each loader's error (type: message) on `path`, read in a bounded child."""
    lines = []
    for kind, (imported, _) in LOADERS.items():
        lines += [imported, "try:", f"    load({str(path)!r})", "    out = 'read'",
                  "except Exception as exc:", "    out = f'{type(exc).__name__}: {exc}'",
                  f"print(json.dumps([{kind!r}, out]), flush=True)"]
    done = bounded_child("import json\n" + "\n".join(lines))
    assert done.returncode == 0, done.stderr[-2000:]
    return dict(json.loads(line) for line in done.stdout.splitlines())


@pytest.fixture
def files(tmp_path):
    """A symlink to /dev/zero, a FIFO and a sparse regular file one byte past the bound."""
    zero, fifo, big = tmp_path / "zero.yaml", tmp_path / "fifo.yaml", tmp_path / "big.yaml"
    zero.symlink_to("/dev/zero")
    os.mkfifo(fifo)
    with open(big, "wb") as f:
        f.truncate(MAX_TEXT_BYTES + 1)  # no disk used: a hole
    return {"zero": (zero, "a character device"), "fifo": (fifo, "a FIFO"),
            "big": (big, "")}


@pytest.mark.parametrize("which", ["zero", "fifo", "big"])
def test_no_reader_reads_a_file_without_bound(files, which):
    path, got = files[which]
    expected = "expected a regular file, got " + got if which != "big" else (
        "expected at most 67,108,864 bytes (64 MiB, arena_gym.files.MAX_TEXT_BYTES), got "
        "67,108,865 bytes")
    errors = _errors(path)
    for kind, (_, where) in LOADERS.items():
        assert errors[kind].endswith(f"{where.format(path=str(path))}: {expected}"), \
            (kind, errors[kind])
        assert errors[kind].split(":")[0] in ("ConfigError", "ScenarioError", "MapError",
                                              "MechanismError", "ValueError"), errors[kind]


def test_the_cli_names_a_config_fifo_and_a_scenario_symlink_to_dev_zero(files):
    """What a user sees: one line, exit status 2, before any env steps."""
    fifo, zero = files["fifo"][0], files["zero"][0]
    done = cli("eval", "random", "--config", str(fifo))
    assert (done.returncode, done.stderr) == (
        2, f"arena-gym: error: {fifo}: expected a regular file, got a FIFO\n")
    done = cli("eval", "random", "--episodes", "1", "--num-envs", "1", "--set",
               f"scenario={zero}")
    assert (done.returncode, done.stderr.splitlines()[-1]) == (
        2, f"arena-gym: error: scenario {zero}: expected a regular file, got a character "
           "device")
