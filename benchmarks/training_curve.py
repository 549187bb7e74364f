"""Wall time and env steps until a training run's deterministic evaluations reach 80% and
90% success, and its learning curve plotted, from the curve.csv `arena-gym train` writes.

    python benchmarks/training_curve.py [CURVE.csv] [--plot curve.png] [--json out.json]
    python benchmarks/training_curve.py --train 15 [--config NAME] [--out DIR] [--plot ...]

The default reads benchmarks/results/ppo_reference_curve.csv (the reference PPO run).
`--train MINUTES` first runs that training (PPO, `arena-gym train`'s defaults, on the
default world or `--config`) into --out, alone on the machine for a fair figure, and reads
the curve it wrote.
"""

from __future__ import annotations

import argparse
import csv
import json
from pathlib import Path

THRESHOLDS = (0.8, 0.9)
DEFAULT = Path(__file__).resolve().parent / "results" / "ppo_reference_curve.csv"


def first_reaching(rows: list[dict[str, float]], threshold: float) -> dict[str, float] | None:
    """The first evaluation at or above `threshold` success: its wall seconds and env steps."""
    for r in rows:
        if r["eval_success"] >= threshold:
            return {"wall_s": r["wall_s"], "env_steps": r["env_steps"],
                    "eval_success": r["eval_success"]}
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("curve", nargs="?", default=str(DEFAULT))
    parser.add_argument("--plot", default=None, help="write the learning curve as PNG")
    parser.add_argument("--json", default=None, help="write the figures as JSON")
    parser.add_argument("--train", type=float, default=None, metavar="MINUTES",
                        help="run a training of this wall-time budget first, and read its curve")
    parser.add_argument("--config", default=None, help="env config for --train (a file or "
                        "a built-in name: default, staged, pedestrians)")
    parser.add_argument("--out", default="runs/training-benchmark", help="run folder of --train")
    args = parser.parse_args()
    if args.train is not None:
        from arena_gym.train.training import TrainSettings, train

        run = train(TrainSettings(minutes=args.train, out=args.out, progress_bar=False),
                    {"config": args.config} if args.config else {})
        args.curve = str(run / "curve.csv")
    with open(args.curve, newline="", encoding="utf-8") as f:
        rows = [{k: float(v) for k, v in r.items()} for r in csv.DictReader(f)]
    reached = {f"{int(100 * t)}%": first_reaching(rows, t) for t in THRESHOLDS}
    for label, hit in reached.items():
        if hit is None:
            print(f"{label}: not reached in {rows[-1]['wall_s']:.0f} s "
                  f"({rows[-1]['env_steps']:,.0f} env steps)")
        else:
            print(f"{label}: {hit['wall_s'] / 60:.1f} min, {hit['env_steps']:,.0f} env steps "
                  f"(evaluation success {hit['eval_success']:.0%})")
    if args.json:
        Path(args.json).write_text(json.dumps({"curve": args.curve, "reached": reached},
                                              indent=1) + "\n", encoding="utf-8")
    if args.plot:
        try:
            import matplotlib
        except ImportError as exc:
            raise SystemExit("plotting needs matplotlib: pip install 'arena_gym[bench]'") from exc
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(6, 3.5))
        minutes = [r["wall_s"] / 60 for r in rows]
        ax.plot(minutes, [r["eval_success"] for r in rows], "o-", label="evaluation success")
        ax.plot(minutes, [r["train_success"] for r in rows], "--", label="training success")
        for t in THRESHOLDS:
            ax.axhline(t, color="gray", lw=0.5)
        ax.set_xlabel("wall time (min)")
        ax.set_ylabel("success rate")
        ax.set_ylim(0, 1.02)
        ax.legend()
        fig.savefig(args.plot, dpi=90, bbox_inches="tight")
        print(f"plot: {args.plot}")


if __name__ == "__main__":
    main()
