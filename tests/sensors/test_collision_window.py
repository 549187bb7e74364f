"""The collision rule's compiled window (arena_gym.sensors.contact.window) against a numpy
reference written here: on contact-count rings of any length of window (longer than the
ring too, and never sampled), feet counts at and under the contact counts, stamps at the
window's edges, with and without floor slabs, some envs or all; and on a real robot hitting
things, every sample of the suite is the reference's."""

from __future__ import annotations

import numpy as np

from arena_gym.scene import Prim
from arena_gym.scene.robot import COLLISION_HISTORY
from arena_gym.sensors.contact import NONE, WALL, window
from tests.sensors.test_collision import _robot_world

RING = COLLISION_HISTORY
DT = 0.002


def _reference(history, time, since, everything, feet, slabs, pending, collided, contacts,
               kind):
    """The rule over every slot of each env's ring: a step in the window since <= stamp <
    now with more contacts than its feet's on the ground touched something."""
    n = len(time)
    extra, first = np.zeros(n), np.full(n, np.inf)
    collided, contacts, kind = collided.copy(), contacts.copy(), kind.copy()
    for e in range(n):
        a = int(everything[e])
        stamps = history[e, a + 2:a + 2 + RING]
        counts = history[e, a + 2 + RING:a + 2 + 2 * RING]
        ground = sum(history[e, f + 2 + RING:f + 2 + 2 * RING] for f in feet[e].tolist() if f >= 0)
        over = (counts - ground) * ((stamps >= since[e]) & (stamps < time[e]))
        if (over > 0).any():
            extra[e] = over.max()
            first[e] = stamps[over > 0].min()
            if not slabs[e]:
                collided[e], contacts[e] = True, int(extra[e])
                kind[e] = pending[e] if first[e] <= since[e] and pending[e] != NONE else WALL
        else:
            collided[e], contacts[e], kind[e] = False, 0, NONE
    return collided, contacts, kind, extra


def _rings(rng: np.random.Generator):
    """Synthetic history rows (strided, as a batch's are) of n envs' counters."""
    n, nfeet = int(rng.integers(1, 6)), int(rng.integers(0, 4))
    everything = int(rng.integers(0, 3))
    size = 2 + 2 * RING
    feet = np.array([everything + size * (i + 1) for i in range(nfeet)], dtype=np.int64)
    rows = np.zeros((n, everything + size * (nfeet + 1) + 5))
    history = rows[:, :-3]
    steps = rng.integers(1, 4 * RING, n)
    time = steps * DT
    window_steps = rng.integers(1, RING + 40, n)  # physics steps since the previous sample
    for e in range(n):
        cursor = (steps[e] - 1) % RING
        age = (cursor - np.arange(RING)) % RING  # of each slot: 0 for the newest
        stamps = time[e] - (age + 1) * DT
        ground = rng.integers(0, 2, (nfeet, RING)).astype(float)
        extra = (rng.random(RING) < rng.choice([0.0, 0.005, 0.05])).astype(float)
        extra -= rng.random(RING) < 0.05  # fewer contacts than feet's: not a collision
        edge = (age == window_steps[e] - 1) | (age == window_steps[e])  # first step, and
        extra[edge & (rng.random(RING) < 0.5)] = 1.0  # the one before it (outside)
        for a in (everything, *feet):
            rows[e, a + 1] = cursor
            history[e, a + 2:a + 2 + RING] = stamps
        history[e, everything + 2 + RING:everything + size] = ground.sum(axis=0) + extra
        for f, a in enumerate(feet):
            history[e, a + 2 + RING:a + size] = ground[f]
    since = time - window_steps * DT  # the stamp of the window's first step
    since[rng.random(n) < 0.2] = -np.inf  # never sampled: the whole ring
    padding = np.full(int(rng.integers(0, 2)), -1, dtype=np.int64)
    feet_rings = np.tile(np.append(feet, padding), (n, 1))
    return history, time, since, np.full(n, everything), feet_rings, rng.random(n) < 0.3


def test_the_window_is_the_reference_rule():
    rng = np.random.default_rng(0)
    touched = slabbed = 0
    for _ in range(400):
        history, time, since, everything, feet, slabs = _rings(rng)
        n = len(time)
        pending = rng.integers(0, 5, n).astype(np.int8)
        out = (rng.random(n) < 0.5, rng.integers(0, 4, n).astype(np.int32),
               rng.integers(0, 5, n).astype(np.int8))
        want = _reference(history, time, since, everything, feet, slabs, pending, *out)
        envs = np.arange(n) if rng.random() < 0.7 else np.flatnonzero(rng.random(n) < 0.6)
        got = [a.copy() for a in out]
        extra, before, left = np.full(n, -1.0), since.copy(), pending.copy()
        counts = window(history, time, envs, envs, since, everything, feet, RING, slabs,
                        *got, left, extra)
        for k, name in enumerate(("collided", "contacts", "kind")):
            np.testing.assert_array_equal(got[k][envs], want[k][envs], err_msg=name)
            untouched = np.setdiff1d(np.arange(n), envs)
            np.testing.assert_array_equal(got[k][untouched], out[k][untouched])
        np.testing.assert_array_equal(extra[envs], want[3][envs])
        np.testing.assert_array_equal(since[envs], time[envs])  # the next window starts
        assert (left[envs] == NONE).all()
        assert counts == ((want[3][envs] > 0).sum(), ((want[3] > 0) & slabs)[envs].sum())
        touched += counts[0]
        slabbed += counts[1]
        assert (since[np.setdiff1d(np.arange(n), envs)] == before[
            np.setdiff1d(np.arange(n), envs)]).all()
    assert touched > 100 and slabbed > 20  # the cases occur


def test_on_a_real_robot_every_sample_is_the_reference_rule(monkeypatch):
    # one robot drives into a wall, the other backs into a movable box: collisions come
    # and go; each sample's window against the reference on the same rings
    from arena_gym.sensors import contact

    store, sim, suite = _robot_world(Prim("wall", pose=(0.3, 0.0, 0.2, 0.0), scale=(0.1, 2.0, 0.4)),
                                     Prim("box", pose=(-0.3, 0.0, 0.1, 0.0), scale=(0.1, 1.0, 0.2),
                                          movable=True))
    seen = []

    def checked(history, time, rows, envs, since, everything, feet, ring, slabs, collided,
                contacts, kind, pending, extra):
        want = _reference(history[rows], time[rows], since[envs], everything[envs],
                          feet[envs], slabs[envs], pending[envs], collided[envs],
                          contacts[envs], kind[envs])
        counts = window(history, time, rows, envs, since, everything, feet, ring, slabs,
                        collided, contacts, kind, pending, extra)
        for got, expected in zip((collided, contacts, kind, extra), want, strict=True):
            np.testing.assert_array_equal(got[envs], expected)
        seen.append(want[0].any())
        return counts

    monkeypatch.setattr(contact, "window", checked)
    suite.reset()
    sim.set_cmd_vel(0, "robot", 0.3, 0.0)
    sim.set_cmd_vel(1, "robot", -0.3, 0.0)
    for _ in range(80):
        sim.step(25)
        suite.update()
    assert any(seen) and not all(seen)
    assert suite["robot/collision"].collided.all()
    sim.close()
