"""Validating the poses and velocities of free bodies before any is written.

    sim.set_free_bodies(0, {"robot": FreeBodyState(pos=(1, 0, 0.05), quat=(1, 0, 0, 0)),
                            "other": FreeBodyState(pos=(2, 0, 0.05), quat=(0, 0, 0, 2),
                                                   linvel=(0.1, 0, 0))})

Every entry is checked (the body exists, its root joint is free, numbers are finite and
of the right length, the quaternion is not zero) before the first one is written, so one
bad entry leaves the state as it was; the error names that entry. Quaternions are
normalised. Velocities follow MuJoCo's free joint: `linvel` in the world frame, `angvel`
in the body's frame; unset velocities are zero.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import mujoco
import numpy as np

from arena_gym.scene.scene import Scene


@dataclass(frozen=True)
class FreeBodyState:
    """A free body's pose (pos (3,), quat w, x, y, z (4,)) and velocity (3,) + (3,)."""

    pos: Sequence[float]
    quat: Sequence[float] = (1.0, 0.0, 0.0, 0.0)
    linvel: Sequence[float] = (0.0, 0.0, 0.0)
    angvel: Sequence[float] = (0.0, 0.0, 0.0)


@dataclass(frozen=True)
class FreeBodyWrite:
    """A checked entry: where to write (qpos, qvel addresses) and what (7 + 6 numbers)."""

    qposadr: int
    dofadr: int
    qpos: np.ndarray  # pos, normalised quat
    qvel: np.ndarray  # linvel, angvel


def _vector(where: str, field: str, value: object, size: int) -> np.ndarray:
    try:
        out = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{where}: {field}: expected {size} finite numbers, "
                         f"got {value!r}") from None
    if out.shape != (size,) or not np.isfinite(out).all():
        raise ValueError(f"{where}: {field}: expected {size} finite numbers, got {value!r}")
    return out


def check_free_bodies(scene: Scene, entries: Mapping[str, FreeBodyState]) -> list[FreeBodyWrite]:
    """Every entry checked, in order; the first bad one raises ValueError or KeyError."""
    if not isinstance(entries, Mapping):
        raise ValueError(f"free bodies: expected a mapping of body name to FreeBodyState, "
                         f"got {type(entries).__name__}")
    scene.flush()
    env, model = scene.env_id, scene.compiled  # names and addresses only: no state sync
    writes = []
    for name, state in entries.items():
        where = f"free body {name!r} in env {env}"
        if not isinstance(state, FreeBodyState):
            raise ValueError(f"{where}: expected a FreeBodyState, got {state!r}")
        if not isinstance(name, str):
            raise ValueError(f"{where}: expected a body or entity name, got "
                             f"{type(name).__name__}")
        body_id = model.body(scene.body_name(name)).id  # KeyError naming close names
        joint = int(model.body_jntadr[body_id])
        if (joint < 0 or model.jnt_type[joint] != mujoco.mjtJoint.mjJNT_FREE):
            raise ValueError(f"{where}: expected a body whose root joint is free, got one "
                             "that is welded, jointed or a mocap body")
        pos = _vector(where, "pos", state.pos, 3)
        quat = _vector(where, "quat", state.quat, 4)
        norm = float(np.linalg.norm(quat))
        if norm == 0.0:
            raise ValueError(f"{where}: quat: expected a non-zero quaternion (w, x, y, z), "
                             f"got {state.quat!r}")
        qvel = np.concatenate([_vector(where, "linvel", state.linvel, 3),
                               _vector(where, "angvel", state.angvel, 3)])
        writes.append(FreeBodyWrite(int(model.jnt_qposadr[joint]), int(model.jnt_dofadr[joint]),
                                    np.concatenate([pos, quat / norm]), qvel))
    return writes

