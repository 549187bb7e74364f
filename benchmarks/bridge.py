"""What the ROS bridge costs in lockstep: N envs stepped with the bridge publishing every
tick (scan, odom, tf, and imu, joint_states, clock) against the same stepping without it,
in one run.

    python benchmarks/bridge.py [--envs 8] [--ticks 100] [--repeats 5] [--no-subscriber]
                                [--typed]

One simulator (the default world in each env, the sensor suite sampling every tick as a
policy's observations need) takes turns: a chunk of `--ticks` ticks with the bridge's tick
hook (frames into shared memory, the rclpy node in the ROS venv publishing them, a separate
rclpy process subscribed to /tf and every robot's scan and odom, taking the serialized
messages unless --typed: deserializing into Python objects is the consumer's cost, and
nav2's C++ nodes do not pay rclpy's), then a chunk without it.
Each chunk ends when the node has published its last frame. The table gives ms per tick
(all envs) of each and the median of the per-repeat ratios, and the same for the CPU time
of all three processes (simulator, node, subscriber), which other load on the machine
changes much less than wall time. Needs `arena-gym ros setup`.
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


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU seconds of these processes so far (Linux /proc)."""
    total = 0.0
    for pid in pids:
        fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def chunk(sim: Simulator, bridge: Bridge, ticks: int, publish: bool,
          pids: list[int]) -> tuple[float, float]:
    """(wall s, CPU s of the simulator process plus the ROS processes) per tick."""
    bridge.publishing = publish
    cpu0, t0 = cpu_seconds(pids), time.perf_counter()
    for _ in range(ticks):
        sim.step(sim.tick_steps)
    bridge.flush()
    if publish:
        time.sleep(0.05)  # the subscriber takes the last messages (its CPU counts)
    return (time.perf_counter() - t0) / ticks, (cpu_seconds(pids) - cpu0) / ticks


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
    with_bridge, without, ratios, cpu_with, cpu_without, cpu_ratios = [], [], [], [], [], []
    for _ in range(args.repeats):
        b, b_cpu = chunk(sim, bridge, args.ticks, True, pids)
        a, a_cpu = chunk(sim, bridge, args.ticks, False, pids)
        with_bridge.append(b)
        without.append(a)
        ratios.append(b / a)
        cpu_with.append(b_cpu)
        cpu_without.append(a_cpu)
        cpu_ratios.append(b_cpu / a_cpu)
    split = {}
    for name, pid in zip(("simulator", "node", "subscriber"), pids, strict=False):
        before = cpu_seconds([pid])
        chunk(sim, bridge, args.ticks, True, [])
        split[name] = (cpu_seconds([pid]) - before) / args.ticks
    bridge.close()
    if subscriber is not None:
        subscriber.terminate()
        subscriber.wait()
    suite.close()
    sim.close()
    print(f"{args.envs} envs, lockstep, {args.ticks} ticks x {args.repeats} repeats "
          f"(tick = {sim.tick_steps} physics steps + sensors)")
    print(f"  without bridge: {statistics.median(without) * 1e3:7.2f} ms/tick")
    print(f"  with bridge:    {statistics.median(with_bridge) * 1e3:7.2f} ms/tick")
    print(f"  ratio (median of per-repeat ratios): {statistics.median(ratios):.3f} "
          f"(overhead {100 * (statistics.median(ratios) - 1):+.1f} %; target <= +30 %)")
    print(f"  CPU per tick, simulator + node + subscriber: without "
          f"{statistics.median(cpu_without) * 1e3:.2f} ms, with "
          f"{statistics.median(cpu_with) * 1e3:.2f} ms, ratio "
          f"{statistics.median(cpu_ratios):.3f} (a busy machine moves wall time, not this)")
    print("  CPU per tick with the bridge, by process: " +
          ", ".join(f"{k} {v * 1e3:.2f} ms" for k, v in split.items()))


if __name__ == "__main__":
    main()
