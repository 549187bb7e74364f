"""Per-stage statistics of a run: result rates with Wilson score intervals, metric means."""

from __future__ import annotations

import math
from typing import Any

from arena_gym.bench.suite import Suite
from arena_gym.tasks.metrics import METRICS, SOCIAL

RESULTS = ("goal", "collision", "timeout", "diverged")
Z95 = 1.959963984540054  # two-sided 95% normal quantile


def wilson(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a rate successes / n (95% by default): unlike the
    normal approximation it stays inside [0, 1] and is not empty at 0 or n successes.
    (0, 1) when n is 0."""
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    # holding p itself: at n of n, rounding put the upper end a hair below 1 (and plots' error
    # bars below the rate, which matplotlib refuses)
    return min(p, max(0.0, centre - half)), max(p, min(1.0, centre + half))


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def stage_summary(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Counts, rates and Wilson intervals of each result; means of every metric over all
    episodes; time to goal and path length to goal over the successful ones (None
    without any)."""
    n = len(records)
    out: dict[str, Any] = {"episodes": n}
    for result in RESULTS:
        k = sum(r["result"] == result for r in records)
        lo, hi = wilson(k, n)
        out[result] = {"count": k, "rate": k / n if n else 0.0, "ci_low": lo, "ci_high": hi}
    out["means"] = {key: _mean([float(r[key]) for r in records]) for key in METRICS}
    goals = [r for r in records if r["result"] == "goal"]
    out["time_to_goal"] = _mean([r["time"] for r in goals])
    out["path_length_to_goal"] = _mean([r["path_length"] for r in goals])
    out["social"] = social_summary(records)
    return out


def social_summary(records: list[dict[str, Any]]) -> dict[str, Any] | None:
    """In stages with people (None elsewhere): the share of episodes with a pedestrian
    collision (Wilson interval) and the social metrics' means over the episodes that
    have them (min distance: those where a person was present)."""
    counted = [r for r in records if r.get("pedestrian_collisions") is not None]
    if not counted:
        return None
    k = sum(r["pedestrian_collisions"] > 0 for r in counted)
    lo, hi = wilson(k, len(counted))
    out: dict[str, Any] = {"pedestrian_collision": {"count": k, "rate": k / len(counted),
                                                    "ci_low": lo, "ci_high": hi}}
    for key in SOCIAL:
        if key != "pedestrian_collisions":
            out[key] = _mean([r[key] for r in counted if r[key] is not None])
    return out


def summarise(suite: Suite, records: list[dict[str, Any]]) -> dict[str, Any]:
    """stage name -> stage_summary, in the suite's order, of the stages with records (all
    of them but in a run that stopped early)."""
    out = {}
    for stage in suite.stages:
        rows = [r for r in records if r["stage"] == stage.name]
        if rows:
            out[stage.name] = stage_summary(rows)
    return out
