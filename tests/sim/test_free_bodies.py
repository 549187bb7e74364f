"""Setting several free bodies at once: all entries or none, the bad one named."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena_gym.scene import Prim, SceneStore
from arena_gym.sim import FreeBodyState, Simulator
from arena_gym.worlds import builtin_robot_urdf


def _world() -> tuple[SceneStore, Simulator]:
    store = SceneStore(2)
    for env in range(2):
        store[env].spawn_urdf("robot", builtin_robot_urdf())
        store[env].spawn_urdf("other", builtin_robot_urdf(), pose=(1.0, 0.0, 0.0))
        store[env].spawn_prims([Prim("box", pose=(2.0, 0.0, 0.2, 0.0), scale=(0.4,) * 3),
                                Prim("crate", pose=(3.0, 0.0, 0.2, 0.0), movable=True)])
    sim = Simulator(store)
    sim.step(10)
    return store, sim


def _state(sim: Simulator) -> list[bytes]:
    return [sim.state(e, f).tobytes() for e in range(2) for f in ("qpos", "qvel")]


def test_two_free_bodies_are_set_together_with_a_normalised_quaternion():
    store, sim = _world()
    half = math.sqrt(0.5)
    snapshots = sim.snapshots
    sim.set_free_bodies(1, {
        "robot": FreeBodyState(pos=(0.5, -1.0, 0.2), quat=(2.0, 0.0, 0.0, 2.0),
                               linvel=(0.3, 0.0, 0.0), angvel=(0.0, 0.0, 1.0)),
        "env_1/other/base_footprint": FreeBodyState(pos=(-1.0, 1.0, 0.0)),
    })
    data = store[1].data
    assert data.qpos[:3].tolist() == [0.5, -1.0, 0.2]
    assert data.qpos[3:7].tolist() == pytest.approx([half, 0.0, 0.0, half], abs=1e-15)
    assert data.qvel[:6].tolist() == [0.3, 0.0, 0.0, 0.0, 0.0, 1.0]
    other = store[1].model.joint("env_1/other/root")
    start = int(other.qposadr[0])
    assert data.qpos[start:start + 7].tolist() == [-1.0, 1.0, 0.0, 1.0, 0.0, 0.0, 0.0]
    assert not data.qvel[int(other.dofadr[0]):int(other.dofadr[0]) + 6].any()
    assert store[1].get_pose("robot")[0].tolist() == [0.5, -1.0, 0.2]
    assert store[0].get_pose("robot")[0][0] < 0.01  # the other env is left alone
    with snapshots.take() as snap:  # published at once
        assert snap.field("qpos", 1)[:3].tolist() == [0.5, -1.0, 0.2]


@pytest.mark.parametrize(("entry", "state", "error", "message"), [
    ("robt", FreeBodyState(pos=(0, 0, 0)), KeyError,
     "unknown body in env 0 'robt'; did you mean 'robot'"),
    ("box", FreeBodyState(pos=(0, 0, 0)), ValueError,
     "free body 'box' in env 0: expected a body whose root joint is free, got one that is "
     "welded, jointed or a mocap body"),
    ("crate", FreeBodyState(pos=(0, 0, 0)), ValueError,
     "free body 'crate' in env 0: expected a body whose root joint is free"),
    ("env_0/robot/wheel_left_link", FreeBodyState(pos=(0, 0, 0)), ValueError,
     "free body 'env_0/robot/wheel_left_link' in env 0: expected a body whose root joint "
     "is free"),
    ("other", FreeBodyState(pos=(0, 0)), ValueError,
     "free body 'other' in env 0: pos: expected 3 finite numbers, got (0, 0)"),
    ("other", FreeBodyState(pos=(0, 0, math.nan)), ValueError,
     "free body 'other' in env 0: pos: expected 3 finite numbers, got (0, 0, nan)"),
    ("other", FreeBodyState(pos=(0, 0, 0), quat=(0, 0, 0, 0)), ValueError,
     "free body 'other' in env 0: quat: expected a non-zero quaternion (w, x, y, z), got "
     "(0, 0, 0, 0)"),
    ("other", FreeBodyState(pos=(0, 0, 0), linvel="fast"), ValueError,
     "free body 'other' in env 0: linvel: expected 3 finite numbers, got 'fast'"),
    ("other", FreeBodyState(pos=(0, 0, 0), angvel=(0, 0, math.inf)), ValueError,
     "free body 'other' in env 0: angvel: expected 3 finite numbers, got (0, 0, inf)"),
    ("other", (0, 0, 0), ValueError,
     "free body 'other' in env 0: expected a FreeBodyState, got (0, 0, 0)"),
])
def test_one_bad_entry_sets_nothing_and_is_named(entry, state, error, message):
    store, sim = _world()
    before = _state(sim)
    good = FreeBodyState(pos=(0.5, 0.5, 0.5))
    with pytest.raises(error, match=re.escape(message)):
        sim.set_free_bodies(0, {"robot": good, entry: state})
    assert _state(sim) == before


_FINITE = st.floats(-10, 10, allow_nan=False)
_BAD_NUMBER = st.sampled_from([math.nan, math.inf, -math.inf])


@st.composite
def _bad_state(draw) -> FreeBodyState:
    """A FreeBodyState with exactly one field broken: a wrong length, a non-finite number,
    a zero quaternion or something not a number."""
    sizes = {"pos": 3, "quat": 4, "linvel": 3, "angvel": 3}
    fields = {name: draw(st.lists(_FINITE, min_size=n, max_size=n))
              for name, n in sizes.items()}
    fields["quat"][0] = 1.0  # non-zero unless broken below
    broken = draw(st.sampled_from(sorted(sizes)))
    how = draw(st.sampled_from(["length", "number", "zero", "text"]))
    if how == "length":
        length = draw(st.integers(0, 6).filter(lambda k: k != sizes[broken]))
        fields[broken] = draw(st.lists(_FINITE, min_size=length, max_size=length))
    elif how == "number":
        values = fields[broken]
        values[draw(st.integers(0, len(values) - 1))] = draw(_BAD_NUMBER)
    elif how == "zero" and broken == "quat":
        fields["quat"] = [0.0] * 4
    else:
        fields[broken] = draw(st.sampled_from(["x", None, [[1.0, 2.0, 3.0]], {"a": 1}]))
    return FreeBodyState(**fields)


@pytest.fixture(scope="module")
def world():
    return _world()


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_random_bad_entries_among_good_ones_change_nothing(world, data):
    store, sim = world
    before = _state(sim)
    names = ["robot", "other", "box", "crate", "nobody", "env_0/robot/base_link"]
    entries: dict[str, object] = {}
    bad = set()
    for name in data.draw(st.lists(st.sampled_from(names), min_size=1, max_size=4,
                                   unique=True)):
        if name in ("robot", "other") and data.draw(st.booleans()):
            entries[name] = FreeBodyState(pos=data.draw(st.lists(_FINITE, min_size=3,
                                                                 max_size=3)))
        else:
            entries[name] = data.draw(_bad_state()) if name in ("robot", "other") else (
                FreeBodyState(pos=(0.0, 0.0, 0.0)))
            bad.add(name)
    first_bad = next((n for n in entries if n in bad), None)
    if first_bad is None:
        entries["nobody"] = FreeBodyState(pos=(0.0, 0.0, 0.0))
        first_bad = "nobody"
    with pytest.raises((ValueError, KeyError)) as caught:
        sim.set_free_bodies(0, entries)
    assert repr(first_bad) in str(caught.value)
    assert _state(sim) == before
    assert np.isfinite(store[0].data.qpos).all()
