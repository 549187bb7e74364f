"""The "mujoco" sensor kind: a robot's or MJCF model's own `<sensor>` elements, every type
MuJoCo has, read from `sensordata` by address and dimension for every env (the rows the
suite samples: the batch's bound sensordata, no copy of any MjData).

    suite.add(MujocoSpec("arm"))                      # all of the arm's sensors
    suite["arm/mujoco"]["wrist_force"]                # (num_envs, 3), N, in the site frame

MuJoCo 4.0 applies, itself, in each physics step: `cutoff` (|value| <= cutoff for real
sensors, value <= cutoff for positive ones), `delay` (sensordata shows the value `delay`
s old), `interval` with `nsample` (sample-and-hold every `interval` s) and keeps `nsample`
past values in its history buffer; `history()` reads them back (mj_readSensor). `noise` is
metadata since MuJoCo 3.1.4: we apply it with MuJoCo's former model (its add_noise), from
the env's generator: real values get N(0, std), positive ones too where not zero, kept
>= 0; axes and quaternions turn about a random axis by an N(0, std) angle (staying unit);
then the cutoff holds again.
User sensors (type user) hold what MuJoCo's sensor callback wrote: the spec's
`user(name, model, data)` is that callback (arena_gym.sim.sensor_callbacks), called inside
every physics step at the sensor's stage on the env's own MjData, so MuJoCo applies its
cutoff and keeps its history, and every reading of `sensordata` sees the values. MuJoCo
clips with `cutoff` per type: real values to +-cutoff, positive ones to <= cutoff, contact
and geomfromto sensors never (geomfromto's bounds its search instead); our noise keeps to
that.
"""

from __future__ import annotations

import difflib

import mujoco
import numpy as np

from arena_gym.scene.scene import Scene
from arena_gym.scene.sensor_mounts import mount_imu_sensors
from arena_gym.sensors import noise as noise_models
from arena_gym.sensors.errors import SensorError
from arena_gym.sensors.specs import MujocoSpec
from arena_gym.sensors.state_access import Frames
from arena_gym.sensors.units import Unit
from arena_gym.sim.sensor_callbacks import Hook, SensorCallbackError, SensorCallbacks, UserSensor

_REAL, _POSITIVE, _AXIS, _QUATERNION = (int(t) for t in (
    mujoco.mjtDataType.mjDATATYPE_REAL, mujoco.mjtDataType.mjDATATYPE_POSITIVE,
    mujoco.mjtDataType.mjDATATYPE_AXIS, mujoco.mjtDataType.mjDATATYPE_QUATERNION))
# MuJoCo applies no cutoff to these (apply_cutoff): geomfromto's bounds its search instead
_UNCUT = (int(mujoco.mjtSensor.mjSENS_GEOMFROMTO), int(mujoco.mjtSensor.mjSENS_CONTACT))
INTERP = {"zoh": 0, "linear": 1, "cubic": 2}  # mj_readSensor's interpolation


