"""The shared part of every sensor kind: finding the mounted sensor in each env, caching
its ids once per compile, and computing a sample at most once per sampling round (so that
specs naming the same sensor share one ray cast or one render)."""

from __future__ import annotations

import difflib

import numpy as np

from arena_gym.assets.gazebo import SensorDecl
from arena_gym.registry import SENSOR_KINDS
from arena_gym.scene.robot import RobotInfo
from arena_gym.scene.scene import Scene
from arena_gym.scene.sensor_mounts import SensorMount
from arena_gym.sensors.errors import SensorError
from arena_gym.sensors.specs import SensorSpec
from arena_gym.sensors.state_access import Frames


class Unit:
    """One sensor of one robot across all envs. Subclasses set `kind`, allocate `out` in
    `_allocate` and fill it in `_compute`; `_bind_env` caches ids for one env."""

    kind = ""
    entity_kinds: tuple[str, ...] = ("robot",)  # the scene entities it reads (Entity.kind)
    default_rate = 0.0  # Hz when neither the spec nor the declaration gives one; 0: every tick
    can_fail = False  # whether a computation may leave `ok` False for an env (cameras)
    # whether show_into may make `out` a reading's arrays: kinds that write their samples
    # only through `self.out[name]` and reset in `_moved` what they keep about them
    in_place = False

    def __init__(self, spec: SensorSpec, num_envs: int) -> None:
        self.robot = spec.robot
        self.sensor = spec.sensor
        self.num_envs = num_envs
        self.present = np.zeros(num_envs, dtype=bool)
        self.ok = np.ones(num_envs, dtype=bool)  # the last computation gave a sample
        self.mounts: list[SensorMount | None] = [None] * num_envs
        self.reference: SensorMount | None = None  # the first mount bound: fixes the shapes
        self.out: dict[str, np.ndarray] = {}
        self._own: dict[str, np.ndarray] | None = None  # the unit's own `out` (show_into)
        self._into: dict[str, np.ndarray] | None = None  # a reading's arrays: `out` (show_into)
        self._round = -1
        self._done = np.zeros(num_envs, dtype=bool)
        self._all_done = False  # every env computed this round (the usual sampling)
        self._none_done = True  # no env computed yet this round
        self._marked = False  # some rows of `_done` are True (read while not `_all_done`)
        self._present_ids: np.ndarray | None = None  # flatnonzero(present), between binds

    @property
    def present_ids(self) -> np.ndarray:
        """Sorted ids of the envs holding the sensor (kept until the next bind)."""
        if self._present_ids is None:
            self._present_ids = np.flatnonzero(self.present)
        return self._present_ids

    def join(self, spec: SensorSpec) -> None:
        """`spec` reads this unit from now on (specs naming one sensor share its unit)."""

    # ------------------------------------------------------------ binding
    def describe(self) -> str:
        return f"{self.kind} {self.sensor!r} of robot {self.robot!r}" if self.sensor else (
            f"{self.kind} of robot {self.robot!r}")

    def robot_info(self, scene: Scene) -> RobotInfo | None:
        entity = scene.entities.get(self.robot)
        if entity is None or entity.kind != "robot":
            return None
        return entity.record  # type: ignore[return-value]

    def find_mount(self, scene: Scene, info: RobotInfo) -> SensorMount | None:
        mounts = [m for m in info.sensor_mounts if mounted_kind(m.decl) == self.kind]
        if self.sensor is None:
            if not mounts:
                raise SensorError(
                    f"env {scene.env_id}: robot {self.robot!r} has no {self.kind}; it has "
                    f"{_listing(info.sensor_mounts)}"
                )
            return mounts[0]
        for mount in mounts:
            if mount.name == self.sensor:
                return mount
        close = difflib.get_close_matches(self.sensor, [m.name for m in mounts], n=3)
        hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
        raise SensorError(
            f"env {scene.env_id}: robot {self.robot!r} has no {self.kind} named "
            f"{self.sensor!r}{hint} (it has {_listing(info.sensor_mounts)})"
        )

    def signature(self, mount: SensorMount | None) -> object:
        """What must be equal across envs for one (num_envs, ...) array to hold them all."""
        return None

    def bind(self, scene: Scene) -> None:
        """Cache this env's ids (after every compile); absent robots are not present."""
        env = scene.env_id
        self.present[env] = False
        self._present_ids = None
        self.mounts[env] = None
        info = self.robot_info(scene)
        if info is None:
            return
        mount = self.find_mount(scene, info)
        signature = self.signature(mount)
        if self.reference is None:
            self.reference = mount
            self._allocate(mount)
            self._place(self.out)  # show_into's reading's arrays stay `out`
        elif signature != self.signature(self.reference):
            raise SensorError(
                f"{self.describe()}: env {env} has {signature}, expected "
                f"{self.signature(self.reference)} like the env first bound "
                "(one array holds every env)"
            )
        if self._bind_env(env, scene, info, mount) is False:
            return  # its MuJoCo elements were added to the scene: bound after its compile
        self.mounts[env] = mount
        self.present[env] = True

    def _allocate(self, mount: SensorMount | None) -> None:
        raise NotImplementedError

    def close(self) -> None:
        """Release what the unit holds outside itself (SensorSuite.close)."""

    def _bind_env(self, env: int, scene: Scene, info: RobotInfo, mount: SensorMount | None
                  ) -> bool | None:
        """Cache env's ids; False where the sensor's MuJoCo elements were only now added to
        the scene (it is bound again once the scene compiled)."""
        raise NotImplementedError

    # ------------------------------------------------------------ sampling
    def sample(self, frames: Frames, envs: np.ndarray) -> dict[str, np.ndarray]:
        """`out` with the rows of `envs` computed at the current state (once a round)."""
        self._new_round(frames)
        if self._all_done:
            return self.out
        todo = envs if self._none_done else envs[~self._done[envs]]
        if todo.size:
            try:
                self._compute(frames, todo)
            except Exception as exc:
                if type(self).__module__.startswith("arena_gym."):
                    raise
                raise SensorError(f"sensor kind {self.kind!r} (from {self._origin()}) raised "
                                  f"{type(exc).__name__} computing envs {todo.tolist()}: "
                                  f"{exc}") from exc
            self.mark_done(frames, todo)
        return self.out

    def _origin(self) -> str:
        """Where a kind not built in came from: its plugin's entry point, else its module."""
        source = SENSOR_KINDS.source(self.kind) if self.kind in SENSOR_KINDS else ""
        return source or type(self).__module__

    def mark_done(self, frames: Frames, envs: np.ndarray) -> None:
        """Rows of `envs` were computed this round (by a batched call: cast_lidars)."""
        self._new_round(frames)
        if len(envs) == self.num_envs:  # envs are sorted and unique: all of them
            self._all_done = True  # `_done` is not read again this round: left as it is
        else:
            self._done[envs] = True
            self._marked = True
        self._none_done = False

    def _new_round(self, frames: Frames) -> None:
        if frames.round != self._round:
            self._round = frames.round
            if self._marked:
                self._done.fill(False)
                self._marked = False
            self._all_done, self._none_done = False, True

    def _compute(self, frames: Frames, envs: np.ndarray) -> None:
        raise NotImplementedError

    def show_into(self, data: dict[str, np.ndarray] | None) -> tuple[str, ...]:
        """From now on compute straight into `data`'s arrays (a reading's: that of the one
        channel that shows each sample of this unit at once, as taken, in every env it
        samples): `out` is them, also after a bind allocates anew; None: back to the unit's
        own. Returns the fields computed in place, which that channel then need not copy:
        none for kinds that cannot (`in_place` False) or arrays that differ in shape or
        dtype."""
        if not self.in_place:
            return ()
        own = self._own if self._own is not None else self.out
        if data is not None and not all(
                name in data and data[name].shape == array.shape and data[name].dtype == array.dtype
                for name, array in own.items()):
            data = None
        self._into = data
        self._place(own)
        return () if data is None else tuple(self.out)

    def _place(self, own: dict[str, np.ndarray]) -> None:
        """`out`: the unit's own arrays `own`, or those of show_into's reading."""
        self._own = own
        self.out = own if self._into is None else {name: self._into[name] for name in own}
        self._moved()

    def _moved(self) -> None:
        """`out` is other arrays now (show_into): forget what was kept about the old ones."""

    def noisy(self, spec: SensorSpec) -> bool:
        """Whether `noise` changes anything for this spec (False skips the per-env loop)."""
        return True

    def noise(self, values: dict[str, np.ndarray], spec: SensorSpec,
              rng: np.random.Generator) -> None:
        """Apply the spec's noise to one env's values (row views), in place."""


def _listing(mounts: list[SensorMount]) -> str:
    if not mounts:
        return "no mounted sensors"
    return ", ".join(f"{m.kind} {m.name!r}" for m in mounts)


def robot_geoms(model: object, root_body: int) -> np.ndarray:
    """Bool mask over geoms: those of the robot whose root body is `root_body`."""
    roots = model.body_rootid[model.geom_bodyid]  # type: ignore[attr-defined]
    return roots == model.body_rootid[root_body]  # type: ignore[attr-defined]


def mounted_kind(decl: SensorDecl) -> str | None:
    """The kind a robot's `<sensor>` declaration mounts as, None: not one we simulate."""
    for name, kind in SENSOR_KINDS.items():
        if kind.declares is not None and kind.declares(decl):
            return name
    return None
