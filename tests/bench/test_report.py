"""Reports: their numbers are the records', intervals are Wilson's, plots are written."""

from __future__ import annotations

import csv
import re
from collections import defaultdict

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arena_gym.bench.stats import wilson
from arena_gym.bench.suite import load_suite
from arena_gym.cli import main
from arena_gym.tasks.metrics import METRICS
from tests.bench.suites import tiny_suite


@pytest.mark.parametrize(("k", "n", "low", "high"), [
    (19, 20, 0.7639, 0.9911), (0, 20, 0.0, 0.1611), (20, 20, 0.8389, 1.0), (5, 10, 0.2366, 0.7634)])
def test_wilson_interval_matches_published_values(k, n, low, high):
    lo, hi = wilson(k, n)
    assert lo == pytest.approx(low, abs=5e-5) and hi == pytest.approx(high, abs=5e-5)


@given(st.integers(1, 10_000).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_the_wilson_interval_holds_the_rate(counts):
    # at 10 of 10 the upper end was 0.9999999999999999: the report's error bar went negative
    k, n = counts
    lo, hi = wilson(k, n)
    assert 0.0 <= lo <= k / n <= hi <= 1.0


def _table(markdown: str, title: str) -> list[list[str]]:
    section = markdown.split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]
    rows = [line.strip("|").split(" | ") for line in section.strip().splitlines()
            if line.startswith("| ")]
    return [[cell.strip() for cell in row] for row in rows[1:]]  # without the header


