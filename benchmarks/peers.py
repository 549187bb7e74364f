"""Env steps/s of arena_gym beside navground's Gym env on one matched navigation task, the two
interleaved in one run.

    python benchmarks/peers.py [--envs 1 16] [--beams 90 360] [--people 0 4]
                               [--base wheeled planar | --base none] [--rounds 5] [--seconds 3]
                               [--navground-python PATH] [--json PATH]

navground (navground 0.7.0 + navground-learning 0.2.0) brings its own numpy and gymnasium, so it
lives in a venv of its own and runs in a child process with that venv's python:

    python3 -m venv ../navground-venv      # from the repository's root: beside the clone
    ../navground-venv/bin/pip install navground==0.7.0 navground-learning==0.2.0

`--navground-python` defaults to $NAVGROUND_PYTHON, else ../navground-venv/bin/python (the
folder beside the repository's). The child runs benchmarks/peers_navground.py (it imports
nothing of arena_gym), which builds the task, and takes one JSON command per line over a
pipe: this script drives both sides round by round, so a change in the machine's speed hits
both alike.

The task (ArenaMujoco-v0's default world; peers_navground.py builds its navground twin): a 6 x 6 m
room with 6-10 boxes, a diff-drive robot (0.22 m/s, radius 0.11 m) and a 360-degree lidar of 3.5
m range, the goal within 0.5 m, episodes ending on a collision or after 300 control steps of 0.1
s, random actions (a seeded block of uniform samples of each side's action space, replayed). With
people: arena_gym's social-force pedestrians (`num_pedestrians`, a pool of as many slots)
against navground's C++ ORCA agents, radius 0.25 m, 0.3-0.5 m/s, walking loops of free points.

  arena_gym  gymnasium.make("ArenaMujoco-v0", **overrides) for one env;
             gymnasium.make_vec(..., num_envs=N, vectorization_mode="vector_entry_point")
  navground  gymnasium.make("navground", scenario=...) for one env; gymnasium's SyncVectorEnv
             of N such envs (navground has no batched env)
Both autoreset NEXT_STEP; one env resets after a terminated or truncated step, inside the
timing. Each configuration builds both sides, warms both up (`--warmup` s each, untimed), then
runs `--rounds` rounds of `--seconds` s per side, taking turns (which side goes first alternates
by round). The table shows each side's median env steps/s over the rounds (steps x envs / s),
the ratio ours / theirs, and steps per ended episode (a check that the two tasks end alike;
all steps over the episodes that ended, so a short run reads high).

What stays unmatched, by design or for want of the feature: arena_gym steps MuJoCo rigid-body
physics (wheeled: 20 substeps of 5 ms with the wheels' and caster's contacts; planar: 4 of
25 ms, no floor contacts) and casts
3-D rays; navground integrates kinematics once per 0.1 s step, resolves overlaps geometrically
and intersects 2-D rays with segments and discs. navground has no box obstacle: each box is its
four sides as walls. Its 2WDiff turns at most 2 x 0.22 / 0.16 = 2.75 rad/s (arena_diffbot:
2.84). arena_gym's batched step uses every core; navground's SyncVectorEnv one. The observations
differ in layout (navground: ranges in m, its scan's fov / range / start angle, the goal's
distance and unit direction, own speeds; arena_gym: normalised ranges, goal distance and angle,
last action). arena_gym's box sizes are fixed per env (its pool), navground's drawn per episode.

`--base` passes arena_gym's `base` config key ("wheeled": the robot on its wheels and caster;
"planar": one body on planar joints), a row each; "none" passes no key (the config's default).
Its default is both bases.
Machines are noisy: compare the ratios of one run, not absolute numbers across runs.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

import arena_gym  # noqa: F401  (registers ArenaMujoco-v0)

WORKER = Path(__file__).resolve().parent / "peers_navground.py"
DEFAULT_VENV = Path(__file__).resolve().parents[2] / "navground-venv"  # beside the clone
BASES = ("wheeled", "planar")
ACTION_BLOCK = 256  # random actions per env, replayed in turn (as the worker does)
CHUNK = 10  # steps between clock reads


def navground_python(given: str | None) -> str:
    """The navground venv's python: --navground-python, $NAVGROUND_PYTHON, the default venv."""
    path = given or os.environ.get("NAVGROUND_PYTHON") or str(DEFAULT_VENV / "bin" / "python")
    if not Path(path).exists():
        sys.exit(f"peers.py: no navground python at {path!r}; expected a venv with navground "
                 "(see this script's docstring), named by --navground-python or "
                 "$NAVGROUND_PYTHON")
    return path


