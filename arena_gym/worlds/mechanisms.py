"""Doors, gates and elevators declared in a world's YAML (`mechanisms.yaml` next to its map).

    doors:
      - name: lab_door
        pose: [2.0, 0.0, 1.5708]      # x, y, yaw of the closed door's centre on the floor
        size: [0.9, 0.05, 2.0]        # width (along yaw), thickness, height (m)
        motion: slide                  # slide (along its width) or swing (about its -x edge)
        open_time: 1.0                 # s from shut to open
        hold: 0.5                      # s it stays open after its trigger clears
        zone: 1.2                      # m: robots and pedestrians this close open it
        plate: [4.0, 1.0, 0.3]         # optional: x, y, radius of a pressure plate that
                                       # drives the door instead of its zone
        locked: false                  # a gate: shut while locked (Mechanisms.set_locked)
        cap: {zone: [0, -2, 4, 2], max: 3}  # optional: opens only while fewer than `max`
                                       # agents stand in zone [xmin, ymin, xmax, ymax]
    elevators:
      - name: lift
        pose: [6.0, 0.0, 0.0]          # x, y, yaw of the cabin's centre
        size: [1.2, 1.2]               # cabin floor (m)
        levels: [0.0, 3.0]             # heights of the cabin floor's top face, one per storey
        start: 0                       # the level it waits at
        destination: 1                 # where it carries whoever boards at `start` (and back)
        speed: 0.5                     # m/s
        dwell: 1.0                     # s a rider stands in the cabin before it moves

    lights:                            # the env's light table (arena_gym.scene.lights)
      - name: hall
        shape: rect                    # dome, distant, sphere, cylinder, disk or rect
        positions: [[2.0, 0.0, 2.8], [4.0, 0.0, 2.8]]   # one per fixture (m)
        intensity: 3600                # lumens a fixture (dome, distant: lux)
        level: 0.8                     # the dimmer, 0 .. 1
        regime: [60, 40]               # optional: on 40 s of every 60 s of sim time
        glow_prim: ""                  # optional: a prim whose glow visuals shine with it

Every door and cabin is a movable box prim (a mocap body, so lidar, cameras and collisions
see it wherever it stands); `arena_gym.sim.mechanism_tick.Mechanisms` moves them each tick in
place, without recompiling. Loading checks every field and names the file, the field,
what was expected and what came.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from arena_gym.errors import SceneError
from arena_gym.files import read_text
from arena_gym.scene.lights import Light
from arena_gym.scene.requests import Prim
from arena_gym.scene.store import SceneStore

FILE_NAME = "mechanisms.yaml"  # looked for next to a world's map.yaml
CABIN_THICKNESS = 0.1  # m
DOOR_RGBA = (0.55, 0.35, 0.2, 1.0)
CABIN_RGBA = (0.5, 0.55, 0.6, 1.0)
MOTIONS = ("slide", "swing")
SWING_ANGLE = math.pi / 2  # rad a swinging door turns when open


class MechanismError(ValueError):
    """A mechanisms file or record that cannot be used; names the field."""


@dataclass(frozen=True)
class Cap:
    """An occupancy cap: the count of agents in `zone` (xmin, ymin, xmax, ymax) must stay
    below `max` for the door to open."""

    zone: tuple[float, float, float, float]
    max: int


@dataclass(frozen=True)
class Door:
    """A door of a world's mechanisms.yaml: a movable box that slides or swings open for robots and
    people in its zone (plate, lock and cap optional)."""

    name: str
    pose: tuple[float, float, float]
    size: tuple[float, float, float]
    motion: str = "slide"
    open_time: float = 1.0
    hold: float = 0.5
    zone: float = 1.2
    plate: tuple[float, float, float] | None = None
    locked: bool = False
    cap: Cap | None = None

    def prim(self) -> Prim:
        x, y, yaw = self.pose
        return Prim(self.name, pose=(x, y, self.size[2] / 2, yaw), scale=self.size,
                    rgba=DOOR_RGBA, movable=True)


@dataclass(frozen=True)
class Elevator:
    """An elevator cabin of a world's mechanisms.yaml: a movable slab that carries its riders
    between levels at `speed`, dwelling at each."""

    name: str
    pose: tuple[float, float, float]
    size: tuple[float, float]
    levels: tuple[float, ...]
    start: int = 0
    destination: int = 1
    speed: float = 0.5
    dwell: float = 1.0

    def prim(self) -> Prim:
        x, y, yaw = self.pose
        z = self.levels[self.start] - CABIN_THICKNESS / 2
        return Prim(self.name, pose=(x, y, z, yaw), scale=(*self.size, CABIN_THICKNESS),
                    rgba=CABIN_RGBA, movable=True)


@dataclass(frozen=True)
class MechanismSet:
    """A world's doors and elevators."""

    doors: tuple[Door, ...] = ()
    elevators: tuple[Elevator, ...] = ()
    lights: tuple[Any, ...] = ()  # render.lights.Light records: renders read them, no tick

    def __bool__(self) -> bool:
        """Whether anything moves (doors, cabins): lights need no tick."""
        return bool(self.doors or self.elevators)

    def prims(self) -> list[Prim]:
        return [d.prim() for d in self.doors] + [e.prim() for e in self.elevators]

    def keep_out(self, points: np.ndarray, clearance: float) -> np.ndarray:
        """Whether each point (P, 2) lies within `clearance` of where a door sweeps (shut to
        open) or of a cabin's floor: no start, goal or obstacle belongs there."""
        points = np.atleast_2d(np.asarray(points, dtype=float))
        out = np.zeros(len(points), bool)
        for door in self.doors:
            w, t, _ = door.size
            if door.motion == "slide":  # shut, then pushed a width along its axis
                box = (-w / 2, 3 * w / 2, -t / 2, t / 2)
            else:  # a quarter circle's bounding square on its opening side
                box = (-w / 2, w / 2, -t / 2, w)
            out |= _in_box(points, door.pose, box, clearance)
        for lift in self.elevators:
            sx, sy = lift.size
            out |= _in_box(points, lift.pose, (-sx / 2, sx / 2, -sy / 2, sy / 2), clearance)
        return out

    def spawn(self, store: SceneStore, env_id: int) -> None:
        """Spawn every door and cabin into env `env_id` (before the simulator is built)."""
        store[env_id].spawn_prims(self.prims())


