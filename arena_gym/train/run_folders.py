"""Run folders (a training run's, a benchmark's): one run per folder, never mixed.

A folder holds a run when any of the files its kind of run writes is there. `claim` refuses
such a folder unless told to overwrite it, and then removes that run's files (only those:
nothing else of the folder) before the new run starts; `numbered` picks the first folder
of a numbered series (`base`, `base-2`, `base-3`, ...) that holds no run.

    with claim(Path("runs/bench/mine"), BENCH_FILES, overwrite=False, what="benchmark run"):
        ...                                  # the run writes its files

A claim holds the folder for as long as the run lasts (an exclusive flock on the folder,
taken before it is looked at): a second run started into it meanwhile, even at the same
moment, is refused, and the first run's files never mix with another's. A folder the claim
made and the run left empty goes with it.
"""

from __future__ import annotations

import fcntl
import os
import shutil
from collections.abc import Iterable
from pathlib import Path


class Hold:
    """A run folder held by this process (see the module docstring); `release()` or the
    end of a `with` block lets it go."""

    def __init__(self, folder: Path, what: str) -> None:
        if folder.exists() and not folder.is_dir():
            raise ValueError(f"out: expected a folder, got the file {str(folder)!r}")
        self.folder, self._made = folder, not folder.exists()
        folder.mkdir(parents=True, exist_ok=True)
        self._fd: int | None = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(self._fd)
            self._fd = None
            raise ValueError(f"out: {str(folder)!r} is being written by another {what} "
                             "(it holds the folder's lock); expected a folder no run is "
                             "writing") from None

    def release(self) -> None:
        if self._fd is None:
            return
        if self._made and not any(self.folder.iterdir()):
            self.folder.rmdir()  # nothing was written: no empty run folder stays
        os.close(self._fd)
        self._fd = None

    def __enter__(self) -> Hold:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def hold(folder: Path, what: str) -> Hold:
    """Hold `folder` for a run that continues what it holds (a resumed training)."""
    return Hold(Path(folder), what)


def held(folder: Path, names: Iterable[str]) -> list[str]:
    """The run files and folders of `names` that `folder` holds (glob patterns allowed)."""
    if not folder.is_dir():
        return []
    return sorted({p.name for name in names for p in folder.glob(name)})


def claim(folder: Path, names: Iterable[str], overwrite: bool, what: str,
          hint: str = "") -> Hold:
    """Hold `folder` for a new run (see the module docstring): refuse it (ValueError) when
    another run writes it, or when it holds a run unless `overwrite`, which removes that
    run's files. A file where the folder should be is refused either way."""
    names = tuple(names)
    held_by = Hold(Path(folder), what)
    try:
        found = held(folder, names)
        if found and not overwrite:
            raise ValueError(f"out: {str(folder)!r} already holds a {what} ({', '.join(found)}); "
                             f"expected a new or empty folder, or --overwrite to replace that "
                             f"run{hint}")
        for name in names if found else ():
            for path in folder.glob(name):
                if path.is_dir() and not path.is_symlink():
                    shutil.rmtree(path)
                else:
                    path.unlink()
    except BaseException:
        held_by.release()
        raise
    return held_by


def numbered(base: Path, names: Iterable[str]) -> Path:
    """`base`, or the first of `base-2`, `base-3`, ... that holds no run of `names`."""
    names = tuple(names)
    folder, k = base, 1
    while held(folder, names) or (folder.exists() and not folder.is_dir()):
        k += 1
        folder = base.with_name(f"{base.name}-{k}")
    return folder
