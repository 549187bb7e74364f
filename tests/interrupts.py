"""Interrupting a real `arena-gym` process: start it, wait for what it prints (a line or a
pattern, with a timeout, no sleeps), send SIGINT, collect what it said."""

from __future__ import annotations

import contextlib
import os
import re
import select
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@contextlib.contextmanager
def running(*args: str) -> Iterator[subprocess.Popen]:
    """`arena-gym ARGS` as a child process with piped output, killed at the end."""
    # Ctrl-C's default in the child whatever this process's is now (a library that an
    # earlier test ran here may have left SIGINT ignored, and a child inherits that)
    proc = subprocess.Popen([sys.executable, "-m", "arena_gym.cli", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT,
                            env={**os.environ, "PYTHONPATH": str(ROOT)},
                            preexec_fn=_default_ctrl_c)
    try:
        yield proc
    finally:
        proc.kill()
        proc.wait()


def _default_ctrl_c() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def read_until(stream, pattern: str, timeout: float) -> re.Match:
    """Read `stream` (a pipe) until `pattern` matches what came; fail at `timeout` s."""
    seen, deadline = "", time.monotonic() + timeout
    fd = stream.fileno()
    while (found := re.search(pattern, seen, re.MULTILINE)) is None:
        left = deadline - time.monotonic()
        if left <= 0:  # a timeout, not a measure: the wait is on the pipe (select)
            raise AssertionError(f"timed out after {timeout:g} s waiting for {pattern!r}: "
                                 f"{seen[-2000:]}")
        ready, _, _ = select.select([fd], [], [], left)
        chunk = os.read(fd, 65536).decode(errors="replace") if ready else ""
        assert chunk or not ready, f"the stream closed before {pattern!r}: {seen[-2000:]}"
        seen += chunk
    return found


def interrupt(proc: subprocess.Popen, timeout: float) -> str:
    """Send SIGINT, wait for the process to end; its stderr."""
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=timeout)
    return err.decode()
