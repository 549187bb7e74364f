"""A small thread pool for sensor work that releases the GIL (ray casts, MjData copies)."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor


class Workers:
    """Runs a list of calls on `nthread` threads (the caller's thread when 1), in order
    within each thread's share. Created lazily; `close()` stops the threads."""

    def __init__(self, nthread: int) -> None:
        self.nthread = max(1, int(nthread))
        self._pool: ThreadPoolExecutor | None = None

    def run(self, calls: list[Callable[[], None]]) -> None:
        if self.nthread == 1 or len(calls) <= 1:
            for call in calls:
                call()
            return
        if self._pool is None:
            self._pool = ThreadPoolExecutor(self.nthread, thread_name_prefix="arena-sensors")
        shares = [calls[i :: self.nthread] for i in range(self.nthread)]
        futures = [self._pool.submit(_run_all, share) for share in shares if share]
        for future in futures:
            future.result()

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None


def _run_all(calls: list[Callable[[], None]]) -> None:
    for call in calls:
        call()
