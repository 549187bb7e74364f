"""Lights as the Arena backend has them: a table per env, outside the model.

    table = LightTable()
    table.spawn(Light("lamp", "bulb", pos=(1.0, 2.0, 2.5), level=0.8))
    table.dim("lamp", 0.4); table.switch("lamp", False); table.move("lamp", (0, 0, 2.5))

Spawning, switching, dimming and moving change the table only: no model edit, no
recompile; a render draws the table (arena_gym.render.lights).

A light may follow an on/off `regime` (period, seconds on[, offset]): it shines while
(sim time - offset) mod period < seconds on, evaluated at each render's sim time (a light's
own mechanism: nothing moves, so nothing ticks).

Kinds: `dome` (uniform light from everywhere: MuJoCo's ambient term), `sun` (directional
along `dir`), `spot` (a cone of half-angle `cutoff` degrees along `dir`), `bulb` (a point
light), `panel` (a ceiling panel: a wide cone along `dir`). A light's colour times its
`level` is its diffuse (ambient for a dome) term; rendered brightness follows the level
linearly until a pixel saturates.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from arena_gym import checks
from arena_gym.errors import SceneError, unknown

KINDS = ("dome", "sun", "spot", "bulb", "panel")
MAX_LEVEL = 1000.0  # a pixel saturates near 1; beyond this MuJoCo's float32 light overflows
DIRECTIONAL = ("dome", "sun")


def _vector(what: str, value: object, n: int = 3) -> tuple[float, ...]:
    try:
        out = tuple(float(v) for v in value)  # type: ignore[union-attr]
    except (TypeError, ValueError):
        out = ()
    if len(out) != n or not all(math.isfinite(v) for v in out):
        raise SceneError(f"{what}: expected {n} finite numbers, got {value!r}")
    return out


@dataclass(frozen=True)
class Light:
    """One light of a table; see the module docstring for the kinds."""

    name: str
    kind: str
    pos: tuple[float, float, float] = (0.0, 0.0, 3.0)
    dir: tuple[float, float, float] = (0.0, 0.0, -1.0)
    colour: tuple[float, float, float] = (1.0, 1.0, 1.0)
    level: float = 1.0
    on: bool = True
    cutoff: float = 30.0  # deg, spot: half-angle of its cone
    regime: tuple[float, ...] = ()  # (period, seconds on[, offset]) s of sim time; (): always
    glow: str = ""  # a material of the model whose emission follows this light

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise SceneError(f"Light.name: expected a non-empty name, got {self.name!r}")
        what = f"Light {self.name!r}"
        if self.kind not in KINDS:
            raise SceneError(f"{what} kind: expected one of {list(KINDS)}, got {self.kind!r}")
        object.__setattr__(self, "pos", checks.pose(f"{what} pos", self.pos, 3))
        direction = _vector(f"{what} dir", self.dir)
        if math.hypot(*direction) < 1e-9:
            raise SceneError(f"{what} dir: expected a non-zero direction, got {self.dir!r}")
        object.__setattr__(self, "dir", direction)
        colour = _vector(f"{what} colour", self.colour)
        if min(colour) < 0:
            raise SceneError(f"{what} colour: expected values >= 0, got {self.colour!r}")
        object.__setattr__(self, "colour", colour)
        if (isinstance(self.level, bool) or not isinstance(self.level, (int, float))
                or not 0 <= self.level <= MAX_LEVEL):
            raise SceneError(f"{what} level: expected a number in [0, {MAX_LEVEL:g}], got "
                             f"{self.level!r}")
        if not isinstance(self.cutoff, (int, float)) or not 0 < self.cutoff <= 90:
            raise SceneError(f"{what} cutoff: expected degrees in (0, 90], got {self.cutoff!r}")
        if self.regime != ():
            n = len(self.regime) if isinstance(self.regime, (list, tuple)) else 0
            regime = _vector(f"{what} regime", self.regime, n if n in (2, 3) else 2)
            if not 0 <= regime[1] <= regime[0] or regime[0] <= 0:
                raise SceneError(f"{what} regime: expected (period > 0, 0 <= seconds on <= "
                                 f"period[, offset]), got {self.regime!r}")
            object.__setattr__(self, "regime", regime)
        if not isinstance(self.glow, str):
            raise SceneError(f"{what} glow: expected a material name, got {self.glow!r}")

    def shines(self, time: float) -> bool:
        """Whether the light is lit at sim time `time`: on, a level above 0, and inside the
        on part of its regime."""
        if not self.on or self.level <= 0:
            return False
        if not self.regime:
            return True
        period, seconds = self.regime[0], self.regime[1]
        offset = self.regime[2] if len(self.regime) > 2 else 0.0
        return (time - offset) % period < seconds

    @property
    def directional(self) -> bool:
        return self.kind in DIRECTIONAL


class LightTable:
    """One env's lights by name. `version` changes with every edit."""

    def __init__(self) -> None:
        self.lights: dict[str, Light] = {}
        self.version = 0
        self._tree: tuple[object, LightTree | None, list[Light]] = (None, None, [])

    def __len__(self) -> int:
        return len(self.lights)

    def get(self, name: str) -> Light:
        if name not in self.lights:
            raise unknown("light", name, self.lights)
        return self.lights[name]

    def _set(self, light: Light) -> None:
        self.lights[light.name] = light
        self.version += 1

    def spawn(self, light: Light) -> None:
        if not isinstance(light, Light):
            raise SceneError(f"spawn: expected a Light, got {type(light).__name__}")
        if light.name in self.lights:
            raise SceneError(f"spawn: duplicate light name {light.name!r}")
        self._set(light)

    def switch(self, name: str, on: bool) -> None:
        self._set(replace(self.get(name), on=bool(on)))

    def dim(self, name: str, level: float) -> None:
        self._set(replace(self.get(name), level=level))

    def move(self, name: str, pos: tuple[float, float, float],
             dir: tuple[float, float, float] | None = None) -> None:  # noqa: A002
        light = self.get(name)
        self._set(replace(light, pos=pos, dir=light.dir if dir is None else dir))

    def remove(self, name: str) -> None:
        self.get(name)
        del self.lights[name]
        self.version += 1

    @property
    def has_fixtures(self) -> bool:
        return any(not light.directional for light in self.lights.values())

    def pick(self, eye: np.ndarray, slots: int, time: float = 0.0) -> list[Light]:
        """The lights a view from `eye` at sim time `time` gets: every shining directional
        one first (as many as fit), then the shining fixtures nearest `eye`."""
        lit = [light for light in self.lights.values() if light.shines(time)]
        chosen = [light for light in lit if light.directional][:slots]
        fixtures = [light for light in lit if not light.directional]
        room = slots - len(chosen)
        if len(fixtures) <= room:
            return chosen + fixtures
        key = (self.version, tuple(f.name for f in fixtures))
        if self._tree[0] != key:  # rebuilt only after an edit or a regime's switch
            tree = LightTree(np.array([f.pos for f in fixtures]))
            self._tree = (key, tree, fixtures)
        _, tree, fixtures = self._tree
        return chosen + [fixtures[i] for i in tree.nearest(np.asarray(eye, float), room)]


