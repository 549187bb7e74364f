"""Posing skinned pedestrians from joint angles against playing their walk clip, in one run.

    python benchmarks/pedestrian_joints.py [--pedestrians 16] [--updates 100] [--repeats 5]
                                           [--actor ../shared/assets/pedestrians/actor2.sdf]

One env wears `--pedestrians` skinned actors; each repeat times `--updates` calls of
`update_pedestrians` for all of them, walking 2 cm per call: once without angles (the walk
clip, a per-pedestrian path) and once with a gait's 20 ROS4HRI angles (one vectorised
forward kinematics per actor). The two take turns call by call, so a change in machine
speed hits both alike. The table gives ms per call of each and the median of the
per-repeat ratios (angles / clip). Compare the ratio, not absolute numbers across runs.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np

from arena_gym.scene import Pedestrian, SceneStore

GAIT = ("waist", "l_p_shoulder", "l_elbow", "r_p_shoulder", "r_elbow", "l_r_hip", "l_knee",
        "r_r_hip", "r_knee")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pedestrians", type=int, default=16)
    parser.add_argument("--updates", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--actor", default=str(Path(__file__).resolve().parents[1] / ".." /
                                               "shared" / "assets" / "pedestrians" /
                                               "actor2.sdf"))
    args = parser.parse_args()
    actor = str(Path(args.actor).resolve())
    n = args.pedestrians
    store = SceneStore(1)
    store.spawn_pedestrians([Pedestrian(f"env_0/p{k}", (0.0, 1.0 * k, 0.0), actor=actor)
                             for k in range(n)])
    rng = np.random.default_rng(0)

    def request(step: int, angles: bool) -> list[Pedestrian]:
        joints = [dict(zip(GAIT, rng.uniform(-0.5, 0.5, len(GAIT)), strict=True))
                  if angles else None for _ in range(n)]
        return [Pedestrian(f"env_0/p{k}", (0.02 * step, 1.0 * k, 0.0), joints=joints[k])
                for k in range(n)]

    clip_ms, angle_ms, ratios = [], [], []
    step = 0
    for _ in range(args.repeats):
        spent = {False: 0.0, True: 0.0}
        for _ in range(args.updates):
            for angles in (False, True):
                step += 1
                peds = request(step, angles)  # built outside the timing
                start = time.perf_counter()
                store.update_pedestrians(peds)
                spent[angles] += time.perf_counter() - start
        clip_ms.append(1e3 * spent[False] / args.updates)
        angle_ms.append(1e3 * spent[True] / args.updates)
        ratios.append(spent[True] / spent[False])
    print(f"{n} skinned pedestrians, {args.updates} updates x {args.repeats} repeats")
    print(f"walk clip   {statistics.median(clip_ms):8.3f} ms per update_pedestrians")
    print(f"joint angles {statistics.median(angle_ms):7.3f} ms per update_pedestrians")
    print(f"ratio angles/clip: median {statistics.median(ratios):.2f} "
          f"(repeats {', '.join(f'{r:.2f}' for r in ratios)})")


if __name__ == "__main__":
    main()
