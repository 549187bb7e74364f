"""Reading a file a user, a config or a peer names: a regular file under a size bound, or
one error naming what was expected and what came. A symlink to /dev/zero, a FIFO or a
folder is never read (it would grow without end or block forever), nor a file larger than
the bound of its kind.

    text = read_text(path, f"config {path}")            # str; ValueError, OSError
    data = read_bytes(path, f"map image {path}", limit=MAX_DATA_BYTES)

The file is opened once, without blocking, and checked on that open file (fstat), so a
name swapped after the check cannot slip something else in; at most `limit` bytes are
read even if the file grows meanwhile.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

MAX_TEXT_BYTES = 64 * 2**20  # a config, suite, scenario, map YAML, URDF/SRDF/MJCF, run file
MAX_DATA_BYTES = 512 * 2**20  # a mesh, a map image, a texture
_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR,
          "a character device"), (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def read_bytes(path: str | os.PathLike, where: str, limit: int = MAX_TEXT_BYTES,
               error: type[Exception] = ValueError) -> bytes:
    """The contents of `path`, a regular file of at most `limit` bytes; else `error` saying
    what was expected and what came after `where` (the caller's words for the file: its
    kind and path). OSError where it cannot be opened (missing, no permission), for the
    caller to say in its words."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    with os.fdopen(fd, "rb") as fh:
        _check(os.fstat(fd), where, limit, error)
        data = fh.read(limit + 1)
    if len(data) > limit:  # it grew while being read
        raise error(f"{where}: expected at most {_bound(limit)}, got more")
    return data


def read_text(path: str | os.PathLike, where: str, limit: int = MAX_TEXT_BYTES,
              error: type[Exception] = ValueError, errors: str = "strict") -> str:
    """As read_bytes, decoded as UTF-8 (`errors` as bytes.decode takes it)."""
    return read_bytes(path, where, limit, error).decode("utf-8", errors)


def check_file(path: str | os.PathLike, where: str, limit: int = MAX_DATA_BYTES,
               error: type[Exception] = ValueError) -> Path:
    """`path` when it is a regular file of at most `limit` bytes (for a reader that opens
    it itself: MuJoCo, an image library); else `error` (OSError) as read_bytes."""
    _check(os.stat(path), where, limit, error)
    return Path(path)


def _check(st: os.stat_result, where: str, limit: int,
           error: type[Exception]) -> None:
    if not stat.S_ISREG(st.st_mode):
        kind = next((k for test, k in _KINDS if test(st.st_mode)), "not a regular file")
        raise error(f"{where}: expected a regular file, got {kind}")
    if st.st_size > limit:
        raise error(f"{where}: expected at most {_bound(limit)}, got "
                    f"{_size(st.st_size)}")


def _size(n: int) -> str:
    return f"{n:,} bytes"


def _bound(limit: int) -> str:
    """The bound, in MiB and by name where it is one of this module's."""
    names = {MAX_TEXT_BYTES: "MAX_TEXT_BYTES", MAX_DATA_BYTES: "MAX_DATA_BYTES"}
    name = f", arena_gym.files.{names[limit]}" if limit in names else ""
    return f"{limit:,} bytes ({limit / 2**20:g} MiB{name})"
