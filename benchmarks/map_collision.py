"""What a map's walls cost MuJoCo's collision stage: `mj_collision` of one env's model at its
state, the default room against a map, by MuJoCo's own timers (broadphase, narrowphase).

    python benchmarks/map_collision.py [--map hospital] [--calls 3000] [--repeats 20]

Three models, each from an env (`gymnasium.make("ArenaMujoco-v0")`, 20 random steps in): the
default room, the map (`--map`, a folder of the shared assets' worlds), and the map with every
wall out of collisions (contype and conaffinity 0). Each runs `mj_collision` on its own MjData
from its env's state, the three taking turns per repeat (medians shown). A map's walls are
geoms of the world body: the narrowphase walks their bounding volume hierarchy for each of
the robot's collision bodies (what taking the walls out of collisions removes), and
MuJoCo's broadphase makes its frame from the geoms of the other bodies in passes over every
geom of the model (what it does not): what a map adds to every physics step of every env
whatever the lidar or the Python around them cost, the floor under issue 41's "hospital at
0.8 of the room" target.
"""

from __future__ import annotations

import argparse
import copy
import os
import statistics
import warnings
from pathlib import Path

import gymnasium as gym
import mujoco
import numpy as np

import arena_gym  # noqa: F401  (registers ArenaMujoco-v0)

ASSETS = Path(os.environ.get("ARENA_GYM_ASSETS", Path(__file__).resolve().parents[1] / ".." /
                             "shared" / "assets")).resolve()
TIMERS = ("COL_BROAD", "COL_NARROW", "POS_COLLISION")


def env_model(world: str) -> tuple[mujoco.MjModel, mujoco.MjData]:
    """The model of env 0 of `world` ("random": the default room) and a copy of its state."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # coarsened maps warn
        env = gym.make("ArenaMujoco-v0", world=world)
    env.reset(seed=0)
    for _ in range(20):
        env.step(env.action_space.sample())
    store = env.unwrapped.core.store
    model = store[0].model
    data = state_copy(model, store[0].data, model)
    env.close()
    return model, data


def state_copy(model: mujoco.MjModel, data: mujoco.MjData, into: mujoco.MjModel
               ) -> mujoco.MjData:
    """New MjData of `into` (a model of the same layout) in the state of `data`, forwarded."""
    copied = mujoco.MjData(into)
    state = mujoco.mjtState.mjSTATE_FULLPHYSICS
    buffer = np.empty(mujoco.mj_stateSize(model, state))
    mujoco.mj_getState(model, data, buffer, state)
    mujoco.mj_setState(into, copied, buffer, state)
    mujoco.mj_forward(into, copied)
    return copied


def walls_out(model: mujoco.MjModel, data: mujoco.MjData
              ) -> tuple[mujoco.MjModel, mujoco.MjData]:
    """A copy of the model with the world body's geoms (the walls) out of collisions."""
    quiet = copy.copy(model)
    walls = np.flatnonzero(model.geom_bodyid == 0)
    quiet.geom_contype[walls] = 0
    quiet.geom_conaffinity[walls] = 0
    return quiet, state_copy(model, data, quiet)


def collision_time(model: mujoco.MjModel, data: mujoco.MjData, calls: int) -> list[float]:
    """us per mj_collision of each timer in TIMERS."""
    for timer in data.timer:
        timer.duration, timer.number = 0.0, 0
    for _ in range(calls):
        mujoco.mj_collision(model, data)
    return [data.timer[int(getattr(mujoco.mjtTimer, "mjTIMER_" + name))].duration / calls * 1e6
            for name in TIMERS]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--map", default="hospital")
    parser.add_argument("--calls", type=int, default=3000)
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    path = ASSETS / "worlds" / args.map / "map" / "map.yaml"
    if not path.is_file():
        raise SystemExit(f"no map at {path}")
    room = env_model("random")
    world = env_model(str(path))
    models = {"default room": room, args.map: world,
              f"{args.map}, walls out": walls_out(*world)}
    rows: dict[str, list[list[float]]] = {name: [] for name in models}
    for _ in range(args.repeats):
        for name, (model, data) in models.items():
            rows[name].append(collision_time(model, data, args.calls))
    print(f"mj_collision, us per call (medians of {args.repeats} x {args.calls}; MuJoCo "
          f"{mujoco.__version__})")
    print("| model | geoms | contacts | broadphase | narrowphase | collision |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, (model, data) in models.items():
        med = [statistics.median(r[k] for r in rows[name]) for k in range(len(TIMERS))]
        print(f"| {name} | {model.ngeom} | {data.ncon} | {med[0]:.2f} | {med[1]:.2f} | "
              f"{med[2]:.2f} |")


if __name__ == "__main__":
    main()
