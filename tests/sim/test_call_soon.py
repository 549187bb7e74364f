"""call_soon: work a consumer hands to the free-running loop runs on the loop's thread,
between two ticks (also while paused), and its result or error comes back."""

from __future__ import annotations

import re
import threading

import pytest

from arena_gym.scene import SceneStore
from arena_gym.sim import Simulator
from arena_gym.worlds import builtin_robot_urdf


def _sim() -> Simulator:
    store = SceneStore(1)
    store[0].spawn_urdf("robot", builtin_robot_urdf())
    return Simulator(store, nthread=1)


def test_a_call_runs_on_the_loop_between_ticks_even_while_paused():
    sim = _sim()
    sim.start(paused=True)
    try:
        before = sim.step_count
        name, steps = sim.call_soon(lambda: (threading.current_thread().name,
                                             sim.step_count)).result(timeout=5)
        assert (name, steps) == ("arena-sim", before)  # paused: no tick ran meanwhile
        # a Step on the loop: exactly n physics steps, whole ticks apart from the loop's
        assert sim.call_soon(lambda: sim.step(37) or sim.step_count).result(timeout=5) == \
            before + 37
        sim.unpause()
        counts = [sim.call_soon(lambda: sim.step_count).result(timeout=5) for _ in range(3)]
        # running: each call sees a state between ticks (a whole number of ticks past 37)
        assert all((c - before - 37) % sim.tick_steps == 0 for c in counts)
        assert counts == sorted(counts)
    finally:
        sim.stop()
        sim.close()


def test_the_error_of_a_call_comes_back_and_the_loop_goes_on():
    sim = _sim()
    sim.start()
    try:
        future = sim.call_soon(lambda: sim.step(-1))
        with pytest.raises(ValueError, match=re.escape(
                "n: expected an integer number of steps >= 0, got -1")):
            future.result(timeout=5)
        assert sim.call_soon(lambda: 7).result(timeout=5) == 7
        assert sim.error is None and sim.running
    finally:
        sim.stop()
        sim.close()


def test_a_call_needs_a_started_loop():
    sim = _sim()
    with pytest.raises(RuntimeError, match=re.escape(
            "call_soon: expected a started simulator (start()), got one not running")):
        sim.call_soon(lambda: None)
    sim.close()
