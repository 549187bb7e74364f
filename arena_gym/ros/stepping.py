"""Step requests served tick by tick on the simulator's loop, so a long one never holds the
bridge: between two ticks of a Step, every command that came meanwhile runs (other
services answer, cmd_vel applies), and a stopping bridge ends it at the next tick.

    stepper = Stepper(bridge)
    stepper.start({"op": "step", "id": 7, "steps": 15})   # serving thread: returns at once
    # ... the loop steps 10, then 5 (the short tick is published too), then replies

The reply says the clock reached, as the `/clock` and `/tf` published before it do: a Step
that ends between two ticks publishes that short tick (fresh readings, then a frame).
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from arena_gym.ros.wire import MAX_STEPS


class Served(Protocol):
    """What a Stepper needs of its bridge (ros/server.py's Bridge)."""

    sim: Any
    runner: Any  # the Runner whose loop steps it (sim/runner.py)
    suite: Any
    publishing: bool

    def reply(self, message: dict, answer: dict) -> None: ...
    def waiting(self) -> AbstractContextManager[None]: ...
    def publish_frame(self, paused: bool = False) -> None: ...
    def captures_due(self) -> None: ...


def check_steps(steps: object) -> int:
    """The number of steps a request asks, or ValueError naming the limit."""
    if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)) or steps < 0:
        raise ValueError(f"expected a number of steps >= 0, got {steps!r}")
    if steps > MAX_STEPS:
        raise ValueError(f"expected at most {MAX_STEPS} steps per request (split longer runs "
                         f"into several Steps), got {steps}")
    return int(steps)


@dataclass
class _Job:
    message: dict
    steps: int
    left: int


class Stepper:
    """The Step requests of one bridge, each stepped on its simulator's loop a tick at a time."""

    def __init__(self, bridge: Served) -> None:
        self.bridge = bridge
        self.stopping = False  # set when the bridge stops: running Steps end at their next tick

    def start(self, message: dict) -> None:
        """Begin a Step request (serving thread); its reply follows once it is done."""
        try:
            steps = check_steps(message.get("steps"))
        except ValueError as exc:
            self.bridge.reply(message, {"success": False, "message": f"step: {exc}",
                                        "clock": self.bridge.sim.clock})
            return
        job = _Job(message, steps, steps)
        self.bridge.runner.call_soon(lambda: self._tick(job))

    def _tick(self, job: _Job) -> None:
        """Up to the next tick boundary, then the rest behind whatever came meanwhile."""
        bridge, sim = self.bridge, self.bridge.sim
        if self.stopping:
            bridge.reply(job.message, {
                "success": False, "clock": sim.clock,
                "message": f"step: stopped after {job.steps - job.left} of {job.steps} steps: "
                           "the bridge is shutting down"})
            return
        if job.left:
            k = min(job.left, sim.tick_steps - sim.step_count % sim.tick_steps)
            with bridge.waiting():  # every tick of a Step is published
                sim.step(k)
            job.left -= k
        if job.left:
            bridge.runner.call_soon(lambda: self._tick(job))
            return
        if job.steps and sim.step_count % sim.tick_steps and bridge.publishing:
            with bridge.waiting():  # the short last tick: published as a full one is
                bridge.suite.update()
                bridge.publish_frame()
        bridge.captures_due()  # captures waiting for this clock go out before the answer
        bridge.reply(job.message, {"success": True, "message": f"stepped {job.steps}",
                                   "clock": sim.clock})
