"""The narrow channel between the simulator process and the ROS node process.

Only the standard library and numpy: the node imports this module in the ROS venv (by path,
without importing arena_gym). Two parts:

- `Frames`: per-tick arrays in a file-backed shared memory (/dev/shm), SLOTS copies.
  The simulator writes slot s, sends {"op": "frame", "slot": s}, and writes slot s again only
  after the node's {"op": "ack", "slot": s}: a tick never overwrites what is being published.
- `Link`: length-prefixed JSON messages over a Unix socket pair, for frames, acks, commands
  (service requests, cmd_vel) and their replies.
"""

from __future__ import annotations

import json
import socket
import struct
import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np

SLOTS = 4  # frames in flight: acks are read a few at a time (one recv, not one per tick)
# what one service request may ask (a bigger one is answered success false, naming these)
MAX_ITEMS = 10_000  # prims, walls, slabs, pedestrians, lights or names per request
MAX_STEPS = 1_000_000  # physics steps per Step request (2000 s of sim time at 2 ms)
_HEADER = struct.Struct("!I")


class Frames:
    """`SLOTS` copies of a dict of named arrays, `layout` {name: (shape, dtype str)}, in one
    file mapped by both processes."""

    def __init__(self, path: str | Path, layout: dict[str, tuple[list[int], str]],
                 create: bool) -> None:
        self.path, self.layout = Path(path), layout
        sizes = {k: int(np.prod(shape, dtype=np.int64)) * np.dtype(dt).itemsize
                 for k, (shape, dt) in layout.items()}
        offsets, total = {}, 0
        for name, size in sizes.items():
            offsets[name] = total
            total += -(-size // 64) * 64  # cache-line aligned
        self.slot_bytes = max(total, 64)
        mode = "w+" if create else "r+"
        self._mem = np.memmap(self.path, dtype=np.uint8, mode=mode,
                              shape=(SLOTS * self.slot_bytes,))
        self.slots = [
            {name: np.ndarray(tuple(shape), dtype=np.dtype(dt), buffer=self._mem,
                              offset=s * self.slot_bytes + offsets[name])
             for name, (shape, dt) in layout.items()}
            for s in range(SLOTS)
        ]

    def close(self, unlink: bool = False) -> None:
        self.slots = []
        self._mem._mmap.close()  # type: ignore[attr-defined]
        if unlink:
            self.path.unlink(missing_ok=True)


class Link:
    """Messages (JSON objects) both ways over one stream socket; `send` is thread-safe."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self._send_lock = threading.Lock()
        self._buffer = b""

    def send(self, message: dict) -> None:
        body = json.dumps(message, separators=(",", ":")).encode()
        with self._send_lock:
            self.sock.sendall(_HEADER.pack(len(body)) + body)

    def messages(self) -> Iterator[dict]:
        """Every message until the other side closes (or the socket is shut)."""
        while True:
            try:
                message = self.recv(None)
            except (EOFError, OSError):
                return
            yield message  # type: ignore[misc]

    def recv(self, timeout: float | None = None) -> dict | None:
        """The next message; None on timeout; EOFError when the other side closed."""
        while True:
            if len(self._buffer) >= _HEADER.size:
                (size,) = _HEADER.unpack_from(self._buffer)
                if len(self._buffer) >= _HEADER.size + size:
                    body = self._buffer[_HEADER.size:_HEADER.size + size]
                    self._buffer = self._buffer[_HEADER.size + size:]
                    return json.loads(body)
            self.sock.settimeout(timeout)
            try:
                chunk = self.sock.recv(1 << 20)
            except (TimeoutError, BlockingIOError):
                return None
            if not chunk:
                raise EOFError("the other side of the bridge closed the channel")
            self._buffer += chunk