class LightTree:
    """A k-d tree over points (N, 3), each node split at the median of its widest axis."""

    LEAF = 4

    def __init__(self, points: np.ndarray) -> None:
        self.points = np.asarray(points, dtype=float)
        self.root = self._build(np.arange(len(self.points)))

    def _build(self, ids: np.ndarray) -> tuple:
        if len(ids) <= self.LEAF:
            return ("leaf", ids)
        pts = self.points[ids]
        axis = int(np.argmax(pts.max(axis=0) - pts.min(axis=0)))
        order = ids[np.argsort(pts[:, axis], kind="stable")]
        mid = len(order) // 2
        split = float(self.points[order[mid], axis])
        return ("node", axis, split, self._build(order[:mid]), self._build(order[mid:]))

    def nearest(self, point: np.ndarray, k: int) -> list[int]:
        """Indices of the k points nearest `point`, nearest first (ties by index)."""
        best: list[tuple[float, int]] = []

        def visit(node: tuple) -> None:
            if node[0] == "leaf":
                for i in node[1]:
                    best.append((float(np.sum((self.points[i] - point) ** 2)), int(i)))
                best.sort()
                del best[k:]
                return
            _, axis, split, low, high = node
            gap = point[axis] - split
            near, far = (low, high) if gap < 0 else (high, low)
            visit(near)
            if len(best) < k or gap * gap < best[-1][0]:
                visit(far)

        if k > 0 and len(self.points):
            visit(self.root)
        return [i for _, i in best]
