"""Mesh obstacles: load times (cold and warm cache), compile and physics cost, env speed.

    python benchmarks/meshes.py [--envs 16] [--steps 200] [--quick]

1. Cold and warm loads of a world holding every shared obstacle model (../shared/assets/
   obstacles): load_model + spawn_prims + compile, first into an empty cache (a temporary
   ARENA_GYM_CACHE), then again from it; the seconds CoACD spent decomposing in each.
2. Compile time and physics steps/s (mj_step, one env) of the arena_diffbot among those
   models, against the same world with each model as its bounding box.
3. Env steps/s of the default world (N envs, random actions) with its obstacle pool drawn
   from the shared models against its pool of boxes, taking turns in chunks (same run);
   the target is at least 0.7 of the box figure.
--quick: fewer steps and repetitions (a smoke run; ratios noisier).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path

import mujoco

sys.path.insert(0, str(Path(__file__).resolve().parent))
from maps import ASSETS, World, take_turns  # noqa: E402  (one World/timing helper for benchmarks)

from arena_gym.assets import hulls  # noqa: E402
from arena_gym.assets.obstacle_models import load_model  # noqa: E402
from arena_gym.scene import Prim, SceneStore  # noqa: E402
from arena_gym.worlds import builtin_robot_urdf  # noqa: E402

MODELS = ("Desk", "RecTable", "SquareShelf", "WoodenChair", "cafe_table", "office_chair",
          "pallet_jack_1", "shelf", "warehouse_shelf")
POOL = ["Desk", "RecTable", "SquareShelf", "WoodenChair", "cafe_table", "office_chair"]


def furnished(bbox: bool) -> SceneStore:
    """The robot in a 3 x 3 grid of every shared model, 4 m apart."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        store = SceneStore(1, timestep=0.005)
        store[0].spawn_urdf("bot", builtin_robot_urdf(), pose=(-2.0, -2.0, 0.7))
        models = [load_model(name, [ASSETS / "obstacles"]) for name in MODELS]
        store[0].spawn_prims([Prim.of_model(m, f"m{i}", pose=(4.0 * (i % 3), 4.0 * (i // 3), 0.0),
                                     bbox=bbox) for i, m in enumerate(models)])
        _ = store[0].model  # compile
    return store


def loads() -> None:
    old = os.environ.get("ARENA_GYM_CACHE")
    with tempfile.TemporaryDirectory() as cache:
        os.environ["ARENA_GYM_CACHE"] = cache
        try:
            times = []
            for _ in ("cold", "warm"):
                before = dict(hulls.stats)
                t0 = time.perf_counter()
                furnished(bbox=False)
                times.append((time.perf_counter() - t0,
                              hulls.stats["seconds"] - before["seconds"],
                              hulls.stats["decomposed"] - before["decomposed"]))
        finally:
            if old is None:
                del os.environ["ARENA_GYM_CACHE"]
            else:
                os.environ["ARENA_GYM_CACHE"] = old
    (cold, cold_dec, n), (warm, warm_dec, m) = times
    print(f"load, all {len(MODELS)} shared models: cold {cold:.2f} s ({n} files decomposed, "
          f"CoACD threads {cold_dec:.2f} s), warm {warm:.2f} s ({m} decomposed, "
          f"{warm_dec:.2f} s); warm/cold {warm / cold:.3f}, decomposition warm/cold "
          f"{warm_dec / max(cold_dec, 1e-9):.3f}")


def physics(repeats: int, steps: int) -> None:
    rows = {}
    for label, bbox in (("boxes", True), ("meshes", False)):
        store = furnished(bbox)
        scene = store.scene(0)
        compiles = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            scene.spec.compile()
            compiles.append(time.perf_counter() - t0)
        model, data = store[0].model, store[0].data
        data.ctrl[:] = 1.0  # wheels turning: the robot drives into the furniture
        t0 = time.perf_counter()
        for _ in range(steps):
            mujoco.mj_step(model, data)
        rows[label] = (statistics.median(compiles), steps / (time.perf_counter() - t0),
                       model.ngeom)
    print(f"{'world':<8}{'geoms':>7}{'compile ms':>12}{'mj_step/s':>11}")
    for label, (compile_s, rate, ngeom) in rows.items():
        print(f"{label:<8}{ngeom:>7}{compile_s * 1e3:>12.1f}{rate:>11.0f}")
    box, mesh = rows["boxes"], rows["meshes"]
    print(f"meshes/boxes: compile x{mesh[0] / box[0]:.2f}, physics steps/s x{mesh[1] / box[1]:.2f}")


def env_speed(envs: int, steps: int) -> None:
    paths = (str(ASSETS / "obstacles"),)
    worlds = [World("box pool", "random", envs, 0),
              World("model pool", "random", envs, 0, obstacles=POOL, model_paths=paths)]
    take_turns(worlds, steps)
    boxes = worlds[0].steps / worlds[0].seconds
    boxes_cpu = worlds[0].steps / worlds[0].cpu
    print(f"default world, N = {envs}, {steps} vector steps each, random actions; pool models: "
          f"{', '.join(POOL)}")
    # "cpu x boxes": steps per CPU second against the box pool's, which waiting for a
    # busy machine's cores sways less than the wall-clock figure (the target's)
    print(f"{'pool':<12}{'build s':>8}{'steps/s':>9}{'x boxes':>9}{'cpu x boxes':>13}"
          f"{'physics':>9}{'rays':>7}")
    for w in worlds:
        rate = w.steps / w.seconds
        print(f"{w.label:<12}{w.build:>8.2f}{rate:>9.0f}{rate / boxes:>9.2f}"
              f"{w.steps / w.cpu / boxes_cpu:>13.2f}"
              f"{w.physics.seconds / w.seconds:>9.0%}{w.rays.seconds / w.seconds:>7.0%}")
    for w in worlds:
        w.env.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--envs", type=int, default=16)
    parser.add_argument("--steps", type=int, default=200, help="vector steps per pool")
    parser.add_argument("--quick", action="store_true", help="a short smoke run")
    args = parser.parse_args()
    if not (ASSETS / "obstacles").is_dir():
        raise SystemExit(f"no shared obstacle models at {ASSETS / 'obstacles'}")
    steps = 60 if args.quick else args.steps
    loads()
    physics(3 if args.quick else 10, 2000 if args.quick else 20000)
    env_speed(args.envs, steps)


if __name__ == "__main__":
    main()
