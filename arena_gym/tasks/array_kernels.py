"""The task's shared definitions made callable from compiled kernels, as written.

tasks/arrays.py's elementwise functions get numba implementations for scalars (numpy's
`where`, `arctan2`, `hypot` and `full` on one element each), and the definitions the
per-step kernels call (the yaw of a quaternion, the goal's polar offset, the built-in reward
terms) are registered with numba as they are: their one source serves numpy arrays, JAX's
jit and the kernels alike. Imported by kernel modules only (numba comes with it).
"""

from __future__ import annotations

import math

from numba import types
from numba.extending import overload, register_jitable

from arena_gym.jit import numba  # noqa: F401 - numba configured (cache) before any compile
from arena_gym.scene import rotations
from arena_gym.tasks import arrays, observation, rewards, termination

# what the per-step kernels call, each compiled from its one definition
SHARED = (rotations.yaw, rotations.wrap_angle, observation.polar, termination.end_flags,
          termination.ends, *(fn for _, fn in rewards.BUILTIN))


def _scalars(*args: types.Type) -> bool:
    return all(isinstance(a, (types.Number, types.Boolean)) for a in args)


@overload(arrays.where)
def _where(condition, a, b):
    if _scalars(condition, a, b):
        return lambda condition, a, b: a if condition else b
    return None


@overload(arrays.arctan2)
def _arctan2(y, x):
    if _scalars(y, x):
        return lambda y, x: math.atan2(y, x)
    return None


@overload(arrays.hypot)
def _hypot(a, b):
    if _scalars(a, b):
        return lambda a, b: math.hypot(a, b)
    return None


@overload(arrays.full)
def _full(like, value):
    if _scalars(like, value):
        return lambda like, value: float(value)
    return None


for _fn in SHARED:
    register_jitable(_fn)
