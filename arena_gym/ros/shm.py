"""The bridge's shared-memory folder, and the folders of bridges that died without cleaning up.

    folder = make_folder()      # /dev/shm/arena-bridge-XXXX, owned by this process
    ...
    folder.cleanup()

A bridge killed outright (SIGKILL, a crash) cannot remove its folder of frame files. Each
folder holds an `owner` file naming the bridge process (pid and its start time, so a
reused pid does not pass for the dead one); `make_folder` first removes this user's folders
whose owner has gone.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

PREFIX = "arena-bridge-"
OWNER = "owner"


def shm_dir() -> Path | None:
    """/dev/shm where there is one (else the system's temporary folder: None)."""
    return Path("/dev/shm") if os.path.isdir("/dev/shm") else None


def _started(pid: int) -> str:
    """A process's start time in clock ticks since boot ("" where /proc cannot say)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return ""
    return stat.rsplit(")", 1)[-1].split()[19]  # field 22; the name may hold spaces


def _alive(owner: str) -> bool:
    pid_text, _, started = owner.partition(" ")
    try:
        pid = int(pid_text)
    except ValueError:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process: alive
    return not started or _started(pid) in ("", started)


def stale_folders(where: Path | None = None) -> list[Path]:
    """This user's bridge folders whose owning process has gone."""
    where = where or shm_dir() or Path(tempfile.gettempdir())
    out = []
    for folder in where.glob(PREFIX + "*"):
        try:
            if folder.stat().st_uid != os.getuid() or not folder.is_dir():
                continue
            owner = (folder / OWNER).read_text()
        except OSError:
            continue  # no owner file: not ours to judge
        if not _alive(owner):
            out.append(folder)
    return out


def make_folder() -> tempfile.TemporaryDirectory:
    """A new folder for this bridge's frames (after removing dead bridges' folders)."""
    for folder in stale_folders():
        shutil.rmtree(folder, ignore_errors=True)
    folder = tempfile.TemporaryDirectory(prefix=PREFIX, dir=shm_dir())
    pid = os.getpid()
    (Path(folder.name) / OWNER).write_text(f"{pid} {_started(pid)}")
    return folder
