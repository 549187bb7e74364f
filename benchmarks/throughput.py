"""Env steps/s of ArenaVectorEnv against the physics + ray floor and Gymnasium's vector envs.

    python benchmarks/throughput.py [--envs 1 8 16 32] [--steps 300] [--repeats 3]
                                    [--base wheeled planar] [--no-gym]

For each N, in the same run and with random actions:
  ours    ArenaVectorEnv(N).step
  floor   the same work bare: one mujoco.batch.Batch over the same compiled models; per
          step the same controls written to its ctrl (the wheels' speeds, or a planar
          base's twist), batch.step(nstep=substeps), then batch.ray for the same beam fans
  floor_g the same, the fans cast by GeomRays (sim/geom_rays.py, the env's own cast of the
          room's primitive geoms) instead of batch.ray: the bare work of the env's step
  sync    gymnasium SyncVectorEnv of N single ArenaEnv (make_vec "sync")
  async   gymnasium AsyncVectorEnv of N single ArenaEnv (make_vec "async"), N <= 16
Repeats take turns among the methods; the table shows medians and ratios. Targets: issue 4's
ours >= 0.85 of the floor and >= 2x async at N = 16; issue 41's ours >= 0.92 of the floor
(on the planar base). Compare ratios within one run.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import gymnasium as gym
import mujoco.batch
import numpy as np

import arena_gym  # noqa: F401
from arena_gym.envs.vector_env import ArenaVectorEnv
from arena_gym.geometry.groups import GROUP_STATIC
from arena_gym.sensors.lidar import LidarUnit, geomgroup_mask
from arena_gym.sim.geom_rays import GeomRays

WORLD_ONLY = geomgroup_mask((GROUP_STATIC,))
RANGE = 3.5  # m: the default lidar's range (GeomRays culls by it, as the env's cast does)

CHUNK = 25  # steps per turn: ours and the floor take turns, so machine noise hits both


def time_ours_and_floor(env: ArenaVectorEnv, floor: Floor, steps: int,
                        rng: np.random.Generator) -> tuple[float, float, float]:
    env.reset(seed=0)
    actions = rng.uniform(env.action_space.low, env.action_space.high,
                          (steps, *env.action_space.shape))
    ours = bare = geom = 0.0
    for start in range(0, steps, CHUNK):
        t0 = time.perf_counter()
        for a in actions[start : start + CHUNK]:
            env.step(a)
        t1 = time.perf_counter()
        floor.run(actions[start : start + CHUNK])
        t2 = time.perf_counter()
        floor.run(actions[start : start + CHUNK], geom_rays=True)
        ours, bare, geom = ours + t1 - t0, bare + t2 - t1, geom + time.perf_counter() - t2
    return tuple(env.num_envs * steps / t for t in (ours, bare, geom))  # type: ignore[return-value]


class Floor:
    """The physics and rays of the same envs, with nothing else."""

    def __init__(self, env: ArenaVectorEnv) -> None:
        core = env.core
        self.n, self.substeps = env.num_envs, core.cfg.substeps
        models = [core.store[e].model for e in range(self.n)]
        self.batch = mujoco.batch.Batch(models[0], self.n, nthread=os.cpu_count() or 1,
                                        persistent=True)
        self.batch.set_models(models)
        for e in range(self.n):
            mujoco.mj_getState(models[e], core.store[e].data, self.batch.state[e],
                               mujoco.mjtState.mjSTATE_INTEGRATION)
        angles = core.scan_angles
        lidar = next(u for u in core.sensor_suite.units.values() if isinstance(u, LidarUnit))
        self.vec = np.zeros((self.n, len(angles), 3))
        self.vec[..., 0], self.vec[..., 1] = np.cos(angles), np.sin(angles)
        self.pnt = np.zeros((self.n, 1, 3))  # from where the robots stand
        self.pnt[:, 0, :2] = core.task.pose[:, :2]
        self.pnt[..., 2] = core.task.pose[:, None, 2] + lidar.offset[0, 2]
        self.exclude = np.full((self.n, len(angles)), lidar.carrier_root[0])
        drive = core.sim.controller.drive(0, "robot")
        self.ctrl, self.ids, self.matrix = self.batch.bind("ctrl"), drive.actuator_ids, drive.matrix
        self.base_ids = drive.base_ids  # a planar drive's or base's (vx, vy, omega)
        self.geom_rays = GeomRays(models)
        self.rows = np.arange(self.n, dtype=np.int64)
        self.origins = np.ascontiguousarray(self.pnt[:, 0])
        self.no_body = np.full(self.n, -1, np.int32)
        self.mocap = self.batch.bind("mocap_pos"), self.batch.bind("mocap_quat")

    def run(self, actions: np.ndarray, geom_rays: bool = False) -> None:
        """Per step: the actions' controls, the physics, the rays (batch.ray, or GeomRays'
        cast of the same fans: the env's own lidar blind to its robot)."""
        twist = np.zeros((len(actions), self.n, 3))
        twist[..., 0], twist[..., 2] = actions[..., 0], actions[..., -1]
        for step_twist in twist:
            self.ctrl[:, self.ids] = step_twist @ self.matrix.T
            self.ctrl[:, self.base_ids] = step_twist[:, :len(self.base_ids)]
            self.batch.step(nstep=self.substeps)
            if geom_rays:
                self.geom_rays.cast(self.origins, self.vec, WORLD_ONLY, self.no_body, RANGE,
                                    *self.mocap, self.rows)
            else:
                self.batch.ray(self.pnt, self.vec, geomgroup=WORLD_ONLY, flg_static=True,
                               bodyexclude=self.exclude)


