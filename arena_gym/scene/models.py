"""MJCF models in a scene (Scene.spawn_mjcf): what the scene keeps about one, and how a
model's spec is made ready to attach.

In a scene of other things (a navigation world) a model keeps what it declares except what
one env's world decides for all its parts: the physics options (`<option>`), the sizes
(`<size>`), the visual settings (`<visual>`) and statistics (`<statistic>`) are the
scene's, so that every env of a batch steps and draws alike, and `<compiler settotalmass>`
would scale every body of the scene: `prepare` names each of the model's that differed.

A model loaded as the world (`model_world`: `arena_gym.Simulation(model_path=...)`) keeps
all of them: the world starts as the model's compiler, options, visual settings,
statistics and sizes with nothing in it, so the model attached to it compiles to the model
MuJoCo compiles from the file (names aside: they carry the env's prefix).
"""

from __future__ import annotations

import contextlib
import functools
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field, replace

import mujoco
import numpy as np

from arena_gym.errors import AssetWarning
from arena_gym.scene import builders

_SIZES = ("memory", "nconmax", "njmax", "nstack", "nuserdata", "nkey", "nemax", "nuser_body",
          "nuser_jnt", "nuser_geom", "nuser_site", "nuser_cam", "nuser_tendon",
          "nuser_actuator", "nuser_sensor")
# spec structs a compiled model has once (attach keeps the parent's)
_GLOBALS = ("visual", "stat")
_OPTIONS = ("timestep", "gravity", "wind", "magnetic", "density", "viscosity", "integrator",
            "cone", "jacobian", "solver", "iterations", "tolerance", "impratio",
            "ls_iterations", "ls_tolerance", "noslip_iterations", "noslip_tolerance",
            "disableflags", "enableflags", "o_margin", "o_solref", "o_solimp", "o_friction")


@dataclass
class ModelInfo:
    """A model spawned from MJCF. Names are full (prefixed) MuJoCo names: `root_body` is
    its first top-level body (the entity's pose; "world" for a model of world geoms only),
    `bodies` all top-level ones; `joints`, `actuators` and `sensors` are the model's own
    named ones, in its order."""

    name: str
    prefix: str
    source: str  # the file name, or "MJCF text"
    root_body: str
    bodies: list[str] = field(default_factory=list)
    joints: list[str] = field(default_factory=list)
    actuators: list[str] = field(default_factory=list)
    sensors: list[str] = field(default_factory=list)

    def prefixed(self, prefix: str) -> ModelInfo:
        """A copy whose element names carry the scene prefix (`env_0/arm/`)."""
        return replace(
            self, prefix=prefix,
            root_body=self.root_body if self.root_body == "world" else prefix + self.root_body,
            bodies=[prefix + b for b in self.bodies], joints=[prefix + j for j in self.joints],
            actuators=[prefix + a for a in self.actuators],
            sensors=[prefix + s for s in self.sensors])


def model_world(model: mujoco.MjSpec) -> mujoco.MjSpec:
    """An empty world that is `model`'s: its name, compiler settings, options, visual
    settings, statistics and sizes, and nothing else (no body, light or geom). The keyframes
    `<size nkey>` asks for beyond the model's own come with the model (`prepare`), so that
    they keep MuJoCo's order."""
    world = mujoco.MjSpec()
    world.modelname = model.modelname
    world.compiler = model.compiler
    world.option = model.option
    for part in _GLOBALS:
        setattr(world, part, getattr(model, part))
    for size in _SIZES:
        if size != "nkey":
            setattr(world, size, getattr(model, size))
    return world


