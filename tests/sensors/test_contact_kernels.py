"""The collision sample's compiled all-clear case (arena_gym.sensors.contact_kernels) changes
nothing the numpy path decides: on contact-count rings in and out of lockstep, windows
shorter and longer than the slots read, feet counts at and under the contact counts, stale
stamps, unstarted windows, a sample of the unit with the kernel leaves the same outputs and
state as one without it; and on a real robot hitting things every sample agrees."""

from __future__ import annotations

import copy
from types import SimpleNamespace

import numpy as np
import pytest

from arena_gym.scene import Prim
from arena_gym.scene.robot import COLLISION_HISTORY
from arena_gym.sensors import CollisionSpec, contact_kernels
from arena_gym.sensors.contact import CollisionUnit
from tests.sensors.test_collision import _robot_world

RING = COLLISION_HISTORY
DT = 0.002


class _Frames:
    """What CollisionUnit._compute reads of a sampling round, over synthetic history rows
    (strided, as a batch's are); snapshots hold no contacts."""

    forced = False

    def __init__(self, history: np.ndarray, time: np.ndarray) -> None:
        self.history, self.time = history, time

    def whole(self, field: str) -> np.ndarray:
        return {"history": self.history, "time": self.time}[field]

    def columns(self, field: str, envs: np.ndarray, cols: np.ndarray) -> np.ndarray:
        assert field == "history"
        return self.history[envs][:, cols]

    def field_rows(self, field: str, envs: np.ndarray) -> np.ndarray:
        assert field == "time"
        return self.time[envs]

    def snapshot(self, env: int, full: bool = False) -> SimpleNamespace:
        return SimpleNamespace(ncon=0, time=self.time[env])


def _case(rng: np.random.Generator):
    """A unit bound to synthetic rings and the frames of one sample: (unit, frames)."""
    n, nfeet = int(rng.integers(1, 6)), int(rng.integers(0, 5))
    everything = int(rng.integers(0, 3))  # the counters' rings, one after another
    size = 2 + 2 * RING
    feet = np.array([everything + size * (i + 1) for i in range(nfeet)], dtype=np.int64)
    rows = np.zeros((n, everything + size * (nfeet + 1) + 5))
    history = rows[:, :-3]  # strided rows
    lockstep = rng.random() < 0.6
    steps = np.full(n, int(rng.integers(1, 4 * RING))) if lockstep else rng.integers(1, 4 * RING, n)
    time = steps * DT
    slots = int(rng.choice([1, 8, 32, RING]))  # read in lockstep
    window = rng.integers(1, RING + 40, n)  # physics steps since the previous sample
    window[rng.random(n) < 0.2] = slots  # the oldest slot read is the window's first step
    for e in range(n):
        cursor = (steps[e] - 1) % RING
        age = (cursor - np.arange(RING)) % RING  # of each slot: 0 for the newest
        stamps = time[e] - (age + 1) * DT
        if rng.random() < 0.2:  # stamps from before a reset: later than the clock
            stale = rng.random(RING) < 0.1
            stamps[stale] = time[e] + rng.uniform(0, 1, stale.sum())
        ground = rng.integers(0, 2, (nfeet, RING)).astype(float)
        extra = (rng.random(RING) < rng.choice([0.0, 0.0, 0.005, 0.05])).astype(float)
        extra -= rng.random(RING) < 0.05  # fewer contacts than feet's: not a collision
        edge = (age == window[e] - 1) | (age == window[e])  # the window's first step and
        if rng.random() < 0.3:  # the one before it (outside)
            extra[edge & (rng.random(RING) < 0.5)] = 1.0
        if rng.random() < 0.1:  # a stamp at the window's end (outside)
            stamps[cursor], extra[cursor] = time[e], 1.0
        for a in (everything, *feet):
            rows[e, a + 1] = cursor
        history[e, everything + 2:everything + 2 + RING] = stamps
        history[e, everything + 2 + RING:everything + size] = ground.sum(axis=0) + extra
        for f, a in enumerate(feet):
            history[e, a + 2:a + 2 + RING] = stamps
            history[e, a + 2 + RING:a + size] = ground[f]
    unit = CollisionUnit(CollisionSpec("robot"), n)
    unit._allocate(None)
    unit.everything[:] = everything
    unit.feet_ground = [feet] * n
    unit.layout = [(everything, tuple(feet.tolist()))] * n
    unit.slabs = rng.random(n) < 0.3
    unit._slots = slots
    unit.since = time - window * DT  # the stamp of the window's first step
    unit._clear = rng.random() < 0.5
    if not unit._clear:  # outputs and pending classes from earlier samples
        unit.since[rng.random(n) < 0.2] = -np.inf
        unit.pending[:] = rng.integers(0, 5, n)
        unit.out["kind"][:] = rng.integers(0, 5, n)
        unit.out["collided"][:] = unit.out["kind"] > 0
        unit.out["contacts"][:] = unit.out["kind"]
    return unit, _Frames(history, time)


