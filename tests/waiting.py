"""Waiting in the tests: on the thing awaited, never on the clock.

    state = wait_until(lambda: sim.clock >= 0.3, 60, "the clock to pass 0.3 s")
    count = within(lambda: node.count_publishers(topic), 20)  # the last value when it ends

A condition is polled (1 ms at first, then less often, 50 ms at most) until it returns
something true, which is returned; the timeout is generous, for a loaded machine only
makes it come later, and `wait_until` fails naming what did not happen. Where a thread or
process can signal (threading.Event or Condition, a pipe's select), wait on that instead.

This is the suite's one polling sleep (tests/test_suite_rules.py fails on any other);
stdlib only, for the probes that run in the ROS venv import it too.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

FIRST_POLL, LAST_POLL = 0.001, 0.05  # s between looks: quick to notice, cheap when long


def within(condition: Callable[[], T], timeout: float) -> T:
    """`condition()`'s first true value within `timeout` seconds, else its last value."""
    deadline = time.monotonic() + timeout
    poll = FIRST_POLL
    while True:
        value = condition()
        left = deadline - time.monotonic()
        if value or left <= 0:
            return value
        time.sleep(min(poll, left))
        poll = min(2 * poll, LAST_POLL)


def wait_until(condition: Callable[[], T], timeout: float,
               what: str | Callable[[], str]) -> T:
    """`condition()`'s first true value; AssertionError naming `what` (waited for: a text,
    or a function that says it with the state at the end) if none comes in `timeout` s."""
    value = within(condition, timeout)
    if not value:
        said = what() if callable(what) else what
        raise AssertionError(f"timed out after {timeout:g} s waiting for {said}")
    return value
