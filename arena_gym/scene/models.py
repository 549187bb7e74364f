"""MJCF models in a scene (Scene.spawn_mjcf): what the scene keeps about one, and how a
model's spec is made ready to attach.

A model keeps what it declares except what one env's world decides for all its parts: the
physics options (`<option>`) and the sizes (`<size>`) are the scene's, so that every env
of a batch steps alike; `prepare` reports which of the model's differed.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field, replace

import mujoco
import numpy as np

from arena_gym.scene import builders

_SIZES = ("memory", "nconmax", "njmax", "nstack", "nuserdata")
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


def prepare(spec: mujoco.MjSpec, world: mujoco.MjSpec, name: str, source: str
            ) -> tuple[ModelInfo, list[str]]:
    """Make the model `spec` ready to attach to the scene's `world`: unnamed top-level
    bodies are named `body_<k>` (so the scene can pose and delete them), the root of each
    moving tree never sleeps unless the model says (as robots), unnamed sensors are named
    `sensor_<k>` (k: their index), and the options and sizes become the world's. Returns
    the model's (unprefixed) info and the options and sizes the model set to other values
    than the world's ("timestep=0.004")."""
    top = list(spec.worldbody.bodies)
    for k, body in enumerate(top):
        if not body.name:
            body.name = f"body_{k}"
        _keep_awake(body)
    for k, sensor in enumerate(spec.sensors):  # read by name (the "mujoco" sensor kind)
        if not sensor.name:
            sensor.name = f"sensor_{k}"
    default = mujoco.MjSpec()  # what a model that sets nothing has
    differ = [f"{n}={_text(n, getattr(spec.option, n))}" for n in _OPTIONS
              if _set(getattr(spec.option, n), getattr(world.option, n),
                      getattr(default.option, n))]
    differ += [f"{n}={getattr(spec, n)}" for n in _SIZES
               if _set(getattr(spec, n), getattr(world, n), getattr(default, n))]
    spec.option = world.option
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


def adopt_options(world: mujoco.MjSpec, model: mujoco.MjSpec) -> None:
    """Give `world` (a scene's spec) the options and sizes of `model`: a scene built for one
    model runs it with the model's own physics."""
    for name in _OPTIONS:
        setattr(world.option, name, getattr(model.option, name))
    for size in _SIZES:
        setattr(world, size, getattr(model, size))


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
    return not np.array_equal(value, world) and not np.array_equal(value, default)


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
