"""The live viewer's cost to the simulation: a free-running simulator's real-time factor
with the viewer open against without, in one run (compare the ratios, not the numbers).

    DISPLAY=:N python benchmarks/viewer.py [--seconds 3] [--repeats 3] [--rt 1.0]

The default world (one env, seed 0) runs free at `--rt` (0: as fast as it goes) for
`--seconds` of wall time, alternately without and with a LiveViewer on env 0, `--repeats`
times; the table shows medians of the measured real-time factor and the ratio. Needs a
display: Xvfb works (tests/render/unpacked_xvfb.sh builds one without installing it).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

os.environ.setdefault("MUJOCO_GL", "egl")

import numpy as np

from arena_gym.render.live_viewer import LiveViewer
from arena_gym.scene import SceneStore
from arena_gym.sim import Runner, Simulator
from arena_gym.worlds import build_default_world


def _run(runner: Runner, seconds: float, viewer: bool) -> tuple[float, int]:
    """(simulated seconds per wall second, frames shown)."""
    sim = runner.sim
    live = LiveViewer(sim).start() if viewer else None
    try:
        clock0, wall0 = sim.clock, time.perf_counter()
        runner.unpause()
        time.sleep(seconds)
        runner.pause()
        rtf = (sim.clock - clock0) / (time.perf_counter() - wall0)
    finally:
        frames = live.frames_shown if live is not None else 0
        if live is not None:
            live.close()
    return rtf, frames


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--rt", type=float, default=1.0, help="target real-time factor; 0: max")
    args = parser.parse_args()
    store = SceneStore(1, timestep=0.005)
    build_default_world(store, 0, np.random.default_rng(0))
    sim = Simulator(store)
    sim.set_cmd_vel(0, "robot", 0.2, 0.3)
    runner = Runner(sim)
    runner.rt_factor = args.rt
    runner.start(paused=True)
    runs: dict[bool, list[float]] = {False: [], True: []}
    frames = []
    try:
        for _ in range(args.repeats):
            for viewer in (False, True):
                rtf, shown = _run(runner, args.seconds, viewer)
                runs[viewer].append(rtf)
                if viewer:
                    frames.append(shown / args.seconds)
    finally:
        error = runner.error
        runner.close()
        sim.close()
    if error is not None:
        raise SystemExit(f"the simulator stopped: {error!r}")
    plain, viewed = statistics.median(runs[False]), statistics.median(runs[True])
    print(f"target rt {args.rt:g}, {args.seconds:g} s x {args.repeats}")
    print("| case | real-time factor (median) | runs |")
    print("|---|---|---|")
    print(f"| no viewer | {plain:.3f} | {', '.join(f'{r:.3f}' for r in runs[False])} |")
    print(f"| viewer on env 0 | {viewed:.3f} | {', '.join(f'{r:.3f}' for r in runs[True])} |")
    print(f"ratio viewer / none: {viewed / plain:.3f}; viewer frames/s (median): "
          f"{statistics.median(frames):.1f}")


if __name__ == "__main__":
    main()
