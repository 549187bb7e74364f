"""Compiled kernels (arena_gym.jit): numba is imported only by the kernel modules, on first
use, and its machine code is cached under the project's cache dir, never in the package."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import imported_after

ROOT = Path(__file__).resolve().parents[2]


def test_importing_the_package_and_the_envs_imports_no_numba():
    assert imported_after("arena_gym, arena_gym.envs.registration, arena_gym.envs.vector_env, "
                          "arena_gym.tasks.crowd, arena_gym.tasks.walkers", "numba") == []


@pytest.mark.parametrize("first", ["arena_gym.jit", "numba"])
def test_compiled_code_is_cached_under_the_project_cache(tmp_path, first):
    # whether or not the user imported numba before arena_gym's kernels
    code = (f"import json, {first}, numba, arena_gym.jit; "
            "print(json.dumps(numba.config.CACHE_DIR))")
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env.update(ARENA_GYM_CACHE=str(tmp_path), PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env=env, cwd=tmp_path).stdout
    assert json.loads(out.strip().splitlines()[-1]) == str(tmp_path / "numba")


def test_fma_rounds_once():
    from arena_gym.jit import fma, numba

    fused = numba.njit(lambda a, b, c: fma(a, b, c))
    a, b = 1.0 + 2.0**-30, 1.0 - 2.0**-30
    assert a * b - 1.0 == 0.0  # the product rounded first loses the -2^-60
    assert fused(a, b, -1.0) == -(2.0**-60)
    assert fused(2.0, 3.0, 0.5) == 6.5


def test_an_edit_of_what_a_kernel_calls_recompiles_it(tmp_path):
    # numba keys a cache entry on the kernel's own file; pose_into (tasks/step_kernels.py)
    # compiles in rotations.yaw from another file: the package's sources are the key
    package = tmp_path / "src" / "arena_gym"
    shutil.copytree(ROOT / "arena_gym", package, ignore=shutil.ignore_patterns("__pycache__"))
    code = ("import numpy as np; from arena_gym.kernel_modules import kernels; "
            "q = np.array([[0, 0, 0, 0.0, 0, 0, 1]]); pose = np.zeros((1, 4)); "
            "kernels('tasks.step_kernels').pose_into(q, pose); print(pose[0, 3])")
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env.update(ARENA_GYM_CACHE=str(tmp_path / "cache"), PYTHONPATH=str(package.parent))

    def yaw_of_a_half_turn() -> float:
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             check=True, env=env, cwd=tmp_path).stdout
        return float(out.strip().splitlines()[-1])

    assert yaw_of_a_half_turn() == pytest.approx(3.141592653589793, abs=1e-15)
    assert any((tmp_path / "cache" / "numba").rglob("step_kernels.pose_into*.nbi"))
    rotations = package / "scene" / "rotations.py"
    formula = "return arctan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))"
    assert formula in rotations.read_text()
    rotations.write_text(rotations.read_text().replace(formula, "return 0.0 * w + 7.0"))
    assert yaw_of_a_half_turn() == 7.0
