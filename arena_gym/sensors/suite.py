"""SensorSuite: every reading of every env, sampled in the simulator's tick hook.

    sim = Simulator(store)
    suite = SensorSuite(sim, seed=0)      # each robot's lidars, IMUs, odometry, collision
    sim.step(10)                          # one tick: the hook casts, reads and publishes
    scan = suite["burger/lds_lfcd_sensor"].ranges      # (num_envs, 360) float32, REP 117
    image = suite.add(CameraSpec("burger", outputs=("rgb",)))   # rendering is opt-in

The suite owns preallocated (num_envs, ...) arrays (readings.py) and writes them in place.
It rebinds names to ids whenever an env recompiles (`Scene.compile_count`), so spawns and
deletions need nothing from the caller; an env without the robot shows `valid` False.
After moving robots between steps (an episode reset), call `reset(env_ids)`: it samples
those envs at once, bypassing rates and delays, and forgets what was queued for them.

Noise draws come from one `np.random.Generator` per env (`seed(s)` gives env i the seed
s + i, or assign `rngs`), so the same seeds give bit-identical readings.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Self

import mujoco
import numpy as np

from arena_gym.registry import SENSOR_KINDS
from arena_gym.scene.scene import Scene
from arena_gym.scene.store import SceneStore
from arena_gym.sensors import kinds as _kinds  # noqa: F401 - registers the built-in kinds
from arena_gym.sensors.camera import RendererPool
from arena_gym.sensors.channel import Channel, Subscriber
from arena_gym.sensors.errors import SensorError
from arena_gym.sensors.lidar import LidarUnit, cast_lidars
from arena_gym.sensors.mujoco_sensors import INTERP, MujocoUnit
from arena_gym.sensors.readings import Reading
from arena_gym.sensors.specs import SensorSpec
from arena_gym.sensors.state_access import Frames
from arena_gym.sensors.steady import SteadyTick
from arena_gym.sensors.units import Unit, mounted_kind
from arena_gym.sensors.workers import Workers
from arena_gym.sim.hooks import weakly
from arena_gym.sim.simulator import Simulator

_SENSOR_OFF = int(mujoco.mjtDisableBit.mjDSBL_SENSOR)


class SensorSuite:
    """The readings of `specs` (default: `default_specs(sim.store)`) for every env.

        suite = SensorSuite(sim, [LidarSpec("robot", key="scan"), CollisionSpec("robot")])
        sim.step(10)
        suite["scan"].ranges, suite["robot/collision"].collided

    `hook=False` leaves sampling to the caller (`update()`), e.g. to time it.
    """

    def __init__(self, sim: Simulator, specs: Iterable[SensorSpec] | None = None,
                 seed: int | None = None, nthread: int | None = None, hook: bool = True) -> None:
        self.sim = sim
        self.store = sim.store
        self.num_envs = sim.store.num_envs
        self.workers = Workers(nthread or sim.nthread)
        self.frames = Frames(sim, self.workers)
        self.renderers = RendererPool()
        self.units: dict[tuple[str, str, str], Unit] = {}
        self.channels: dict[str, Channel] = {}
        self._compiled = [-1] * self.num_envs
        self._compiles = -1  # Scene.compiles when every env was last bound or checked
        # update's plan (_plan; None: to make): every channel steady, and then its lidar casts
        self._steady: bool | None = None
        self._every: list[Channel] = []
        self._lidar_jobs: list[tuple[LidarUnit, np.ndarray]] = []
        self._due: tuple | None = None  # what _begin found due, for sample_due
        self._tick: SteadyTick | None = None  # the usual tick's one call, where _plan found it
        self._options: tuple = (None, None)  # env 0's model and its options (`frozen`)
        self._rngs: list[np.random.Generator] = []
        self._seed: int | None = seed
        self.seed(seed)
        for spec in default_specs(sim.store) if specs is None else specs:
            self.add(spec)
        self._hooked = hook  # False: the caller calls update() itself
        self._hook = weakly(self._on_tick)  # (the sim holds it: no cycle through the suite)
        if hook:
            sim.hooks.tick.append(self._hook)

    def _on_tick(self, sim: Simulator) -> None:
        self.update()

    def hook_ticks(self) -> None:
        """Sample at every tick of the simulator from now on (as `hook=True` does)."""
        if not self._hooked:
            self.sim.hooks.tick.append(self._hook)
            self._hooked = True

    # ------------------------------------------------------------ readings
    @property
    def readings(self) -> dict[str, Reading]:
        return {key: channel.reading for key, channel in self.channels.items()}

    def __getitem__(self, key: str) -> Reading:
        channel = self.channels.get(key)
        if channel is None:
            close = difflib.get_close_matches(str(key), list(self.channels), n=3)
            hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
            raise SensorError(
                f"unknown reading {key!r}{hint} (the suite has {list(self.channels)})")
        return channel.reading

    def __contains__(self, key: object) -> bool:
        return key in self.channels

    def spec(self, key: str) -> SensorSpec:
        self[key]
        return self.channels[key].spec

    def lidar_rays(self, key: str) -> tuple[np.ndarray, np.ndarray]:
        """Where lidar `key` casts at the current state: world origins (num_envs, 3) and unit
        directions (num_envs, rings * beams, 3), ring-major as its `ranges` flatten, NaN for
        envs without it. A sample taken at this state pairs its ranges with them ray for ray
        (drawing the beams of a scan needs nothing else: no second lidar)."""
        reading = self[key]
        unit = self.channels[key].unit
        if not isinstance(unit, LidarUnit):
            raise SensorError(f"lidar_rays: expected the key of a lidar reading, got {key!r} "
                              f"(a {reading.kind} reading)")
        self.frames.begin(forced=False)
        self._rebind()
        nray = unit.pattern.directions.shape[0]
        origins = np.full((self.num_envs, 3), np.nan)
        directions = np.full((self.num_envs, nray, 3), np.nan)
        envs = np.flatnonzero(unit.present)
        if envs.size:
            origins[envs], directions[envs] = unit.rays(self.frames, envs)
        return origins, directions

    def history(self, key: str, sensor: str, time: float,
                env_ids: Iterable[int] | None = None, interp: str = "zoh") -> np.ndarray:
        """(envs, dim): MuJoCo sensor `sensor` of the "mujoco" reading `key` at sim time
        `time`, replayed from MuJoCo's history buffer (its `nsample` past values;
        mj_readSensor) at the current state; `interp` "zoh", "linear" or "cubic". A sensor
        without history reads its current value."""
        reading = self[key]
        unit = self.channels[key].unit
        if not isinstance(unit, MujocoUnit):
            raise SensorError(f"history: expected the key of a mujoco reading, got {key!r} "
                              f"(a {reading.kind} reading)")
        if sensor not in unit.names:
            raise SensorError(f"history: reading {key!r} has sensors {unit.names}, got "
                              f"{sensor!r}")
        if interp not in INTERP:
            raise SensorError(f"history: interp: expected one of {list(INTERP)}, got {interp!r}")
        self.frames.begin(forced=False)
        self._rebind()
        envs = unit.present_ids if env_ids is None else np.asarray(list(env_ids), np.int64)
        if not np.isin(envs, unit.present_ids).all():
            raise SensorError(f"history: expected env ids holding {unit.describe()} "
                              f"({unit.present_ids.tolist()}), got {envs.tolist()}")
        return unit.history(self.frames, sensor, envs, float(time), INTERP[interp])

    def add(self, spec: SensorSpec) -> Reading:
        """Read `spec` from now on; the same spec again returns its reading."""
        kind = SENSOR_KINDS.get(spec.kind) if isinstance(spec, SensorSpec) else None
        if kind is None or not isinstance(spec, kind.spec):
            specs = ", ".join(k.spec.__name__ for _, k in SENSOR_KINDS.items())
            raise SensorError(f"add: expected a spec of a registered sensor kind ({specs}), "
                              f"got {spec!r}")
        key = spec.reading_key
        existing = self.channels.get(key)
        if existing is not None:
            if existing.spec == spec:
                return existing.reading
            raise SensorError(f"reading {key!r}: held by {existing.spec!r}; expected another "
                              f"key for {spec!r}")
        unit = self.units.get(spec.unit_key)
        fresh_unit = unit is None
        if unit is None:
            unit = kind.unit(spec, self.num_envs, self)
        unit.join(spec)
        if fresh_unit:
            self.sim.stepping_groups()  # compiles what is pending
            for scene in self.store.scenes:
                unit.bind(scene)
            counts = [scene.compile_count for scene in self.store.scenes]
            self.sim.stepping_groups()  # what the unit added to a scene (an IMU's sensors)
            for scene, count in zip(self.store.scenes, counts, strict=True):
                if scene.compile_count != count:
                    unit.bind(scene)
            if not unit.present.any():
                holders = sorted({e for s in self.store.scenes for e, x in s.entities.items()
                                  if x.kind in unit.entity_kinds})
                raise SensorError(f"{type(spec).__name__}: no env holds a "
                                  f"{' or '.join(unit.entity_kinds)} named {spec.robot!r}; "
                                  f"expected one of {holders}")
            self.units[spec.unit_key] = unit
        reading = kind.reading(spec, unit, self.num_envs, self._period(spec, unit))
        self.channels[key] = channel = Channel(spec, unit, reading, reading.period)
        history = getattr(reading, "history", None)  # a camera's kept frames (CameraSpec.history)
        if history is not None:
            channel.subscribers.append(history.record)
        self._steady = self._tick = None
        self._show_direct()
        return reading

    def capture(self, key: str, env_ids: Iterable[int] | None = None) -> np.ndarray:
        """Sample reading `key` in these envs (default: every env holding its sensor) now,
        whatever its rate or `enable` mask, and show it at once (noise as its spec says; no
        delay); returns the envs that gave a sample (a camera without GL gives none)."""
        self[key]
        envs = np.arange(self.num_envs) if env_ids is None else np.unique(
            np.asarray(list(env_ids), dtype=np.int64))
        if envs.size and (envs[0] < 0 or envs[-1] >= self.num_envs):
            raise SensorError(f"capture: expected env ids in [0, {self.num_envs}), got "
                              f"{envs.tolist()}")
        self.frames.begin(forced=False)
        self._rebind()
        return self.channels[key].capture(self.frames, envs, self.sim.clock, self._rngs)

    def enable(self, key: str, env_ids: Iterable[int] | None = None) -> None:
        """Sample reading `key` only in these envs from now on (None: all, the default);
        the others keep their last sample, never fresh. `enable(key, [])` stops it: a
        camera nobody watches renders nothing (the ROS bridge's image topics)."""
        self[key]
        mask = np.ones(self.num_envs, dtype=bool)
        if env_ids is not None:
            envs = list(env_ids)
            if not all(isinstance(e, (int, np.integer)) and not isinstance(e, bool)
                       and 0 <= e < self.num_envs for e in envs):
                raise SensorError(f"enable: expected env ids in [0, {self.num_envs}), got "
                                  f"{envs!r}")
            mask[:] = False
            mask[envs] = True
        self.channels[key].enable(mask)
        self._steady = self._tick = None
        self._show_direct()

    def subscribe(self, key: str, subscriber: Subscriber) -> None:
        """Call `subscriber(reading, env_ids)` whenever `key` shows new samples."""
        self[key]
        self.channels[key].subscribers.append(subscriber)
        self._steady = self._tick = None  # (a subscriber sees each sample shown)
        self._show_direct()

    def add_envs(self) -> None:
        """Follow envs the simulator added (Simulator.add_envs): every reading is made anew
        for the new count, the same specs (readings taken before are stale: take them
        again; `enable` masks start over), the old envs' noise generators kept and the new
        ones seeded as `seed` would."""
        specs = [channel.spec for channel in self.channels.values()]
        rngs = self._rngs
        for unit in self.units.values():
            unit.close()  # (a user sensor function's hooks: the new units hook it anew)
        self.num_envs = self.store.num_envs
        self.units, self.channels = {}, {}
        self._compiled = [-1] * self.num_envs
        self._compiles = -1
        self._steady, self._tick, self._every, self._lidar_jobs, self._due = (
            None, None, [], [], None)
        self.seed(self._seed)
        self._rngs[:len(rngs)] = rngs
        for spec in specs:
            self.add(spec)

    # ------------------------------------------------------------ randomness
    def seed(self, seed: int | None) -> None:
        """Env i draws its noise from np.random.default_rng(seed + i) (fresh entropy: None)."""
        self._seed = seed
        if seed is None:
            children = np.random.SeedSequence().spawn(self.num_envs)
            self._rngs = [np.random.default_rng(c) for c in children]
        else:
            self._rngs = [np.random.default_rng(int(seed) + i) for i in range(self.num_envs)]

    @property
    def rngs(self) -> list[np.random.Generator]:
        return self._rngs

    @rngs.setter
    def rngs(self, rngs: list[np.random.Generator]) -> None:
        rngs = list(rngs)
        if len(rngs) != self.num_envs or not all(isinstance(r, np.random.Generator) for r in rngs):
            raise SensorError(f"rngs: expected {self.num_envs} np.random.Generator, got {rngs!r}")
        self._rngs = rngs

    # ------------------------------------------------------------ sampling
    def reset(self, env_ids: Iterable[int] | None = None) -> None:
        """Sample these envs (default: all) now, at their current state, and show it at once;
        what was queued (delays) or averaged for them is forgotten."""
        envs = np.arange(self.num_envs) if env_ids is None else np.unique(
            np.asarray(list(env_ids), dtype=np.int64))
        if envs.size and (envs[0] < 0 or envs[-1] >= self.num_envs):
            raise SensorError(
                f"reset: expected env ids in [0, {self.num_envs}), got {envs.tolist()}")
        frames = self.frames
        frames.begin(forced=True)
        self._rebind()
        for reading in self.readings.values():
            reading.fresh[:] = False
        jobs = [(u, envs[u.present[envs]]) for u in self.units.values() if isinstance(u, LidarUnit)]
        cast_lidars(jobs, frames)
        for channel in self.channels.values():
            channel.sample_now(frames, envs, self.sim.clock, self._rngs)

    def sample_live(self) -> None:
        """Sample now, at the current state, the readings of MuJoCo's own sensors (the
        "mujoco" kind) that take every sample (no rate, interval or delay of the spec's),
        and show them: after a `step(n)` that ended between ticks they read MuJoCo's
        `sensordata` after those n steps, as a user of `mj_step` reads it. The other
        kinds keep the tick's cadence. Nothing while `frozen`."""
        live = [c for c in self.channels.values() if isinstance(c.unit, MujocoUnit)
                and c.schedule.period <= 0 and c.spec.delay <= 0]
        if not live or self.frozen:
            return
        self.frames.begin(forced=False)
        self._rebind()
        for channel in live:
            channel.sample_now(self.frames, channel.unit.present_ids, self.sim.clock,
                               self._rngs)

    def update(self) -> None:
        """Sample and publish what is due at the current sim time; the simulator's tick hook
        calls this after every tick (call it yourself only outside stepping). The usual
        tick of one lidar and the collision rule is one compiled call (sensors/steady.py)
        while nothing has recompiled since the suite planned it."""
        tick = self._tick
        if (tick is not None and Scene.compiles == self._compiles and not self.frozen
                and tick.run(self.frames, self.sim.clock)):
            return
        self._begin()
        self.sample_due()

    def _begin(self) -> None:
        """Advance the schedules to the current sim time and bring the bindings up to date;
        what is due waits for `sample_due`. Nothing while
        MuJoCo's sensor_disabled flag is set (`frozen`)."""
        if self.frozen:
            self._freeze()
            return
        clock = self.sim.clock
        steady = self._steady if self._steady is not None else self._plan()
        if steady:  # publishing whole sets `fresh` anew: cleared here only where not due
            active = [c for c in self._every if c.needs(clock)]
            whole = len(active) == len(self._every)  # every channel due (the usual)
            if not whole:
                for channel in self._every:
                    if not channel.due:
                        channel.reading.fresh.fill(False)
        else:
            active = [c for c in self.channels.values() if c.needs(clock) or len(c.line)]
            whole = False
            for channel in self.channels.values():
                channel.reading.fresh.fill(False)
        self._due = None
        if not active:
            return
        self.frames.begin(forced=False)
        self._rebind()
        if steady and self._steady is None:  # an env recompiled: maybe not shown whole now
            for channel in active:
                channel.reading.fresh.fill(False)
            whole = False
        self._due = (active, whole, clock)

    @property
    def frozen(self) -> bool:
        """Whether MuJoCo's sensor_disabled flag (mjDSBL_SENSOR) is set: then no reading
        takes a sample at a tick (lidar, camera, IMU, odometry, contact and MuJoCo's own
        keep their last values, none fresh) until it is unset; `reset` still samples. Read
        from env 0's options: the runtime options set every env alike."""
        model = self.store.scenes[0].compiled
        if self._options[0] is not model:  # (an MjOption view per compile: asked every tick)
            self._options = (model, model.opt)
        return bool(self._options[1].disableflags & _SENSOR_OFF)

    def _freeze(self) -> None:
        self._due = None
        for channel in self.channels.values():
            channel.reading.fresh.fill(False)

    def sample_due(self) -> None:
        """Sample and show what `_begin` found due."""
        due, self._due = self._due, None
        if due is None:
            return
        active, whole, clock = due
        if whole:
            jobs = self._lidar_jobs
        else:
            lidars = {id(c.unit): c.unit for c in active
                      if c.due and isinstance(c.unit, LidarUnit)}
            jobs = [(u, u.present_ids) for u in lidars.values()]
        cast_lidars(jobs, self.frames)
        if whole:  # every channel plain, due, unmasked, every env holding its unit
            for channel in active:
                channel.show(self.frames, clock)
            return
        dt = self.sim.timestep
        for channel in active:
            channel.run(self.frames, clock, dt, self._rngs)

    def _plan(self) -> bool:
        """Whether every channel, when due, shows every env's sample as taken
        (`Channel.plain`, unmasked, every env holding its sensor): then `update` leaves
        `fresh` to their publishing. Kept (with the channels and, for ticks when all are
        due, the lidars' casts) until a channel is added or enabled, or an env rebinds."""
        channels = list(self.channels.values())
        steady = bool(channels) and all(
            c.plain and c.enabled.all() and c.unit.present.all() for c in channels)
        lidars = {id(c.unit): c.unit for c in channels if isinstance(c.unit, LidarUnit)}
        self._lidar_jobs = [(u, u.present_ids) for u in lidars.values()]
        self._every = channels
        self._steady = steady
        self._tick = SteadyTick.plan(channels) if steady else None
        return steady

    def _show_direct(self) -> None:
        """Have each unit whose one channel shows every sample as taken at once, in every
        env (plain, unmasked), write its samples straight into that reading as it computes
        them (Unit.show_into; the channel then copies nothing); a unit read by several
        channels, or a masked or averaging or noisy or delayed one, writes only its own.
        Not while anyone subscribes: a subscriber called inside an update must not see a
        reading computed ahead of its showing (the lidars cast before any channel shows)."""
        readers: dict[int, list[Channel]] = {}
        for channel in self.channels.values():
            readers.setdefault(id(channel.unit), []).append(channel)
        quiet = not any(channel.subscribers for channel in self.channels.values())
        for channels in readers.values():
            only = channels[0] if len(channels) == 1 else None
            direct = quiet and only is not None and only.plain and bool(only.enabled.all())
            for channel in channels:
                channel.show_into(direct)

    def _rebind(self) -> None:
        compiles = Scene.compiles  # read first: a compile after it shows at the next check
        if compiles == self._compiles:
            return  # the usual tick: no scene recompiled anywhere
        scenes = self.store.scenes
        if [scene.compile_count for scene in scenes] == self._compiled:
            self._compiles = compiles
            return  # others recompiled
        self._steady = self._tick = None  # update's plan: envs may hold other sensors now
        for scene in scenes:
            env = scene.env_id
            if scene.compile_count == self._compiled[env]:
                continue
            self.frames.forget(env)
            for unit in self.units.values():
                unit.bind(scene)
            for channel in self.channels.values():
                if not channel.unit.present[env]:
                    channel.invalidate(np.array([env]))
            self._compiled[env] = scene.compile_count
        self._compiles = compiles

    def _period(self, spec: SensorSpec, unit: Unit) -> float:
        if spec.interval > 0:
            return float(spec.interval)
        rate = spec.rate
        if rate is None:
            decl = unit.reference.decl if unit.reference is not None else None
            rate = decl.update_rate if decl is not None else 0.0
            if not rate:
                rate = unit.default_rate
        return 1.0 / rate if rate > 0 else 0.0

    # ------------------------------------------------------------ lifetime
    def close(self) -> None:
        """Stop sampling; free renderers, threads and what units hold (user sensor
        functions)."""
        if self._hooked:
            self.sim.hooks.tick.remove(self._hook)
            self._hooked = False
        for unit in self.units.values():
            unit.close()
        self.renderers.close()
        self.workers.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def default_specs(store: SceneStore) -> list[SensorSpec]:
    """Each robot's (by name, as the first env holding it mounts it) declared sensors whose
    kind gives a default spec (lidars, IMUs, contact sensors; cameras are opt-in), then one
    spec of each kind that needs no declaration (odometry, the collision flag); each MJCF
    model's own MuJoCo sensors (the "mujoco" kind)."""
    specs: list[SensorSpec] = []
    seen: set[str] = set()
    kinds = list(SENSOR_KINDS.items())
    for scene in store.scenes:
        for name, entity in scene.entities.items():
            if entity.kind != "robot" or name in seen:
                continue
            seen.add(name)
            for mount in entity.record.sensor_mounts:  # type: ignore[attr-defined]
                kind = SENSOR_KINDS.get(mounted_kind(mount.decl) or "")
                if kind is not None and kind.default is not None:
                    specs.append(kind.default(name, mount))
            specs += [k.default(name, None) for _, k in kinds
                      if k.declares is None and k.default is not None]
    for scene in store.scenes:  # MJCF models: the kinds that read them by default
        for name, entity in scene.entities.items():
            if entity.kind != "model" or name in seen:
                continue
            seen.add(name)
            specs += [spec for _, k in kinds if k.model_default is not None
                      and (spec := k.model_default(name, entity.record)) is not None]
    return specs
