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
        sim.cameras.capture("cam")                     # render now, whatever the rate
        with sim.cameras.lease("cam") as frame:        # frame.rgb/.depth/.segmentation,
            frame.capture_id, frame.generation         # valid until the with ends
        sim.cameras.buffer("cam", 0, 3)                # the last 3 frames (CameraSpec.history)
        viewer = sim.viewer(0, auto_sync=True)         # MuJoCo's passive viewer on env 0
        sim.reload()                                   # rebuild: load_count + 1
        sim.load_from_path("quadruped.xml")            # another model: reload semantics
        sim.load_from_string("<mujoco>...</mujoco>", base="models/")   # includes from there
        sim.reset("home"); sim.reset(0)                # a keyframe by name or index

A model (`model_path`, `load_from_path`, `load_from_string`) is the world of every env,
simulated as MuJoCo simulates the file (envs/model_world.py: nothing added, no floor or
light unless `floor=True`; its compiler settings, options, visual settings kept;
`options={...}` patches the options at construction: the snapshot of epoch 0), its
`<sensor>` elements read by name through the sensor suite (the "mujoco" kind:
`sim.sensor_suite["model/mujoco"]["touch"]`), live after every `step(n)`, whatever n; the
rate-limited kinds (cameras) keep their cadence. Runtime plugins (`plugins=[{"type": ...,
"params": {...}}]`) load with the model. A URDF loads as MuJoCo reads one (root link fixed,
no actuators added; scene/urdf_models.py), its Gazebo force_torque, magnetometer, gps, imu
and contact sensors as MuJoCo sensors, an SRDF's `<disable_collisions>` pairs as contact
excludes. `plugin_libraries=[path]` loads MuJoCo engine plugin libraries (a model's
`<plugin>` sensors then read through the "mujoco" kind) before anything compiles. Plugin
handles (`sim.plugins`) belong to one load: after `reload()` the old ones raise.
"""

from __future__ import annotations

import dataclasses
import math
import weakref
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Self

import numpy as np

from arena_gym.assets.plugin_libraries import load_plugin_libraries
from arena_gym.assets.sources import is_xml_text
from arena_gym.config import EnvConfig, PluginConfig, load_config
from arena_gym.envs.model_world import MODEL, ModelWorld, plugin_configs
from arena_gym.scene.urdf_models import is_urdf
from arena_gym.sensors import CameraReading, CameraSpec, SensorError, SensorSpec
from arena_gym.sensors.camera_frames import CameraFrame, FrameLease
from arena_gym.sim.options import read_options
from arena_gym.sim.simulator import SimulatorClosed

__all__ = ["MODEL", "RuntimeOptions", "Settings", "SettingsSnapshot", "Simulation",
           "SimulationInfo"]


@dataclass(frozen=True)
class RuntimeOptions:
    """Every MuJoCo option of the world at one moment (env 0's model; a patch reaches every
    env), named and shaped as a patch takes them (arena_gym.sim.options: tuples for arrays,
    names for enums and flags), and the epoch of the accepted patch that made them (0: as
    built). `sim.apply_runtime_options(dataclasses.asdict(opts) minus "epoch")` sets them
    back. A field this build of the bindings lacks reads None."""

    epoch: int
    timestep: float
    impratio: float
    tolerance: float
    ls_tolerance: float
    noslip_tolerance: float
    ccd_tolerance: float
    sleep_tolerance: float | None
    gravity: tuple[float, float, float]
    wind: tuple[float, float, float]
    magnetic: tuple[float, float, float]
    density: float
    viscosity: float
    o_margin: float
    o_solref: tuple[float, float]
    o_solimp: tuple[float, float, float, float, float]
    o_friction: tuple[float, float, float, float, float]
    integrator: str
    cone: str
    jacobian: str
    solver: str
    iterations: int
    ls_iterations: int
    noslip_iterations: int
    ccd_iterations: int
    sdf_initpoints: int | None
    sdf_iterations: int | None
    disableflags: tuple[str, ...]  # names of the disable flags set
    enableflags: tuple[str, ...]  # names of the enable flags set
    disableactuator: tuple[int, ...]  # disabled actuator groups


@dataclass(frozen=True)
class SimulationInfo:
    """`Runner.info` of the current load, with the number of loads and, as mujoco_ros's
    SimInfo, the model file, whether a model runs and where loading stands: "ready",
    "loading" (a load_from_* under way) or "failed" (the last load failed: `load_error`
    says why; the model before it still runs)."""

    load_count: int
    clock: float
    step_count: int
    paused: bool
    rt_factor_target: float
    rt_factor_measured: float
    compile_counts: tuple[int, ...]
    model_path: str  # the model file; "" for XML text or an env config
    model_valid: bool  # a model is loaded and steps (False once closed)
    loading_state: str
    load_error: str


@dataclass(frozen=True)
class SettingsSnapshot:
    """The settings at one moment (`sim.settings.snapshot()`), as mujoco_ros's settings
    struct: pacing, pause, and which load and option epoch they belong to."""

    rt_factor: float
    busywait: bool
    running: bool  # the loop steps (started and not paused)
    paused: bool
    load_count: int
    options_epoch: int


class Settings:
    """Settings of the running simulator: reads return copies; writes are validated and
    either applied whole or rejected with ValueError("field: message")."""

    def __init__(self, owner: Simulation) -> None:
        self._owner = weakref.proxy(owner)  # (no cycle: a dropped Simulation frees at once)

    def snapshot(self) -> SettingsSnapshot:
        """A frozen copy of every setting now."""
        owner = self._owner
        return SettingsSnapshot(self.rt_factor, self.busywait, self.running,
                                owner._runner.info.paused, owner.load_count,
                                owner.runtime_options.epoch)

    @property
    def running(self) -> bool:
        """Whether the free-running loop steps; set True to run it (started the first
        time), False to pause it (as mujoco_ros's settings.run)."""
        return self._owner._runner.running

    @running.setter
    def running(self, value: bool) -> None:
        if not isinstance(value, bool):
            raise ValueError(f"running: expected true or false, got {value!r}")
        runner = self._owner._runner
        if value:
            runner.start()
            runner.unpause()
        else:
            runner.pause()

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
    """The frames of the suite's camera readings, by reading key: the latest (borrowed or
    copied), captured now, leased for a context, or the last few kept (CameraSpec.history).
    Cameras added here are added again after `reload()`; another model (load_from_path,
    load_from_string) starts without them."""

    def __init__(self, owner: Simulation) -> None:
        self._owner = weakref.proxy(owner)  # (no cycle: a dropped Simulation frees at once)
        self._specs: list[SensorSpec] = []

    def add(self, spec: SensorSpec) -> CameraReading:
        """Render `spec` (a CameraSpec) from now on; its key names it here."""
        if not isinstance(spec, CameraSpec):
            raise SensorError(f"cameras.add: expected a CameraSpec, got {spec!r}")
        reading = self._owner.sensor_suite.add(spec)
        if spec not in self._specs:
            self._specs.append(spec)
        return reading  # type: ignore[no-any-return]

    def _restore(self) -> None:
        """Add this load's cameras to a rebuilt suite (reload)."""
        for spec in self._specs:
            self._owner.sensor_suite.add(spec)

    def capture(self, key: str, env: int = 0) -> int:
        """Render camera `key` in env `env` now, whatever its rate, and show the frame;
        returns its capture id."""
        reading = self._reading(key)
        self._env(env)
        with self._owner.simulator.lock():
            shown = self._owner.sensor_suite.capture(key, [env])
        if not len(shown):
            suite = self._owner.sensor_suite
            why = suite.renderers.failure or f"env {env} does not hold the camera"
            raise SensorError(f"camera {key!r}: env {env} rendered nothing: {why}")
        return int(reading.count[env])

    def lease(self, key: str, env: int = 0) -> FrameLease:
        """`with sim.cameras.lease(key, env) as frame:` env's latest frame (read-only
        planes, capture_id, stamp, generation: the load count), valid until the with ends;
        later renders never write into it. Read after the with, or after a reload, it
        raises SensorError."""
        reading = self._reading(key)
        self._env(env)
        owner = self._owner
        with owner.simulator.lock():
            return FrameLease(reading, env, owner.load_count, lambda: owner.load_count)

    def buffer(self, key: str, env: int = 0, last_n: int = 1) -> list[CameraFrame]:
        """Copies of env's last `last_n` frames, newest last, each with its capture id and
        sim time (`stamp`); the reading's spec keeps `history` of them."""
        reading = self._reading(key)
        self._env(env)
        if reading.history is None:
            raise SensorError(f"camera {key!r}: expected a spec with history > 0 (frames "
                              "kept per env), got history=0")
        with self._owner.simulator.lock():
            return reading.history.last(env, last_n, self._owner.load_count)

    def _reading(self, key: str) -> CameraReading:
        reading = self._owner.sensor_suite[key]
        if not isinstance(reading, CameraReading):
            raise SensorError(f"camera {key!r}: expected the key of a camera reading, got a "
                              f"{reading.kind} reading")
        return reading

    def _env(self, env: int) -> None:
        n = self._owner.num_envs
        if isinstance(env, bool) or not isinstance(env, (int, np.integer)) or not 0 <= env < n:
            raise SensorError(f"env: expected an env id in [0, {n}), got {env!r}")

    def _frame(self, key: str, field: str, env: int) -> np.ndarray:
        reading = self._reading(key)
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


class Simulation:
    """One world of `num_envs` envs built from an env config (a path, a built-in name or an
    EnvConfig, with keyword overrides) or an MJCF model (`model_path`), stepped directly;
    see the module docstring. `options`: MuJoCo option fields patched at construction.
    With a model: `floor` (False) puts the navigation world's ground plane at z = 0 and its
    sun light under it. `plugins`: runtime plugins ({type, params} or PluginConfig), the
    model's, or an override of the env config's."""

    def __init__(self, config: str | Path | EnvConfig | None = None, num_envs: int = 1,
                 seed: int | None = 0, *, model_path: str | Path | None = None,
                 srdf: str | Path | None = None,
                 plugin_libraries: Iterable[str | Path] = (),
                 options: dict[str, Any] | None = None, floor: bool = False,
                 plugins: Iterable[PluginConfig | dict[str, Any]] = (),
                 **overrides: Any) -> None:
        if model_path is not None and (config is not None or overrides):
            raise ValueError("Simulation: expected an env config or a model_path, got both")
        if srdf is not None and (model_path is None or not is_urdf(model_path)):
            raise ValueError(f"Simulation: srdf: expected a URDF model_path to go with, got "
                             f"{'none' if model_path is None else repr(str(model_path))}")
        if not isinstance(floor, bool):
            raise ValueError(f"Simulation: floor: expected true or false, got {floor!r}")
        if model_path is None and floor:
            raise ValueError("Simulation: floor: expected a model_path to go with (an env "
                             "config builds its own world), got an env config")
        self._plugins: tuple[PluginConfig, ...] = ()
        if model_path is not None:
            self._plugins = plugin_configs(plugins)
        elif plugins:  # an env config's own list (EnvConfig.plugins), overridden
            overrides["plugins"] = plugins
        self.plugin_libraries = load_plugin_libraries(plugin_libraries)  # before compiling
        self.cfg: EnvConfig | None = None
        self._model: str | Path | None = model_path
        self._srdf = srdf
        self._base: str | Path | None = None  # where XML text resolves its files
        self._floor = floor
        self._loading, self._load_error = "loading", ""
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
        self._closed_info: Any = None  # the runner's last info, once closed
        self.settings = Settings(self)
        self.cameras = Cameras(self)
        self._viewers: dict[int, Any] = {}  # env -> PassiveViewer
        self._load()

    def _load(self) -> None:
        from arena_gym.envs.core import NavigationCore
        from arena_gym.sim.runner import Runner

        if self._model is not None:
            core: Any = ModelWorld.load(self._model, self.num_envs, self.seed, self._srdf,
                                        self._floor, self._plugins, self._base)
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
        core.sensor_suite.hook_ticks()  # sampled at every tick (the env's core: by its step)
        self._core, self._runner, self._epoch = core, Runner(core.sim), 0
        self.load_count += 1
        self._options = self._snapshot()
        self._container_hooks(core)
        self._loading = "ready"

    def reload(self) -> None:
        """Close this load and build the world again from its source (the config or the
        model): load_count + 1, the source's options again (epoch 0), new plugin handles."""
        self._live()
        self._runner.close()
        self._core.close()
        self._load()
        self.cameras._restore()
        for viewer in self._viewers.values():
            viewer.follow(self._core.sim)

    def load_from_path(self, path: str | Path, srdf: str | Path | None = None) -> None:
        """Load the MJCF or URDF (with an optional SRDF) model at `path` instead (reload
        semantics). A model that does not load leaves the current one running, unchanged."""
        if srdf is not None and not is_urdf(path):
            raise ValueError(f"load_from_path: srdf: expected a URDF path to go with, got "
                             f"{str(path)!r}")
        self._replace(Path(path), srdf)

    def load_from_string(self, xml: str, base: str | Path | None = None) -> None:
        """Load an MJCF (or URDF) model from its XML text instead (reload semantics).
        `base`: the folder MJCF text resolves its `<include>` files and assets in, as a
        file there would (default: the working directory, as MuJoCo's from_string)."""
        if not isinstance(xml, str) or ("<mujoco" not in xml and not is_urdf(xml)):
            raise ValueError(f"load_from_string: expected MJCF text (<mujoco ...>) or URDF "
                             f"text (<robot ...>), got {str(xml)[:40]!r}")
        self._replace(xml, base=base)

    def _replace(self, source: str | Path, srdf: str | Path | None = None,
                 base: str | Path | None = None) -> None:
        self._loading, self._load_error = "loading", ""
        try:  # fails here, before the load goes
            ModelWorld.load(source, 1, None, srdf, self._floor, base=base).close()
        except Exception as exc:
            self._loading, self._load_error = "failed", str(exc)
            raise
        self._model, self._srdf, self._base, self.cfg = source, srdf, base, None
        self.cameras._specs.clear()  # another model: its own cameras
        self.reload()

    # ------------------------------------------------------------ parts
    @property
    def simulator(self) -> Any:
        return self._live().sim

    @property
    def runner(self) -> Any:
        """The Runner that runs this load's simulator free (snapshots, keyframes, ...)."""
        self._live()
        return self._runner

    @property
    def store(self) -> Any:
        return self._live().store

    @property
    def sensor_suite(self) -> Any:
        return self._live().sensor_suite

    @property
    def plugins(self) -> list[Any]:
        return self._live().plugins

    # ------------------------------------------------------------ stepping
    def step(self, n: int = 1) -> None:
        """`n` physics steps of every env (lockstep; works paused or not)."""
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
            raise ValueError(f"step: expected an integer >= 1, got {n!r}")
        core = self._live()
        sim = core.sim
        with sim.lock():
            sim.step(int(n))
            if sim.step_count % sim.tick_steps:  # ended between ticks: MuJoCo's own now
                core.sensor_suite.sample_live()
        for viewer in self._viewers.values():
            if viewer.auto_sync and viewer.is_running():
                viewer.sync()

    def viewer(self, env: int = 0, auto_sync: bool = False) -> Any:
        """MuJoCo's passive viewer on env `env` (arena_gym.render.passive.PassiveViewer:
        `sync(state_only=False)`, `lock()`, `is_running()`, `close()`, and `with
        sim.viewer() as viewer:` closes it at the end); `auto_sync` syncs it after each
        `step`. One per env: while its window runs, asking again returns the same handle
        (with the `auto_sync` asked for now). It follows `reload()` and closes with the
        simulation. RuntimeError without a display (DISPLAY and WAYLAND_DISPLAY unset)."""
        from arena_gym.render.passive import PassiveViewer

        held = self._viewers.get(env)
        if held is not None and held.is_running():
            if not isinstance(auto_sync, bool):
                raise ValueError(f"auto_sync: expected true or false, got {auto_sync!r}")
            held.auto_sync = auto_sync
            return held
        if held is not None:
            held.close()
        self._viewers[env] = viewer = PassiveViewer(self._core.sim, env, auto_sync)
        return viewer

    def start(self, paused: bool = False) -> None:
        self._live()
        self._runner.start(paused=paused)

    def pause(self) -> None:
        self._runner.pause()

    def unpause(self) -> None:
        self._runner.unpause()

    @property
    def sim_info(self) -> SimulationInfo:
        info = self._closed_info if self._runner is None else self._runner.info
        model = self._model
        path = "" if model is None or is_xml_text(model) else str(model)
        return SimulationInfo(self.load_count, **dataclasses.asdict(info), model_path=path,
                              model_valid=self._core is not None,
                              loading_state=self._loading, load_error=self._load_error)

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
        values = read_options(self._core.store.scenes[0].model.opt)
        names = [f.name for f in dataclasses.fields(RuntimeOptions) if f.name != "epoch"]
        return RuntimeOptions(epoch=self._epoch, **{n: values.get(n) for n in names})

    # ------------------------------------------------------------ container (issue 34 item 4)
    def _container_hooks(self, core: Any) -> None:
        """A load's plugins step after every tick and reset (with the sensors) after every
        reset; the state as loaded is the initial state `reset()` goes back to."""
        # the hooks (held by the core's simulator) hold the core weakly: no cycle
        held = weakref.ref(core)

        def on_tick(sim: Any) -> None:
            core = held()
            for handle in core.plugins if core is not None else ():
                handle.step(core)

        def on_reset(sim: Any, env_ids: list[int], fill_initial_state: bool) -> None:
            core = held()
            if core is None:
                return
            core.sensor_suite.reset(env_ids)
            for handle in core.plugins:
                handle.reset(core, np.asarray(env_ids, dtype=np.int64))

        if core.plugins:
            core.sim.hooks.tick.append(on_tick)
        core.sim.hooks.reset.append(on_reset)
        self._runner.capture_initial_state()

    def toggle_paused(self) -> bool:
        """Pause the free-running loop, or run it (started the first time); the new paused
        state, as mujoco_ros's togglePaused."""
        if self._runner.running:
            self._runner.pause()
            return True
        self._runner.start()
        self._runner.unpause()
        return False

    def reset(self, keyframe: str | int | None = None,
              env_ids: Iterable[int] | None = None) -> None:
        """Every env (or `env_ids`) back to its initial state (as loaded, or as `runner.
        capture_initial_state()` last kept it): reset hooks get fill_initial_state=True;
        sensors and plugins reset. After a spawn or delete changed an env's model, a
        ValueError says to capture again, and no env is reset. `keyframe`: to the model's
        keyframe instead, by name (the model's own, or the full one) or by index, as
        mj_resetDataKeyframe; an unnamed keyframe k is also named `key_<k>`. Every env is
        checked to have it before any is reset."""
        ids = None if env_ids is None else list(env_ids)
        if keyframe is None:
            self._runner.reset_to_initial_state(ids)
        else:
            self._runner.reset_to_keyframe(keyframe, ids)

    @property
    def plugin_names(self) -> tuple[str, ...]:
        """The names of this load's runtime plugins, in config order."""
        return tuple(handle.name for handle in self._core.plugins)

    @property
    def plugin_stats(self) -> tuple[Any, ...]:
        """Per runtime plugin, a PluginStats (arena_gym.plugins): calls and wall time of its
        load, reset and step callbacks, timed where they are called; steps run after every
        tick here, resets after every reset."""
        return tuple(handle.stats for handle in self._core.plugins)

    # ------------------------------------------------------------ lifetime
    def close(self) -> None:
        """Close the viewers, stop the loop and free the load (its memory goes now;
        idempotent); a step, start or reload after it raises SimulatorClosed, as does a
        handle taken from it."""
        for viewer in self._viewers.values():
            viewer.close()
        self._viewers.clear()
        if self._core is not None:
            self._runner.close()
            self._core.close()
            self._closed_info = self._runner.info  # sim_info after close
            self._core = self._runner = None  # (the runner holds the simulator)

    def _live(self) -> Any:
        """This load's core; SimulatorClosed after close()."""
        if self._core is None:
            raise SimulatorClosed("simulator: closed (by close(), or replaced by a "
                                  "Simulation's reload() or load_from_*); expected the open "
                                  "one (Simulation.simulator)")
        return self._core

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