def time_gym(mode: str, n: int, steps: int, rng: np.random.Generator, base: str) -> float:
    envs = gym.make_vec("ArenaMujoco-v0", num_envs=n, vectorization_mode=mode, base=base)
    envs.reset(seed=0)
    actions = rng.uniform(envs.action_space.low, envs.action_space.high,
                          (steps, *envs.action_space.shape))
    t0 = time.perf_counter()
    for a in actions:
        envs.step(a.astype(np.float32))
    rate = n * steps / (time.perf_counter() - t0)
    envs.close()
    return rate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--envs", type=int, nargs="+", default=[1, 8, 16, 32])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--base", nargs="+", default=["wheeled", "planar"],
                        choices=["wheeled", "planar"])
    parser.add_argument("--no-gym", action="store_true",
                        help="ours and the floor only (no Sync/AsyncVectorEnv)")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    print(f"{'base':>7} {'N':>3} {'ours':>8} {'floor':>8} {'floor_g':>8} {'sync':>8} "
          f"{'async':>8} {'ours/floor':>10} {'ours/floor_g':>12} {'ours/async':>10}")
    for base in args.base:
        for n in args.envs:
            env = ArenaVectorEnv(n, base=base)
            env.reset(seed=0)
            floor = Floor(env)
            rates: dict[str, list[float]] = {"ours": [], "floor": [], "floor_g": [], "sync": [],
                                             "async": []}
            for _ in range(args.repeats):
                ours, bare, geom = time_ours_and_floor(env, floor, args.steps, rng)
                rates["ours"].append(ours)
                rates["floor"].append(bare)
                rates["floor_g"].append(geom)
                if not args.no_gym:
                    rates["sync"].append(time_gym("sync", n, args.steps // 3, rng, base))
                    if n <= 16:
                        rates["async"].append(time_gym("async", n, args.steps // 3, rng,
                                                       base))
            med = {k: statistics.median(v) if v else float("nan") for k, v in rates.items()}
            ratio, ratio_g = (statistics.median(o / f for o, f in zip(
                rates["ours"], rates[key], strict=True)) for key in ("floor", "floor_g"))
            print(f"{base:>7} {n:>3} {med['ours']:>8,.0f} {med['floor']:>8,.0f} "
                  f"{med['floor_g']:>8,.0f} {med['sync']:>8,.0f} {med['async']:>8,.0f} "
                  f"{ratio:>10.2f} {ratio_g:>12.2f} {med['ours'] / med['async']:>10.2f}",
                  flush=True)
            env.close()


if __name__ == "__main__":
    main()
