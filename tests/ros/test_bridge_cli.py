"""`arena-gym bridge` as a user runs it: up, a live stack dump on SIGUSR1 without stopping,
and a clean end on SIGTERM (the node gone, no shared memory left)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path


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
        dump = ""
        for _ in range(10):
            os.kill(process.pid, signal.SIGUSR1)
            time.sleep(1.0)
            assert process.poll() is None  # still serving
            dump = (tmp_path / "stderr.txt").read_text()
            if "in serve" in dump:
                break
        assert "Current thread" in dump and "in serve" in dump
        process.terminate()
        assert process.wait(timeout=20) == 0
    finally:
        if process.poll() is None:
            process.kill()
        err.close()
    assert not folder.exists()  # the shared memory is gone
    assert not Path(f"/proc/{node}").exists()  # and so is the node
