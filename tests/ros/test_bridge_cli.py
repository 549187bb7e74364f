"""`arena-gym bridge` as a user runs it: up, a live stack dump on SIGUSR1 without stopping,
a clean end on SIGTERM (the node gone, no shared memory left) even in the middle of a long
Step, exit status 1 when its node is killed, and a warning when two bridges share a domain."""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from arena_gym.ros.wire import MAX_STEPS
from tests.ros.conftest import Probe
from tests.waiting import wait_until, within

UP = "bridge up: 1 env(s) of 'empty', robot 'robot', lockstep (paused; /mujoco/step advances)\n"


class Bridge:
    """`arena-gym bridge --world empty --lockstep` in a process; its stderr lines queued."""

    def __init__(self, venv: Path) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "arena_gym.cli", "bridge", "--world", "empty", "--lockstep",
             "--venv", str(venv)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        assert self.process.stdout.readline() == UP
        self.node, self.folder = node_of(self.process.pid)

    def _read(self) -> None:
        for line in self.process.stderr:
            self.lines.put(line)

    def line(self, text: str, timeout: float = 30.0) -> str:
        """The first stderr line holding `text` (within `timeout` seconds)."""
        deadline = time.monotonic() + timeout
        while True:
            line = self.lines.get(timeout=max(0.01, deadline - time.monotonic()))
            if text in line:
                return line

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()


def node_of(pid: int) -> tuple[int, Path]:
    """The bridge's node process and its shared-memory folder (from its --meta argument)."""
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    for child in children:
        argv = Path(f"/proc/{child}/cmdline").read_bytes().split(b"\0")
        if b"--meta" in argv:
            return int(child), Path(argv[argv.index(b"--meta") + 1].decode()).parent
    raise AssertionError(f"no node process among {children}")


def test_sigusr1_dumps_the_stacks_and_sigterm_ends_cleanly(ros_env, tmp_path):
    err = open(tmp_path / "stderr.txt", "w+")
    process = subprocess.Popen(
        [sys.executable, "-m", "arena_gym.cli", "bridge", "--world", "empty", "--lockstep",
         "--venv", str(ros_env)], stdout=subprocess.PIPE, stderr=err, text=True)
    try:
        line = process.stdout.readline()
        assert line == ("bridge up: 1 env(s) of 'empty', robot 'robot', lockstep (paused; "
                        "/mujoco/step advances)\n")
        node, folder = node_of(process.pid)
        assert folder.is_dir()
        # "bridge up" is printed just before serving starts: signal until a dump shows it

        def serving_dumped() -> bool:  # a dump by a Python thread that serves
            dump = (tmp_path / "stderr.txt").read_text()
            return "Current thread" in dump and "in serve" in dump

        def signalled() -> bool:
            os.kill(process.pid, signal.SIGUSR1)
            return bool(within(serving_dumped, 1.0))

        wait_until(signalled, 30, lambda: "a stack dump showing serve; stderr: "
                   + (tmp_path / "stderr.txt").read_text()[-2000:])
        assert process.poll() is None  # still serving
        process.terminate()
        assert process.wait(timeout=20) == 0
    finally:
        if process.poll() is None:
            process.kill()
        err.close()
    assert not folder.exists()  # the shared memory is gone
    assert not Path(f"/proc/{node}").exists()  # and so is the node


def _step(probe: Probe) -> None:
    try:
        probe.step(MAX_STEPS)
    except RuntimeError:
        pass  # the probe was killed before the Step's answer: expected


def test_sigterm_ends_a_long_step_at_once(ros_env):
    bridge = Bridge(ros_env)
    stepper, watcher = Probe(ros_env), Probe(ros_env)
    try:
        watcher.listen("/clock", "rosgraph_msgs/msg/Clock")
        threading.Thread(target=_step, args=(stepper,), daemon=True).start()
        assert len(watcher.take("/clock", count=5)) >= 5  # the Step is under way
        bridge.process.terminate()
        assert bridge.process.wait(timeout=20) == 0  # the first signal ends it
    finally:
        bridge.close()
        stepper.process.kill()
        watcher.close()
    assert not bridge.folder.exists()
    assert not Path(f"/proc/{bridge.node}").exists()


def test_a_killed_node_ends_the_bridge_with_status_1(ros_env):
    bridge = Bridge(ros_env)
    try:
        os.kill(bridge.node, signal.SIGKILL)
        assert bridge.process.wait(timeout=30) == 1
        assert bridge.line("ROS node") == ("bridge: the bridge's ROS node exited unexpectedly "
                                           "(exit status -9); the bridge stops\n")
    finally:
        bridge.close()
    assert not bridge.folder.exists()


def test_two_bridges_on_one_domain_warn(ros_env):
    first = Bridge(ros_env)
    second = Bridge(ros_env)
    try:
        domain = os.environ["ROS_DOMAIN_ID"]
        assert second.line("warning") == (
            f"bridge: warning: 2 nodes serve /mujoco/step on ROS_DOMAIN_ID {domain} (this "
            "bridge and another): a client's requests reach either; give each bridge its own "
            "ROS_DOMAIN_ID\n")
    finally:
        first.close()
        second.close()
