"""report.md and report.html of a benchmark run, written from one list of blocks: per-stage
tables of result rates (95% Wilson intervals) and metric means, and the plots."""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

from arena_gym.bench.suite import Suite, stage_config
from arena_gym.tasks.metrics import METRICS

Block = tuple  # ("h1"|"h2"|"p", text) | ("table", header, rows) | ("img", file, alt)

RATE_KEYS = ("goal", "collision", "timeout")
RATE_NAMES = {"goal": "success", "collision": "collision", "timeout": "timeout"}


def rate_cell(entry: dict[str, Any]) -> str:
    """'85.0% [64.0, 94.8]': the rate and its 95% Wilson interval, in percent."""
    return (f"{100 * entry['rate']:.1f}% [{100 * entry['ci_low']:.1f}, "
            f"{100 * entry['ci_high']:.1f}]")


def number(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def results_table(stages: dict[str, Any], label: str = "") -> Block:
    header = ["stage", "episodes", *(f"{label}{RATE_NAMES[k]}" for k in RATE_KEYS),
              "time to goal (s)", "path to goal (m)"]
    rows = [[name, str(s["episodes"]), *(rate_cell(s[k]) for k in RATE_KEYS),
             number(s["time_to_goal"]), number(s["path_length_to_goal"])]
            for name, s in stages.items()]
    return ("table", header, rows)


def metrics_table(stages: dict[str, Any]) -> Block:
    header = ["stage", *METRICS]
    rows = [[name, *(number(s["means"][k]) for k in METRICS)] for name, s in stages.items()]
    return ("table", header, rows)


def pedestrians_table(stages: dict[str, Any]) -> Block | None:
    """Stages with people: pedestrian collision rate and the social metrics' means."""
    rows = [[name, str(s["episodes"]), rate_cell(s["social"]["pedestrian_collision"]),
             number(s["social"]["time_in_personal_space"]),
             number(s["social"]["speed_in_personal_space"]),
             number(s["social"]["min_pedestrian_distance"])]
            for name, s in stages.items() if s.get("social")]
    header = ["stage", "episodes", "pedestrian collision", "time in personal space (s)",
              "speed in personal space (m/s)", "min distance (m)"]
    return ("table", header, rows) if rows else None


def write_report(out: Path, suite: Suite, summary: dict[str, Any],
                 records: list[dict[str, Any]]) -> None:
    """report.md, report.html and plots/ in the run folder `out`."""
    from arena_gym.bench import plots
    from arena_gym.worlds.layouts import make_layout

    stages = summary["stages"]
    seconds = sum(t["seconds"] for t in summary["timing"].values())
    blocks: list[Block] = [
        ("h1", f"Benchmark {summary['suite']}: {summary['policy']}"),
        ("p", f"Suite {_where(summary['suite_path'])}, seed {summary['seed']}, "
              f"{summary['envs']} envs, "
              f"{sum(s['episodes'] for s in stages.values())} episodes in {seconds:.1f} s. "
              "Rates with 95% Wilson intervals; metrics are means over all episodes "
              "(arena_gym.tasks.metrics), time and path to goal over the successful ones."),
        *_partial(suite, summary),
        ("h2", "Results"), results_table(stages),
        ("h2", "Metrics"), metrics_table(stages),
    ]
    people = pedestrians_table(stages)
    if people:
        blocks += [("h2", "Pedestrians"),
                   ("p", "Personal space: reward.pedestrian_safety_m (1 m, Arena's), centre "
                         "to centre; means over the episodes with people."), people]
    blocks.append(("h2", "Plots"))
    plots.success_rates(out / "plots" / "success.png", [(summary["policy"], stages)])
    blocks.append(("img", "plots/success.png", "success rate per stage"))
    names = list(stages)
    plots.distributions(out / "plots" / "distributions.png", records, names)
    blocks.append(("img", "plots/distributions.png", "metric distributions per stage"))
    for stage in suite.stages:
        if stage.name not in stages:  # a run that stopped before it
            continue
        cfg = stage_config(suite, stage)[2]
        layout = make_layout(cfg.world, cfg.scenario, cfg.room_size)
        file = f"plots/trajectories_{stage.name}.png"
        plots.trajectories(out / file, stage.name, layout,
                           [r for r in records if r["stage"] == stage.name])
        blocks.append(("img", file, f"trajectories of stage {stage.name}"))
    videos = sorted((out / "videos").rglob("*.mp4")) if (out / "videos").is_dir() else []
    if videos:
        blocks.append(("h2", "Videos"))
        blocks += [("p", f"[{v.name}]({v.relative_to(out).as_posix()})") for v in videos]
    write_blocks(out, "report", blocks)


def _partial(suite: Suite, summary: dict[str, Any]) -> list[Block]:
    """A run that stopped early says so first: what stopped it, what ran."""
    if summary.get("complete", True):
        return []
    done = sum(s["episodes"] for s in summary["stages"].values())
    total = sum(s.episodes for s in suite.stages)
    missing = [s.name for s in suite.stages if s.name not in summary["stages"]]
    text = (f"Partial run: stopped by {summary['stopped']} after {done} of {total} episodes. "
            "A stage's numbers cover the episodes that ended (in a stage cut short, the "
            "short ones: collisions end sooner than timeouts)")
    text += f"; not run: {', '.join(missing)}." if missing else "."
    return [("p", text)]


def _where(path: str) -> str:
    """A built-in suite by its name, another by its path."""
    from arena_gym.bench.suite import BUILTIN_SUITES

    file = Path(path).resolve()
    return f"{file.stem} (built-in)" if file.parent == BUILTIN_SUITES else path


def write_blocks(out: Path, stem: str, blocks: list[Block]) -> None:
    (out / f"{stem}.md").write_text(to_markdown(blocks), encoding="utf-8")
    (out / f"{stem}.html").write_text(to_html(blocks), encoding="utf-8")


def to_markdown(blocks: list[Block]) -> str:
    lines: list[str] = []
    for block in blocks:
        kind = block[0]
        if kind in ("h1", "h2"):
            lines += ["#" * int(kind[1]) + " " + block[1], ""]
        elif kind == "p":
            lines += [block[1], ""]
        elif kind == "table":
            header, rows = block[1], block[2]
            lines.append("| " + " | ".join(header) + " |")
            lines.append("|" + "---|" * len(header))
            lines += ["| " + " | ".join(row) + " |" for row in rows]
            lines.append("")
        elif kind == "img":
            lines += [f"![{block[2]}]({block[1]})", ""]
    return "\n".join(lines)


def to_html(blocks: list[Block]) -> str:
    body: list[str] = []
    for block in blocks:
        kind = block[0]
        if kind in ("h1", "h2", "p"):
            text = html.escape(block[1])
            if kind == "p" and block[1].startswith("[") and "](" in block[1]:
                name, href = block[1][1:-1].split("](")
                text = f'<a href="{html.escape(href)}">{html.escape(name)}</a>'
            body.append(f"<{kind}>{text}</{kind}>")
        elif kind == "table":
            head = "".join(f"<th>{html.escape(h)}</th>" for h in block[1])
            rows = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row)
                           + "</tr>" for row in block[2])
            body.append(f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>")
        elif kind == "img":
            body.append(f'<p><img src="{html.escape(block[1])}" alt="{html.escape(block[2])}">'
                        "</p>")
    style = ("body{font-family:sans-serif;max-width:1200px;margin:2em auto}"
             "table{border-collapse:collapse;margin:1em 0}"
             "td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}"
             "img{max-width:100%}")
    title = html.escape(next((b[1] for b in blocks if b[0] == "h1"), "report"))
    return (f"<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>{title}</title>"
            f"<style>{style}</style></head><body>\n" + "\n".join(body) + "\n</body></html>\n")