class Arena:
    """arena_gym's side of one configuration, built through Gymnasium's front door."""

    def __init__(self, num_envs: int, beams: int, people: int, base: str | None,
                 seed: int) -> None:
        overrides: dict[str, Any] = {"scan": {"num_beams": beams}}
        if people:
            overrides.update(num_pedestrians=people)  # a pool of as many slots (the default)
        if base is not None:
            overrides["base"] = base
        self.n, self.overrides = num_envs, overrides
        if num_envs == 1:
            self.env = gym.make("ArenaMujoco-v0", **overrides)
            space = self.env.action_space
            shape = (ACTION_BLOCK, *space.shape)
        else:
            self.env = gym.make_vec("ArenaMujoco-v0", num_envs=num_envs,
                                    vectorization_mode="vector_entry_point", **overrides)
            space = self.env.single_action_space
            shape = (ACTION_BLOCK, num_envs, *space.shape)
        rng = np.random.default_rng(seed)
        self.actions = rng.uniform(space.low, space.high, shape).astype(space.dtype)
        self.env.reset(seed=seed)
        self.k = 0

    def run(self, seconds: float) -> dict:
        """The worker's Bench.run, on this side: env steps, time and ended episodes."""
        env, actions, steps, episodes = self.env, self.actions, 0, 0
        t0 = time.perf_counter()
        while True:
            for _ in range(CHUNK):
                _, _, term, trunc, _ = env.step(actions[self.k % ACTION_BLOCK])
                self.k += 1
                if self.n == 1:
                    if term or trunc:
                        episodes += 1
                        env.reset()
                else:
                    episodes += int(np.count_nonzero(term | trunc))
            steps += CHUNK
            elapsed = time.perf_counter() - t0
            if elapsed >= seconds:
                return {"steps": steps * self.n, "seconds": elapsed, "episodes": episodes}

    def close(self) -> None:
        self.env.close()


class Navground:
    """The navground child process: one JSON command a line in, one JSON answer a line out."""

    def __init__(self, python: str) -> None:
        self.proc = subprocess.Popen([python, str(WORKER)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, bufsize=1)

    def ask(self, cmd: str, **params: Any) -> dict:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps({"cmd": cmd, **params}) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the navground worker exited (status {self.proc.wait()}) "
                               f"on {cmd!r}; its stderr is above")
        out = json.loads(line)
        if not out.pop("ok"):
            raise RuntimeError(f"the navground worker, on {cmd!r}: {out['error']}")
        return out

    def quit(self) -> None:
        if self.proc.poll() is None:
            assert self.proc.stdin is not None
            self.proc.stdin.write('{"cmd": "quit"}\n')
            self.proc.stdin.close()
            self.proc.wait(timeout=30)


def summary(runs: list[dict]) -> dict:
    rates = [r["steps"] / r["seconds"] for r in runs]
    steps, episodes = sum(r["steps"] for r in runs), sum(r["episodes"] for r in runs)
    return {"steps_per_s": statistics.median(rates), "rounds": rates, "episodes": episodes,
            "steps_per_episode": steps / episodes if episodes else None}


def measure(ng: Navground, num_envs: int, beams: int, people: int, base: str | None,
            args: argparse.Namespace) -> dict:
    """One configuration: both sides built, warmed up, then `args.rounds` rounds in turn."""
    arena = Arena(num_envs, beams, people, base, args.seed)
    ng.ask("make", num_envs=num_envs, beams=beams, people=people, seed=args.seed)
    try:
        arena.run(args.warmup)
        ng.ask("run", seconds=args.warmup)
        ours: list[dict] = []
        theirs: list[dict] = []
        for r in range(args.rounds):
            turns = [(ours, arena.run), (theirs, lambda s: ng.ask("run", seconds=s))]
            for out, run in turns if r % 2 == 0 else turns[::-1]:
                out.append(run(args.seconds))
    finally:
        arena.close()
        ng.ask("close")
    a, b = summary(ours), summary(theirs)
    return {"num_envs": num_envs, "beams": beams, "people": people, "base": base,
            "arena_overrides": arena.overrides, "arena_gym": a, "navground": b,
            "ratio": a["steps_per_s"] / b["steps_per_s"],
            "round_ratios": [x / y for x, y in zip(a["rounds"], b["rounds"], strict=True)]}


HEADER = (f"{'N':>3} {'beams':>5} {'people':>6} {'base':>8} | {'arena_gym':>10} "
          f"{'navground':>10} {'ours/theirs':>11} | steps/episode (ours, theirs)")


def line(row: dict) -> str:
    """A table row: medians over the rounds, their ratio, steps per ended episode."""
    def length(side: dict) -> str:
        value = side["steps_per_episode"]
        return f"{value:.0f}" if value else "-"

    a, b = row["arena_gym"], row["navground"]
    return (f"{row['num_envs']:>3} {row['beams']:>5} {row['people']:>6} "
            f"{row['base'] or '-':>8} | {a['steps_per_s']:>10,.0f} "
            f"{b['steps_per_s']:>10,.0f} {row['ratio']:>10.2f}x | {length(a)}, {length(b)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--envs", type=int, nargs="+", default=[1, 16])
    parser.add_argument("--beams", type=int, nargs="+", default=[90, 360])
    parser.add_argument("--people", type=int, nargs="+", default=[0, 4])
    parser.add_argument("--base", nargs="+", choices=[*BASES, "none"], default=list(BASES),
                        help="arena_gym's base config key, a row each; none: pass no key "
                             "(the config's default)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=3.0, help="per side and round")
    parser.add_argument("--warmup", type=float, default=0.5, help="s per side, untimed")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--navground-python", default=None)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    bases = args.base
    python = navground_python(args.navground_python)
    ng = Navground(python)
    rows: list[dict] = []
    print(HEADER)
    try:
        for n, beams, people, base in itertools.product(args.envs, args.beams, args.people,
                                                        bases):
            rows.append(measure(ng, n, beams, people, None if base == "none" else base,
                                args))
            print(line(rows[-1]), flush=True)
    finally:
        ng.quit()
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({
            "benchmark": "peers", "unit": "env steps/s", "navground_python": python,
            "rounds": args.rounds, "seconds": args.seconds, "warmup": args.warmup,
            "seed": args.seed, "rows": rows}, indent=1) + "\n")


if __name__ == "__main__":
    main()
