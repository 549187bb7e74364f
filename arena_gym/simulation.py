"""Simulation: the simulator's face for users who drive it themselves, as mujoco_ros's
MujocoEnv: a context manager over one world (an env config's robot, world, obstacles,
sensors and plugins) with its Simulator, the Runner that runs it free, and SensorSuite.

    with arena_gym.Simulation(config="default", num_envs=2, seed=0) as sim:   # an env config
    with arena_gym.Simulation(model_path="arm.xml", num_envs=4) as sim:       # any MJCF model
    with arena_gym.Simulation(model_path="arm.urdf", srdf="arm.srdf") as sim:  # URDF + SRDF
        sim.step(100)                                  # lockstep, paused or not
        sim.start(); sim.pause(); sim.unpause()        # free running at settings.rt_factor
        opts = sim.runtime_options                     # frozen snapshot, opts.epoch
        sim.apply_runtime_options({"timestep": 0.002}) # all or nothing: ValueError("field: ...")
        sim.settings.rt_factor = 2.0                   # validated setters; reads are copies
        rgb = sim.cameras.borrow_latest_rgb("cam")     # read-only view of the latest frame
        keep = sim.cameras.copy_rgb("cam")             # a copy that later renders leave alone
        sim.reload()                                   # rebuild: load_count + 1
        sim.load_from_path("quadruped.xml")            # another model: reload semantics
        sim.load_from_string("<mujoco>...</mujoco>")

A model (`model_path`, `load_from_path`, `load_from_string`) runs in every env with its own
MuJoCo options (`options={...}` patches them at construction: the snapshot of epoch 0), its
`<sensor>` elements read by name through the sensor suite (the "mujoco" kind:
`sim.sensor_suite["model"]["touch"]`). A URDF loads as MuJoCo reads one (root link fixed,
no actuators added; scene/urdf_models.py), its Gazebo force_torque, magnetometer, gps, imu
and contact sensors as MuJoCo sensors, an SRDF's `<disable_collisions>` pairs as contact
excludes. `plugin_libraries=[path]` loads MuJoCo engine plugin libraries (a model's
`<plugin>` sensors then read through the "mujoco" kind) before anything compiles. Plugin
handles (`sim.plugins`) belong to one load: after `reload()` the old ones raise.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Self

import numpy as np

from arena_gym.assets.plugin_libraries import load_plugin_libraries
from arena_gym.config import EnvConfig, load_config
from arena_gym.scene.models import adopt_options
from arena_gym.scene.store import SceneStore
from arena_gym.scene.urdf_models import is_urdf, load_model
from arena_gym.sensors import CameraReading, SensorError, SensorSpec
from arena_gym.sensors.suite import SensorSuite, default_specs
from arena_gym.sim.options import DISABLE_FLAGS, ENABLE_FLAGS, INTEGRATORS
from arena_gym.sim.simulator import Simulator

MODEL = "model"  # the entity name of a loaded model in every env (`env_<i>/model/...`)


@dataclass(frozen=True)
class RuntimeOptions:
    """MuJoCo options of the world at one moment, and the epoch of the accepted patch that
    made them (0: as built)."""

    epoch: int
    timestep: float
    gravity: tuple[float, float, float]
    integrator: str
    iterations: int
    disabled: tuple[str, ...]  # names of the disable flags set
    enabled: tuple[str, ...]  # names of the enable flags set


@dataclass(frozen=True)
class SimulationInfo:
    """`Runner.info` of the current load, with the number of loads."""

    load_count: int
    clock: float
    step_count: int
    paused: bool
    rt_factor_target: float
    rt_factor_measured: float
    compile_counts: tuple[int, ...]


class Settings:
    """Settings of the running simulator: reads return copies; writes are validated and
    either applied whole or rejected with ValueError("field: message")."""

    def __init__(self, owner: Simulation) -> None:
        self._owner = owner

    @property
    def running(self) -> bool:
        return self._owner._runner.running

    @property
    def rt_factor(self) -> float:
        return float(self._owner._runner.rt_factor)

    @rt_factor.setter
    def rt_factor(self, value: float) -> None:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not (
                math.isfinite(value) and value >= 0):
            raise ValueError(f"rt_factor: expected a finite number >= 0 (0: as fast as "
                             f"possible), got {value!r}")
        self._owner._runner.rt_factor = float(value)

    @property
    def busywait(self) -> bool:
        return bool(self._owner._runner.busywait)

    @busywait.setter
    def busywait(self, value: bool) -> None:
        if not isinstance(value, bool):
            raise ValueError(f"busywait: expected true or false, got {value!r}")
        self._owner._runner.busywait = value

    @property
    def gravity(self) -> tuple[float, float, float]:
        return self._owner.runtime_options.gravity

    @gravity.setter
    def gravity(self, value: Any) -> None:
        self._owner.apply_runtime_options({"gravity": value})


class Cameras:
    """The latest frames of the suite's camera readings, by reading key."""

    def __init__(self, owner: Simulation) -> None:
        self._owner = owner

    def add(self, spec: SensorSpec) -> CameraReading:
        """Render `spec` (a CameraSpec) from now on; its key names it here."""
        reading = self._owner.sensor_suite.add(spec)
        if not isinstance(reading, CameraReading):
            raise SensorError(f"cameras.add: expected a CameraSpec, got {spec!r}")
        return reading

    def _frame(self, key: str, field: str, env: int) -> np.ndarray:
        reading = self._owner.sensor_suite[key]
        if not isinstance(reading, CameraReading):
            raise SensorError(f"camera {key!r}: expected the key of a camera reading, got a "
                              f"{reading.kind} reading")
        frames = reading.data.get(field)
        if frames is None:
            raise SensorError(f"camera {key!r}: expected one of its outputs "
                              f"{sorted(reading.data)}, got {field!r}")
        if not reading.valid[env]:
            raise SensorError(f"camera {key!r}: env {env} has no frame yet (step first)")
        return frames[env]

    def borrow_latest_rgb(self, key: str, env: int = 0) -> np.ndarray:
        """The latest RGB frame, read-only, without a copy: the next render overwrites it."""
        return _read_only(self._frame(key, "rgb", env))

    def borrow_latest_depth(self, key: str, env: int = 0) -> np.ndarray:
        return _read_only(self._frame(key, "depth", env))

    def copy_rgb(self, key: str, env: int = 0) -> np.ndarray:
        """A copy of the latest RGB frame: yours to keep."""
        return self._frame(key, "rgb", env).copy()

    def copy_depth(self, key: str, env: int = 0) -> np.ndarray:
        return self._frame(key, "depth", env).copy()