def prepare(spec: mujoco.MjSpec, world: mujoco.MjSpec, name: str, source: str,
            as_world: bool = False) -> tuple[ModelInfo, list[str]]:
    """Make the model `spec` ready to attach to the scene's `world`: unnamed top-level
    bodies are named `body_<k>` (so the scene can pose and delete them), unnamed sensors
    `sensor_<k>`, cameras `camera_<k>` and keyframes `key_<k>` (k: their index), and the
    options, sizes, visual settings and statistics become the world's. In a navigation
    world (which lets static bodies sleep) the root of each moving tree never sleeps unless
    the model says (as robots); `as_world` (a model_world of the model): the keyframes
    `<size nkey>` adds are added to the model as MuJoCo adds them (after its own, at the
    model's defaults). Returns the model's (unprefixed) info and what the model set to other
    values than the world's ("timestep=0.004", "visual.map.znear=0.05",
    "compiler.settotalmass=14")."""
    top = list(spec.worldbody.bodies)
    for k, body in enumerate(top):
        if not body.name:
            body.name = f"body_{k}"
        if not as_world:
            _keep_awake(body)
    if as_world:
        for _ in range(spec.nkey - len(spec.keys)):
            spec.add_key()
        spec.nkey = 0
    for k, key in enumerate(spec.keys):  # attached under a prefix: one name each
        if not key.name:
            key.name = f"key_{k}"
    for k, sensor in enumerate(spec.sensors):  # read by name (the "mujoco" sensor kind)
        if not sensor.name:
            sensor.name = f"sensor_{k}"
    for k, camera in enumerate(spec.cameras):  # named by a CameraSpec
        if not camera.name:
            camera.name = f"camera_{k}"
    default = mujoco.MjSpec()  # what a model that sets nothing has
    differ = [f"{n}={_text(n, getattr(spec.option, n))}" for n in _OPTIONS
              if _set(getattr(spec.option, n), getattr(world.option, n),
                      getattr(default.option, n))]
    differ += [f"{n}={getattr(spec, n)}" for n in _SIZES
               if _set(getattr(spec, n), getattr(world, n), getattr(default, n))]
    for part in _GLOBALS:
        differ += _struct_differ(part, getattr(spec, part), getattr(world, part),
                                 getattr(default, part))
    total = spec.compiler.settotalmass
    if _set(total, world.compiler.settotalmass, default.compiler.settotalmass):
        differ.append(f"compiler.settotalmass={total:g}")
    spec.option = world.option
    for part in _GLOBALS:
        setattr(spec, part, getattr(world, part))
    for size in _SIZES:
        setattr(spec, size, getattr(world, size))
    info = ModelInfo(
        name=name, prefix="", source=source,
        root_body=top[0].name if top else "world",
        bodies=[b.name for b in top],
        joints=[j.name for j in spec.joints if j.name],
        actuators=[a.name for a in spec.actuators if a.name],
        sensors=[s.name for s in spec.sensors])
    return info, differ


class CompileWarnings:
    """What MuJoCo warned while a model was attached and compiled (`mujoco_warnings`),
    told once each after the model is in: attach conflicts (a setting the world keeps
    where the model set another) as AssetWarnings naming the model, MuJoCo's other
    warnings (a deprecated attribute) as they came, with the model named."""

    def __init__(self, where: str) -> None:
        self.where = where
        self.caught: list[warnings.WarningMessage] = []

    def tell(self, stacklevel: int = 1) -> None:
        told: set[str] = set()
        for caught in self.caught:
            text = " ".join(str(caught.message).split())
            if text in told:
                continue  # the compile alone and the compile in the scene warn alike
            told.add(text)
            if text.startswith("Attach conflict"):
                warnings.warn(f"{self.where}: MuJoCo's {text[0].lower()}{text[1:]}",
                              AssetWarning, stacklevel=stacklevel + 1)
            elif issubclass(caught.category, UserWarning) and not issubclass(
                    caught.category, AssetWarning):  # the model's, in any env: told once
                model = self.where.split(": ", 1)[-1]
                warnings.warn(f"{model}: {text}", caught.category, stacklevel=stacklevel + 1)
            else:
                warnings.warn_explicit(caught.message, caught.category, caught.filename,
                                       caught.lineno)


@contextlib.contextmanager
def mujoco_warnings(where: str) -> Iterator[CompileWarnings]:
    """Within: MuJoCo's compile warnings are kept, to `tell()` after (see CompileWarnings)."""
    said = CompileWarnings(where)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield said
    said.caught = list(caught)


