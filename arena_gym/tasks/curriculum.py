"""Staged training, as in Arena-Rosnav: obstacle (and pedestrian) counts rise when the
success rate over the last `window` episodes reaches `advance`, and fall back below
`fall_back`."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager

from arena_gym.config import CurriculumConfig


class Curriculum:
    """Tracks episode results and the current stage. One per vector env.

    Only training episodes count: while `learning` is False (evaluation, see `paused`),
    `record` changes nothing.
    """

    def __init__(self, cfg: CurriculumConfig) -> None:
        self.cfg = cfg
        self.stage = min(cfg.start_stage, len(cfg.stages) - 1)
        self.results: deque[bool] = deque(maxlen=cfg.window)
        self.learning = True

    @contextmanager
    def paused(self) -> Iterator[None]:
        """Episodes inside do not count (evaluation runs on a frozen stage)."""
        before, self.learning = self.learning, False
        try:
            yield
        finally:
            self.learning = before

    @property
    def obstacles(self) -> tuple[int, int]:
        return self.cfg.stages[self.stage]

    @property
    def pedestrians(self) -> tuple[int, int] | None:
        """(min, max) walking people this stage; None: the config's num_pedestrians."""
        return self.cfg.pedestrians[self.stage] if self.cfg.pedestrians else None

    @property
    def success_rate(self) -> float:
        return sum(self.results) / len(self.results) if self.results else 0.0

    def count(self, result: str) -> None:
        """Record an episode by its result ("goal", "collision", "timeout", "diverged"):
        a divergence is none of the policy's outcomes and does not count."""
        if result != "diverged":
            self.record(result == "goal")

    def record(self, success: bool) -> None:
        if not self.learning:
            return
        self.results.append(bool(success))
        if len(self.results) < self.cfg.window:
            return
        rate = self.success_rate
        if rate >= self.cfg.advance and self.stage + 1 < len(self.cfg.stages):
            self.stage += 1
            self.results.clear()
        elif rate < self.cfg.fall_back and self.stage > 0:
            self.stage -= 1
            self.results.clear()
