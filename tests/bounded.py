"""A child Python process with bounded address space and time: a test of something that,
unfixed, would read or allocate without bound (or block) fails there, not on the machine.

    done = bounded_child("from arena_gym.cli import main; raise SystemExit(main(['eval']))")
    done.returncode, done.stderr
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ADDRESS_SPACE = 2 * 2**30  # bytes: the imports fit; 8 GB of results or /dev/zero do not


def _bounded() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


def bounded_child(code: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """Run `code` in a fresh interpreter (this checkout's arena_gym) within ADDRESS_SPACE;
    subprocess.TimeoutExpired past `timeout` seconds."""
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=timeout, preexec_fn=_bounded, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})


def cli(*argv: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """`arena-gym ARGV` in a bounded child."""
    return bounded_child(f"from arena_gym.cli import main; raise SystemExit(main({list(argv)!r}))",
                         timeout)
