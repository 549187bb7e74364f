"""An X display for viewer tests: Xvfb from PATH or ARENA_GYM_XVFB (a command that takes
Xvfb's arguments, e.g. the wrapper tests/render/unpacked_xvfb.sh builds)."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.waiting import within

SCREEN = (1280, 720)
LIFETIME = 900  # s: the longest an Xvfb of the tests lives


def xvfb_command() -> str | None:
    return os.environ.get("ARENA_GYM_XVFB") or shutil.which("Xvfb")


@contextmanager
def virtual_display() -> Iterator[str]:
    """A running Xvfb's display name (":N"); skips when there is no Xvfb.

    The server is never killed under a live client: Xlib ends a process that loses its
    display (GLFW keeps its connection until the process exits). It runs with -terminate
    (it ends when its last client leaves) and under `timeout` (in case none ever came)."""
    command = xvfb_command()
    if command is None:
        pytest.skip("no Xvfb (install xvfb, or build one: tests/render/unpacked_xvfb.sh and "
                    "set ARENA_GYM_XVFB)")
    number = next(n for n in range(90, 200) if not Path(f"/tmp/.X11-unix/X{n}").exists()
                  and not Path(f"/tmp/.X{n}-lock").exists())
    log = tempfile.TemporaryFile()  # what Xvfb says, read only when it fails to start
    server = subprocess.Popen(["timeout", str(LIFETIME), command, f":{number}", "-terminate",
                               "-screen", "0", f"{SCREEN[0]}x{SCREEN[1]}x24"],
                              stdout=subprocess.DEVNULL, stderr=log)
    within(lambda: Path(f"/tmp/.X11-unix/X{number}").exists() or server.poll() is not None,
           30)
    if server.poll() is not None:
        log.seek(0)
        pytest.fail(f"Xvfb ({command}) did not start: {log.read().decode()}")
    try:
        yield f":{number}"
    finally:
        log.close()
