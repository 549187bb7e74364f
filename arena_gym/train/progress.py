"""The training progress bar: it measures the run's real limit, its wall-time budget or,
when given, its env steps (SB3's own bar measures the `learn` total, an upper bound)."""

from __future__ import annotations

import time
from typing import Any


def progress_callback(minutes: float, steps: int | None) -> Any:
    """An SB3 callback drawing a bar over `steps` env steps if given, else over the minutes."""
    from stable_baselines3.common.callbacks import BaseCallback
    from tqdm import tqdm

    class Bar(BaseCallback):
        def _on_training_start(self) -> None:
            self.start = time.perf_counter()
            self.first = self.num_timesteps  # a resumed run starts at its step count
            if steps is not None:
                self.bar = tqdm(total=steps, unit="step", desc="env steps")
            else:
                self.bar = tqdm(total=round(minutes * 60), unit="s", desc="wall time",
                                bar_format="{l_bar}{bar}| {n:.0f}/{total:.0f} s{postfix}")
            self.bar.set_postfix_str("0 env steps")

        def _on_step(self) -> bool:
            if steps is not None:
                self.bar.update(self.num_timesteps - self.first - self.bar.n)
            else:
                elapsed = min(time.perf_counter() - self.start, minutes * 60)
                self.bar.update(elapsed - self.bar.n)
                self.bar.set_postfix_str(f"{self.num_timesteps:,} env steps", refresh=False)
            return True

        def _on_training_end(self) -> None:
            self.bar.close()

    return Bar()
