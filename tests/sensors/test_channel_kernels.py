"""A channel's compiled bookkeeping (arena_gym.sensors.channel_kernels) is numpy's four
whole-array writes; and the suite's usual tick (every channel shown whole as taken: the
express path of Channel.run, update's kept plan, `fresh` left to publishing) shows what the
general path shows, bit for bit, through ticks when a reading is not due, collisions,
recompiles, a robot deleted and spawned again, masks, resets and a second reading of the
lidar; so do units computing straight into their one plain reading's arrays."""

from __future__ import annotations

import numpy as np

from arena_gym.scene import Prim, SceneStore
from arena_gym.sensors import CollisionSpec, LidarSpec, SensorSuite, channel_kernels
from arena_gym.sim import Simulator
from arena_gym.worlds import builtin_robot_urdf


def test_shown_is_numpys_whole_array_writes():
    rng = np.random.default_rng(3)
    for n, taken in ((16, 0.30000000000000004), (1, 0.0), (5, -0.0), (7, 1e300)):
        valid = rng.random(n) < 0.5
        stamp = np.where(rng.random(n) < 0.5, np.nan, rng.normal(size=n))
        count = rng.integers(0, 1000, n, dtype=np.int64)
        count[0] = np.iinfo(np.int64).max  # wraps, as numpy's add does
        fresh = rng.random(n) < 0.5
        theirs = [a.copy() for a in (valid, stamp, count, fresh)]
        theirs[0].fill(True)
        theirs[1].fill(taken)
        np.add(theirs[2], 1, out=theirs[2])
        theirs[3].fill(True)
        channel_kernels.shown(valid, stamp, count, fresh, taken)
        for ours, numpy in zip((valid, stamp, count, fresh), theirs, strict=True):
            assert ours.dtype == numpy.dtype and ours.tobytes() == numpy.tobytes()


def _suite(sim: Simulator, general: bool) -> SensorSuite:
    """The lidar at 20 Hz (due at every second or third tick of 20 ms) and the collision
    flag; `general`: every channel through the general path (as if it were not plain),
    every field copied from the unit's buffers."""
    suite = SensorSuite(sim, [LidarSpec("robot", key="scan", rate=20.0, noise_std=0.0),
                              CollisionSpec("robot")], seed=0, hook=False)
    if general:
        for channel in suite.channels.values():
            channel.plain = False
        suite._show_direct()  # the units write only their own buffers: every field copied
    return suite


def _same(ours: SensorSuite, theirs: SensorSuite) -> None:
    for key in ours.channels:
        a, b = ours[key], theirs[key]
        for name in ("valid", "stamp", "count", "fresh", *a.data):
            x = getattr(a, name) if name in ("valid", "stamp", "count", "fresh") else a.data[name]
            y = getattr(b, name) if name in ("valid", "stamp", "count", "fresh") else b.data[name]
            assert x.tobytes() == y.tobytes(), (key, name)


def test_the_usual_tick_shows_what_the_general_path_shows():
    store = SceneStore(3)
    for env in range(3):
        store.spawn_urdf(env, "robot", builtin_robot_urdf())
    store.spawn_prims(0, [Prim("wall", pose=(0.3, 0.0, 0.25, 0.0), scale=(0.1, 2.0, 0.5))])
    sim = Simulator(store)
    fast, slow = _suite(sim, general=False), _suite(sim, general=True)
    assert all(c.plain for c in fast.channels.values())
    assert fast.channels["scan"].direct == ("ranges",) and not slow.channels["scan"].direct
    assert fast.channels["robot/collision"].direct == ("collided", "contacts", "kind")

    def ticks(n: int) -> None:
        for _ in range(n):
            sim.step(10)
            fast.update()
            slow.update()
            _same(fast, slow)

    for env in range(3):
        sim.set_cmd_vel(env, "robot", 0.3, 0.2 * env)
    ticks(40)  # env 0 drives into the wall
    assert fast["robot/collision"].collided[0] and fast._steady
    assert fast["scan"].count[0] == 17  # due at 0, 50, 100 ... ms: not at every tick
    store.spawn_prims(1, [Prim("box", pose=(-1.0, 0.0, 0.25, 0.0), scale=(0.2, 0.2, 0.5))])
    ticks(3)  # env 1 recompiled: rebinds inside a kept plan
    store.delete_prims(2, ["robot"])
    ticks(3)  # env 2 without the robot: not every env shows
    assert not fast._steady and not fast["scan"].valid[2]
    store.spawn_urdf(2, "robot", builtin_robot_urdf())
    ticks(3)
    assert fast._steady
    for suite in (fast, slow):
        suite.enable("scan", [0, 2])
    ticks(4)
    assert not fast._steady and not fast.channels["scan"].direct
    for suite in (fast, slow):
        suite.enable("scan")
        suite.reset([1])
    _same(fast, slow)
    ticks(4)
    assert fast._steady and fast.channels["scan"].direct
    for suite in (fast, slow):  # a second reading of the lidar: each copies its own
        suite.add(LidarSpec("robot", key="noisy", rate=20.0, noise_std=0.01))
    ticks(4)
    assert not fast.channels["scan"].direct and fast["noisy"].valid.all()


def test_no_reading_is_computed_in_place_while_anyone_subscribes():
    """A subscriber of a reading shown first must not see the lidar's cast of this tick in
    its reading before that reading shows it."""
    store = SceneStore(2)
    for env in range(2):
        store.spawn_urdf(env, "robot", builtin_robot_urdf())
    sim = Simulator(store)
    suite = SensorSuite(sim, [CollisionSpec("robot"),
                              LidarSpec("robot", key="scan", rate=0.0, noise_std=0.0)],
                        hook=False)  # the lidar at every tick
    assert suite.channels["scan"].direct
    seen = []
    suite.subscribe("robot/collision", lambda reading, envs: seen.append(
        (suite["scan"].count[0], suite["scan"].ranges.copy())))
    assert not suite.channels["scan"].direct and not suite.channels["robot/collision"].direct
    for env in range(2):
        sim.set_cmd_vel(env, "robot", 0.3, 0.5)
    shown = []
    for _ in range(3):
        sim.step(10)
        suite.update()
        shown.append(suite["scan"].ranges.copy())
    assert [count for count, _ in seen] == [0, 1, 2]
    for (_, ranges), before in zip(seen[1:], shown, strict=False):
        assert ranges.tobytes() == before.tobytes()  # the last tick's, as shown then