class MujocoUnit(Unit):
    """The MuJoCo sensors of one robot or model (all, or the one `sensor` names) in every
    env; one layout (names, types, sizes) for all envs."""

    kind = "mujoco"
    entity_kinds = ("robot", "model")

    def __init__(self, spec: MujocoSpec, num_envs: int) -> None:
        super().__init__(spec, num_envs)
        self.user: UserSensor | None = None
        self.hooks: dict[int, Hook] = {}  # env -> the user function's hook (its scene)
        self._scenes: dict[int, Scene] = {}
        self._prefix: dict[int, str] = {}
        self.names: list[str] = []
        self.layout: tuple[tuple[str, int, int], ...] | None = None  # (name, type, dim)
        self.slices: list[slice] = []
        self.ids = np.zeros((num_envs, 0), dtype=np.int64)
        self.index = np.zeros((num_envs, 0), dtype=np.int64)  # sensordata columns per env
        self.flat = np.zeros((num_envs, 0))
        self.declared = np.zeros(0)  # each sensor's `noise` (std)
        self.cutoff = np.zeros(0)
        self.datatype = np.zeros(0, dtype=np.int64)

    def describe(self) -> str:
        return (f"MuJoCo sensor {self.sensor!r} of {self.robot!r}" if self.sensor
                else f"MuJoCo sensors of {self.robot!r}")

    # ------------------------------------------------------------ binding
    def bind(self, scene: Scene) -> None:
        env = scene.env_id
        self.present[env] = False
        self._present_ids = None
        entity = scene.entities.get(self.robot)
        if entity is None or entity.kind not in self.entity_kinds:
            return
        if entity.kind == "robot" and mount_imu_sensors(
                scene, entity.record.sensor_mounts):  # type: ignore[attr-defined]
            return  # all of its sensors: its IMUs' too, bound after the scene's compile
        prefix = entity.record.prefix  # type: ignore[attr-defined]
        self._scenes[env], self._prefix[env] = scene, prefix
        model = scene.compiled
        found = [(i, model.sensor(i).name[len(prefix):]) for i in range(model.nsensor)
                 if model.sensor(i).name.startswith(prefix)]
        if self.sensor is not None:
            names = [n for _, n in found]
            found = [(i, n) for i, n in found if n == self.sensor]
            if not found:
                close = difflib.get_close_matches(self.sensor, names, n=3)
                hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
                raise SensorError(f"env {env}: {entity.kind} {self.robot!r} has no MuJoCo "
                                  f"sensor {self.sensor!r}{hint} (it has {names})")
        elif not found:
            raise SensorError(f"env {env}: {entity.kind} {self.robot!r}: expected MuJoCo "
                              "sensors, got none")
        layout = tuple((n, int(model.sensor_type[i]), int(model.sensor_dim[i])) for i, n in found)
        if self.layout is None:
            self._allocate_for(model, layout, [i for i, _ in found])
        elif layout != self.layout:
            raise SensorError(f"{self.describe()}: env {env} has {layout}, expected "
                              f"{self.layout} like the env first bound (one array holds "
                              "every env)")
        self.ids[env] = [i for i, _ in found]
        self.index[env] = np.concatenate([
            np.arange(model.sensor_adr[i], model.sensor_adr[i] + model.sensor_dim[i])
            for i, _ in found])
        self.present[env] = True
        self._hook(env)

    def join(self, spec: MujocoSpec) -> None:  # type: ignore[override]
        """A spec with a user function makes it MuJoCo's sensor callback for these sensors
        (in every env holding them, from the next step on); one function per sensor."""
        if spec.user is None:
            return
        if self.user is not None and self.user is not spec.user:
            raise SensorError(f"{self.describe()}: user sensors filled by {self.user!r}; "
                              f"expected that function again, got {spec.user!r}")
        self.user = spec.user
        for env in self.present_ids.tolist():
            self._hook(env)

    def _hook(self, env: int) -> None:
        if self.user is not None and env not in self.hooks:
            self.hooks[env] = SensorCallbacks.add(self._scenes[env], self._prefix[env],
                                                  self.user, self.sensor)

    def close(self) -> None:
        """Stop calling the user function (the envs step in batches again)."""
        for hook in self.hooks.values():
            hook.remove()
        self.hooks.clear()

    def _allocate_for(self, model: mujoco.MjModel, layout: tuple, ids: list[int]) -> None:
        self.layout = layout
        self.names = [n for n, _, _ in layout]
        offsets = np.cumsum([0] + [dim for _, _, dim in layout])
        self.slices = [slice(int(a), int(b)) for a, b in zip(offsets[:-1], offsets[1:],
                                                            strict=True)]
        n = self.num_envs
        self.ids = np.zeros((n, len(ids)), dtype=np.int64)
        self.index = np.zeros((n, int(offsets[-1])), dtype=np.int64)
        self.flat = np.full((n, int(offsets[-1])), np.nan)
        self.out = {name: self.flat[:, s] for name, s in zip(self.names, self.slices,
                                                             strict=True)}
        self.declared = model.sensor_noise[ids].astype(float)
        self.cutoff = model.sensor_cutoff[ids].astype(float)
        self.datatype = model.sensor_datatype[ids].astype(np.int64)

    # ------------------------------------------------------------ sampling
    def _compute(self, frames: Frames, envs: np.ndarray) -> None:
        for env in envs.tolist():  # what the user function failed with in the last steps
            hook = self.hooks.get(env)
            if hook is not None:
                try:
                    hook.check()
                except SensorCallbackError as exc:
                    raise SensorError(f"{self.describe()}: {exc}") from exc.__cause__
        whole = frames.whole("sensordata")
        if whole is not None:  # every env a row of one batch, in order: one gather
            self.flat[envs] = whole[envs[:, None], self.index[envs]]
        else:
            for env in envs.tolist():
                self.flat[env] = frames.sensordata(env)[self.index[env]]

    def _cut(self, values: np.ndarray, k: int) -> None:
        """MuJoCo's cutoff on one sensor's values, in place."""
        cutoff = self.cutoff[k]
        if cutoff <= 0 or self.layout[k][1] in _UNCUT:  # type: ignore[index]
            return
        if self.datatype[k] == _REAL:
            np.clip(values, -cutoff, cutoff, out=values)
        elif self.datatype[k] == _POSITIVE:
            np.minimum(values, cutoff, out=values)

    # ------------------------------------------------------------ noise
    def _std(self, spec: MujocoSpec) -> np.ndarray:
        if spec.noise == "declared":
            return self.declared
        return np.full(len(self.names), float(spec.noise))

    def noisy(self, spec: MujocoSpec) -> bool:  # type: ignore[override]
        return bool((self._std(spec) > 0).any())

    def noise(self, values: dict[str, np.ndarray], spec: MujocoSpec,  # type: ignore[override]
              rng: np.random.Generator) -> None:
        """MuJoCo's own noise model (add_noise of MuJoCo < 3.1.4), then its cutoff."""
        for k, (name, std) in enumerate(zip(self.names, self._std(spec), strict=True)):
            if std <= 0:
                continue
            row = values[name]
            kind = int(self.datatype[k])
            if kind == _REAL:
                noise_models.gaussian(row, float(std), rng)
            elif kind == _POSITIVE:  # zero stays zero, the rest stays >= 0
                draw = rng.standard_normal(row.shape) * std
                np.copyto(row, np.maximum(0.0, row + draw), where=row > 0)
            else:  # an axis or a quaternion: turned about a random axis by N(0, std)
                angle, axis = rng.standard_normal() * std, rng.standard_normal(3)
                turn = np.zeros(4)
                mujoco.mju_axisAngle2Quat(turn, axis / np.linalg.norm(axis), angle)
                out = np.zeros(row.shape)
                if kind == _AXIS:
                    mujoco.mju_rotVecQuat(out, row, turn)
                else:
                    mujoco.mju_mulQuat(out, row, turn)
                row[:] = out
            self._cut(row, k)

    # ------------------------------------------------------------ history
    def history(self, frames: Frames, name: str, envs: np.ndarray, time: float,
                interp: int) -> np.ndarray:
        """(len(envs), dim): sensor `name` at sim time `time` from MuJoCo's history buffer
        (mj_readSensor), read on a copy of each env's data."""
        k = self.names.index(name)
        dim = self.layout[k][2]  # type: ignore[index]
        out = np.empty((len(envs), dim))
        for i, env in enumerate(envs.tolist()):
            model, data = frames.model(env), frames.snapshot(env, full=True)
            result = np.zeros(dim)
            read = mujoco.mj_readSensor(model, data, int(self.ids[env, k]), float(time),
                                        result, interp)
            out[i] = result if read is None else np.asarray(read)[:dim]
        return out
