"""Running a suite: every stage in the batched env, episodes through evaluation's one loop.

    from arena_gym.bench.runner import run_suite
    from arena_gym.bench.suite import load_suite
    out = run_suite(load_suite("default"), "reactive", "runs/bench/reactive", envs=8)

Stage i's episode k is seeded `suite.seed + 1000 i + k`, whichever env runs it, so records
do not depend on `envs` (for policies that act on each env's observation alone: the reactive
baseline, a model; the random baseline draws for the whole batch at once). Writes to `out`
(a folder that holds no other run: see run_suite): records.csv and records.json (one record
per episode, see arena_gym.bench.records), summary.json (per-stage rates with Wilson
intervals and metric means), report.md and report.html with plots (arena_gym.bench.report),
and with `video` K > 0, K episodes per stage as MP4 under videos/STAGE/ (the same seeds,
replayed in one env).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from arena_gym.bench.records import append_record, episode_record, write_records
from arena_gym.bench.stats import summarise
from arena_gym.bench.suite import Stage, Suite, stage_config
from arena_gym.train.policies import Policy, is_named
from arena_gym.train.run_folders import claim

PolicySpec = str | Policy


# what a benchmark run writes into its folder (run_folders: a folder holds one run)
RUN_FILES = ("records.csv", "records.json", "summary.json", "report.md", "report.html",
             "plots", "videos", "compare-*")


def run_suite(suite: Suite, policy: PolicySpec, out: str | Path, envs: int | None = None,
              seed: int | None = None, video: int = 0, progress: bool = True,
              trust: bool = False, report: bool = True, overwrite: bool = False) -> Path:
    """Run every stage of `suite` with `policy` ("random", "reactive", a model .zip,
    "module:callable", or any callable obs -> action) and write the run folder `out`
    (refused when it holds a run, unless `overwrite`: then that run's files go first).

    Each episode's record is appended to records.csv as it ends. A run stopped by Ctrl-C
    or an error (a later stage's world, say) still writes the records, summary and report
    of the episodes that ended (summary.json: `"complete": false` and what stopped it),
    says so on stderr, and raises what stopped it."""

    out = Path(out)
    if out.exists() and not out.is_dir():
        raise ValueError(f"out: expected a folder, got the file {str(out)!r}")
    configs = [stage_config(suite, stage) for stage in suite.stages]  # all checked first
    name = policy if isinstance(policy, str) else getattr(policy, "__name__", "callable")
    if isinstance(policy, str) and not is_named(policy) and ":" not in policy.removesuffix(
            ".zip"):
        from arena_gym.train.model_files import check_model_file

        check_model_file(policy)
    with claim(out, RUN_FILES, overwrite, "benchmark run"):
        return _run(suite, policy, out, name, configs, envs, seed, video, progress, trust,
                    report)


def _run(suite: Suite, policy: Any, out: Path, name: str, configs: list, envs: int | None,
         seed: int | None, video: int, progress: bool, trust: bool, report: bool) -> Path:
    """run_suite's stages, episodes and files, in the folder it holds."""
    from arena_gym.envs.vector_env import ArenaVectorEnv
    from arena_gym.train.evaluation import run_episodes

    n = envs or suite.envs
    total = sum(s.episodes for s in suite.stages)
    bar = _progress(total, progress)
    records: list[dict[str, Any]] = []
    timing: dict[str, dict[str, float]] = {}
    run = {"suite": suite.name, "suite_path": suite.path, "policy": name,
           "seed": suite.seed if seed is None else seed, "envs": n}
    try:
        for i, (stage, (config, overrides, cfg)) in enumerate(zip(suite.stages, configs,
                                                                  strict=True)):
            stage_seed = suite.stage_seed(i, seed)
            t0 = time.perf_counter()
            env = ArenaVectorEnv(min(n, stage.episodes), config=config, **overrides)
            try:
                act = _policy(policy, env, stage_seed, trust)
                for k, episode in run_episodes(env, act, stage.episodes, stage_seed):
                    record = episode_record(suite, stage, name, stage_seed, k, episode,
                                            cfg.robot)
                    append_record(out, record)
                    records.append(record)
                    bar(stage.name)
            finally:
                env.close()
                timing[stage.name] = {"seconds": time.perf_counter() - t0}
            if video:
                _record_videos(stage, config, overrides, policy, stage_seed, video,
                               out / "videos" / stage.name, trust)
    except BaseException as exc:  # Ctrl-C or an error: keep what ended, then stop
        bar(None)
        if not records:
            raise
        stopped = type(exc).__name__
        _finish(out, suite, records, {**run, "complete": False, "stopped": stopped},
                timing, report)
        print(f"bench: stopped by {stopped} after {len(records)} of {total} episodes; the "
              f"records, summary and report of those are in {out}", file=sys.stderr,
              flush=True)
        raise
    bar(None)
    _finish(out, suite, records, {**run, "complete": True}, timing, report)
    return out


def _finish(out: Path, suite: Suite, records: list[dict[str, Any]], run: dict[str, Any],
            timing: dict[str, dict[str, float]], report: bool) -> None:
    """records.csv/.json ordered by stage and episode, summary.json and the report."""
    order = {stage.name: i for i, stage in enumerate(suite.stages)}
    records = sorted(records, key=lambda r: (order[r["stage"]], r["episode"]))
    write_records(out, records)
    summary = {**run, "stages": summarise(suite, records), "timing": timing}
    _write_json(out / "summary.json", summary)
    if report:
        from arena_gym.bench.report import write_report

        write_report(out, suite, summary, records)


def _policy(policy: PolicySpec, env: Any, seed: int, trust: bool) -> Policy:
    from arena_gym.train.policies import make_policy

    return make_policy(policy, env, seed=seed, trust=trust) if isinstance(policy, str) else policy


def _record_videos(stage: Stage, config: str, overrides: dict[str, Any], policy: PolicySpec,
                   seed: int, count: int, folder: Path, trust: bool) -> None:
    """Episodes 0..count-1 of the stage again, in one env that renders the follow view."""
    from arena_gym.envs.vector_env import ArenaVectorEnv
    from arena_gym.render.video import record_video
    from arena_gym.train.evaluation import run_episodes

    env = ArenaVectorEnv(1, config=config, render_mode="rgb_array", **overrides)
    try:
        act = _policy(policy, env, seed, trust)
        recorded = record_video(env, folder, prefix=stage.name)
        for _ in run_episodes(recorded, act, min(count, stage.episodes), seed):
            pass
        recorded.close()
    finally:
        env.close()


def _write_json(path: Path, data: Any) -> None:
    import json

    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")


def _progress(total: int, show: bool) -> Callable[[str | None], None]:
    """A progress bar over all episodes (tqdm when installed, else a line on stderr);
    call with the stage's name per episode, with None at the end."""
    if not show:
        return lambda _: None
    try:
        from tqdm import tqdm
    except ImportError:
        tqdm = None
    if tqdm is not None:
        bar = tqdm(total=total, unit="episode", file=sys.stderr)

        def tick(stage: str | None) -> None:
            if stage is None:
                bar.close()
            else:
                bar.set_description(stage)
                bar.update()

        return tick
    done = [0]

    def line(stage: str | None) -> None:
        if stage is None:
            print(file=sys.stderr)
            return
        done[0] += 1
        print(f"\r{stage}: {done[0]}/{total} episodes", end="", file=sys.stderr, flush=True)

    return line
