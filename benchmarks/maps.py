"""Env steps/s on every shared map against the default room, in one run.

    python benchmarks/maps.py [--envs 16] [--steps 200] [--maps hospital experiment_rooms]
                              [--robot jackal] [--base planar]

For the default room ("random" world) and each $ARENA_GYM_ASSETS/worlds/*/map/map.yaml (the
shared assets beside the clone, ../shared/assets, where unset),
at N envs with random actions: build time (gymnasium.make_vec, vector_entry_point), walls
(wall entities in env 0: the map's rectangles), env steps/s, and the share of the step
spent in physics (Simulator.step) and in the sensor tick (SensorSuite.update: the lidar's ray
casts and the collision rule), and the env steps/s against the room's had the world's physics
cost what the room's does ("x room, room physics": the most the rest of its step allows).
The worlds take turns in chunks of CHUNK steps, so machine noise hits them alike; ratios are
against the room of the same run.
"""

from __future__ import annotations

import argparse
import os
import time
import warnings
from pathlib import Path

import gymnasium as gym
import numpy as np

import arena_gym  # noqa: F401  (registers ArenaMujoco-v0)

ASSETS = Path(os.environ.get("ARENA_GYM_ASSETS", Path(__file__).resolve().parents[1] / ".." /
                             "shared" / "assets")).resolve()
CHUNK = 20


class Timed:
    """Wraps an instance's method, summing the seconds spent in it."""

    def __init__(self, owner: object, name: str) -> None:
        self.seconds, inner = 0.0, getattr(owner, name)

        def timed(*args, **kwargs):
            t0 = time.perf_counter()
            try:
                return inner(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - t0

        setattr(owner, name, timed)


class World:
    def __init__(self, label: str, world: str, num_envs: int, seed: int, **config) -> None:
        self.label = label
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # coarsened maps and dropped robot meshes warn
            self.env = gym.make_vec("ArenaMujoco-v0", num_envs=num_envs,
                                    vectorization_mode="vector_entry_point", world=world,
                                    **config)
            self.env.reset(seed=seed)
        self.build = time.perf_counter() - t0
        core = self.env.unwrapped.core
        self.walls = sum(e.kind == "wall" for e in core.store.scenes[0].entities.values())
        self.physics = Timed(core.sim, "step")
        self.rays = Timed(core.sensor_suite, "update")
        self.rng = np.random.default_rng(seed)
        self.seconds = 0.0
        self.cpu = 0.0  # process CPU seconds (all threads): less swayed by a shared machine
        self.steps = 0

    def run(self, steps: int) -> None:
        space = self.env.action_space
        actions = self.rng.uniform(space.low, space.high, (steps, *space.shape)).astype(space.dtype)
        t0, c0 = time.perf_counter(), time.process_time()
        for action in actions:
            self.env.step(action)
        self.seconds += time.perf_counter() - t0
        self.cpu += time.process_time() - c0
        self.steps += steps * self.env.num_envs


def take_turns(worlds: list[World], steps: int) -> None:
    """Warm every world up (first casts and compiles, untimed), then run `steps` vector
    steps each in turns of CHUNK, so machine noise hits them alike."""
    for world in worlds:
        world.run(CHUNK)
        world.seconds = world.cpu = world.physics.seconds = world.rays.seconds = 0.0
        world.steps = 0
    for _ in range(max(1, steps // CHUNK)):
        for world in worlds:
            world.run(CHUNK)


def rate_at_physics(world: World, physics: float) -> float:
    """`world`'s env steps/s had its physics cost `physics` seconds per env step (the
    room's): what the rest of its step allows, whatever its walls cost MuJoCo."""
    return world.steps / (world.seconds - world.physics.seconds + physics * world.steps)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--envs", type=int, default=16)
    parser.add_argument("--steps", type=int, default=200, help="vector steps per world")
    parser.add_argument("--maps", nargs="*", default=None, help="map folder names (default: all)")
    parser.add_argument("--robot", default=None,
                        help="a robot of the shared assets, e.g. jackal (default: the config's)")
    parser.add_argument("--base", default=None, choices=["wheeled", "planar"],
                        help="the robot's base (default: the config's)")
    args = parser.parse_args()
    config = {} if args.base is None else {"base": args.base}
    if args.robot is not None:
        folder = ASSETS / "robots" / args.robot
        config |= {"robot": str(folder / f"{args.robot}.urdf"),
                   "package_paths": (str(folder / "packages"),)}
    maps = sorted(p for p in ASSETS.glob("worlds/*/map/map.yaml")
                  if args.maps is None or p.parent.parent.name in args.maps)
    if not maps:
        raise SystemExit(f"no maps found under {ASSETS}/worlds/*/map/map.yaml")
    worlds = [World("default room", "random", args.envs, 0, **config)]
    worlds += [World(p.parent.parent.name, str(p), args.envs, 0, **config) for p in maps]
    take_turns(worlds, args.steps)
    room = worlds[0].steps / worlds[0].seconds
    room_physics = worlds[0].physics.seconds / worlds[0].steps  # per env step
    print(f"N = {args.envs}, {args.steps} vector steps per world, random actions, robot "
          f"{args.robot or 'of the config'}")
    print(f"{'world':<18}{'build s':>8}{'walls':>7}{'steps/s':>9}{'x room':>8}{'physics':>9}"
          f"{'tick':>7}{'x room, room physics':>22}")
    for w in worlds:
        rate = w.steps / w.seconds
        print(f"{w.label:<18}{w.build:>8.2f}{w.walls:>7}{rate:>9.0f}{rate / room:>8.2f}"
              f"{w.physics.seconds / w.seconds:>9.0%}{w.rays.seconds / w.seconds:>7.0%}"
              f"{rate_at_physics(w, room_physics) / room:>22.2f}")
    for w in worlds:
        w.env.close()


if __name__ == "__main__":
    main()
