"""Checks of the values a request carries (numbers, poses, names, sizes): each returns the
value as the scene keeps it or raises SceneError naming what was expected and what came, so a
bad request fails before anything is touched."""

from __future__ import annotations

import math

from arena_gym.errors import SceneError

MIN_HALF_EXTENT = 0.0005  # 1 mm per side at least: MuJoCo rejects zero-size geoms
MAX_SIZE = 1000.0  # m: a bigger thing breaks the physics (a 1e30 box diverges forever)
MAX_COORD = 10_000.0  # m (and rad): a pose farther out loses all precision (1e300 * 0 ...)


def floats(what: str, value: object, n: int) -> tuple[float, ...]:
    try:
        out = tuple(float(v) for v in value)  # type: ignore[union-attr]
    except (TypeError, ValueError):
        raise SceneError(f"{what}: expected {n} numbers, got {value!r}") from None
    if len(out) != n:
        raise SceneError(f"{what}: expected {n} numbers, got {len(out)} ({value!r})")
    if not all(math.isfinite(v) for v in out):
        raise SceneError(f"{what}: expected finite numbers, got {value!r}")
    return out


def pose(what: str, value: object, n: int) -> tuple[float, ...]:
    """`n` finite numbers, each within +-MAX_COORD (positions in m, angles in rad)."""
    out = floats(what, value, n)
    if any(abs(v) > MAX_COORD for v in out):
        raise SceneError(f"{what}: expected numbers within +-{MAX_COORD:g} (m, rad), got "
                         f"{out}")
    return out


def name(what: str, name: object) -> str:
    if not isinstance(name, str) or not name or name.endswith("/"):
        raise SceneError(f"{what}: expected a non-empty name not ending in '/', got {name!r}")
    return name


def positive(what: str, values: tuple[float, ...]) -> tuple[float, ...]:
    bad = [v for v in values if v <= 0]
    if bad:
        raise SceneError(f"{what}: expected sizes > 0, got {values}")
    if any(v > MAX_SIZE for v in values):
        raise SceneError(f"{what}: expected sizes <= {MAX_SIZE:g} m, got {values}")
    return values
