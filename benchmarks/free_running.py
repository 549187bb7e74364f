"""Does a slow consumer slow the free-running loop? Ticks/s of `Simulator.start()` (as fast
as possible) with no consumer, with a reader that holds each snapshot for `--hold` s, and,
for contrast, with a reader that holds the step lock as long (what a consumer reading the
live state has to do).

    python benchmarks/free_running.py [--envs 8] [--seconds 3] [--hold 0.05] [--repeats 3]

Methods take turns in each repeat; the table shows medians and ratios to "alone" (same run).
"""

from __future__ import annotations

import argparse
import statistics
import threading
import time
from collections.abc import Callable

from arena_gym.scene import Prim, SceneStore
from arena_gym.sim import Simulator
from arena_gym.sim.snapshots import Snapshots
from arena_gym.worlds import builtin_robot_urdf


def world(n: int) -> Simulator:
    store = SceneStore(n)
    for env in range(n):
        store[env].spawn_urdf("robot", builtin_robot_urdf())
        store[env].spawn_prims([Prim(f"box{i}", pose=(1.5, i - 1.0, 0.2, 0.0),
                                     scale=(0.4,) * 3) for i in range(3)])
    sim = Simulator(store)
    for env in range(n):
        sim.set_cmd_vel(env, "robot", 0.2, 0.3)
    sim.groups()
    return sim


def snapshot_reader(snapshots: Snapshots, hold: float) -> Callable[[], None]:
    def read() -> None:
        with snapshots.take() as snap:
            snap.field("qpos", 0)[0]
            time.sleep(hold)
    return read


def lock_reader(sim: Simulator, hold: float) -> Callable[[], None]:
    def read() -> None:
        with sim.lock():
            sim.state(0, "qpos")[0]
            time.sleep(hold)
    return read


def ticks_per_second(sim: Simulator, seconds: float,
                     reader: Callable[[], None] | None) -> float:
    stop = threading.Event()

    def consume() -> None:
        while not stop.is_set():
            reader()
            time.sleep(0.001)  # a reader that lets go between reads

    thread = threading.Thread(target=consume) if reader is not None else None
    sim.rt_factor = 0.0
    sim.start(paused=True)
    if thread is not None:
        thread.start()
    count0, t0 = sim.step_count, time.perf_counter()
    sim.unpause()
    time.sleep(seconds)
    sim.pause()
    rate = (sim.step_count - count0) / sim.tick_steps / (time.perf_counter() - t0)
    stop.set()
    if thread is not None:
        thread.join()
    sim.stop()
    return rate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--envs", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--hold", type=float, default=0.05)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    sim = world(args.envs)
    snapshots = sim.snapshots  # publishing on for every method: the same copies per tick
    methods = {"alone": None, "snapshot reader": snapshot_reader(snapshots, args.hold),
               "lock reader": lock_reader(sim, args.hold)}
    rates: dict[str, list[float]] = {name: [] for name in methods}
    for _ in range(args.repeats):
        for name, reader in methods.items():
            rates[name].append(ticks_per_second(sim, args.seconds, reader))
    alone = statistics.median(rates["alone"])
    print(f"{args.envs} envs, readers hold {args.hold * 1000:.0f} ms; ticks/s (median of "
          f"{args.repeats}), ratio to alone")
    for name, values in rates.items():
        median = statistics.median(values)
        print(f"  {name:16s} {median:9.1f}   {median / alone:5.2f}")
    sim.close()


if __name__ == "__main__":
    main()
