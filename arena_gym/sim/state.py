"""Whole states of one env, as mujoco_ros2_control's container hands them out: a snapshot of
every component of MuJoCo's integration state, and the checks for overwriting an env's
MjData with another.

    snap = runner.snapshot(0)               # mjSTATE_INTEGRATION: FULLPHYSICS + USER + WARMSTART
    snap.field("qpos"), snap.field("qacc_warmstart"), snap.values   # read-only
    runner.restore(snap)                    # bit for bit: the next step is the same step
    data = runner.copy_data(0)              # a whole MjData copy, under the step lock
    runner.overwrite_data(0, data)          # shapes checked first, naming the field

A snapshot holds MuJoCo's own state vector (mj_getState with mjSTATE_INTEGRATION), so
restoring it (mj_setState) gives the step that followed it again, bit for bit; `fields`
splits it into mjtState's components, named as the MjData fields they copy.
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

from arena_gym.sim.groups import layout_sizes

# mjtState's components in state-vector order, by the MjData field each copies
COMPONENTS: tuple[tuple[str, int], ...] = (
    ("time", mujoco.mjtState.mjSTATE_TIME), ("qpos", mujoco.mjtState.mjSTATE_QPOS),
    ("qvel", mujoco.mjtState.mjSTATE_QVEL), ("act", mujoco.mjtState.mjSTATE_ACT),
    ("history", mujoco.mjtState.mjSTATE_HISTORY),
    ("qacc_warmstart", mujoco.mjtState.mjSTATE_WARMSTART),
    ("ctrl", mujoco.mjtState.mjSTATE_CTRL),
    ("qfrc_applied", mujoco.mjtState.mjSTATE_QFRC_APPLIED),
    ("xfrc_applied", mujoco.mjtState.mjSTATE_XFRC_APPLIED),
    ("eq_active", mujoco.mjtState.mjSTATE_EQ_ACTIVE),
    ("mocap_pos", mujoco.mjtState.mjSTATE_MOCAP_POS),
    ("mocap_quat", mujoco.mjtState.mjSTATE_MOCAP_QUAT),
    ("userdata", mujoco.mjtState.mjSTATE_USERDATA),
    ("plugin_state", mujoco.mjtState.mjSTATE_PLUGIN),
    ("plastic", mujoco.mjtState.mjSTATE_PLASTIC),
)
WHOLE = mujoco.mjtState.mjSTATE_INTEGRATION  # every component above


def component_sizes(model: mujoco.MjModel) -> tuple[tuple[str, int], ...]:
    """(name, length) of every component of the model's integration state, in order."""
    return tuple((name, mujoco.mj_stateSize(model, bit)) for name, bit in COMPONENTS)


@dataclass(frozen=True, eq=False)
class StateSnapshot:
    """One env's whole integration state at one step (`Runner.snapshot(env)`): `values`
    is MuJoCo's state vector (read-only), `field(name)` one component of it."""

    env: int
    compile_count: int  # the compile of the env's model it belongs to
    step_count: int  # the simulator's step count when it was taken
    values: np.ndarray
    sizes: tuple[tuple[str, int], ...]

    @property
    def fields(self) -> dict[str, np.ndarray]:
        """Every component by name (read-only views of `values`)."""
        out, at = {}, 0
        for name, size in self.sizes:
            out[name] = self.values[at:at + size]
            at += size
        return out

    def field(self, name: str) -> np.ndarray:
        fields = self.fields
        if name not in fields:
            raise KeyError(f"state snapshot field: expected one of {list(fields)}, got {name!r}")
        return fields[name]


def take(env: int, compile_count: int, step_count: int, values: np.ndarray,
         model: mujoco.MjModel) -> StateSnapshot:
    """A snapshot of `values` (the env's state vector, copied by the caller)."""
    values = np.array(values, dtype=float)
    values.flags.writeable = False
    return StateSnapshot(env, compile_count, step_count, values, component_sizes(model))


# what overwrite_data checks by shape: the state and what sensors and controllers read
CHECKED = tuple(name for name, _ in COMPONENTS if name != "time") + (
    "sensordata", "qfrc_actuator", "xpos", "xquat")


def check_data(env: int, model: mujoco.MjModel, target: mujoco.MjData,
               source: object) -> None:
    """ValueError naming the first field (or model size) in which `source` does not fit
    env's MjData `target`; nothing else is read or written."""
    if not isinstance(source, mujoco.MjData):
        raise ValueError(f"overwrite_data: expected a mujoco.MjData of env {env}'s model, "
                         f"got {type(source).__name__}")
    for name in CHECKED:
        want, got = getattr(target, name).shape, getattr(source, name).shape
        if want != got:
            raise ValueError(f"overwrite_data: {name}: expected shape {want} (env {env}'s "
                             f"model), got {got}")
    want_sizes, got_sizes = layout_sizes(model), layout_sizes(source.model)
    for size, value in want_sizes.items():
        if got_sizes.get(size) != value:
            raise ValueError(f"overwrite_data: model size {size}: expected {value} (env "
                             f"{env}'s model), got {got_sizes.get(size)}")
    for size in ("narena", "nbuffer"):
        if getattr(source, size) != getattr(target, size):
            raise ValueError(f"overwrite_data: {size}: expected {getattr(target, size)} "
                             f"bytes (env {env}'s MjData), got {getattr(source, size)}")