def _struct_differ(path: str, value: object, world: object, default: object) -> list[str]:
    """The fields of a spec struct (visual, stat and their parts) the model set to other
    values than the world's, as "visual.map.znear=0.05"."""
    found = []
    for name in (f for f in dir(value) if not f.startswith("_")):
        mine = getattr(value, name)
        if callable(mine):
            continue
        if isinstance(mine, (int, float, np.ndarray)):
            if _set(mine, getattr(world, name), getattr(default, name)):
                text = (" ".join(f"{v:g}" for v in mine.ravel())
                        if isinstance(mine, np.ndarray) else f"{mine:g}")
                found.append(f"{path}.{name.rstrip('_')}={text}")
        else:
            found += _struct_differ(f"{path}.{name.rstrip('_')}", mine, getattr(world, name),
                                    getattr(default, name))
    return found


def _keep_awake(body: mujoco.MjsBody) -> None:
    """The root of each moving tree in `body`'s subtree never sleeps, as a robot's base,
    unless the model gives it a sleep policy (MuJoCo allows one on those roots only)."""
    if body.joints:
        if body.sleep == mujoco.mjtSleepPolicy.mjSLEEP_AUTO:
            builders.never_sleep(body)
        return
    for child in body.bodies:
        _keep_awake(child)


def _set(value: object, world: object, default: object) -> bool:
    """Whether a model set a value (not MuJoCo's default) that is not the world's."""
    return not _same(value, world) and not _same(value, default)


def _same(a: object, b: object) -> bool:
    """Equal values, NaN equal to NaN (MuJoCo's "unset" for statistics)."""
    a, b = np.asarray(a), np.asarray(b)
    floats = np.issubdtype(a.dtype, np.floating) and np.issubdtype(b.dtype, np.floating)
    return bool(np.array_equal(a, b, equal_nan=floats))


def _text(name: str, value: object) -> str:
    """An option's value as MJCF would spell it: numbers, enum names, flag names."""
    if isinstance(value, np.ndarray):
        return " ".join(f"{v:g}" for v in value.ravel())
    if name in _ENUMS:
        return _ENUMS[name](int(value)).name  # type: ignore[call-overload]
    if name in _FLAGS:
        bits = [f.name for f in _FLAGS[name].__members__.values()
                if int(f) and int(value) & int(f) and int(f) & (int(f) - 1) == 0]
        return "|".join(bits) or "0"
    return f"{value:g}"  # type: ignore[str-format]


_ENUMS = {"integrator": mujoco.mjtIntegrator, "cone": mujoco.mjtCone,
          "jacobian": mujoco.mjtJacobian, "solver": mujoco.mjtSolver}
_FLAGS = {"disableflags": mujoco.mjtDisableBit, "enableflags": mujoco.mjtEnableBit}


# MjModel fields whose rows are elements with names (the rest: no name to give)
_ELEMENTS = {"body": "body", "jnt": "joint", "geom": "geom", "site": "site", "cam": "camera",
             "light": "light", "actuator": "actuator", "sensor": "sensor", "tendon": "tendon",
             "mesh": "mesh", "eq": "equality", "key": "key"}


def non_finite(model: mujoco.MjModel) -> str:
    """"" when every number of `model` is finite (an infinite range: unbounded, as MuJoCo
    reads it); else which field holds what, and of which element: "body_pos of body 'b'
    = (nan, 0.0, 1.0)". The model's own fields come before those derived from them."""
    found = []
    for name in _float_fields():
        values = getattr(model, name)
        bad = ~np.isfinite(values) if not name.endswith("range") else np.isnan(values)
        if bad.any():
            found.append((name.endswith("0"), name, values, bad))
    if not found:
        return ""
    _, name, values, bad = min(found, key=lambda f: f[:2])
    row = int(np.argwhere(bad)[0][0])
    kind = _ELEMENTS.get(name.split("_")[0])
    owner = f" of {kind} {getattr(model, kind)(row).name or row!r}" if kind else ""
    value = values[row] if values.ndim == 2 else values[row:row + 1]
    return f"{name}{owner} = {tuple(float(v) for v in value)}"


@functools.lru_cache(maxsize=1)
def _float_fields() -> tuple[str, ...]:
    """The names of MjModel's float array fields (learned once, on an empty model)."""
    model = mujoco.MjSpec().compile()
    return tuple(n for n in dir(model) if not n.startswith("_") and isinstance(
        getattr(model, n, None), np.ndarray) and getattr(model, n).dtype.kind == "f")
