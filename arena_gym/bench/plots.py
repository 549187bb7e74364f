"""Plots of benchmark runs (matplotlib, imported when a plot is drawn, Agg backend):
trajectories over each stage's map, success rate per stage and policy with Wilson
intervals, and metric distributions per stage."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

INSTALL_HINT = "benchmark plots need matplotlib: pip install 'arena_gym[bench]'"
COLOURS = {"goal": "tab:green", "collision": "tab:red", "timeout": "tab:orange",
           "diverged": "tab:purple"}
DISTRIBUTIONS = ("path_length", "time", "mean_speed", "jerk", "curvature",
                 "angle_over_length")


def _pyplot():
    try:
        import matplotlib
    except ImportError as exc:
        raise ImportError(INSTALL_HINT) from exc
    matplotlib.use("Agg")  # files only: no display needed
    import matplotlib.pyplot as plt

    return plt


def trajectories(path: Path, stage: str, layout: Any, records: list[dict[str, Any]]) -> Path:
    """Each episode's path over the stage's world (walls of its room or occupancy map),
    coloured by result, starts as circles and goals as crosses. The per-episode obstacles
    are not drawn (they move between episodes)."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(5.5, 5.5))
    _world(plt, ax, layout)
    for r in records:
        xy = np.asarray(r["trajectory"])[:, :2]
        colour = COLOURS.get(r["result"], "gray")
        ax.plot(xy[:, 0], xy[:, 1], color=colour, lw=1, alpha=0.8)
        ax.plot(*xy[0], "o", color=colour, ms=3)
        ax.plot(r["goal_x"], r["goal_y"], "x", color=colour, ms=5)
    for result, colour in COLOURS.items():
        if any(r["result"] == result for r in records):
            ax.plot([], [], color=colour, label=result)
    ax.legend(loc="upper right", fontsize=8)
    ax.set_aspect("equal")
    ax.set_title(f"{stage}: {len(records)} episodes")
    ax.set_xlabel("x (m)")
    ax.set_ylabel("y (m)")
    return _save(plt, fig, path)


def _world(plt: Any, ax: Any, layout: Any) -> None:
    """The walls of the layout's occupancy map (unknown cells light grey), or its room."""
    grid = getattr(layout, "map", None)
    if grid is not None:
        h, w = grid.shape
        x0, y0, _ = grid.origin
        image = np.where(grid.occupied, 0.0, np.where(grid.free, 1.0, 0.8))
        ax.imshow(image, cmap="gray", vmin=0, vmax=1, origin="upper",
                  extent=(x0, x0 + w * grid.resolution, y0, y0 + h * grid.resolution))
    else:
        lo, hi = layout.bounds()
        ax.add_patch(plt.Rectangle(lo, *(hi - lo), fill=False, lw=2, color="black"))
        ax.set_xlim(lo[0] - 0.5, hi[0] + 0.5)
        ax.set_ylim(lo[1] - 0.5, hi[1] + 0.5)


def episode(path: Path, layout: Any, record: dict[str, Any], title: str) -> Path:
    """One episode over its world, zoomed to it: the driven trajectory coloured by result,
    the start (circle) and goal (cross), and where the task planned one the global path
    (dashed) and the subgoal of every step (dots)."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6, 6))
    _world(plt, ax, layout)
    xy = np.asarray(record["trajectory"])[:, :2]
    colour = COLOURS.get(str(record["result"]), "gray")
    shown = [xy, np.asarray(record["goal"]).reshape(1, 2)]
    if "global_path" in record:
        planned = np.asarray(record["global_path"])
        subgoals = np.asarray(record["subgoals"])
        ax.plot(planned[:, 0], planned[:, 1], "--", color="tab:blue", lw=1.2,
                label=f"global path {record['planned_length']:.1f} m")
        ax.plot(subgoals[:, 0], subgoals[:, 1], ".", color="tab:cyan", ms=2, label="subgoals")
        shown += [planned, subgoals]
    ax.plot(xy[:, 0], xy[:, 1], color=colour, lw=1.5, label=f"driven: {record['result']}")
    ax.plot(*xy[0], "o", color=colour, ms=5)
    ax.plot(*np.asarray(record["goal"]), "x", color=colour, ms=8, mew=2)
    points = np.concatenate(shown)
    lo, hi = points.min(axis=0) - 1.5, points.max(axis=0) + 1.5
    side = float((hi - lo).max())
    mid = (lo + hi) / 2
    ax.set_xlim(mid[0] - side / 2, mid[0] + side / 2)
    ax.set_ylim(mid[1] - side / 2, mid[1] + side / 2)
    ax.legend(loc="upper right", fontsize=8)
    ax.set_aspect("equal")
    ax.set_title(title)
    ax.set_xlabel("x (m)")
    ax.set_ylabel("y (m)")
    return _save(plt, fig, path)


def success_rates(path: Path, runs: list[tuple[str, dict[str, Any]]]) -> Path:
    """Grouped bars: success rate per stage for each (policy label, stage summaries),
    with 95% Wilson intervals as error bars."""
    plt = _pyplot()
    stages = list(dict.fromkeys(s for _, summary in runs for s in summary))
    fig, ax = plt.subplots(figsize=(max(4.0, 1.4 * len(stages) * len(runs)), 3.5))
    width = 0.8 / len(runs)
    x = np.arange(len(stages))
    for i, (label, summary) in enumerate(runs):
        rate = np.array([summary[s]["goal"]["rate"] if s in summary else np.nan
                         for s in stages])
        lo = np.array([summary[s]["goal"]["ci_low"] if s in summary else np.nan
                       for s in stages])
        hi = np.array([summary[s]["goal"]["ci_high"] if s in summary else np.nan
                       for s in stages])
        ax.bar(x + (i - (len(runs) - 1) / 2) * width, rate, width, label=label,
               yerr=np.vstack([rate - lo, hi - rate]), capsize=3)
    ax.set_xticks(x, stages, rotation=20, ha="right")
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("success rate (95% Wilson CI)")
    ax.legend(fontsize=8)
    return _save(plt, fig, path)


def distributions(path: Path, records: list[dict[str, Any]], stages: list[str]) -> Path:
    """Box plots of the main metrics per stage, over all episodes."""
    plt = _pyplot()
    fig, axes = plt.subplots(2, 3, figsize=(12, 6.5))
    for ax, key in zip(axes.flat, DISTRIBUTIONS, strict=True):
        data = [[r[key] for r in records if r["stage"] == s] for s in stages]
        ax.boxplot(data, tick_labels=stages)
        ax.set_title(key)
        ax.tick_params(axis="x", labelrotation=20)
    fig.tight_layout()
    return _save(plt, fig, path)


def _save(plt: Any, fig: Any, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=90, bbox_inches="tight")
    plt.close(fig)
    return path
