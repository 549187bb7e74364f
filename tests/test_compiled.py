"""Compiled functions (arena_gym.compiled): numba comes with the first compile, never with
the package or an env; machine code is cached under the project's cache, keyed on the files
a kernel compiles from: an edit there recompiles it (numba's own key, the kernel's file,
would not), an edit anywhere else recompiles nothing; a broken cache heals, an unwritable one
compiles in memory. Each case runs real processes over a copy of the package."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import imported_after

ROOT = Path(__file__).resolve().parents[1]

# a kernel in one module calling a shared definition in another (as the env's step calls
# the task's terms), and a plain numba function of the same code with numba's own cache
CALLER = '''
import numba
from arena_gym.compiled import kernel
from arena_gym.zz_callee import scale

@kernel
def ours(x):
    return scale(x)

@numba.njit(cache=True)
def numbas(x):
    return scale(x)
'''
CALLEE = '''
from arena_gym.compiled import shared
FACTOR = 3.0

@shared
def scale(x):
    return x * FACTOR
'''
RUN = '''
import json, warnings
warnings.simplefilter("always")
from arena_gym.compiled import numba_module
numba_module()  # the shared definitions registered, also for the plain numba function
from arena_gym.zz_caller import ours, numbas
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    value = ours(2.0)
stats = ours.dispatcher.stats
print(json.dumps({"ours": value, "numbas": numbas(2.0), "hits": sum(stats.cache_hits.values()),
                  "misses": sum(stats.cache_misses.values()),
                  "warnings": [str(w.message) for w in caught]}))
'''


@pytest.fixture
def package(tmp_path):
    """A copy of the package with the two modules above; run(...) runs RUN over it."""
    copy = tmp_path / "src" / "arena_gym"
    shutil.copytree(ROOT / "arena_gym", copy, ignore=shutil.ignore_patterns("__pycache__"))
    (copy / "zz_caller.py").write_text(CALLER)
    (copy / "zz_callee.py").write_text(CALLEE)
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env.update(ARENA_GYM_CACHE=str(tmp_path / "cache"), PYTHONPATH=str(copy.parent))

    def run(**extra: str) -> dict:
        out = subprocess.run([sys.executable, "-c", RUN], capture_output=True, text=True,
                             env={**env, **extra}, cwd=tmp_path)
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout.strip().splitlines()[-1])

    return copy, run


def test_importing_the_package_and_building_an_env_imports_no_numba():
    assert imported_after("arena_gym, arena_gym.make, arena_gym.envs.vector_env, "
                          "arena_gym.people.crowd, arena_gym.people.walkers", "numba") == []


def test_compiled_code_is_cached_under_the_project_cache(package, tmp_path):
    _, run = package
    first = run()
    assert (first["ours"], first["hits"], first["misses"]) == (6.0, 0, 1)
    second = run()
    assert (second["ours"], second["hits"], second["misses"]) == (6.0, 1, 0)
    cached = [p.name for p in (tmp_path / "cache" / "numba").rglob("*.nbi")]
    assert len(cached) == 1 and cached[0].startswith("zz_caller.ours-")
    assert not list((tmp_path / "src").rglob("zz_caller.ours*"))  # never beside the sources


def test_an_edit_of_what_a_kernel_calls_recompiles_it_and_no_other_edit_does(package):
    copy, run = package
    assert run()["ours"] == 6.0
    callee = copy / "zz_callee.py"
    callee.write_text(callee.read_text().replace("FACTOR = 3.0", "FACTOR = 4.0"))
    after = run()
    assert (after["ours"], after["misses"]) == (8.0, 1)
    assert after["numbas"] == 6.0  # numba's own key, the caller's file alone: stale code
    config = copy / "config.py"  # a module the kernel does not compile from
    config.write_text(config.read_text() + "\n# an unrelated edit\n")
    unrelated = run()
    assert (unrelated["ours"], unrelated["hits"], unrelated["misses"]) == (8.0, 1, 0)


@pytest.mark.parametrize("damage", ["truncated data", "garbled index"])
def test_an_unreadable_cache_entry_is_dropped_rebuilt_and_named(package, tmp_path, damage):
    _, run = package
    run()
    folder = next((tmp_path / "cache" / "numba").iterdir())
    if damage == "truncated data":
        data = next(folder.glob("zz_caller.ours-*.nbc"))
        data.write_bytes(data.read_bytes()[:40])
    else:
        index = next(folder.glob("zz_caller.ours-*.nbi"))
        index.write_bytes(index.read_bytes()[:12] + b"\x00garbled" * 8)
    healed = run()
    assert healed["ours"] == 6.0 and healed["misses"] == 1
    assert len(healed["warnings"]) == 1
    assert healed["warnings"][0].startswith(
        f"arena_gym: dropped an unreadable compiled-kernel cache entry in {folder} (")
    again = run()
    assert (again["hits"], again["warnings"]) == (1, [])


def test_an_unwritable_cache_compiles_in_memory_with_one_warning(package, tmp_path):
    _, run = package
    blocked = tmp_path / "a_file"  # a cache "folder" that is a file: nothing can be made in it
    blocked.write_text("")
    out = run(ARENA_GYM_CACHE=str(blocked))
    assert out["ours"] == 6.0 and len(out["warnings"]) == 1
    assert re.fullmatch(re.escape(f"arena_gym: compiled-kernel cache folder {blocked}/numba/")
                        + r"arena_gym_[0-9a-f]{40}" + re.escape(
                            " is not writable; kernels compile in memory (set ARENA_GYM_CACHE"
                            " to a writable folder)"), out["warnings"][0])
