"""Post-tick snapshots of a free-running simulator: consistent, monotonic, never blocking
the loop, and what the lockstep state is after each tick."""

from __future__ import annotations

import re
import threading
import time

import pytest

from arena_gym.scene import Prim, SceneStore
from arena_gym.sim import Simulator
from arena_gym.worlds import builtin_robot_urdf


def _world(n: int, odd_env: int | None = None) -> SceneStore:
    store = SceneStore(n)
    for env in range(n):
        store[env].spawn_urdf("robot", builtin_robot_urdf(), pose=(0.0, 0.3 * env, 0.0))
        store[env].spawn_prims([Prim("box", pose=(1.0, 0.0, 0.2, 0.0), scale=(0.4,) * 3)])
    if odd_env is not None:  # a layout of its own: this env steps in the pool
        store[odd_env].spawn_prims([Prim("extra", pose=(-2.0, 0.0, 0.2, 0.0))])
    return store


def _driving(store: SceneStore) -> Simulator:
    sim = Simulator(store)
    for env in range(store.num_envs):
        sim.set_cmd_vel(env, "robot", 0.2, 0.4 + 0.3 * env)
    return sim


def _wait(condition, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.001)


def test_a_reader_sees_monotonic_snapshots_that_a_lockstep_replay_reproduces():
    """Time and qpos of every snapshot a concurrent reader takes belong together: they are
    bit for bit the state a lockstep run reaches after that many steps."""
    sim = _driving(_world(3, odd_env=2))
    sim.rt_factor = 0.0  # as fast as possible: many ticks, many torn reads if any
    seen: list[tuple[int, int, float, list[float], list[bytes]]] = []
    snapshots = sim.snapshots

    def read() -> None:
        while not seen or seen[-1][1] < 400:
            with snapshots.take() as snap:
                if not seen or snap.seq != seen[-1][0]:
                    seen.append((snap.seq, snap.step_count, snap.clock,
                                 [snap.time(e) for e in range(3)],
                                 [snap.field("qpos", e).tobytes() for e in range(3)]))

    reader = threading.Thread(target=read)
    sim.start()
    reader.start()
    reader.join(timeout=120)
    sim.close()
    assert not reader.is_alive()
    assert len(seen) > 5
    seqs, counts = [s[0] for s in seen], [s[1] for s in seen]
    assert all(b > a for a, b in zip(seqs, seqs[1:], strict=False))
    assert all(b > a for a, b in zip(counts, counts[1:], strict=False))

    replay = _driving(_world(3, odd_env=2))
    states = {0: [replay.store[e].data.qpos.tobytes() for e in range(3)]}
    times = {0: [0.0, 0.0, 0.0]}
    while replay.step_count < counts[-1]:
        replay.step(replay.tick_steps)  # the loop's ticks
        states[replay.step_count] = [replay.store[e].data.qpos.tobytes() for e in range(3)]
        times[replay.step_count] = [replay.store[e].data.time for e in range(3)]
    for _, count, clock, env_times, qpos in seen:
        assert clock == pytest.approx(count * 0.002, abs=1e-9)
        assert env_times == times[count]
        assert qpos == states[count]


def test_a_slow_reader_holds_its_snapshot_while_the_loop_ticks_on():
    """The loop ticks on while a reader holds a snapshot (a reader that blocked it would
    time out here); its rate with slow readers is benchmarks/free_running.py's."""
    sim = _driving(_world(2))
    sim.rt_factor = 1.0
    snapshots = sim.snapshots
    sim.start()
    try:
        for _ in range(3):
            lease = snapshots.take()
            held = lease.snapshot
            qpos, count = held.field("qpos", 0).copy(), held.step_count
            _wait(lambda c=count: sim.step_count >= c + 100)  # 10 ticks while held
            assert held.step_count == count
            assert held.field("qpos", 0).tobytes() == qpos.tobytes()  # not written over
            lease.release()
            with snapshots.take() as latest:
                assert latest.step_count > count
            time.sleep(0.1)
        sim.pause()
        # every tick was published (one more: the state when publishing began)
        assert snapshots.published == sim.step_count // sim.tick_steps + 1
    finally:
        sim.close()


def test_snapshot_is_the_state_after_the_last_completed_tick():
    store = _world(3, odd_env=2)
    sim = _driving(store)
    snapshots = sim.snapshots
    sim.step(30)  # no hooks: three ticks in one call, published at its end
    sim.step(5)  # no tick completes: the snapshot stays at step 30
    with snapshots.take() as snap:
        assert (snap.step_count, snap.seq) == (30, 2)
        at30 = [snap.field("qpos", e).copy() for e in range(3)]
    sim.step(5)
    with snapshots.take() as snap:
        assert snap.step_count == 40
        assert snap.clock == pytest.approx(0.08, abs=1e-12)
        for env in range(3):  # batched (0, 1) and pooled (2) envs alike
            data = store[env].data
            for field in ("qpos", "qvel", "ctrl", "sensordata", "mocap_pos"):
                assert snap.field(field, env).tobytes() == getattr(data, field).tobytes()
            assert snap.time(env) == data.time
            assert snap.field("qpos", env)[0] > at30[env][0]  # driving on: a new state
        joints = snap.columns("qpos", [7, 8])  # the wheels: one read per block
        assert joints.tolist() == [store[e].data.qpos[7:9].tolist() for e in range(3)]
        with pytest.raises(ValueError, match="read-only"):
            snap.field("qpos", 0)[0] = 1.0
        with pytest.raises(KeyError, match=re.escape(
                "snapshot field: expected one of ['time', 'qpos', 'qvel', 'act', 'ctrl', "
                "'mocap_pos', 'mocap_quat', 'sensordata'], got 'xpos'")):
            snap.field("xpos", 0)


def test_a_reset_is_published_at_once():
    store = _world(2)
    sim = _driving(store)
    snapshots = sim.snapshots
    sim.step(50)
    sim.reset_envs([1])
    with snapshots.take() as snap:
        assert snap.step_count == 50
        assert snap.time(1) == 0.0
        assert snap.field("qpos", 1).tobytes() == store[1].model.qpos0.tobytes()
        assert snap.time(0) == pytest.approx(0.1, abs=1e-12)


def test_a_released_lease_can_be_released_again_and_buffers_are_reused():
    sim = _driving(_world(1))
    snapshots = sim.snapshots
    lease = snapshots.take()
    first = lease.snapshot
    lease.release()
    lease.release()  # nothing happens
    used = {id(first)}
    for _ in range(5):
        sim.step(10)
        with snapshots.take() as snap:
            used.add(id(snap))
    assert snap.seq == 6
    assert len(used) == 2  # no one held one while the next was published: two buffers
