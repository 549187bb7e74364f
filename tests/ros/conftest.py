"""Fixtures of the ROS bridge tests: the ROS venv (built by `arena-gym ros setup` when
missing; a failed build fails the tests under CI=true, never skips them), a lockstep bridge
over two envs of the default world, and a probe: a separate, real rclpy process
(tests/ros/probe_node.py) on loopback with a test-specific ROS_DOMAIN_ID."""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import subprocess
import sys
import threading
import zlib
from pathlib import Path

import pytest

from tests.waiting import wait_until

PROBE = Path(__file__).resolve().parent / "probe_node.py"


@pytest.fixture(scope="session")
def ros_venv() -> Path:
    from arena_gym.ros.setup_venv import RosSetupError, setup

    try:
        return setup(progress=lambda m: print(m, file=sys.stderr))
    except RosSetupError as exc:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"arena-gym ros setup failed: {exc}")
        pytest.skip(f"no ROS venv (arena-gym ros setup failed: {exc})")


DOMAINS = 200  # ROS_DOMAIN_ID 20 .. 219: all safe for DDS's port arithmetic on Linux
_modules = itertools.count()


def module_domain() -> int:
    """A ROS_DOMAIN_ID of its own for each test module: xdist's workers take turns (worker w
    of n: w, w + n, ...) from an offset of this test run, so no two modules of a run share a
    domain (a node a module leaves behind never answers another module's requests), and
    concurrent runs start far apart."""
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID") or str(os.getpid())
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    n = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    offset = zlib.crc32(run.encode()) % DOMAINS
    return 20 + (offset + int(worker.removeprefix("gw")) + n * next(_modules)) % DOMAINS


@pytest.fixture(scope="module")
def ros_env(ros_venv):
    """Loopback discovery on a domain of this test module only."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
        mp.setenv("ROS_DOMAIN_ID", str(module_domain()))
        yield ros_venv


class Probe:
    """Drives probe_node.py: one JSON command per line, one answer per line."""

    def __init__(self, venv: Path) -> None:
        env = {k: v for k, v in os.environ.items()
               if k not in ("PYTHONPATH", "_ROS_WHEELS_BOOTSTRAP_COMPLETE")}
        self.process = subprocess.Popen([str(venv / "bin" / "python"), str(PROBE)],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        text=True, env=env)

    def ask(self, **command):
        self.process.stdin.write(json.dumps(command) + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(f"the probe exited ({self.process.poll()}) on {command}")
        return json.loads(line)["out"]

    def listen(self, topic: str, kind: str) -> int:
        return self.ask(do="listen", topic=topic, type=kind)

    def take(self, topic: str, count: int = 0) -> list[dict]:
        """The messages received since the last take, after waiting (10 s at most) for
        `count` of them: a service's answer may arrive before the last messages it caused."""
        if count:
            self.ask(do="wait", topic=topic, count=count, timeout=10)
        return self.ask(do="take", topic=topic)

    def take_until(self, topic: str, ok, what: str, timeout: float = 30.0) -> list[dict]:
        """The messages received since the last take, once `ok(messages)` holds (taking
        more as they come, `timeout` s at most; else AssertionError naming `what`)."""
        got: list[dict] = []

        def enough() -> bool:
            got.extend(self.ask(do="take", topic=topic))
            return bool(ok(got))

        wait_until(enough, timeout, lambda: f"{what} on {topic} ({len(got)} messages came)")
        return got

    def command(self, bridge, op: str, topic: str, kind: str, msg: dict) -> int:
        """Publish `msg` on a command topic and wait until `bridge` has run it (as `op`:
        cmd_vel, joint_commands); the topic's subscriber count."""
        before = bridge.commands_run[op]
        count = self.ask(do="publish", topic=topic, type=kind, msg=msg)
        wait_until(lambda: bridge.commands_run[op] > before, 30,
                   f"the bridge to run the {op} published on {topic}")
        return count

    def call(self, service: str, kind: str, **request) -> dict:
        return self.ask(do="call", service=service, type=kind, request=request)

    def publishers(self, topic: str, count: int) -> int:
        """The publishers of `topic`, once there are `count` (10 s at most)."""
        return self.ask(do="publishers", topic=topic, count=count, timeout=10)

    def step(self, steps: int) -> dict:
        return self.call("/mujoco/step", "arena_gym_interfaces/srv/Step", steps=steps)

    def close(self) -> None:
        self.process.stdin.close()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()


@contextlib.contextmanager
def served(store, name: str, venv: Path, lockstep: bool = True):
    """A bridge over `store` (robot `name`), served on a thread until the block ends."""
    from arena_gym.ros.server import Bridge
    from arena_gym.sensors.suite import SensorSuite
    from arena_gym.sim.simulator import Simulator

    sim = Simulator(store, nthread=1)
    suite = SensorSuite(sim, seed=0)
    b = Bridge.start(sim, suite, name, venv=venv)

    failed: list[BaseException] = []

    def serve() -> None:
        try:
            b.serve(lockstep=lockstep)
        except BaseException as exc:  # told at the end of the block, not lost in a thread
            failed.append(exc)
            raise

    # the camera renders on this serving thread's behalf; suite.close() below frees them here
    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield b
    finally:
        b.close()
        thread.join(timeout=10)
        suite.close()
        sim.close()
    if failed:
        raise RuntimeError("the bridge stopped serving during the tests") from failed[0]


def camera_robot_urdf(folder: Path, width: int, height: int) -> Path:
    """The built-in robot with a 10 Hz camera above its lidar, looking ahead."""
    from arena_gym.worlds.default import builtin_robot_urdf
    from tests.sensors.worlds import camera_block

    text = builtin_robot_urdf().read_text().replace("</robot>", camera_block(
        width=width, height=height, rate=10.0, reference="base_scan") + "</robot>")
    urdf = folder / "camerabot.urdf"
    urdf.write_text(text)
    return urdf


@pytest.fixture(scope="module")
def bridge(ros_env, request):
    """A lockstep bridge (paused) over 2 envs of the built-in robot in the default world (or
    the test module's WORLD), served on a thread."""
    from arena_gym.ros.run import build_envs

    world = getattr(request.module, "WORLD", "default")
    with served(*build_envs(world, "builtin", 2, seed=0), ros_env) as b:
        yield b


@pytest.fixture(scope="module")
def probe(bridge, ros_env):
    p = Probe(ros_env)
    yield p
    p.close()
