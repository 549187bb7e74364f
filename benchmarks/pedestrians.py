"""What walking people add to the env step: N envs with P pedestrians each against the
same N envs without, in one run.

    python benchmarks/pedestrians.py [--envs 16] [--pedestrians 64] [--pool 0] [--room 20]
                                     [--steps 200] [--repeats 5] [--base planar]
    python benchmarks/pedestrians.py --config arena_gym/configs/pedestrians.yaml

Both vector envs (ArenaVectorEnv, random actions from one seeded stream, the same for both)
run in one process and take turns every `--chunk` steps, each timing only its own calls, so
that a change in machine speed hits both alike. The world is the default room made
`--room` m wide (default 20, so that 64 people fit on its floor with room to walk; the 6 m
reference room holds about 30), with its 6-10 boxes; the pedestrians walk under the social
force model. The table gives ms per env step (all envs) of each, the median of the
per-repeat ratios, the crowd model's own share (Crowd.step), the physics (Simulator.step:
the 64 mocap bodies per env cost MuJoCo time at every physics step) and the lidar's ray casts
(SensorSuite.update: the tick that casts the lidar's rays and applies the collision rule),
timed inside the run.
With `--config`, the two are a training config's env (people, and their observation where
it asks for one) and the same config without people (no pedestrians, none observed).
Machines are noisy: compare the ratio, not absolute numbers across runs.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np
import yaml

from arena_gym.envs.vector_env import ArenaVectorEnv

PARTS = ("physics", "tick", "evaluate", "reset", "crowd")


def make(envs: int, peds: int, room: float, pool: int = 0, base: str = "planar"
         ) -> ArenaVectorEnv:
    stages = {"stages": [[6, 10]], "pedestrians": [[peds, peds]] if peds else []}
    env = ArenaVectorEnv(envs, room_size=room, num_pedestrians=peds, curriculum=stages, base=base,
                         pedestrian_pool=pool)
    env.reset(seed=0)
    return env


def from_config(envs: int, path: str, people: bool) -> ArenaVectorEnv:
    """The config's env, or (people False) the same without people."""
    cfg = yaml.safe_load(Path(path).read_text())
    if not people:
        cfg.update(num_pedestrians=0, observe_pedestrians=0, pedestrian_pool=0)
        cfg.get("curriculum", {}).pop("pedestrians", None)
    env = ArenaVectorEnv(envs, **cfg)
    env.reset(seed=0)
    return env


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--envs", type=int, default=16)
    parser.add_argument("--pedestrians", type=int, default=64)
    parser.add_argument("--pool", type=int, default=0,
                        help="pedestrian pool slots per env (0: as many as --pedestrians)")
    parser.add_argument("--room", type=float, default=20.0)
    parser.add_argument("--steps", type=int, default=200, help="env steps per repeat and env")
    parser.add_argument("--chunk", type=int, default=10, help="steps per turn")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--base", default="planar", choices=["wheeled", "planar"])
    parser.add_argument("--config", help="a training config's env against it without people "
                        "(the options above but --envs and the timing ones then unused)")
    args = parser.parse_args()

    if args.config:
        plain, people = (from_config(args.envs, args.config, p) for p in (False, True))
        args.pedestrians = people.core.cfg.num_pedestrians
        args.room, args.pool = people.core.cfg.room_size, people.core.cfg.pedestrian_slots
    else:
        plain = make(args.envs, 0, args.room, base=args.base)
        people = make(args.envs, args.pedestrians, args.room, args.pool, args.base)
    walkers = people.core.task.walkers

    def timed(call, total: list[float]):  # `call`, adding its time to total[0]
        def run(*a, **k):
            t = time.perf_counter()
            out = call(*a, **k)
            total[0] += time.perf_counter() - t
            return out
        return run

    # the parts of the step timed in each env (seconds, summed over a repeat): what MuJoCo
    # takes, the sensor tick, the task's evaluation, the resets at episodes' ends, and (with
    # people) the crowd model
    parts = {name: {part: [0.0] for part in PARTS} for name in ("none", "people")}
    for name, env in (("none", plain), ("people", people)):
        core, spent = env.core, parts[name]
        core.sim.step = timed(core.sim.step, spent["physics"])
        core.sensor_suite.update = timed(core.sensor_suite.update, spent["tick"])
        core.task.evaluate = timed(core.task.evaluate, spent["evaluate"])
        core.reset_envs = timed(core.reset_envs, spent["reset"])
    walkers.crowd.step = timed(walkers.crowd.step, parts["people"]["crowd"])
    compiles = [people.core.store[e].compile_count for e in range(args.envs)]
    walking = int(walkers.crowd.active.sum())
    rng = np.random.default_rng(0)
    low, high = plain.action_space.low, plain.action_space.high
    # untimed: the first crowd step loads its compiled kernel (numba and its disk cache, about
    # a second; seconds more to compile where the cache is cold)
    for env in (plain, people):
        env.step((low + high) / 2)
    rows = []  # per repeat: {(env, part): ms per step}, part "step" the whole step
    for _ in range(args.repeats):
        actions = rng.uniform(low, high, size=(args.steps, *low.shape))
        spent = {"none": 0.0, "people": 0.0}
        for totals in parts.values():
            for total in totals.values():
                total[0] = 0.0
        for start in range(0, args.steps, args.chunk):
            for name, env in (("none", plain), ("people", people)):
                t = time.perf_counter()
                for a in actions[start : start + args.chunk]:
                    env.step(a)
                spent[name] += time.perf_counter() - t
        row = {(name, "step"): spent[name] / args.steps * 1e3 for name in spent}
        row |= {(name, part): total[0] / args.steps * 1e3 for name, totals in parts.items()
                for part, total in totals.items()}
        rows.append(row)
    assert [people.core.store[e].compile_count for e in range(args.envs)] == compiles
    med = {key: statistics.median(r[key] for r in rows) for key in rows[0]}
    ratio = statistics.median(r["people", "step"] / r["none", "step"] for r in rows)
    physics_ratio = statistics.median(r["people", "physics"] / r["none", "physics"]
                                      for r in rows)
    # the ratio were the people's bodies free to MuJoCo (their physics as the step's without)
    bodiless = statistics.median(
        (r["people", "step"] - r["people", "physics"] + r["none", "physics"]) / r["none", "step"]
        for r in rows)
    print(f"{args.envs} envs, {args.pedestrians} pedestrians each ({walking} walking at the "
          f"first reset) in pools of {args.pool or args.pedestrians}, {args.room:g} m room, "
          f"{args.repeats} x {args.steps} steps" + (f", {args.config}" if args.config else ""))
    print("| envs | without (ms/step) | with (ms/step) | ratio | crowd model (ms/step) | "
          "physics without / with (ms/step) | physics ratio | tick without / with (ms/step) |")
    print("|---|---|---|---|---|---|---|---|")
    print(f"| {args.envs} | {med['none', 'step']:.2f} | {med['people', 'step']:.2f} | "
          f"{ratio:.3f} | {med['people', 'crowd']:.2f} | {med['none', 'physics']:.2f} / "
          f"{med['people', 'physics']:.2f} | {physics_ratio:.3f} | {med['none', 'tick']:.2f} / "
          f"{med['people', 'tick']:.2f} |")
    # where the people's time goes, per env step (medians over the repeats)
    per_env = 1e3 / args.envs
    extra = {part: (med["people", part] - med["none", part]) * per_env
             for part in ("step", *PARTS)}
    extra["rest"] = extra["step"] - sum(extra[part] for part in PARTS)
    print("what the people add, us per env step: " + ", ".join(
        f"{part} {extra[part]:+.2f}" for part in ("step", *PARTS, "rest"))
        + f" (the step without people: {med['none', 'step'] * per_env:.2f})")
    print(f"ratio with the people's physics as the step's without (their bodies free to "
          f"MuJoCo): {bodiless:.3f}")
    print("per repeat (without, with, crowd, physics without, physics with, tick without, "
          "tick with):",
          ", ".join("(" + ", ".join(f"{r[key]:.2f}" for key in (
              ("none", "step"), ("people", "step"), ("people", "crowd"), ("none", "physics"),
              ("people", "physics"), ("none", "tick"), ("people", "tick"))) + ")"
              for r in rows))
    print("compiles during the run: 0")
    plain.close()
    people.close()


if __name__ == "__main__":
    main()
