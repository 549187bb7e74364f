"""`arena-gym bench compare A B`: two run folders side by side, stage by stage."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from arena_gym.bench.records import read_run
from arena_gym.bench.report import RATE_KEYS, RATE_NAMES, Block, number, rate_cell, write_blocks
from arena_gym.tasks.metrics import METRICS


def compare(a: str | Path, b: str | Path, out: str | Path | None = None) -> Path:
    """Write compare.md, compare.html and plots/success_compare.png to `out` (default:
    A/compare-<B's folder name>): the stages both runs share, A's numbers beside B's."""
    from arena_gym.bench import plots

    sa, sb = read_summary(a), read_summary(b)
    if sa["suite"] != sb["suite"]:
        raise ValueError(f"compare: expected two runs of one suite, got {a} (suite "
                         f"{sa['suite']!r}) and {b} (suite {sb['suite']!r})")
    la, lb = _labels(sa, sb, Path(a), Path(b))
    shared = [s for s in sa["stages"] if s in sb["stages"]]
    if not shared:
        raise ValueError(f"compare: expected runs with stages in common, got "
                         f"{list(sa['stages'])} and {list(sb['stages'])}")
    out = Path(out) if out else Path(a) / f"compare-{Path(b).resolve().name}"
    out.mkdir(parents=True, exist_ok=True)
    header = ["stage", "episodes"]
    for key in RATE_KEYS:
        header += [f"{RATE_NAMES[key]} {la}", f"{RATE_NAMES[key]} {lb}"]
    rows = []
    for s in shared:
        x, y = sa["stages"][s], sb["stages"][s]
        row = [s, f"{x['episodes']} / {y['episodes']}"]
        for key in RATE_KEYS:
            row += [rate_cell(x[key]), rate_cell(y[key])]
        rows.append(row)
    metric_rows = [[s, *(f"{number(sa['stages'][s]['means'][k])} / "
                         f"{number(sb['stages'][s]['means'][k])}" for k in METRICS)]
                   for s in shared]
    plots.success_rates(out / "plots" / "success_compare.png",
                        [(la, {s: sa["stages"][s] for s in shared}),
                         (lb, {s: sb["stages"][s] for s in shared})])
    blocks: list[Block] = [
        ("h1", f"{la} vs {lb}"),
        ("p", f"A: {Path(a)} (suite {sa['suite']}, seed {sa['seed']}); "
              f"B: {Path(b)} (suite {sb['suite']}, seed {sb['seed']}). "
              "Rates with 95% Wilson intervals; metric means as A / B."),
        ("h2", "Results"), ("table", header, rows),
        ("h2", "Metrics (A / B)"), ("table", ["stage", *METRICS], metric_rows),
        ("img", "plots/success_compare.png", "success rate per stage and policy"),
    ]
    write_blocks(out, "compare", blocks)
    return out


def read_summary(run: str | Path) -> dict[str, Any]:
    """A run's summary.json, checked for what a comparison reads (a ValueError naming the
    file otherwise)."""
    data = read_run(run, "summary.json")
    problem = None
    if not isinstance(data, dict) or not {"suite", "policy", "seed", "stages"} <= set(data):
        problem = (f"keys {sorted(data)}" if isinstance(data, dict)
                   else f"a JSON {type(data).__name__}")
    elif not isinstance(data["stages"], dict) or not all(
            _stage_ok(stage) for stage in data["stages"].values()):
        problem = "stages without their rates and means"
    if problem:
        raise ValueError(f"{Path(run) / 'summary.json'}: expected the summary of a benchmark "
                         f"run (suite, policy, seed, stages), got {problem}")
    return data


def _stage_ok(stage: Any) -> bool:
    """Whether a summary's stage holds its episodes, rates and metric means."""
    if not isinstance(stage, dict) or not {"episodes", "means", *RATE_KEYS} <= set(stage):
        return False
    rates = all(isinstance(stage[k], dict) and {"rate", "ci_low", "ci_high"} <= set(stage[k])
                for k in RATE_KEYS)
    return rates and isinstance(stage["means"], dict) and set(METRICS) <= set(stage["means"])


def _labels(sa: dict[str, Any], sb: dict[str, Any], a: Path, b: Path) -> tuple[str, str]:
    """The policies' names, or the folders' where both runs used the same policy."""
    if sa["policy"] != sb["policy"]:
        return sa["policy"], sb["policy"]
    return a.resolve().name, b.resolve().name
