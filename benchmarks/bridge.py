"""What the ROS bridge costs in lockstep: N envs stepped with the bridge publishing scan,
odom and tf every tick against the same stepping without it, in one run.

    python benchmarks/bridge.py [--envs 8] [--ticks 100] [--repeats 5] [--no-subscriber]
                                [--typed]

One simulator (the default world in each env, the sensor suite sampling every tick as a
policy's observations need) takes turns: a chunk of `--ticks` ticks with the bridge's tick
hook (frames into shared memory, the rclpy node in the ROS venv publishing them, a separate
rclpy process subscribed to /tf and every robot's scan and odom, taking the serialized
messages unless --typed: deserializing into Python objects is the consumer's cost, and
nav2's C++ nodes do not pay rclpy's), then a chunk without it. The node encodes and
publishes only topics with subscribers: imu, points, joint_states and /clock have none
here (with --no-subscriber nothing is published: the frames' path alone is measured).
Each chunk ends when the node has published its last frame; the chunks alternate.

What counts: the CPU time (all threads, /proc) of the simulator process plus the node
process, with the subscriber attached, is the bridge's cost, and its ratio with / without
is the one held to the issue's target (<= 1.30): the subscriber's own CPU is the consumer's
cost (a Python rclpy subscriber spends ~150 us per message in its executor; nav2's C++
nodes do not), shown beside it, as is wall time, which other load on a small machine moves
far more than CPU time. Each figure is the median of the per-repeat ratios, with their
spread. Needs `arena-gym ros setup`.
Machines are noisy: compare the ratio, not absolute numbers across runs.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import time

from arena_gym.ros.run import build_envs
from arena_gym.ros.server import Bridge
from arena_gym.ros.setup_venv import default_venv, venv_python
from arena_gym.sensors.suite import SensorSuite
from arena_gym.sim.simulator import Simulator

SUBSCRIBER = """
import sys, rclpy
from nav_msgs.msg import Odometry
from sensor_msgs.msg import LaserScan
from tf2_msgs.msg import TFMessage
rclpy.init()
node = rclpy.create_node("bench_subscriber")
count = [0]
def got(msg):
    count[0] += 1
raw = sys.argv[2] == "raw"
node.create_subscription(TFMessage, "/tf", got, 1000, raw=raw)
for e in range(int(sys.argv[1])):
    ns = "robot" if e == 0 else f"env_{e}/robot"
    node.create_subscription(LaserScan, f"/{ns}/scan", got, 1000, raw=raw)
    node.create_subscription(Odometry, f"/{ns}/odom", got, 1000, raw=raw)
print("ready", flush=True)
try:
    rclpy.spin(node)
except Exception:
    pass
"""


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of this process so far, all its threads (Linux /proc)."""
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def chunk(sim: Simulator, bridge: Bridge, ticks: int, publish: bool,
          pids: list[int]) -> tuple[float, list[float]]:
    """(wall s, [CPU s of each process in `pids`]) per tick."""
    bridge.publishing = publish
    cpu0, t0 = [cpu_seconds(p) for p in pids], time.perf_counter()
    for _ in range(ticks):
        sim.step(sim.tick_steps)
    bridge.flush()
    if publish:
        time.sleep(0.05)  # the subscriber takes the last messages (its CPU counts)
    return ((time.perf_counter() - t0) / ticks,
            [(cpu_seconds(p) - c) / ticks for p, c in zip(pids, cpu0, strict=True)])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--envs", type=int, default=8)
    parser.add_argument("--ticks", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--no-subscriber", action="store_true")
    parser.add_argument("--typed", action="store_true",
                        help="the subscriber builds Python message objects (default: it takes "
                        "the serialized bytes, as a C++ consumer costs next to nothing)")
    args = parser.parse_args()
    os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    os.environ.setdefault("ROS_DOMAIN_ID", str(20 + os.getpid() % 80))

    store, name = build_envs("default", "builtin", args.envs, seed=0)
    sim = Simulator(store)
    suite = SensorSuite(sim, seed=0)
    bridge = Bridge.start(sim, suite, name)
    subscriber = None
    if not args.no_subscriber:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        subscriber = subprocess.Popen([str(venv_python(default_venv())), "-c", SUBSCRIBER,
                                       str(args.envs), "typed" if args.typed else "raw"],
                                      stdout=subprocess.PIPE, text=True,
                                      env=env)
        subscriber.stdout.readline()
        time.sleep(2.0)  # discovery: the subscriptions match the publishers
    for env_id in range(args.envs):
        sim.set_cmd_vel(env_id, name, 0.2, 0.3)
    pids = [os.getpid(), bridge.process.pid] + ([subscriber.pid] if subscriber else [])
    chunk(sim, bridge, 20, True, pids)  # warm-up
    chunk(sim, bridge, 20, False, pids)
    runs: dict[bool, list[tuple[float, list[float]]]] = {True: [], False: []}
    for _ in range(args.repeats):
        for publish in (True, False):
            runs[publish].append(chunk(sim, bridge, args.ticks, publish, pids))
    bridge.close()
    if subscriber is not None:
        subscriber.terminate()
        subscriber.wait()
    suite.close()
    sim.close()

    def figure(label: str, of) -> None:
        """Median over repeats of `of(wall, cpus)` without and with the bridge, and the
        median of the per-repeat ratios (with / without, the chunks run back to back)."""
        without = [of(*r) for r in runs[False]]
        with_ = [of(*r) for r in runs[True]]
        ratios = sorted(w / a for w, a in zip(with_, without, strict=True))
        print(f"  {label:<40} without {statistics.median(without) * 1e3:6.2f} ms, with "
              f"{statistics.median(with_) * 1e3:6.2f} ms, ratio {statistics.median(ratios):.3f} "
              f"(repeats {ratios[0]:.3f} .. {ratios[-1]:.3f})")

    print(f"{args.envs} envs, lockstep, {args.ticks} ticks x {args.repeats} repeats "
          f"(tick = {sim.tick_steps} physics steps + sensors), per tick:")
    figure("CPU, simulator + node (the bridge's cost)", lambda wall, cpu: cpu[0] + cpu[1])
    if subscriber is not None:
        figure("CPU, simulator + node + subscriber", lambda wall, cpu: sum(cpu))
    figure("wall time (moves with the machine's load)", lambda wall, cpu: wall)
    print("  target: the bridge's cost (simulator + node CPU) ratio <= 1.30")
    print("  CPU with the bridge, by process: " + ", ".join(
        f"{k} {statistics.median(r[1][i] for r in runs[True]) * 1e3:.2f} ms"
        for i, k in enumerate(("simulator", "node", "subscriber")[:len(pids)])))


if __name__ == "__main__":
    main()