def _in_box(points: np.ndarray, pose: tuple[float, float, float],
            box: tuple[float, float, float, float], clearance: float) -> np.ndarray:
    """Points within `clearance` of box (umin, umax, vmin, vmax) in the frame `pose`."""
    x, y, yaw = pose
    c, s = math.cos(yaw), math.sin(yaw)
    dx, dy = points[:, 0] - x, points[:, 1] - y
    u, v = c * dx + s * dy, -s * dx + c * dy
    return ((u >= box[0] - clearance) & (u <= box[1] + clearance)
            & (v >= box[2] - clearance) & (v <= box[3] + clearance))


# ---------------------------------------------------------------------- reading
class _Reader:
    """Field checks that name the file and the field path in every error."""

    def __init__(self, source: str) -> None:
        self.source = source

    def error(self, field: str, expected: str, got: object) -> MechanismError:
        return MechanismError(f"{self.source}: {field}: expected {expected}, got {got!r}")

    def mapping(self, field: str, value: object, allowed: tuple[str, ...],
                required: tuple[str, ...] = ()) -> Mapping[str, Any]:
        if not isinstance(value, Mapping):
            raise self.error(field, "a mapping", value)
        unknown = [k for k in value if k not in allowed]
        if unknown:
            raise self.error(field, f"keys among {list(allowed)}", f"unknown key {unknown[0]!r}")
        for key in required:
            if key not in value:
                raise self.error(f"{field}.{key}", "a value", "nothing (missing)")
        return value

    def numbers(self, field: str, value: object, n: int, positive: bool = False
                ) -> tuple[float, ...]:
        what = f"{n} {'positive ' if positive else ''}finite numbers"
        if (not isinstance(value, (list, tuple)) or len(value) != n
                or not all(_is_number(v) for v in value)):
            raise self.error(field, what, value)
        out = tuple(float(v) for v in value)
        if not all(math.isfinite(v) and (v > 0 or not positive) for v in out):
            raise self.error(field, what, value)
        return out

    def number(self, field: str, value: object, low: float = 0.0, strict: bool = True) -> float:
        ok = _is_number(value) and math.isfinite(value) and (  # type: ignore[arg-type]
            value > low if strict else value >= low)  # type: ignore[operator]
        if not ok:
            raise self.error(field, f"a number {'>' if strict else '>='} {low:g}", value)
        return float(value)  # type: ignore[arg-type]

    def name(self, field: str, value: object) -> str:
        if not isinstance(value, str) or not value or "/" in value:
            raise self.error(field, "a non-empty name without '/'", value)
        return value


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


