"""Runtime MuJoCo options, named as in the XML reference (`<option>` and `<flag>`).

    apply_runtime_options(store, {"timestep": 0.005, "integrator": "implicitfast",
                                  "gravity": [0, 0, -9.81], "contact_disabled": True})

Every field is validated before any is applied; a rejected patch changes nothing and
raises ValueError("field: reason"). Accepted fields go into each env's spec (so they
survive recompiles) and its live model.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Callable, Mapping
from typing import Any

import mujoco
import numpy as np

from arena_gym.scene.store import SceneStore


def _enum_names(enum: Any, prefix: str) -> dict[str, int]:
    return {
        name[len(prefix):].lower(): int(value)
        for name, value in enum.__members__.items()
        if name.startswith(prefix) and not name.endswith("DEFAULT") and "ALL" not in name
    }


INTEGRATORS = {"euler": 0, "rk4": 1, "implicit": 2, "implicitfast": 3}
SOLVERS = {"pgs": 0, "cg": 1, "newton": 2}
CONES = {"pyramidal": 0, "elliptic": 1}
DISABLE_FLAGS = _enum_names(mujoco.mjtDisableBit, "mjDSBL_")
ENABLE_FLAGS = _enum_names(mujoco.mjtEnableBit, "mjENBL_")


def _number(v: Any) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
        raise TypeError(f"expected a number, got {v!r}")  # validate() names the field
    return float(v)


def _positive(v: Any) -> float:
    v = _number(v)
    if not (math.isfinite(v) and v > 0):
        raise ValueError(f"expected a positive number, got {v!r}")
    return v


def _nonneg(v: Any) -> float:
    v = _number(v)
    if not (math.isfinite(v) and v >= 0):
        raise ValueError(f"expected a number >= 0, got {v!r}")
    return v


def _finite(v: Any) -> float:
    v = _number(v)
    if not math.isfinite(v):
        raise ValueError(f"expected a finite number, got {v!r}")
    return v


MAX_ITERATIONS = 100_000  # beyond this a step never ends in practice


def _count(v: Any) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)) or not (
            math.isfinite(v) and int(v) == v and 0 <= v <= MAX_ITERATIONS):
        raise ValueError(f"expected an integer in [0, {MAX_ITERATIONS}], got {v!r}")
    return int(v)


def _vec3(v: Any) -> np.ndarray:
    arr = np.asarray(v, dtype=float)
    if arr.shape != (3,) or not np.all(np.isfinite(arr)):
        raise ValueError(f"expected 3 finite numbers, got {v!r}")
    return arr


def _choice(table: dict[str, int]) -> Callable[[Any], int]:
    def parse(v: Any) -> int:
        key = str(v).lower()
        if key not in table:
            raise ValueError(f"expected one of {sorted(table)}, got {v!r}")
        return table[key]

    return parse


def _flag(v: Any) -> bool:
    if isinstance(v, bool):
        return v
    if str(v).lower() in ("true", "enable", "1"):
        return True
    if str(v).lower() in ("false", "disable", "0"):
        return False
    raise ValueError(f"expected true or false, got {v!r}")


# XML name -> (parser, MjOption attribute)
FIELDS: dict[str, tuple[Callable[[Any], Any], str]] = {
    "timestep": (_positive, "timestep"),
    "impratio": (_positive, "impratio"),
    "tolerance": (_nonneg, "tolerance"),
    "ls_tolerance": (_nonneg, "ls_tolerance"),
    "noslip_tolerance": (_nonneg, "noslip_tolerance"),
    "density": (_nonneg, "density"),
    "viscosity": (_nonneg, "viscosity"),
    "o_margin": (_finite, "o_margin"),
    "gravity": (_vec3, "gravity"),
    "wind": (_vec3, "wind"),
    "magnetic": (_vec3, "magnetic"),
    "iterations": (_count, "iterations"),
    "ls_iterations": (_count, "ls_iterations"),
    "noslip_iterations": (_count, "noslip_iterations"),
    "ccd_iterations": (_count, "ccd_iterations"),
    "integrator": (_choice(INTEGRATORS), "integrator"),
    "solver": (_choice(SOLVERS), "solver"),
    "cone": (_choice(CONES), "cone"),
}


def validate(patch: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """Parsed (name, value) pairs; ValueError("field: reason") on the first bad one."""
    if not isinstance(patch, Mapping):
        raise ValueError(f"patch: expected a mapping of option fields, got {type(patch).__name__}")
    known = list(FIELDS) + [f"{f}_disabled" for f in DISABLE_FLAGS]
    known += [f"{f}_enabled" for f in ENABLE_FLAGS]
    parsed = []
    for name, value in patch.items():
        if name in FIELDS:
            parser = FIELDS[name][0]
        elif (name.endswith("_disabled") and name[: -len("_disabled")] in DISABLE_FLAGS
              or name.endswith("_enabled") and name[: -len("_enabled")] in ENABLE_FLAGS):
            parser = _flag
        else:
            close = difflib.get_close_matches(str(name), known, n=3)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            raise ValueError(f"{name}: unknown option field{hint}")
        try:
            parsed.append((name, parser(value)))
        except (TypeError, ValueError, OverflowError) as exc:
            raise ValueError(f"{name}: {exc}") from None
    return parsed


def _set(opt: Any, name: str, value: Any) -> None:
    if name in FIELDS:
        attr = FIELDS[name][1]
        if isinstance(value, np.ndarray):
            getattr(opt, attr)[:] = value
        else:
            setattr(opt, attr, value)
        return
    if name.endswith("_disabled"):
        bit, attr = DISABLE_FLAGS[name[: -len("_disabled")]], "disableflags"
    else:
        bit, attr = ENABLE_FLAGS[name[: -len("_enabled")]], "enableflags"
    flags = int(getattr(opt, attr))
    setattr(opt, attr, flags | bit if value else flags & ~bit)


def apply_runtime_options(store: SceneStore, patch: Mapping[str, Any]) -> None:
    parsed = validate(patch)
    for scene in store.scenes:
        for name, value in parsed:
            _set(scene.spec.option, name, value)
            _set(scene.model.opt, name, value)
        scene.version += 1  # the stepping groups read models: make them refresh
