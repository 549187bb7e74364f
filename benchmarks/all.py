"""The throughput figures in one table and one JSON file, each against its reference
measured in the same run (the machine is noisy: compare ratios, not absolute numbers).

    python benchmarks/all.py [--quick] [--json benchmarks/results/throughput.json]

Rows, from the measuring code of the per-topic scripts (their docstrings say what is timed):
  stepping     Simulator.step physics steps/s against a bare mujoco.batch.Batch (stepping.py)
  env          ArenaVectorEnv env steps/s against the physics + ray floor, and against
               Gymnasium's SyncVectorEnv / AsyncVectorEnv of single envs (throughput.py)
  lidar        SensorSuite lidar update against bare Batch.ray, us per env-step (sensors.py)
  collision    a control step with the collision rule against one without (sensors.py)
  camera       RGB frames/s over the envs (sensors.py; no reference: an absolute number)
`--quick` runs fewer steps and repeats (a minute or two on 2 cores), for a smoke check.
The ROS bridge's cost is not gathered here: the bridge has no benchmark yet.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

import mujoco
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the sibling scripts

import sensors  # noqa: E402
import stepping  # noqa: E402
import throughput  # noqa: E402

from arena_gym.envs.vector_env import ArenaVectorEnv  # noqa: E402


def row(name: str, setting: str, ours: float, reference: float | None, ref_name: str,
        unit: str, better: str) -> dict:
    """One figure: ours against a reference from the same run; `better` says which way
    the ratio should go ("higher" for rates, "lower" for costs)."""
    return {"benchmark": name, "setting": setting, "ours": ours, "reference": reference,
            "reference_is": ref_name, "unit": unit,
            "ratio": ours / reference if reference else None, "better": better}


def gather(quick: bool) -> list[dict]:
    repeats = 2 if quick else 5
    rows = []
    for n in (16,) if quick else (1, 16, 64):
        steps = max(stepping.SIM_CHUNK, (8_000 if quick else 40_000) // n
                    // stepping.SIM_CHUNK * stepping.SIM_CHUNK)
        bench = stepping.Bench(n, steps)
        ours, bare = zip(*(bench.measure() for _ in range(repeats)), strict=True)
        bench.close()
        rows.append(row("stepping", f"N={n}", statistics.median(ours), statistics.median(bare),
                        "bare mujoco.batch", "physics steps/s", "higher"))
    rng = np.random.default_rng(0)
    env_steps = 60 if quick else 300
    for n in (16,) if quick else (1, 16, 32):
        env = ArenaVectorEnv(n)
        env.reset(seed=0)
        floor = throughput.Floor(env)
        rates: dict[str, list[float]] = {"ours": [], "floor": [], "sync": [], "async": []}
        for _ in range(repeats):
            o, f = throughput.time_ours_and_floor(env, floor, env_steps, rng)
            rates["ours"].append(o)
            rates["floor"].append(f)
            rates["sync"].append(throughput.time_gym("sync", n, env_steps // 3, rng))
            if n <= 16:
                rates["async"].append(throughput.time_gym("async", n, env_steps // 3, rng))
        env.close()
        med = {k: statistics.median(v) if v else None for k, v in rates.items()}
        for ref, label in (("floor", "physics + rays floor"), ("sync", "gymnasium sync"),
                           ("async", "gymnasium async")):
            if med[ref]:
                rows.append(row("env", f"N={n}", med["ours"], med[ref], label,
                                "env steps/s", "higher"))
    for beams in (360,) if quick else (360, 1080):
        ours_us, bare_us, _ = sensors.bench_lidar(16, beams, 20 if quick else 40, repeats)
        rows.append(row("lidar", f"N=16, {beams} beams", ours_us, bare_us, "bare Batch.ray",
                        "us per env-step", "lower"))
    with_us, without_us, _, _ = sensors.bench_collision(16, 20 if quick else 40, repeats)
    rows.append(row("collision", "N=16", with_us, without_us, "no collision rule",
                    "us per control step", "lower"))
    fps = sensors.bench_camera(4, (160, 120), 10 if quick else 30, ("rgb",))
    if fps is not None:
        rows.append(row("camera", "N=4, 160x120 rgb", fps, None, "-", "frames/s", "higher"))
    return rows


def table(rows: list[dict]) -> str:
    lines = [f"{'benchmark':<10} {'setting':<18} {'ours':>11} {'reference':>11} "
             f"{'ratio':>6}  {'unit':<20} reference"]
    for r in rows:
        ref = f"{r['reference']:>11,.1f}" if r["reference"] else f"{'-':>11}"
        ratio = f"{r['ratio']:>6.2f}" if r["ratio"] else f"{'-':>6}"
        lines.append(f"{r['benchmark']:<10} {r['setting']:<18} {r['ours']:>11,.1f} {ref} "
                     f"{ratio}  {r['unit']:<20} {r['reference_is']} ({r['better']} is better)")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer steps and repeats")
    parser.add_argument("--json", default="benchmarks/results/throughput.json",
                        help="where to write the figures (default: %(default)s)")
    args = parser.parse_args()
    t0 = time.perf_counter()
    rows = gather(args.quick)
    print(table(rows))
    info = {"cpus": os.cpu_count(), "mujoco": mujoco.__version__, "quick": args.quick,
            "seconds": round(time.perf_counter() - t0, 1), "rows": rows}
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(info, indent=1) + "\n", encoding="utf-8")
    print(f"({info['seconds']:.0f} s; {os.cpu_count()} CPUs, mujoco {mujoco.__version__}; "
          f"written to {args.json})")


if __name__ == "__main__":
    main()
