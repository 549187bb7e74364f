"""The corpus table (issue 42): every dm_control suite model through
`arena_gym.Simulation(model_path=..., num_envs=2)` against MuJoCo running the file alone:
the steps compared, the largest difference of qpos, qvel, act and every sensor over them,
and each camera's smallest body-mask IoU and depth agreement against `mujoco.Renderer`.

    python benchmarks/corpus.py                 # prints the table, writes the results file
    python benchmarks/corpus.py --models dog    # some models only

The suite's files come as in the tests (tests/corpus/dm_control_suite.py: downloaded once
into .pytest_cache/d/dm_control, or ARENA_GYM_DM_CONTROL_WHEEL).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.corpus.dm_control_suite import (  # noqa: E402
    MODELS,
    NUM_ENVS,
    SIZE,
    VERSION,
    compare_cameras,
    compare_physics,
    suite_folder,
)

RESULT = ROOT / "benchmarks" / "results" / "corpus_dm_control.txt"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", nargs="*", default=list(MODELS), choices=MODELS)
    parser.add_argument("--out", type=Path, default=RESULT)
    args = parser.parse_args()
    folder = suite_folder(ROOT / ".pytest_cache" / "d" / "dm_control")
    lines = [f"dm_control {VERSION} suite through Simulation(model_path=..., "
             f"num_envs={NUM_ENVS}) vs MuJoCo alone; cameras at {SIZE[0]}x{SIZE[1]} vs "
             "mujoco.Renderer (IoU: smallest body mask of any camera and env; depth: "
             "smallest share of pixels within 1 cm)", "",
             "| model | steps compared | sensors | max difference | cameras (modes) | "
             "min IoU | depth within 1 cm | equal |",
             "|---|---|---|---|---|---|---|---|"]
    print("\n".join(lines), flush=True)
    equal_rows = 0
    for name in args.models:
        path = folder / f"{name}.xml"
        row = compare_physics(path)
        shots = compare_cameras(path)
        cameras = sorted({(s.camera, s.mode) for s in shots})
        iou = min((s.min_iou for s in shots), default=1.0)
        depth = min((s.depth_within for s in shots), default=1.0)
        equal = row.max_difference == 0 and not row.mismatches and iou >= 0.99 and depth >= 0.99
        equal_rows += equal
        line = (f"| {name} | {', '.join(map(str, row.steps))} | {row.sensors} | "
                f"{row.max_difference:g} | {len(cameras)} "
                f"({', '.join(f'{c}: {m}' for c, m in cameras)}) | {iou:.3f} | {depth:.3f} | "
                f"{'yes' if equal else 'NO'} |")
        lines.append(line)
        print(line, flush=True)
    lines += ["", f"{equal_rows} of {len(args.models)} rows equal"]
    print(lines[-1])
    args.out.write_text("\n".join(lines) + "\n")
    return 0 if equal_rows == len(args.models) else 1


if __name__ == "__main__":
    raise SystemExit(main())
