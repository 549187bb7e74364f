"""The training benchmark: `arena-gym train` for K seeds, one after another, and per seed and
as the median the wall minutes and env steps until deterministic evaluation success first
reaches 80, 90 and 95 %, and the final rate; a CSV and a plot of every seed's curve.

    python benchmarks/training.py --seeds 3 --minutes 5 --out runs/training-bench
    python benchmarks/training.py --seeds 3 --minutes 5 -- --num-envs 48 --set reward.goal=15
    python benchmarks/training.py --curves runs/a/curve.csv runs/b/curve.csv   # read only
    ARENA_GYM_ASSETS=../shared/assets python benchmarks/training.py --seeds 2 --minutes 10 \
        --maps experiment_rooms hospital evaluation_floor --out runs/maps-bench -- \
        --config maps --eval-every 300 --eval-episodes 40 --prior reactive --log-std-init -1 \
        --learning-rate 3e-4

Everything after `--` goes to `arena-gym train` unchanged (the recipe under test). Each
seed runs alone (the machine's cores are the training's); run it on a quiet machine, for
minutes to a threshold are wall minutes. Writes OUT/summary.csv (one row per seed and a
median row) and OUT/curves.png; a seed that never reached a threshold counts as infinitely
far from it in the median.

With `--maps`, each seed's best model and the reactive follower are then evaluated on each
named map of ARENA_GYM_ASSETS/worlds under the README's maps protocol (`arena-gym eval
--config maps`, MAP_EPISODES episodes, starts and goals at least 5 m apart along the path, no
length cap, 6000 steps at most; seed 0): OUT/maps.csv, one row per policy and map, and the
median over seeds beside the follower's rate. `--reuse` keeps a seed's finished run.
"""

from __future__ import annotations

import argparse
import csv
import math
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path

THRESHOLDS = (0.8, 0.9, 0.95)


def read_curve(path: Path) -> list[dict[str, float]]:
    """The rows of a run's curve.csv, as numbers."""
    with open(path, newline="", encoding="utf-8") as f:
        return [{k: float(v) for k, v in row.items()} for row in csv.DictReader(f)]


def first_reaching(rows: list[dict[str, float]], threshold: float) -> dict[str, float] | None:
    """The first evaluation at or above `threshold` success: its wall seconds and env steps."""
    for row in rows:
        if row["eval_success"] >= threshold:
            return row
    return None


def summarise(name: str, rows: list[dict[str, float]]) -> dict[str, object]:
    """One summary row: minutes and env steps to each threshold ('' if never), final rate."""
    out: dict[str, object] = {"run": name}
    for t in THRESHOLDS:
        hit = first_reaching(rows, t)
        key = int(round(100 * t))
        out[f"min_to_{key}"] = "" if hit is None else round(hit["wall_s"] / 60, 2)
        out[f"steps_to_{key}"] = "" if hit is None else int(hit["env_steps"])
    out["final_success"] = rows[-1]["eval_success"] if rows else ""
    out["best_success"] = max((r["eval_success"] for r in rows), default="")
    out["minutes"] = round(rows[-1]["wall_s"] / 60, 2) if rows else ""
    return out


def median_row(rows: list[dict[str, object]]) -> dict[str, object]:
    """The median of each column; a threshold a seed never reached counts as infinitely far
    (so the median is '' when most seeds missed it), and 'k/n' says how many reached it."""
    out: dict[str, object] = {"run": "median"}
    for key in rows[0]:
        if key == "run":
            continue
        far = key.startswith(("min_to_", "steps_to_"))
        values = [r[key] if r[key] != "" else math.inf for r in rows if far or r[key] != ""]
        value = statistics.median(values) if values else ""
        out[key] = "" if value == math.inf else value
        if key.startswith("min_to_"):
            reached = sum(r[key] != "" for r in rows)
            out[key.replace("min_to_", "reached_")] = f"{reached}/{len(rows)}"
    return out


def train(seed: int, minutes: float, out: Path, extra: list[str], reuse: bool = False) -> Path:
    """One training run (its own process, as a user runs it); its curve.csv."""
    folder = out / f"seed_{seed}"
    if reuse and (folder / "final_model.zip").is_file():
        print(f"reusing {folder}", flush=True)
        return folder / "curve.csv"
    command = [sys.executable, "-m", "arena_gym.cli", "train", "--minutes", str(minutes),
               "--seed", str(seed), "--out", str(folder), "--overwrite", "--no-progress",
               *extra]
    print("$", " ".join(command[2:]), flush=True)
    subprocess.run(command, check=True)
    return folder / "curve.csv"


# the README's maps protocol: paths of at least 5 m, no cap on length, time to drive them
MAP_PROTOCOL = ("--set", "paths.min_length=5", "--set", "paths.max_length=0",
                "--set", "max_episode_steps=6000")
RATES = re.compile(r"success ([\d.]+)%, collision ([\d.]+)%, timeout ([\d.]+)%")


