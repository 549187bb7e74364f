"""What a Simulator calls around its steps and resets: plain lists its owner appends to and
removes from.

    sim.hooks.tick.append(lambda sim: suite.update())          # after every tick
    sim.hooks.physics_step.append(lambda sim: ...)             # before every physics step
    sim.hooks.reset.append(lambda sim, env_ids, fill_initial_state: ...)  # after resets
    sim.hooks.observers.append(lambda groups, steps, clock: ...)  # read-only, see below
    sim.hooks.tick.remove(hook)

`tick` hooks and `physics_step` callbacks may edit the state (write `ctrl()` and `state()`
views, stage commands, read scenes); while one is registered, `step(n)` goes a tick (or a
physics step) at a time. `observers` only
read: each gets the stepping groups (sim/groups.py), the step count and the clock after
every completed tick and after every reset, under the step lock, and must neither edit
the state nor step; they leave `step(n)` in one call per group
(then they see the end of the call, when it ends on a tick). The Runner's snapshots
(sim/snapshots.py) are one.

A reset hook's `fill_initial_state` is mujoco_ros2_control's ResetCallback flag: True when
the envs went back to their captured initial state (`Runner.reset_to_initial_state`, its
reset without a keyframe), False when their state came from elsewhere (a keyframe, the
model defaults, a restored snapshot), already written when the hook runs either way.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


def weakly(method: Callable[..., None]) -> Callable[..., None]:
    """`method` (a bound method), called through a weak reference to its object: nothing
    once the object is gone. A hook of an object that holds the simulator (a sensor suite)
    makes no reference cycle, so a world nobody holds is freed at once, not when Python's
    cyclic collector comes by (which seldom runs in a large process)."""
    ref = weakref.WeakMethod(method)

    def call(*args: Any) -> None:
        bound = ref()
        if bound is not None:
            bound(*args)

    return call


TickHook = Callable[[Any], None]  # called with the Simulator
ResetHook = Callable[[Any, list[int], bool], None]  # (Simulator, env ids, fill_initial_state)
Observer = Callable[[list[Any], int, float], None]  # (stepping groups, step count, clock)


@dataclass
class Hooks:
    """The callbacks of one Simulator, by when they run (see the module docstring).

        sim.hooks.tick.append(hook); ...; sim.hooks.tick.remove(hook)
    """

    tick: list[TickHook] = field(default_factory=list)
    physics_step: list[TickHook] = field(default_factory=list)
    reset: list[ResetHook] = field(default_factory=list)
    observers: list[Observer] = field(default_factory=list)

    @property
    def editing(self) -> bool:
        """Whether a hook that may edit the state is registered (stepping then goes a tick
        at a time)."""
        return bool(self.tick or self.physics_step)
