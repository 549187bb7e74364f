"""classify's flags (arena_gym.tasks.termination.end_flags) compiled for numpy arrays: the
same function, not a copy of it."""

from __future__ import annotations

from arena_gym.jit import numba
from arena_gym.tasks.termination import end_flags as _flags

end_flags = numba.njit(cache=True)(_flags)