def test_report_numbers_equal_the_records(tmp_path, capsys):
    suite_file = tiny_suite(tmp_path)
    out = tmp_path / "run"
    assert main(["bench", str(suite_file), "--policy", "reactive", "--out", str(out),
                 "--no-progress"]) == 0
    assert "## Results" in capsys.readouterr().out
    with open(out / "records.csv", newline="") as f:
        by_stage: dict[str, list[dict]] = defaultdict(list)
        for row in csv.DictReader(f):
            by_stage[row["stage"]].append(row)
    report = (out / "report.md").read_text()
    results, metrics = _table(report, "Results"), _table(report, "Metrics")
    assert [r[0] for r in results] == [s.name for s in load_suite(suite_file).stages]
    for row, metric_row in zip(results, metrics, strict=True):
        rows = by_stage[row[0]]
        assert row[1] == str(len(rows))
        for cell, result in zip(row[2:5], ("goal", "collision", "timeout"), strict=True):
            k = sum(r["result"] == result for r in rows)
            lo, hi = wilson(k, len(rows))
            assert cell == f"{100 * k / len(rows):.1f}% [{100 * lo:.1f}, {100 * hi:.1f}]"
        goals = [r for r in rows if r["result"] == "goal"]
        expected = (f"{sum(float(r['time']) for r in goals) / len(goals):.3f}" if goals else "-")
        assert row[5] == expected
        for cell, key in zip(metric_row[1:], METRICS, strict=True):
            assert cell == f"{sum(float(r[key]) for r in rows) / len(rows):.3f}", key
    people = _table(report, "Pedestrians")
    assert [r[0] for r in people] == ["people"]  # the stage with walking people only
    rows = by_stage["people"]
    k = sum(int(r["pedestrian_collisions"]) > 0 for r in rows)
    lo, hi = wilson(k, len(rows))
    assert people[0][2] == f"{100 * k / len(rows):.1f}% [{100 * lo:.1f}, {100 * hi:.1f}]"
    for cell, key in zip(people[0][3:], ("time_in_personal_space", "speed_in_personal_space",
                                         "min_pedestrian_distance"), strict=True):
        values = [float(r[key]) for r in rows if r[key] != ""]
        assert cell == f"{sum(values) / len(values):.3f}", key
    assert all(r["pedestrian_collisions"] == "" for r in by_stage["empty"])
    html = (out / "report.html").read_text()
    assert all(f"<td>{cell}</td>" in html for cell in results[0])
    for name in ("success", "distributions", "trajectories_empty", "trajectories_people"):
        assert (out / "plots" / f"{name}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert f"plots/{name}.png" in report


def test_compare_puts_two_runs_side_by_side(tmp_path, capsys):
    suite_file = str(tiny_suite(tmp_path))
    for policy in ("reactive", "random"):
        assert main(["bench", suite_file, "--policy", policy, "--out", str(tmp_path / policy),
                     "--no-progress", "--episodes", "2"]) == 0
    capsys.readouterr()
    assert main(["bench", "compare", str(tmp_path / "reactive"), str(tmp_path / "random"),
                 "--out", str(tmp_path / "cmp")]) == 0
    printed = capsys.readouterr().out
    assert "| stage | episodes | success reactive | success random |" in printed
    summary = (tmp_path / "reactive" / "report.md").read_text()
    reactive_empty = _table(summary, "Results")[0][2]
    assert re.search(rf"\| empty \| 2 / 2 \| {re.escape(reactive_empty)} \| ", printed)
    assert (tmp_path / "cmp" / "plots" / "success_compare.png").is_file()


def test_bench_usage_errors_are_one_line(tmp_path, capsys):
    assert main(["bench", "compare", str(tmp_path)]) == 2
    assert capsys.readouterr().err.strip() == (
        f"arena-gym: error: bench compare: expected two run folders, got ['{tmp_path}']")
    assert main(["bench", "default"]) == 2
    assert "expected --policy" in capsys.readouterr().err
    assert main(["bench", "compare", str(tmp_path), str(tmp_path)]) == 2
    assert capsys.readouterr().err.strip() == (
        f"arena-gym: error: {tmp_path}: expected a benchmark run folder with summary.json, "
        "got none")


def test_plots_without_matplotlib_say_how_to_install_it(monkeypatch, tmp_path):
    import sys

    from arena_gym.bench import plots

    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if not installed
    with pytest.raises(ImportError, match=re.escape(
            "benchmark plots need matplotlib: pip install 'arena_gym[bench]'")):
        plots.success_rates(tmp_path / "s.png", [("a", {})])
    assert not (tmp_path / "s.png").exists()


ONE_STAGE = """\
name: {name}
seed: 7
envs: 1
stages:
  - name: empty
    obstacles: [0, 0]
    episodes: 1
    time_limit: 3
"""


def test_compare_refuses_runs_of_different_suites_and_names_bad_run_files(tmp_path, capsys):
    runs = {}
    for name in ("tiny", "other"):
        suite = tmp_path / f"{name}.yaml"
        suite.write_text(ONE_STAGE.format(name=name), encoding="utf-8")
        runs[name] = tmp_path / name
        assert main(["bench", str(suite), "--policy", "reactive", "--out", str(runs[name]),
                     "--no-progress"]) == 0
    capsys.readouterr()
    tiny, other = runs["tiny"], runs["other"]
    assert main(["bench", "compare", str(tiny), str(other)]) == 2  # both have a stage "empty"
    assert capsys.readouterr().err == (
        f"arena-gym: error: compare: expected two runs of one suite, got {tiny} (suite 'tiny') "
        f"and {other} (suite 'other')\n")
    assert not list(tiny.glob("compare-*"))

    summary = other / "summary.json"
    summary.write_text(summary.read_text()[:40])  # cut short by a full disk
    assert main(["bench", "compare", str(tiny), str(other)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"arena-gym: error: {summary}: expected the JSON summary.json of a "
                          "benchmark run, got JSONDecodeError: ")
    summary.write_text('{"suite": "tiny", "stages": {}}')
    assert main(["bench", "compare", str(tiny), str(other)]) == 2
    assert capsys.readouterr().err == (
        f"arena-gym: error: {summary}: expected the summary of a benchmark run (suite, policy, "
        "seed, stages), got keys ['stages', 'suite']\n")
    file = tmp_path / "tiny.yaml"
    assert main(["bench", "compare", str(tiny), str(file)]) == 2
    assert capsys.readouterr().err == (
        f"arena-gym: error: {file}: expected a benchmark run folder, got a file\n")
