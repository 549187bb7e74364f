"""Does physics_dt 0.005 keep the robot's trajectories within 2 cm of 0.002's?

    python benchmarks/dt_accuracy.py [--robot arena_diffbot] [--drives 5]

The built-in robot drives 10 s on the ground plane under a sequence of commands (one new
(v, omega) every 0.5 s, drawn from its action ranges, several seeded sequences) at both
timesteps; the script prints the largest distance between the two trajectories, sampled
every control step (0.1 s), and the final heading difference.
"""

from __future__ import annotations

import argparse
import math

import numpy as np

from arena_gym.scene import SceneStore
from arena_gym.sim import Simulator
from arena_gym.worlds import builtin_robot_urdf


def trajectory(dt: float, commands: np.ndarray) -> np.ndarray:
    store = SceneStore(1, timestep=dt)
    store[0].spawn_urdf("robot", builtin_robot_urdf())
    sim = Simulator(store)
    per_control = round(0.1 / dt)
    out = []
    for v, omega in commands:
        for _ in range(5):  # 0.5 s per command
            sim.set_cmd_vel(0, "robot", v, omega)
            sim.step(per_control)
            pos, quat = store[0].get_pose("robot")
            out.append([pos[0], pos[1], 2 * math.atan2(quat[3], quat[0])])
    sim.close()
    return np.array(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--drives", type=int, default=5)
    args = parser.parse_args()
    worst = 0.0
    for seed in range(args.drives):
        rng = np.random.default_rng(seed)
        commands = np.column_stack([rng.uniform(-0.22, 0.22, 20), rng.uniform(-2.84, 2.84, 20)])
        fine, coarse = trajectory(0.002, commands), trajectory(0.005, commands)
        gap = np.hypot(*(fine[:, :2] - coarse[:, :2]).T).max()
        heading = abs(math.remainder(fine[-1, 2] - coarse[-1, 2], 2 * math.pi))
        worst = max(worst, gap)
        path = np.hypot(*np.diff(fine[:, :2], axis=0).T).sum()
        print(f"drive {seed}: max position gap {gap * 100:.2f} cm, final heading gap "
              f"{math.degrees(heading):.2f} deg, path {path:.2f} m")
    print(f"worst gap over {args.drives} drives: {worst * 100:.2f} cm "
          f"({'within' if worst <= 0.02 else 'beyond'} 2 cm)")


if __name__ == "__main__":
    main()
