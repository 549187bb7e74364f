"""Shared fixtures. Tests that read ../shared/assets fail (not skip) when CI=true and the
assets are missing."""

from __future__ import annotations

import ctypes
import gc
import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

# headless by default, as the package's own renderers are: mujoco.Renderer in tests reads this
# at import (a machine without a display has no GLFW window to draw into)
os.environ.setdefault("MUJOCO_GL", "egl")

import mujoco  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

ASSETS = Path(os.environ.get(
    "ARENA_GYM_ASSETS", Path(__file__).resolve().parents[1] / ".." / "shared" / "assets")).resolve()
ROBOTS = ("burger", "jackal", "ridgeback", "dingo")
DIFF_DRIVE = ("burger", "jackal", "dingo")


@pytest.fixture(scope="session")
def assets() -> Path:
    if not (ASSETS / "robots").is_dir():
        message = f"shared assets not found at {ASSETS}"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message)
        pytest.skip(message)
    return ASSETS


@pytest.fixture(autouse=True, scope="module")
def _memory_back_to_the_system():
    """At the end of each test module, glibc's freed memory goes back to the system: MuJoCo's
    models and data and large numpy arrays are blocks of megabytes, which glibc (its mmap
    threshold rises to the largest block freed) serves from its heaps and keeps when they
    are freed, so a process that builds many worlds one after another holds gigabytes it
    does not use. What the suite builds is freed (tests/envs/test_memory_flat.py); this
    hands the pages back, so one process runs the suite in a few GB."""
    yield
    gc.collect()
    if _LIBC is not None:
        _LIBC.malloc_trim(0)


def _libc():
    """glibc, for malloc_trim; None elsewhere."""
    try:
        libc = ctypes.CDLL("libc.so.6")
        return libc if hasattr(libc, "malloc_trim") else None
    except OSError:
        return None


_LIBC = _libc()


def robot_paths(assets: Path, name: str) -> tuple[Path, list[Path]]:
    return assets / "robots" / name / f"{name}.urdf", [assets / "robots" / name / "packages"]


def spawn(store, env_id: int, assets: Path, robot: str, pose=(0.0, 0.0, 0.0), quiet=True):
    urdf, packages = robot_paths(assets, robot)
    with warnings.catch_warnings():
        if quiet:
            warnings.simplefilter("ignore")
        return store[env_id].spawn_urdf(robot, urdf, pose=pose, package_paths=packages)


_MODEL_FIELDS = ("body_pos", "body_quat", "body_mass", "geom_size", "geom_pos", "geom_type",
                 "geom_friction", "jnt_type", "actuator_gainprm", "actuator_biasprm", "qpos0")


def snapshot(scene) -> dict:
    """Everything a user could observe of a scene, to compare bit for bit."""
    model, data = scene.compiled, scene.compiled_data
    state = np.empty(mujoco.mj_stateSize(model, mujoco.mjtState.mjSTATE_FULLPHYSICS))
    mujoco.mj_getState(model, data, state, mujoco.mjtState.mjSTATE_FULLPHYSICS)
    snap = {f: getattr(model, f).copy() for f in _MODEL_FIELDS}
    snap["state"] = state
    snap["xml"] = scene.spec.to_xml()
    snap["names"] = list(scene.entities)
    snap["compile_count"] = scene.compile_count
    snap["dirty"] = scene._dirty  # edits pending
    return snap


def assert_same(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for key in a:
        if isinstance(a[key], np.ndarray):
            assert a[key].shape == b[key].shape, key
            assert a[key].tobytes() == b[key].tobytes(), key
        else:
            assert a[key] == b[key], key


def require(module: str, hint: str):
    """Import an optional dependency for a test: skip without it, but fail when CI=true."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        message = f"{module} is not installed: {hint}"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message)
        pytest.skip(message)


def imported_after(modules: str, part: str) -> list[str]:
    """The modules whose name holds `part` that importing `modules` (comma-separated) loads,
    in a fresh interpreter: what an optional dependency's lazy import must keep out."""
    code = (f"import json, sys, {modules}; "
            f"print(json.dumps(sorted(m for m in sys.modules if {part!r} in m)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])
