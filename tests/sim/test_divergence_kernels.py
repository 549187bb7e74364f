"""The step's compiled divergence check (arena_gym.sim.divergence_kernels) says what any_bad
(the one definition) says, on every kind of bad value, at the MAXVAL boundary, on empty and
strided fields; and BatchGroup.step's check takes it."""

from __future__ import annotations

import numpy as np
import pytest

from arena_gym.scene import SceneStore
from arena_gym.sim import Simulator, divergence_kernels
from arena_gym.sim.divergence import MAXVAL, any_bad
from arena_gym.sim.groups import _any_bad
from tests.conftest import spawn

EDGE = [0.0, -0.0, MAXVAL, -MAXVAL, np.nextafter(MAXVAL, np.inf), np.nextafter(-MAXVAL, -np.inf),
        np.nextafter(MAXVAL, 0.0), np.inf, -np.inf, np.nan, -np.nan, 1e300, -1e300, 5e-324]


def _fields(rng: np.random.Generator):
    """Pairs of fields like a batch's: strided rows of a wider buffer (the state view), and
    contiguous ones; sometimes empty; one value sometimes an edge value."""
    for _ in range(400):
        rows = int(rng.integers(0, 4))
        pair = []
        for _ in range(2):
            cols = int(rng.integers(0, 6))
            buffer = rng.normal(0.0, 1e3, (rows, cols + 3))
            field = buffer[:, 1:cols + 1] if rng.random() < 0.5 else np.ascontiguousarray(
                buffer[:, :cols])
            if field.size and rng.random() < 0.7:
                field[rng.integers(rows), rng.integers(cols)] = EDGE[rng.integers(len(EDGE))]
            pair.append(field)
        yield tuple(pair)


def test_the_compiled_check_is_any_bad():
    answers = []
    for first, second in _fields(np.random.default_rng(0)):
        want = any_bad((first, second))
        assert divergence_kernels.any_bad2(first, second) == want, (first, second)
        assert _any_bad((first, second)) == want
        answers.append(want)
    assert 50 < sum(answers) < len(answers) - 50  # both answers, often


@pytest.mark.parametrize("value", EDGE)
@pytest.mark.parametrize("where", [0, 1])
def test_each_edge_value_in_either_field(value, where):
    fields = [np.zeros((2, 3)), np.zeros((3, 2))[:, :1]]
    fields[where][1, 0] = value
    want = any_bad(tuple(fields))
    assert want == (not -MAXVAL <= value <= MAXVAL)
    assert divergence_kernels.any_bad2(*fields) == want


def test_empty_fields_are_not_bad():
    for shape in [(0, 3), (4, 0), (0, 0)]:
        assert not divergence_kernels.any_bad2(np.zeros(shape), np.zeros(shape))
    assert divergence_kernels.any_bad2(np.zeros((4, 0)), np.full((1, 1), np.nan))


def test_three_fields_take_any_bad():
    # qpos and qvel apart (a state laid out otherwise): the numpy check
    fields = (np.zeros((2, 2)), np.zeros((2, 3)), np.full((2, 1), np.inf))
    assert _any_bad(fields) and not _any_bad(fields[:2])


def test_a_batch_checks_two_fields_each_time_the_compiled_path(assets):
    # qpos and qvel are one view of the batch's state: the hardening tests of divergence
    # (tests/hardening/test_divergence.py) then run through the kernel
    store = SceneStore(2)
    for env in range(2):
        spawn(store, env, assets, "burger")
    sim = Simulator(store)
    try:
        (group,) = sim.stepping_groups()
        before, after = group._checks
        assert len(before) == len(after) == 2
        assert before[0] is group.ctrl and after[1] is group.bound("qacc")
        state = before[1]
        assert state.shape == (2, store.model(0).nq + store.model(0).nv)
        sim.step(5)
        state[1, -1] = np.inf  # a qvel entry of env 1
        sim.step(5)
        assert sim.diverged == [1]
    finally:
        sim.close()
