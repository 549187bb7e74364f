"""Lights as the Arena backend has them (Arena's light contract): a table per env, outside
the model.

    table = LightTable()
    table.spawn(Light("sky", "dome", intensity=300.0))                     # lux
    table.spawn(Light("hall", "rect", positions=[(1, 1, 2.6), (3, 1, 2.6)],
                      intensity=3600.0, x_length=0.6, y_length=0.6))        # lumens a fixture
    table.dim("hall", 0.4); table.set_alive("hall", [True, False])
    table.move("hall", (0.0, 0.0, 2.6), yaw=1.57)   # its first fixture there, turned

Spawning, dimming and moving change the table only: no model edit, no recompile; a render
draws the table (arena_gym.render.lights, the lighting model in lux).

Shapes (USD's light types, as Arena's backends name them): `dome` (sky light from
everywhere) and `distant` (a sun along `direction`) take `intensity` in lux on a surface
facing them; the fixtures `sphere` (a bulb, `radius`), `cylinder` (a tube), `disk` (a
downlight, `radius`) and `rect` (a panel, `x_length` by `y_length`) take it in lumens per
fixture, one fixture at each of `positions` (a ceiling rig has many; `alive` marks the dead
ones). `cone` (deg, full angle; 0: the shape's own spread) narrows a fixture to a spot.
`level` dims the whole light (0 .. 1), `cct_k` colours it (K; 0: white). An `intrinsic`
light belongs to a model (a desk lamp's bulb): it adds to the default lighting, where any
other light replaces it. `glow_prim` names a prim whose `glow_<material>` visuals shine
with the light (in `glow_color`, else their own colour).

`move` places a light by its first fixture and turns it by a yaw about z, from the layout
it was spawned with (a light on a robot follows the robot's frame). A light may follow an
on/off `regime` (period, seconds on[, offset]) of sim time, evaluated at each render.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

from arena_gym import checks
from arena_gym.errors import SceneError, unknown

SHAPES = ("dome", "distant", "sphere", "cylinder", "disk", "rect")
DIRECTIONAL = ("dome", "distant")  # no position: light from the sky
DEFAULT_LUX = 400.0  # a dome's or sun's intensity when none is given (the reference)
DEFAULT_LUMENS = 800.0  # a fixture's when none is given (a 60 W bulb's)
MAX_FIXTURES = 10_000
MAX_INTENSITY = 1e6  # lux or lumens: ten times full sunlight; beyond, MuJoCo's float32 overflows

Point = tuple[float, float, float]


def _vector(what: str, value: object, n: int = 3) -> tuple[float, ...]:
    try:
        out = tuple(float(v) for v in value)  # type: ignore[union-attr]
    except (TypeError, ValueError):
        out = ()
    if len(out) != n or not all(math.isfinite(v) for v in out):
        raise SceneError(f"{what}: expected {n} finite numbers, got {value!r}")
    return out


def _number(what: str, value: object, low: float = 0.0, high: float = math.inf) -> float:
    if (isinstance(value, bool) or not isinstance(value, (int, float))
            or not math.isfinite(value) or not low <= value <= high):
        bound = f"in [{low:g}, {high:g}]" if high < math.inf else f">= {low:g}"
        raise SceneError(f"{what}: expected a number {bound}, got {value!r}")
    return float(value)


@dataclass(frozen=True)
class Light:
    """One light of a table (see the module docstring for the shapes and units)."""

    name: str
    shape: str
    positions: tuple[Point, ...] = ()
    direction: Point = (0.0, 0.0, -1.0)
    intensity: float | None = None  # lux (dome, distant) or lumens a fixture; None: default
    cct_k: float = 0.0  # colour temperature, K; 0: white
    cone: float = 0.0  # deg, full angle a fixture's light leaves in; 0: the shape's spread
    x_length: float = 0.0  # m: a rect's sides, a cylinder's length
    y_length: float = 0.0
    radius: float = 0.0  # m: a sphere's, disk's or cylinder's
    cast_shadows: bool = False
    level: float = 1.0  # the dimmer, 0 .. 1
    alive: tuple[bool, ...] = ()  # per fixture; a fixture without an entry is alive
    intrinsic: bool = False  # a model's own lamp: the default lighting stays on
    glow_prim: str = ""  # a prim whose glow_<material> visuals shine with this light
    glow_color: tuple[float, float, float] | None = None  # their colour (None: their own)
    regime: tuple[float, ...] = ()  # (period, seconds on[, offset]) s of sim time; (): always

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise SceneError(f"Light.name: expected a non-empty name, got {self.name!r}")
        what = f"Light {self.name!r}"
        if self.shape not in SHAPES:
            raise SceneError(f"{what} shape: expected one of {list(SHAPES)}, got {self.shape!r}")
        self._positions(what)
        direction = _vector(f"{what} direction", self.direction)
        if math.hypot(*direction) < 1e-9:
            raise SceneError(f"{what} direction: expected a non-zero direction, got "
                             f"{self.direction!r}")
        object.__setattr__(self, "direction", direction)
        default = DEFAULT_LUX if self.directional else DEFAULT_LUMENS
        object.__setattr__(self, "intensity", _number(
            f"{what} intensity", default if self.intensity is None else self.intensity, 0.0,
            MAX_INTENSITY))
        object.__setattr__(self, "cct_k", _number(f"{what} cct_k", self.cct_k, 0.0, 40_000.0))
        object.__setattr__(self, "cone", _number(f"{what} cone", self.cone, 0.0, 360.0))
        for field in ("x_length", "y_length", "radius"):
            object.__setattr__(self, field, _number(f"{what} {field}", getattr(self, field),
                                                    0.0, 1000.0))
        object.__setattr__(self, "level", _number(f"{what} level", self.level, 0.0, 1.0))
        for field in ("cast_shadows", "intrinsic"):
            if not isinstance(getattr(self, field), bool):
                raise SceneError(f"{what} {field}: expected true or false, got "
                                 f"{getattr(self, field)!r}")
        object.__setattr__(self, "alive", alive_mask(what, self.alive, len(self.positions)))
        if not isinstance(self.glow_prim, str):
            raise SceneError(f"{what} glow_prim: expected a prim name, got {self.glow_prim!r}")
        if self.glow_color is not None:
            colour = _vector(f"{what} glow_color", self.glow_color)
            if min(colour) < 0 or max(colour) > 1:
                raise SceneError(f"{what} glow_color: expected r, g, b in [0, 1], got "
                                 f"{self.glow_color!r}")
            object.__setattr__(self, "glow_color", colour)
        if self.regime != ():
            n = len(self.regime) if isinstance(self.regime, (list, tuple)) else 0
            regime = _vector(f"{what} regime", self.regime, n if n in (2, 3) else 2)
            if not 0 <= regime[1] <= regime[0] or regime[0] <= 0:
                raise SceneError(f"{what} regime: expected (period > 0, 0 <= seconds on <= "
                                 f"period[, offset]), got {self.regime!r}")
            object.__setattr__(self, "regime", regime)

    def _positions(self, what: str) -> None:
        raw = self.positions
        if not isinstance(raw, (list, tuple)) or len(raw) > MAX_FIXTURES:
            raise SceneError(f"{what} positions: expected a list of at most {MAX_FIXTURES} "
                             f"points (x, y, z), got {raw!r}")
        points = tuple(checks.pose(f"{what} positions[{i}]", p, 3) for i, p in enumerate(raw))
        if not points and not self.directional:
            raise SceneError(f"{what} positions: expected at least one point (x, y, z) for a "
                             f"{self.shape} fixture, got none")
        object.__setattr__(self, "positions", points)

    @property
    def directional(self) -> bool:
        """A dome or a sun: light from the sky, no fixtures."""
        return self.shape in DIRECTIONAL

    @property
    def lit_fixtures(self) -> tuple[Point, ...]:
        """The positions of the fixtures that are alive."""
        alive = self.alive
        return tuple(p for i, p in enumerate(self.positions) if i >= len(alive) or alive[i])

    def shines(self, time: float) -> bool:
        """Whether the light is lit at sim time `time`: a level above 0, and inside the on
        part of its regime."""
        if self.level <= 0:
            return False
        if not self.regime:
            return True
        period, seconds = self.regime[0], self.regime[1]
        offset = self.regime[2] if len(self.regime) > 2 else 0.0
        return (time - offset) % period < seconds

    def moved(self, position: Point, yaw: float) -> Light:
        """This light (as spawned) with its first fixture at `position` and everything
        turned by `yaw` (rad) about z: the other fixtures keep their offsets from the first,
        the direction turns with them."""
        position = _vector(f"Light {self.name!r} position", position)
        yaw = _number(f"Light {self.name!r} yaw", yaw, -1e4, 1e4)
        c, s = math.cos(yaw), math.sin(yaw)

        def turn(v: tuple[float, ...]) -> tuple[float, float, float]:
            return (c * v[0] - s * v[1], s * v[0] + c * v[1], v[2])

        first = self.positions[0] if self.positions else (0.0, 0.0, 0.0)
        points = tuple(tuple(a + b for a, b in zip(position, turn(tuple(
            p - f for p, f in zip(point, first, strict=True))), strict=True))
            for point in self.positions) if self.positions else ()
        return replace(self, positions=points, direction=turn(self.direction))


def alive_mask(what: str, alive: Any, fixtures: int) -> tuple[bool, ...]:
    """A per-fixture mask as a tuple of bools, no longer than the fixtures."""
    if not isinstance(alive, (list, tuple)) or not all(isinstance(a, bool) for a in alive):
        raise SceneError(f"{what} alive: expected a list of true/false, one per fixture, got "
                         f"{alive!r}")
    if len(alive) > max(fixtures, 0):
        raise SceneError(f"{what} alive: expected at most one entry per fixture ({fixtures}), "
                         f"got {len(alive)}")
    return tuple(alive)


class LightTable:
    """One env's lights by name. `version` changes with every edit; `cache` holds what a
    renderer derived from one version (arena_gym.render.lights)."""

    def __init__(self) -> None:
        self.lights: dict[str, Light] = {}
        self.version = 0
        self.cache: dict[str, Any] = {}
        self._spawned: dict[str, Light] = {}  # each light as spawned (move() turns these)

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
        self._spawned[light.name] = light
        self._set(light)

    def set(self, name: str, level: float | None = None,
            alive: list[bool] | tuple[bool, ...] | None = None) -> None:
        """Set a light's level (0 .. 1; 0: off) and which of its fixtures are alive (one
        entry per fixture), both checked before either changes."""
        light = self.get(name)
        self._set(replace(light, level=light.level if level is None else level,
                          alive=light.alive if alive is None else alive))

    def dim(self, name: str, level: float) -> None:
        """Set a light's level (0 .. 1; 0: off)."""
        self.set(name, level=level)

    def set_alive(self, name: str, alive: list[bool] | tuple[bool, ...]) -> None:
        """Which of a light's fixtures are alive (one entry per fixture)."""
        self.set(name, alive=alive)

    def move(self, name: str, position: Point, yaw: float = 0.0) -> None:
        """Place a light by its first fixture, turned by `yaw` about z (Light.moved)."""
        light = self.get(name)
        moved = self._spawned[name].moved(position, yaw)
        self._set(replace(moved, level=light.level, alive=light.alive))

    def remove(self, name: str) -> None:
        self.get(name)
        del self.lights[name]
        del self._spawned[name]
        self.version += 1

    @property
    def has_fixtures(self) -> bool:
        """Whether any light has fixtures (a view of them needs finely tessellated boxes)."""
        return any(not light.directional for light in self.lights.values())

    @property
    def replaces_default(self) -> bool:
        """Whether a light of the scene (not a model's own lamp) is in the table: then the
        model's default sun and headlight are off while it is drawn."""
        return any(not light.intrinsic for light in self.lights.values())