_DOOR_KEYS = ("name", "pose", "size", "motion", "open_time", "hold", "zone", "plate",
              "locked", "cap")
_ELEVATOR_KEYS = ("name", "pose", "size", "levels", "start", "destination", "speed", "dwell")


def _door(read: _Reader, f: str, raw: object) -> Door:
    d = read.mapping(f, raw, _DOOR_KEYS, ("name", "pose", "size"))
    motion = d.get("motion", "slide")
    if motion not in MOTIONS:
        raise read.error(f"{f}.motion", f"one of {list(MOTIONS)}", motion)
    locked = d.get("locked", False)
    if not isinstance(locked, bool):
        raise read.error(f"{f}.locked", "true or false", locked)
    plate = d.get("plate")
    if plate is not None:
        plate = read.numbers(f"{f}.plate", plate, 3)
        read.number(f"{f}.plate[2]", plate[2])
    cap = d.get("cap")
    if cap is not None:
        c = read.mapping(f"{f}.cap", cap, ("zone", "max"), ("zone", "max"))
        zone = read.numbers(f"{f}.cap.zone", c["zone"], 4)
        if not (zone[0] < zone[2] and zone[1] < zone[3]):
            raise read.error(f"{f}.cap.zone", "[xmin, ymin, xmax, ymax] with min < max",
                             c["zone"])
        if not isinstance(c["max"], int) or isinstance(c["max"], bool) or c["max"] < 1:
            raise read.error(f"{f}.cap.max", "an integer >= 1", c["max"])
        cap = Cap(zone, c["max"])  # type: ignore[arg-type]
    return Door(
        name=read.name(f"{f}.name", d["name"]),
        pose=read.numbers(f"{f}.pose", d["pose"], 3),  # type: ignore[arg-type]
        size=read.numbers(f"{f}.size", d["size"], 3, positive=True),  # type: ignore[arg-type]
        motion=motion,
        open_time=read.number(f"{f}.open_time", d.get("open_time", 1.0)),
        hold=read.number(f"{f}.hold", d.get("hold", 0.5), strict=False),
        zone=read.number(f"{f}.zone", d.get("zone", 1.2)),
        plate=plate,  # type: ignore[arg-type]
        locked=locked,
        cap=cap,
    )


def _elevator(read: _Reader, f: str, raw: object) -> Elevator:
    e = read.mapping(f, raw, _ELEVATOR_KEYS, ("name", "pose", "size", "levels"))
    levels = e["levels"]
    if not isinstance(levels, (list, tuple)) or len(levels) < 2:
        raise read.error(f"{f}.levels", "a list of at least 2 heights", levels)
    levels = read.numbers(f"{f}.levels", levels, len(levels))
    if len(set(levels)) != len(levels):
        raise read.error(f"{f}.levels", "distinct heights, one per storey", e["levels"])
    indices = {}
    for key, default in (("start", 0), ("destination", 1)):
        value = e.get(key, default)
        if (not isinstance(value, int) or isinstance(value, bool)
                or not 0 <= value < len(levels)):
            raise read.error(f"{f}.{key}", f"a level index in [0, {len(levels) - 1}]", value)
        indices[key] = value
    if indices["start"] == indices["destination"]:
        raise read.error(f"{f}.destination", "a level other than start",
                         indices["destination"])
    return Elevator(
        name=read.name(f"{f}.name", e["name"]),
        pose=read.numbers(f"{f}.pose", e["pose"], 3),  # type: ignore[arg-type]
        size=read.numbers(f"{f}.size", e["size"], 2, positive=True),  # type: ignore[arg-type]
        levels=levels,
        speed=read.number(f"{f}.speed", e.get("speed", 0.5)),
        dwell=read.number(f"{f}.dwell", e.get("dwell", 1.0), strict=False),
        **indices,
    )


