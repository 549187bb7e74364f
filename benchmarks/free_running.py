"""Does a slow consumer slow the free-running loop? Ticks/s of `Runner.start()` (as fast
as possible) with no consumer, with a reader that holds each snapshot for `--hold` s, and,
for contrast, with a reader that holds the step lock as long (what a consumer reading the
live state has to do). Then how closely the paced loop keeps real time (the suite asserts
nothing about wall time: this is where it is measured): at each of `--factors`, sim
seconds per wall second over the run, the loop's own `rt_factor_measured`, the largest lag
behind the pace and the largest lead ahead of it (wall ms; a lead above one tick would
mean the pacing skipped a wait).

    python benchmarks/free_running.py [--envs 8] [--seconds 3] [--hold 0.05] [--repeats 3]
                                      [--factors 0.5 1 2]

Methods take turns in each repeat; the tables show medians and ratios to "alone" or to the
target factor (same run).
"""

from __future__ import annotations

import argparse
import statistics
import threading
import time
from collections.abc import Callable

from arena_gym.scene import Prim, SceneStore
from arena_gym.sim import Runner, Simulator
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
    sim.step(sim.tick_steps)  # compiled, grouped and warm before anything is timed
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


def ticks_per_second(runner: Runner, seconds: float,
                     reader: Callable[[], None] | None) -> float:
    stop = threading.Event()

    def consume() -> None:
        while not stop.is_set():
            reader()
            time.sleep(0.001)  # a reader that lets go between reads

    sim = runner.sim
    thread = threading.Thread(target=consume) if reader is not None else None
    runner.rt_factor = 0.0
    runner.start(paused=True)
    if thread is not None:
        thread.start()
    count0, t0 = sim.step_count, time.perf_counter()
    runner.unpause()
    time.sleep(seconds)
    runner.pause()
    rate = (sim.step_count - count0) / sim.tick_steps / (time.perf_counter() - t0)
    stop.set()
    if thread is not None:
        thread.join()
    runner.stop()
    return rate


def paced(runner: Runner, seconds: float, factor: float
          ) -> tuple[float, float, float, float]:
    """(sim s per wall s, the loop's rt_factor_measured, the largest lag behind the pace
    and the largest lead ahead of it, in s of wall time) over `seconds` at `factor`."""
    sim = runner.sim
    runner.rt_factor = factor
    runner.start(paused=True)
    lags: list[float] = []  # wall time since unpause minus the sim time it paced, in wall s
    clock0, t0 = sim.clock, time.perf_counter()
    runner.unpause()
    while True:
        clock = sim.clock  # read first: the wall time after it is no earlier
        now = time.perf_counter()
        if now >= t0 + seconds:
            break
        lags.append(now - t0 - (clock - clock0) / factor)
        time.sleep(0.01)  # a sampler, not a load
    runner.pause()
    rate = (sim.clock - clock0) / (time.perf_counter() - t0)
    measured = runner.info.rt_factor_measured
    runner.stop()
    return rate, measured, max(lags), max(0.0, -min(lags))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--envs", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--hold", type=float, default=0.05)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--factors", type=float, nargs="+", default=[0.5, 1.0, 2.0])
    args = parser.parse_args()
    sim = world(args.envs)
    runner = Runner(sim)
    snapshots = runner.snapshots  # publishing on for every method: the same copies per tick
    methods = {"alone": None, "snapshot reader": snapshot_reader(snapshots, args.hold),
               "lock reader": lock_reader(sim, args.hold)}
    rates: dict[str, list[float]] = {name: [] for name in methods}
    for _ in range(args.repeats):
        for name, reader in methods.items():
            rates[name].append(ticks_per_second(runner, args.seconds, reader))
    alone = statistics.median(rates["alone"])
    print(f"{args.envs} envs, readers hold {args.hold * 1000:.0f} ms; ticks/s (median of "
          f"{args.repeats}), ratio to alone")
    for name, values in rates.items():
        median = statistics.median(values)
        print(f"  {name:16s} {median:9.1f}   {median / alone:5.2f}")
    tick_ms = sim.tick_steps * sim.timestep * 1000
    print(f"paced, {args.seconds:g} s each (median of {args.repeats}): sim s per wall s, "
          f"ratio to the target, rt_factor_measured, largest lag and lead (wall ms; a tick "
          f"is {tick_ms:g} sim ms)")
    for factor in args.factors:
        runs = [paced(runner, args.seconds, factor) for _ in range(args.repeats)]
        rate, measured, lag, lead = (statistics.median(r[i] for r in runs) for i in range(4))
        print(f"  factor {factor:<6g} {rate:9.3f}   {rate / factor:5.2f}   {measured:9.3f}   "
              f"{lag * 1000:7.1f}   {lead * 1000:7.1f}")
    runner.close()
    sim.close()


if __name__ == "__main__":
    main()
