"""Run folders (a training run's, a benchmark's): one run per folder, never mixed.

A folder holds a run when any of the files its kind of run writes is there. `claim` refuses
such a folder unless told to overwrite it, and then removes that run's files (only those:
nothing else of the folder) before the new run starts; `numbered` picks the first folder
of a numbered series (`base`, `base-2`, `base-3`, ...) that holds no run.

    claim(Path("runs/bench/mine"), BENCH_FILES, overwrite=False, what="benchmark run")
"""

from __future__ import annotations

import shutil
from collections.abc import Iterable
from pathlib import Path


def held(folder: Path, names: Iterable[str]) -> list[str]:
    """The run files and folders of `names` that `folder` holds (glob patterns allowed)."""
    if not folder.is_dir():
        return []
    return sorted({p.name for name in names for p in folder.glob(name)})


def claim(folder: Path, names: Iterable[str], overwrite: bool, what: str,
          hint: str = "") -> None:
    """Make `folder` ready for a new run: refuse it (ValueError) when it holds one, unless
    `overwrite`, which removes that run's files. A file where the folder should be is
    refused either way."""
    names = tuple(names)
    if folder.exists() and not folder.is_dir():
        raise ValueError(f"out: expected a folder, got the file {str(folder)!r}")
    found = held(folder, names)
    if not found:
        return
    if not overwrite:
        raise ValueError(f"out: {str(folder)!r} already holds a {what} ({', '.join(found)}); "
                         f"expected a new or empty folder, or --overwrite to replace that "
                         f"run{hint}")
    for name in names:
        for path in folder.glob(name):
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink()


def numbered(base: Path, names: Iterable[str]) -> Path:
    """`base`, or the first of `base-2`, `base-3`, ... that holds no run of `names`."""
    names = tuple(names)
    folder, k = base, 1
    while held(folder, names) or (folder.exists() and not folder.is_dir()):
        k += 1
        folder = base.with_name(f"{base.name}-{k}")
    return folder