def _state(unit: CollisionUnit) -> dict:
    return {**{k: v.copy() for k, v in unit.out.items()}, "pending": unit.pending.copy(),
            "since": unit.since.copy(), "clear": unit._clear, "slots": unit._slots}


def _same(got: CollisionUnit, want: CollisionUnit) -> None:
    got_state, want_state = _state(got), _state(want)
    for key, value in want_state.items():
        assert np.array_equal(got_state[key], value), key


def test_a_sample_with_the_kernel_is_a_sample_without_it(monkeypatch):
    rng = np.random.default_rng(0)
    kernel = CollisionUnit._all_clear
    answers, doubled = [], 0

    def spy(self, frames, envs):  # the kernel's answer; when False, nothing changed
        since = self.since.copy()
        answers.append(kernel(self, frames, envs))
        assert answers[-1] or np.array_equal(self.since, since)
        return answers[-1]

    for _ in range(600):
        unit, frames = _case(rng)
        envs = np.arange(unit.num_envs)
        numpy_only = copy.deepcopy(unit)
        with monkeypatch.context() as m:
            m.setattr(CollisionUnit, "_all_clear", lambda self, frames, envs: False)
            numpy_only._compute(frames, envs)
        longer = numpy_only._slots != unit._slots  # a window longer than the slots read
        with monkeypatch.context() as m:
            m.setattr(CollisionUnit, "_all_clear", spy)
            unit._compute(frames, envs)
        _same(unit, numpy_only)
        # all clear exactly when the numpy path finds it so, unless it had to read more
        assert answers[-1] == (numpy_only._clear and not longer)
        doubled += longer
    assert len(answers) == 600
    assert 60 < sum(answers) < len(answers) - 60 and doubled > 30  # each case, often


def test_the_kernel_is_the_unit_s_usual_sample(monkeypatch):
    # _compute of every env takes it; a partial sample (some envs) does not
    unit, frames = _case(np.random.default_rng(1))
    calls = []
    monkeypatch.setattr(contact_kernels, "all_clear",
                        lambda *args: calls.append(args[-1]) or True)
    unit._compute(frames, np.arange(unit.num_envs))
    assert len(calls) == 1 and unit._clear
    unit._compute(frames, np.arange(unit.num_envs)[:-1])
    assert len(calls) == 1


def test_an_empty_batch_is_never_all_clear():
    assert not contact_kernels.all_clear(np.zeros((0, 2 + 2 * RING)), np.zeros(0), np.zeros(0),
                                         0, np.zeros(0, dtype=np.int64), 32, RING, True)


@pytest.mark.parametrize("substeps", [10, 25])
def test_on_a_real_robot_every_sample_agrees(monkeypatch, substeps):
    # one robot drives into a wall, the other backs into a movable box: collisions come
    # and go, and the numpy path and the kernel see every sample
    store, sim, suite = _robot_world(Prim("wall", pose=(0.3, 0.0, 0.2, 0.0), scale=(0.1, 2.0, 0.4)),
                                     Prim("box", pose=(-0.3, 0.0, 0.1, 0.0), scale=(0.1, 1.0, 0.2),
                                          movable=True))
    kernel = CollisionUnit._all_clear
    answers = []

    def checked(self, frames, envs):
        numpy_only = copy.deepcopy(self)
        with monkeypatch.context() as m:
            m.setattr(CollisionUnit, "_all_clear", lambda self, frames, envs: False)
            numpy_only._compute(frames, envs)
        clear = kernel(self, frames, envs)
        answers.append(clear)
        if clear:
            self._mark_clear()
            _same(self, numpy_only)
        return clear

    monkeypatch.setattr(CollisionUnit, "_all_clear", checked)
    suite.reset()
    sim.set_cmd_vel(0, "robot", 0.3, 0.0)
    sim.set_cmd_vel(1, "robot", -0.3, 0.0)
    for _ in range(80):
        sim.step(substeps)
        suite.update()
    assert any(answers) and not all(answers)
    assert suite["robot/collision"].collided.all()
    sim.close()
