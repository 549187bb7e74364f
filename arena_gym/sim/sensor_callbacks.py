"""Python functions as MuJoCo's user sensors, called where MuJoCo calls its sensor callback:
inside each physics step, at the sensor's stage (`needstage`), writing `sensordata`, so that
MuJoCo applies to the values what it applies to a user sensor's (the cutoff, the history
buffer `mj_readSensor` replays) and every reader of `sensordata` sees them.

    hook = SensorCallbacks.add(scene, "env_0/arm/", fn)   # fn(name, model, data) -> values
    ...                                                   # every mj_step of the scene calls it
    hook.check(); hook.remove()

MuJoCo has one sensor callback per process (`mjcb_sensor`), and a batch accepts only a C
function there: the one installed here is a C function (ctypes) that finds, from the
MjData it is called with, the scene whose hooks fill that data's user sensors. A scene with
hooks is stepped on its own MjData (`Scene.steps_alone`: its pool group, never a batch,
whose MjData are not the scene's). MuJoCo calls the callback only for models with user
sensors; others never reach Python. A function's error cannot unwind through MuJoCo: it
is kept, the rest of that step's user sensors of the scene are left at 0, and `check()`
raises it after the step.
"""

from __future__ import annotations

import ctypes
import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import mujoco
import numpy as np

from arena_gym.scene.scene import Scene

UserSensor = Callable[[str, mujoco.MjModel, mujoco.MjData], Any]
_USER = int(mujoco.mjtSensor.mjSENS_USER)
_CALLBACK = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int)


class SensorCallbackError(RuntimeError):
    """A user sensor's function failed or returned the wrong number of values."""


@dataclass(eq=False)
class Hook:
    """`fn` fills the user sensors of `scene` whose names start with `prefix` (and, given
    `only`, are named `only` after it)."""

    scene: Scene
    prefix: str
    fn: UserSensor
    only: str | None = None
    error: SensorCallbackError | None = None
    # per compiled model: {stage: [(name, address, dim)]}
    _sensors: tuple[object, dict[int, list[tuple[str, int, int]]]] | None = None
    removed: bool = field(default=False, repr=False)

    def sensors(self, model: mujoco.MjModel) -> dict[int, list[tuple[str, int, int]]]:
        if self._sensors is None or self._sensors[0] is not model:
            found: dict[int, list[tuple[str, int, int]]] = {}
            for i in range(model.nsensor):
                name = model.sensor(i).name
                if int(model.sensor_type[i]) != _USER or not name.startswith(self.prefix):
                    continue
                short = name[len(self.prefix):]
                if self.only is None or short == self.only:
                    found.setdefault(int(model.sensor_needstage[i]), []).append(
                        (short, int(model.sensor_adr[i]), int(model.sensor_dim[i])))
            self._sensors = (model, found)
        return self._sensors[1]

    def fill(self, model: mujoco.MjModel, data: mujoco.MjData, stage: int) -> None:
        """Call `fn` for this stage's user sensors and write their values (MuJoCo zeroed
        them before and applies their cutoff after)."""
        if self.error is not None:
            return
        for name, adr, dim in self.sensors(model).get(stage, ()):
            try:
                values = np.asarray(self.fn(name, model, data), dtype=float)
            except Exception as exc:  # kept: nothing may unwind through MuJoCo
                self.error = SensorCallbackError(
                    f"user sensor {name!r}: the callback raised {type(exc).__name__}: {exc}")
                self.error.__cause__ = exc
                return
            if values.size != dim:
                self.error = SensorCallbackError(
                    f"user sensor {name!r}: expected {dim} values from the callback, got "
                    f"shape {values.shape}")
                return
            data.sensordata[adr:adr + dim] = values.reshape(dim)

    def check(self) -> None:
        """Raise (once) what a call of `fn` failed with since the last check."""
        error, self.error = self.error, None
        if error is not None:
            raise error

    def remove(self) -> None:
        SensorCallbacks.remove(self)


class SensorCallbacks:
    """The process's hooks and the C callback installed for them (see the module). The
    registry holds its hooks weakly: a hook whose owner (a sensor unit) is gone without
    `remove()` stops being called, and its scene steps in batches again."""

    _lock = threading.RLock()
    _hooks: weakref.WeakSet[Hook] = weakref.WeakSet()
    _installed: Any = None  # the ctypes function MuJoCo holds while hooks exist

    @classmethod
    def add(cls, scene: Scene, prefix: str, fn: UserSensor, only: str | None = None) -> Hook:
        """A hook calling `fn` for the scene's user sensors under `prefix`; the scene is
        stepped alone from its next step on. RuntimeError if another sensor callback than
        ours is installed (mujoco.set_mjcb_sensor): MuJoCo has one."""
        if not callable(fn):
            raise TypeError(f"user sensor: expected a callable (name, model, data) -> values, "
                            f"got {fn!r}")
        hook = Hook(scene, prefix, fn, only)
        with cls._lock:
            held = mujoco.get_mjcb_sensor()
            if held is not None and held is not cls._installed:
                raise RuntimeError(
                    "user sensors: MuJoCo's sensor callback is taken (mujoco."
                    f"set_mjcb_sensor: {held!r}); expected none, for MuJoCo has one per "
                    "process: uninstall it with mujoco.set_mjcb_sensor(None)")
            if held is None:
                cls._installed = cls._installed or _CALLBACK(cls._call)
                mujoco.set_mjcb_sensor(cls._installed)
            cls._hooks.add(hook)
        weakref.finalize(hook, cls._forget, scene)
        cls._alone(scene)
        return hook

    @classmethod
    def remove(cls, hook: Hook) -> None:
        """Stop calling `hook`; with no hook left, MuJoCo's callback is uninstalled."""
        with cls._lock:
            if hook.removed:
                return
            hook.removed = True
            cls._hooks.discard(hook)
        cls._forget(hook.scene)

    @classmethod
    def _forget(cls, scene: Scene) -> None:
        """After a hook went: the scene's grouping, and MuJoCo's callback once none is left."""
        with cls._lock:
            if not cls._hooks and cls._installed is not None:
                if mujoco.get_mjcb_sensor() is cls._installed:  # (not one set since)
                    mujoco.set_mjcb_sensor(None)
                cls._installed = None
        cls._alone(scene)

    @classmethod
    def _alone(cls, scene: Scene) -> None:
        """The scene steps alone while it has a hook (a change regroups its simulator)."""
        alone = any(h.scene is scene for h in list(cls._hooks))
        if scene.steps_alone != alone:
            scene.steps_alone = alone
            scene.version += 1  # regroup before the next step

    @classmethod
    def _call(cls, model_ptr: int, data_ptr: int, stage: int) -> None:
        """MuJoCo's mjcb_sensor: the hooks of the scene stepping this MjData."""
        for hook in list(cls._hooks):
            if hook.removed:
                continue
            data = hook.scene.compiled_data
            if data is not None and data._address == data_ptr:
                model = hook.scene.compiled
                if model._address == model_ptr:
                    hook.fill(model, data, stage)
