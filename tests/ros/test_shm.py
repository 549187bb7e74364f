"""A bridge killed outright leaves its shared-memory folder; the next bridge removes the
folders of dead bridges (and only those) before it makes its own."""

from __future__ import annotations

import os
import subprocess
import sys

from arena_gym.ros.shm import OWNER, PREFIX, make_folder, shm_dir


def test_the_folders_of_dead_bridges_go_and_live_ones_stay(tmp_path):
    where = shm_dir() or tmp_path
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    dead = where / f"{PREFIX}test-dead"
    live = where / f"{PREFIX}test-live"
    for folder, pid in ((dead, int(gone.stdout)), (live, os.getpid())):
        folder.mkdir()
        (folder / "frames_0").write_bytes(b"\0" * 64)
        (folder / OWNER).write_text(f"{pid} ")
    mine = make_folder()
    try:
        assert not dead.exists()
        assert live.is_dir()
        assert (mine.name and (where / os.path.basename(mine.name) / OWNER).is_file())
    finally:
        mine.cleanup()
        for path in live.iterdir():
            path.unlink()
        live.rmdir()