def evaluate_on_map(policy: str, world: str, episodes: int) -> dict[str, float]:
    """`arena-gym eval POLICY --config maps` on one map of the shared assets, as the README
    runs it: its success, collision and timeout rates."""
    assets = os.environ.get("ARENA_GYM_ASSETS")
    if not assets:
        raise SystemExit("--maps: set ARENA_GYM_ASSETS to the shared assets folder")
    command = [sys.executable, "-m", "arena_gym.cli", "eval", policy, "--config", "maps",
               "--episodes", str(episodes), "--seed", "0", *MAP_PROTOCOL,
               "--set", f"worlds=[{Path(assets) / 'worlds' / world / 'map' / 'map.yaml'}]"]
    done = subprocess.run(command, check=True, capture_output=True, text=True)
    line = done.stdout.strip().splitlines()[-1]
    print(f"{world}: {line}", flush=True)
    found = RATES.search(line)
    if found is None:
        raise SystemExit(f"eval printed no rates: {line!r}")
    return dict(zip(("success", "collision", "timeout"),
                    (float(v) / 100 for v in found.groups()), strict=True))


def maps_table(models: dict[str, Path], maps: list[str], episodes: int,
               out: Path) -> list[dict[str, object]]:
    """Every seed's best model and the reactive follower on each map; OUT/maps.csv."""
    rows: list[dict[str, object]] = []
    for name, model in {**{k: str(v) for k, v in models.items()}, "reactive": "reactive"}.items():
        for world in maps:
            rows.append({"policy": name, "map": world,
                         **evaluate_on_map(str(model), world, episodes)})
    for world in maps:
        learned = [r["success"] for r in rows if r["map"] == world and r["policy"] != "reactive"]
        rows.append({"policy": "median", "map": world, "success": statistics.median(learned),
                     "collision": "", "timeout": ""})
    with open(out / "maps.csv", "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=["policy", "map", "success", "collision",
                                               "timeout"])
        writer.writeheader()
        writer.writerows(rows)
    for world in maps:
        of = {r["policy"]: r["success"] for r in rows if r["map"] == world}
        seeds = "  ".join(f"{k} {v:.0%}" for k, v in of.items()
                          if k not in ("median", "reactive"))
        print(f"{world:>18}: {seeds}  median {of['median']:.0%}  reactive {of['reactive']:.0%}",
              flush=True)
    return rows


def plot(curves: dict[str, list[dict[str, float]]], path: Path) -> None:
    try:
        import matplotlib
    except ImportError as exc:
        raise SystemExit("plotting needs matplotlib: pip install 'arena_gym[bench]'") from exc
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.5))
    for name, rows in curves.items():
        ax.plot([r["wall_s"] / 60 for r in rows], [r["eval_success"] for r in rows], "o-",
                ms=3, label=name)
    for t in THRESHOLDS:
        ax.axhline(t, color="gray", lw=0.5)
    ax.set_xlabel("wall time (min)")
    ax.set_ylabel("evaluation success")
    ax.set_ylim(0, 1.02)
    ax.legend(fontsize=7)
    fig.savefig(path, dpi=90, bbox_inches="tight")


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    extra: list[str] = []
    if "--" in argv:
        cut = argv.index("--")
        argv, extra = argv[:cut], argv[cut + 1:]
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3, help="seeds 0 .. K-1 (default 3)")
    parser.add_argument("--minutes", type=float, default=5.0, help="budget per seed")
    parser.add_argument("--out", default="runs/training-bench")
    parser.add_argument("--curves", nargs="+", default=None,
                        help="read these curve.csv files instead of training")
    parser.add_argument("--maps", nargs="+", default=None, metavar="MAP",
                        help="evaluate each seed's best model and the reactive follower on "
                        "these maps of ARENA_GYM_ASSETS/worlds (the README's maps protocol)")
    parser.add_argument("--map-episodes", type=int, default=50)
    parser.add_argument("--reuse", action="store_true",
                        help="keep a seed's finished run in OUT instead of training again")
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.curves:
        paths = {c: Path(c) for c in args.curves}
    else:
        paths = {f"seed {s}": train(s, args.minutes, out, extra, args.reuse)
                 for s in range(args.seeds)}
    curves = {name: read_curve(p) for name, p in paths.items()}
    rows = [summarise(name, r) for name, r in curves.items()]
    rows.append(median_row(rows))
    keys = list(rows[-1])
    with open(out / "summary.csv", "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=keys)
        writer.writeheader()
        writer.writerows(rows)
    for row in rows:
        print("  ".join(f"{k}={row.get(k, '')}" for k in keys), flush=True)
    plot(curves, out / "curves.png")
    print(f"wrote {out / 'summary.csv'} and {out / 'curves.png'}")
    if args.maps:
        models = {name: path.parent / "best_model.zip" for name, path in paths.items()}
        maps_table(models, args.maps, args.map_episodes, out)
        print(f"wrote {out / 'maps.csv'}")


if __name__ == "__main__":
    main()