def _read_only(frame: np.ndarray) -> np.ndarray:
    view = frame.view()
    view.flags.writeable = False
    return view


@dataclass
class ModelWorld:
    """A loaded MJCF model in every env: its scenes, simulator and sensor suite (what a
    navigation core holds for an env config)."""

    store: SceneStore
    sim: Simulator
    sensor_suite: SensorSuite
    plugins: list[Any] = dataclasses.field(default_factory=list)

    @classmethod
    def load(cls, source: str | Path, num_envs: int, seed: int | None,
             srdf: str | Path | None = None) -> ModelWorld:
        """`source` (an MJCF or URDF path, or its XML text; `srdf` with a URDF) in
        `num_envs` envs, with its own options."""
        spec, _ = load_model(source, f"model {MODEL!r}", None, srdf)
        store = SceneStore(num_envs, timestep=float(spec.option.timestep))
        for scene in store:
            adopt_options(scene.spec, spec)  # the model's physics (one set for the batch)
            scene.spawn_mjcf(MODEL, source, srdf=srdf)
        sim = Simulator(store)
        return cls(store, sim, SensorSuite(sim, default_specs(store), seed=seed, hook=False))

    def close(self) -> None:
        self.sensor_suite.close()
        self.sim.close()


class Simulation:
    """One world of `num_envs` envs built from an env config (a path, a built-in name or an
    EnvConfig, with keyword overrides) or an MJCF model (`model_path`), stepped directly;
    see the module docstring. `options`: MuJoCo option fields patched at construction."""

    def __init__(self, config: str | Path | EnvConfig | None = None, num_envs: int = 1,
                 seed: int | None = 0, *, model_path: str | Path | None = None,
                 srdf: str | Path | None = None,
                 plugin_libraries: Iterable[str | Path] = (),
                 options: dict[str, Any] | None = None, **overrides: Any) -> None:
        if model_path is not None and (config is not None or overrides):
            raise ValueError("Simulation: expected an env config or a model_path, got both")
        if srdf is not None and (model_path is None or not is_urdf(model_path)):
            raise ValueError(f"Simulation: srdf: expected a URDF model_path to go with, got "
                             f"{'none' if model_path is None else repr(str(model_path))}")
        self.plugin_libraries = load_plugin_libraries(plugin_libraries)  # before compiling
        self.cfg: EnvConfig | None = None
        self._model: str | Path | None = model_path
        self._srdf = srdf
        if model_path is None:
            self.cfg = (config if isinstance(config, EnvConfig)
                        else load_config(config, **overrides))
            if isinstance(config, EnvConfig) and overrides:
                from arena_gym.config import merged

                self.cfg = merged(config, overrides)
        self.num_envs, self.seed = num_envs, seed
        self._build_options = dict(options or {})
        self.load_count = 0
        self._epoch = 0
        self._core: Any = None
        self._runner: Any = None
        self.settings = Settings(self)
        self.cameras = Cameras(self)
        self._load()

    def _load(self) -> None:
        from arena_gym.envs.core import NavigationCore
        from arena_gym.sim.runner import Runner

        if self._model is not None:
            core: Any = ModelWorld.load(self._model, self.num_envs, self.seed, self._srdf)
        else:
            core = NavigationCore(self.num_envs, self.cfg)
            for env in range(self.num_envs):
                core.seed(env, None if self.seed is None else self.seed + env)
            core.reset_envs(list(range(self.num_envs)))
        try:
            if self._build_options:  # as built: epoch 0
                core.sim.apply_runtime_options(self._build_options)
        except ValueError:
            core.close()
            raise
        suite = core.sensor_suite
        core.sim.hooks.tick.append(lambda sim: suite.update())
        self._core, self._runner, self._epoch = core, Runner(core.sim), 0
        self.load_count += 1
        self._options = self._snapshot()

    def reload(self) -> None:
        """Close this load and build the world again from its source (the config or the
        model): load_count + 1, the source's options again (epoch 0), new plugin handles."""
        self._runner.close()
        self._core.close()
        self._load()

    def load_from_path(self, path: str | Path, srdf: str | Path | None = None) -> None:
        """Load the MJCF or URDF (with an optional SRDF) model at `path` instead (reload
        semantics). A model that does not load leaves the current one running, unchanged."""
        if srdf is not None and not is_urdf(path):
            raise ValueError(f"load_from_path: srdf: expected a URDF path to go with, got "
                             f"{str(path)!r}")
        self._replace(Path(path), srdf)

    def load_from_string(self, xml: str) -> None:
        """Load an MJCF (or URDF) model from its XML text instead (reload semantics)."""
        if not isinstance(xml, str) or ("<mujoco" not in xml and not is_urdf(xml)):
            raise ValueError(f"load_from_string: expected MJCF text (<mujoco ...>) or URDF "
                             f"text (<robot ...>), got {str(xml)[:40]!r}")
        self._replace(xml)

    def _replace(self, source: str | Path, srdf: str | Path | None = None) -> None:
        ModelWorld.load(source, 1, None, srdf).close()  # fails here, before the load goes
        self._model, self._srdf, self.cfg = source, srdf, None
        self.reload()

    # ------------------------------------------------------------ parts
    @property
    def simulator(self) -> Any:
        return self._core.sim

    @property
    def runner(self) -> Any:
        """The Runner that runs this load's simulator free (snapshots, keyframes, ...)."""
        return self._runner

    @property
    def store(self) -> Any:
        return self._core.store

    @property
    def sensor_suite(self) -> Any:
        return self._core.sensor_suite

    @property
    def plugins(self) -> list[Any]:
        return self._core.plugins

    # ------------------------------------------------------------ stepping
    def step(self, n: int = 1) -> None:
        """`n` physics steps of every env (lockstep; works paused or not)."""
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
            raise ValueError(f"step: expected an integer >= 1, got {n!r}")
        self._core.sim.step(int(n))

    def start(self, paused: bool = False) -> None:
        self._runner.start(paused=paused)

    def pause(self) -> None:
        self._runner.pause()

    def unpause(self) -> None:
        self._runner.unpause()

    @property
    def sim_info(self) -> SimulationInfo:
        info = self._runner.info
        return SimulationInfo(self.load_count, **dataclasses.asdict(info))

    # ------------------------------------------------------------ options
    @property
    def runtime_options(self) -> RuntimeOptions:
        return self._options

    def apply_runtime_options(self, patch: dict[str, Any]) -> RuntimeOptions:
        """Apply a patch of MuJoCo option fields (arena_gym.sim.options) to every env: all
        of it and a new snapshot with the next epoch, or (ValueError "field: message")
        nothing, the snapshot and epoch unchanged."""
        self._core.sim.apply_runtime_options(patch)  # validates every field before any applies
        self._epoch += 1
        self._options = self._snapshot()
        return self._options

    def _snapshot(self) -> RuntimeOptions:
        opt = self._core.store.scenes[0].model.opt
        integrators = {v: k for k, v in INTEGRATORS.items()}
        return RuntimeOptions(
            epoch=self._epoch, timestep=float(opt.timestep),
            gravity=tuple(float(g) for g in opt.gravity),  # type: ignore[arg-type]
            integrator=integrators.get(int(opt.integrator), str(int(opt.integrator))),
            iterations=int(opt.iterations),
            disabled=tuple(n for n, bit in DISABLE_FLAGS.items() if int(opt.disableflags) & bit),
            enabled=tuple(n for n, bit in ENABLE_FLAGS.items() if int(opt.enableflags) & bit))

    # ------------------------------------------------------------ lifetime
    def close(self) -> None:
        if self._core is not None:
            self._runner.close()
            self._core.close()
            self._core = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
