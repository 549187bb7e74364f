"""Runtime MuJoCo options, named as in mjOption (and the XML reference's `<option>`/`<flag>`).

    apply_runtime_options(store, {"timestep": 0.005, "integrator": "implicitfast",
                                  "gravity": "0 0 -9.81", "o_solref": [0.02, 1],
                                  "disableflags": ["contact"], "warmstart_disabled": True})

Every mjOption field the bindings have is a patch field (FIELDS; `read_options` gives them
back in the same form, so a read patch applies as is): numbers; arrays as sequences or as
MuJoCo's "a b c" strings; enums by name (integrator, solver, cone, jacobian); the flag sets
`disableflags`/`enableflags` as flag names (or a bit mask), one flag at a time as
`<flag>_disabled`/`<flag>_enabled`; `disableactuator` as the disabled actuator groups
(`actuatorgroupdisable` in XML). Every field is validated before any is applied; a rejected
patch changes nothing and raises ValueError("field: expected ..., got ..."). Accepted fields
go into each env's spec (so they survive recompiles) and its live model. The default class's
geom solref/solimp are compile-time values, not options: `o_solref`/`o_solimp`/`o_friction`
with the `override` enable flag are MuJoCo's run-time way to set every contact's.
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


INTEGRATORS = _enum_names(mujoco.mjtIntegrator, "mjINT_")
SOLVERS = _enum_names(mujoco.mjtSolver, "mjSOL_")
CONES = _enum_names(mujoco.mjtCone, "mjCONE_")
JACOBIANS = _enum_names(mujoco.mjtJacobian, "mjJAC_")
DISABLE_FLAGS = _enum_names(mujoco.mjtDisableBit, "mjDSBL_")
ENABLE_FLAGS = _enum_names(mujoco.mjtEnableBit, "mjENBL_")
ACTUATOR_GROUPS = 31  # mjOption.disableactuator: one bit per actuator group 0..30


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


def _numbers(v: Any, n: int, what: str = "finite numbers") -> np.ndarray:
    """`n` finite numbers from a sequence or a string "a b c" (MuJoCo's XML form)."""
    try:
        items = v.split() if isinstance(v, str) else list(v)
        if any(isinstance(x, bool) for x in items):
            raise TypeError
        arr = np.asarray(items, dtype=float)
    except (TypeError, ValueError):
        arr = None
    if arr is None or arr.shape != (n,) or not np.all(np.isfinite(arr)):
        raise ValueError(f"expected {n} {what}, got {v!r}")
    return arr


def _vec3(v: Any) -> np.ndarray:
    return _numbers(v, 3)


def _solref(v: Any) -> np.ndarray:
    return _numbers(v, 2, "finite numbers (timeconst dampratio, or -stiffness -damping)")


def _solimp(v: Any) -> np.ndarray:
    arr = _numbers(v, 5, "finite numbers (dmin dmax width midpoint power)")
    dmin, dmax, width, midpoint, power = arr
    if not (0 <= dmin <= 1 and 0 <= dmax <= 1 and width >= 0 and 0 <= midpoint <= 1
            and power >= 1):
        raise ValueError(f"expected dmin, dmax, midpoint in [0, 1], width >= 0 and power "
                         f">= 1, got {v!r}")
    return arr


def _friction(v: Any) -> np.ndarray:
    arr = _numbers(v, 5, "finite numbers (sliding sliding torsional rolling rolling)")
    if (arr < 0).any():
        raise ValueError(f"expected 5 numbers >= 0, got {v!r}")
    return arr


def _choice(table: dict[str, int]) -> Callable[[Any], int]:
    def parse(v: Any) -> int:
        key = str(v).lower()
        if key not in table:
            raise ValueError(f"expected one of {sorted(table)}, got {v!r}")
        return table[key]

    return parse


def _items(v: Any) -> list[Any] | None:
    """The items of a sequence or of a string "a b" (MuJoCo's XML form); None otherwise."""
    if isinstance(v, str):
        return v.split()
    if isinstance(v, (list, tuple, set, frozenset, np.ndarray)):
        return list(v)
    return None


def _bits(table: dict[str, int]) -> Callable[[Any], int]:
    """A flag set: names (a sequence or a string "a b"), or the bit mask itself."""
    every = sum(table.values())

    def parse(v: Any) -> int:
        if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
            if v < 0 or int(v) & ~every:
                raise ValueError(f"expected flag names of {sorted(table)} or a bit mask in "
                                 f"[0, {every}], got {v!r}")
            return int(v)
        names = _items(v)
        if names is None:
            raise ValueError(f"expected flag names of {sorted(table)} or a bit mask, got {v!r}")
        mask = 0
        for name in names:
            key = str(name).lower()
            if key not in table:
                close = difflib.get_close_matches(key, list(table), n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                raise ValueError(f"expected flag names of {sorted(table)}, got {name!r}{hint}")
            mask |= table[key]
        return mask

    return parse


def _groups(v: Any) -> int:
    """Disabled actuator groups (0..30, a sequence or a string "0 3") as mjOption's mask."""
    bad = ValueError(f"expected actuator group numbers in [0, {ACTUATOR_GROUPS - 1}], "
                     f"got {v!r}")
    items = _items(v)
    if items is None:
        raise bad
    mask = 0
    for g in items:
        text = str(g)
        if isinstance(g, (bool, float)) or not text.isdigit() or int(text) >= ACTUATOR_GROUPS:
            raise bad
        mask |= 1 << int(text)
    return mask


def _flag(v: Any) -> bool:
    if isinstance(v, bool):
        return v
    if str(v).lower() in ("true", "enable", "1"):
        return True
    if str(v).lower() in ("false", "disable", "0"):
        return False
    raise ValueError(f"expected true or false, got {v!r}")


# mjOption attribute -> its parser (the patch field's name is the attribute's)
_PARSERS: dict[str, Callable[[Any], Any]] = {
    "timestep": _positive,
    "impratio": _positive,
    "tolerance": _nonneg,
    "ls_tolerance": _nonneg,
    "noslip_tolerance": _nonneg,
    "ccd_tolerance": _nonneg,
    "sleep_tolerance": _nonneg,
    "gravity": _vec3,
    "wind": _vec3,
    "magnetic": _vec3,
    "density": _nonneg,
    "viscosity": _nonneg,
    "o_margin": _finite,
    "o_solref": _solref,
    "o_solimp": _solimp,
    "o_friction": _friction,
    "integrator": _choice(INTEGRATORS),
    "cone": _choice(CONES),
    "jacobian": _choice(JACOBIANS),
    "solver": _choice(SOLVERS),
    "iterations": _count,
    "ls_iterations": _count,
    "noslip_iterations": _count,
    "ccd_iterations": _count,
    "sdf_initpoints": _count,
    "sdf_iterations": _count,
    "disableflags": _bits(DISABLE_FLAGS),
    "enableflags": _bits(ENABLE_FLAGS),
    "disableactuator": _groups,
}
_OPTION = mujoco.MjOption()
# the fields this build of the bindings has (apirate, for one, is gone from MuJoCo 4)
FIELDS: dict[str, Callable[[Any], Any]] = {
    name: parser for name, parser in _PARSERS.items() if hasattr(_OPTION, name)}
_ENUMS = {"integrator": INTEGRATORS, "cone": CONES, "jacobian": JACOBIANS, "solver": SOLVERS}


def read_options(opt: Any) -> dict[str, Any]:
    """Every field of an mjOption as a patch holds it (tuples for arrays, names for enums
    and flags, group numbers for disableactuator): `validate` accepts what this returns."""
    out: dict[str, Any] = {}
    for name in FIELDS:
        value = getattr(opt, name)
        if name in _ENUMS:
            names = {v: k for k, v in _ENUMS[name].items()}
            out[name] = names.get(int(value), str(int(value)))
        elif name in ("disableflags", "enableflags"):
            table = DISABLE_FLAGS if name == "disableflags" else ENABLE_FLAGS
            out[name] = tuple(n for n, bit in table.items() if int(value) & bit)
        elif name == "disableactuator":
            out[name] = tuple(g for g in range(ACTUATOR_GROUPS) if int(value) >> g & 1)
        elif isinstance(value, np.ndarray):
            out[name] = tuple(float(x) for x in value)
        elif isinstance(value, float):
            out[name] = float(value)
        else:
            out[name] = int(value)
    return out


def validate(patch: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """Parsed (name, value) pairs; ValueError("field: reason") on the first bad one."""
    if not isinstance(patch, Mapping):
        raise ValueError(f"patch: expected a mapping of option fields, got {type(patch).__name__}")
    known = list(FIELDS) + [f"{f}_disabled" for f in DISABLE_FLAGS]
    known += [f"{f}_enabled" for f in ENABLE_FLAGS]
    parsed = []
    for name, value in patch.items():
        if name in FIELDS:
            parser = FIELDS[name]
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
        if isinstance(value, np.ndarray):
            getattr(opt, name)[:] = value
        else:
            setattr(opt, name, value)
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