def parse_mechanisms(doc: object, source: str = "mechanisms") -> MechanismSet:
    """A MechanismSet from a parsed YAML document (see the module docstring)."""
    read = _Reader(source)
    if doc is None:
        return MechanismSet()
    top = read.mapping("$", doc, ("doors", "elevators", "lights"))
    out: dict[str, list] = {"doors": [], "elevators": []}
    for key, build in (("doors", _door), ("elevators", _elevator)):
        items = top.get(key) or []
        if not isinstance(items, list):
            raise read.error(key, "a list", items)
        out[key] = [build(read, f"{key}[{i}]", raw) for i, raw in enumerate(items)]
    names = [m.name for m in out["doors"] + out["elevators"]]
    for i, name in enumerate(names):
        if name in names[:i]:
            raise read.error("name", "names unique among doors and elevators",
                             f"{name!r} twice")
    return MechanismSet(tuple(out["doors"]), tuple(out["elevators"]),
                        _lights(read, top.get("lights") or []))


def _lights(read: _Reader, items: object) -> tuple[Any, ...]:

    if not isinstance(items, list):
        raise read.error("lights", "a list", items)
    lights = []
    for i, raw in enumerate(items):
        if not isinstance(raw, Mapping):
            raise read.error(f"lights[{i}]", "a mapping", raw)
        try:
            lights.append(Light(**raw))
        except TypeError as exc:
            raise read.error(f"lights[{i}]", "the fields of a Light (name, shape, positions, "
                             "direction, intensity, cct_k, cone, x_length, y_length, radius, "
                             "cast_shadows, level, alive, intrinsic, glow_prim, glow_color, "
                             "regime)", exc) from None
        except SceneError as exc:
            raise read.error(f"lights[{i}]", "a valid light", str(exc)) from None
    names = [light.name for light in lights]
    for i, name in enumerate(names):
        if name in names[:i]:
            raise read.error("lights", "unique light names", f"{name!r} twice")
    return tuple(lights)


def load_mechanisms(path: str | Path) -> MechanismSet:
    """Read a mechanisms YAML file."""
    path = Path(path)
    try:
        doc = yaml.safe_load(read_text(path, str(path), error=MechanismError))
    except FileNotFoundError:
        raise MechanismError(f"{path}: expected an existing file, got no such file") from None
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise MechanismError(f"{path}: expected a readable YAML file, got {exc}") from None
    return parse_mechanisms(doc, str(path))


def check_doors(mechanisms: MechanismSet, free: Any, source: str | Path) -> None:
    """MechanismError for a door whose centre lies on no free cell of the world's map
    (`free(points (P, 2)) -> (P,) bool`): a door stands in a doorway, not inside a wall."""
    for i, door in enumerate(mechanisms.doors):
        x, y, _ = door.pose
        if not free(np.array([[x, y]]))[0]:
            raise MechanismError(
                f"{source}: doors[{i}].pose: expected the door's centre on a free cell of the "
                f"map (a doorway), got ({x:g}, {y:g}) inside a wall or outside the map")


def mechanisms_next_to(map_yaml: str | Path) -> MechanismSet:
    """The mechanisms declared next to a world's map (none when there is no such file)."""
    path = Path(map_yaml).parent / FILE_NAME
    return load_mechanisms(path) if path.is_file() else MechanismSet()
