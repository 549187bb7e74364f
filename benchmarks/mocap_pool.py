"""What MuJoCo itself charges for a pedestrian pool: mj_step of one env's model with its
pool of mocap capsule bodies against the same env without people, by MuJoCo's own timers.

    python benchmarks/mocap_pool.py [--pool 64] [--steps 3000] [--repeats 5]

Both models come from the env (ArenaVectorEnv(1), a 20 m room with its boxes; one with
`--pool` people walking), each stepped on its own MjData from the env's state, the two
taking turns per repeat. Also a bare model: a free box on a plane, with and without the
same number of mocap capsules that touch nothing. The per-step difference is what the pool
adds to every physics step of every env whatever the crowd model, the lidar or the Python
around them cost: the floor under issue 11's "< 15 % for 64 people" target.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import mujoco
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from pedestrians import make  # noqa: E402  (the env of benchmarks/pedestrians.py)

TIMERS = ("POS_KINEMATICS", "POS_INERTIA", "POS_COLLISION", "VELOCITY", "CONSTRAINT")


def env_model(people: int) -> tuple[mujoco.MjModel, mujoco.MjData]:
    env = make(1, people, 20.0, pool=people or 64)  # benchmarks/pedestrians.py's env
    for _ in range(5):
        env.step(np.zeros(env.action_space.shape))
    model, live = env.core.store[0].model, env.core.store[0].data
    data = mujoco.MjData(model)
    state = mujoco.mjtState.mjSTATE_FULLPHYSICS
    buffer = np.empty(mujoco.mj_stateSize(model, state))
    mujoco.mj_getState(model, live, buffer, state)
    mujoco.mj_setState(model, data, buffer, state)
    data.ctrl[:] = live.ctrl
    env.close()
    return model, data


def bare_model(pool: int) -> tuple[mujoco.MjModel, mujoco.MjData]:
    people = "".join(
        f'<body mocap="true" pos="{k % 8} {k // 8 + 2} 0"><geom type="capsule" size="0.25 0.4" '
        f'pos="0 0 0.65" contype="0" conaffinity="0"/></body>' for k in range(pool))
    xml = (f'<mujoco><option timestep="0.002" integrator="implicitfast"/><worldbody>'
           f'<geom type="plane" size="20 20 .1"/><body pos="0 0 .2"><freejoint/>'
           f'<geom type="box" size=".2 .2 .1" mass="5"/></body>{people}</worldbody></mujoco>')
    model = mujoco.MjModel.from_xml_string(xml)
    return model, mujoco.MjData(model)


def step_time(model: mujoco.MjModel, data: mujoco.MjData, steps: int) -> tuple[float, dict]:
    """us per mj_step, and us per step of MuJoCo's timers."""
    for timer in data.timer:
        timer.duration, timer.number = 0.0, 0
    t = time.perf_counter()
    for _ in range(steps):
        mujoco.mj_step(model, data)
    wall = (time.perf_counter() - t) / steps * 1e6
    timers = {name: data.timer[int(getattr(mujoco.mjtTimer, "mjTIMER_" + name))].duration
              / steps * 1e6 for name in TIMERS}
    return wall, timers


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pool", type=int, default=64)
    parser.add_argument("--steps", type=int, default=3000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    pairs = {"env": (env_model(0), env_model(args.pool)),
             "bare": (bare_model(0), bare_model(args.pool))}
    for name, (plain, people) in pairs.items():
        rows = []
        for _ in range(args.repeats):
            rows.append((step_time(*plain, args.steps), step_time(*people, args.steps)))
        without = statistics.median(r[0][0] for r in rows)
        with_pool = statistics.median(r[1][0] for r in rows)
        ratio = statistics.median(r[1][0] / r[0][0] for r in rows)
        print(f"{name}: mj_step {without:.2f} -> {with_pool:.2f} us with {args.pool} mocap "
              f"bodies (ratio {ratio:.3f}, {(with_pool - without) / args.pool * 1e3:.0f} ns "
              f"per body and step; bodies {plain[0].nbody} -> {people[0].nbody})")
        for timer in TIMERS:
            a = statistics.median(r[0][1][timer] for r in rows)
            b = statistics.median(r[1][1][timer] for r in rows)
            print(f"    {timer:15s} {a:7.2f} -> {b:7.2f} us")


if __name__ == "__main__":
    main()
