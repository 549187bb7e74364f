"""`arena-gym bridge` as a user runs it: up, a live stack dump on SIGUSR1 without stopping,
and a clean end on SIGTERM (the node gone, no shared memory left)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path


def test_sigusr1_dumps_the_stacks_and_sigterm_ends_cleanly(ros_env, tmp_path):
    before = set(Path("/dev/shm").glob("arena-bridge-*"))
    err = open(tmp_path / "stderr.txt", "w+")
    process = subprocess.Popen(
        [sys.executable, "-m", "arena_gym.cli", "bridge", "--world", "empty", "--lockstep",
         "--venv", str(ros_env)], stdout=subprocess.PIPE, stderr=err, text=True)
    try:
        line = process.stdout.readline()
        assert line == ("bridge up: 1 env(s) of 'empty', robot 'robot', lockstep (paused; "
                        "/mujoco/step advances)\n")
        os.kill(process.pid, signal.SIGUSR1)
        time.sleep(1.0)
        assert process.poll() is None  # still serving
        dump = (tmp_path / "stderr.txt").read_text()
        assert "Current thread" in dump and "in serve" in dump
        process.terminate()
        assert process.wait(timeout=20) == 0
    finally:
        if process.poll() is None:
            process.kill()
        err.close()
    assert set(Path("/dev/shm").glob("arena-bridge-*")) == before
