"""Sensor costs: lidar per env-step against bare mj_multiRay, camera frames/s.

    python benchmarks/sensors.py [--envs 16] [--beams 360 1080] [--repeats 5] [--ticks 40]
                                 [--camera-envs 4] [--frames 30]

Lidar: N envs of the default world (arena_gym.worlds.build_default_world, env i seeded with
i; the built-in robot with its lidar declared at `beams` beams) and a SensorSuite holding
only that lidar, sampled every tick. Per env-step (one tick of 10 physics steps) it times

  ours        SensorSuite.update(): snapshot of each env's state, kinematics, the carrier
              hidden, mj_multiRay on the suite's threads, REP 117 ranges, publishing
  bare 1t     mj_multiRay alone, the same rays from the same states, env after env (the
              lidar's own link excluded: this robot's lidar sits only in that link's geom)
  bare Nt     the same on a thread pool of as many threads as the suite uses, one task per env

taking turns every tick (physics in between is not timed), so a change in machine speed hits
all alike; the table shows medians over repeats. The script checks that ours and bare give
the same ranges.

Camera: `--camera-envs` envs, the robot with a camera on its lidar link, rendered every tick:
frames/s over all envs for RGB, and for RGB + depth (one render pass gives both).
Machines are noisy: compare ratios measured in one run, not absolute numbers across runs.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from concurrent.futures import ThreadPoolExecutor

import mujoco
import numpy as np

from arena_gym.scene import SceneStore, builders
from arena_gym.sensors import CameraSpec, LidarSpec, SensorSuite
from arena_gym.sensors.lidar import geomgroup_mask, ray_pattern
from arena_gym.sim import Simulator
from arena_gym.worlds import build_default_world
from arena_gym.worlds.default import ROBOT_NAME, builtin_robot_urdf

CMD_VEL = (0.2, 0.3)
CAMERA = """<gazebo reference="base_scan"><sensor name="camera" type="camera">
  <pose>0.02 0 0.03 0 0 0</pose><camera><horizontal_fov>1.0472</horizontal_fov>
  <image><width>{w}</width><height>{h}</height></image><clip><near>0.05</near><far>20</far></clip>
  </camera></sensor></gazebo>"""


def robot_urdf(beams: int = 360, camera: tuple[int, int] | None = None) -> str:
    text = builtin_robot_urdf().read_text()
    text = text.replace("<samples>360</samples>", f"<samples>{beams}</samples>")
    if camera is not None:
        text = text.replace("</robot>", CAMERA.format(w=camera[0], h=camera[1]) + "</robot>")
    return text


def world(n: int, urdf: str) -> tuple[SceneStore, Simulator]:
    store = SceneStore(num_envs=n)
    for env in range(n):  # the default world, its robot swapped for the variant, same pose
        start = build_default_world(store, env, np.random.default_rng(env))
        store.delete_prims(env, [ROBOT_NAME])
        store.spawn_urdf(env, ROBOT_NAME, urdf, pose=start)
    sim = Simulator(store)
    for env in range(n):
        sim.set_cmd_vel(env, ROBOT_NAME, *CMD_VEL)
    return store, sim


class Bare:
    """mj_multiRay of the suite's rays from copies of the envs' states."""

    def __init__(self, store: SceneStore, nthread: int) -> None:
        self.store = store
        self.models = [store.model(e) for e in range(store.num_envs)]
        self.datas = [mujoco.MjData(m) for m in self.models]
        mount = next(m for m in store.robot(0, ROBOT_NAME).sensor_mounts if m.kind == "lidar")
        self.sites = [m.site(mount.site.replace("env_0/", f"env_{e}/")).id
                      for e, m in enumerate(self.models)]
        self.bodies = [int(m.site_bodyid[s]) for m, s in zip(self.models, self.sites, strict=True)]
        self.pattern = ray_pattern(mount.decl)
        nray = len(self.pattern.directions)
        self.dist = np.zeros((store.num_envs, nray))
        self.geomid = np.zeros((store.num_envs, nray), dtype=np.int32)
        self.mask = geomgroup_mask(builders.LIDAR_GROUPS)
        self.pool = ThreadPoolExecutor(nthread) if nthread > 1 else None

    def load(self) -> None:
        """Copy the envs' current states (untimed) and set up each env's rays."""
        self.rays = []
        for e, (model, data) in enumerate(zip(self.models, self.datas, strict=True)):
            mujoco.mj_copyData(data, model, self.store.data(e))
            mujoco.mj_kinematics(model, data)
            rot = data.site_xmat[self.sites[e]].reshape(3, 3)
            vec = np.ascontiguousarray(self.pattern.directions @ rot.T).ravel()
            self.rays.append((data.site_xpos[self.sites[e]].copy(), vec))

    def cast(self, env: int) -> None:
        origin, vec = self.rays[env]
        mujoco.mj_multiRay(self.models[env], self.datas[env], origin, vec, self.mask, 1,
                           self.bodies[env],
                           self.geomid[env], self.dist[env], None, len(self.dist[env]),
                           self.pattern.range_max)

    def run(self, threaded: bool) -> float:
        t0 = time.perf_counter()
        if threaded and self.pool is not None:
            list(self.pool.map(self.cast, range(len(self.models))))
        else:
            for env in range(len(self.models)):
                self.cast(env)
        return time.perf_counter() - t0

    def ranges(self) -> np.ndarray:
        p = self.pattern
        out = self.dist.astype(np.float32)
        out[(self.geomid < 0) | (self.dist > p.range_max)] = np.inf
        out[(self.geomid >= 0) & (self.dist < p.range_min)] = -np.inf
        return out


def bench_lidar(n: int, beams: int, ticks: int, repeats: int) -> tuple[float, float, float, float]:
    store, sim = world(n, robot_urdf(beams))
    # no hook: the benchmark calls update() itself, timed
    suite = SensorSuite(sim, specs=[LidarSpec(ROBOT_NAME, rate=0.0)], hook=False)
    sim.step(50)
    bare = Bare(store, suite.workers.nthread)
    # the same rays from the same state give the same ranges
    bare.load()
    bare.run(threaded=False)
    suite.update()
    ours = suite[f"{ROBOT_NAME}/lidar"].ranges
    assert np.array_equal(ours, bare.ranges()), "ours and bare mj_multiRay differ"
    results = {"ours": [], "bare1": [], "bareN": []}
    for _ in range(repeats):
        sums = dict.fromkeys(results, 0.0)
        for tick in range(ticks):
            sim.step(10)
            bare.load()
            order = ("ours", "bare1", "bareN") if tick % 2 == 0 else ("bareN", "bare1", "ours")
            for which in order:
                if which == "ours":
                    t0 = time.perf_counter()
                    suite.update()
                    sums["ours"] += time.perf_counter() - t0
                else:
                    sums[which] += bare.run(threaded=which == "bareN")
        for key, values in results.items():
            values.append(sums[key] / (ticks * n) * 1e6)
    suite.close()
    sim.close()
    ours, b1, bn = (statistics.median(results[k]) for k in ("ours", "bare1", "bareN"))
    ratio = statistics.median(o / b for o, b in zip(results["ours"], results["bareN"], strict=True))
    return ours, b1, bn, ratio


def bench_camera(n: int, size: tuple[int, int], frames: int,
                 outputs: tuple[str, ...]) -> float | None:
    _, sim = world(n, robot_urdf(camera=size))
    suite = SensorSuite(sim, specs=[CameraSpec(ROBOT_NAME, outputs=outputs, rate=0.0)], hook=False)
    sim.step(10)
    suite.update()  # make the GL contexts
    if not suite[f"{ROBOT_NAME}/camera"].valid.all():
        return None
    elapsed = 0.0
    for _ in range(frames):
        sim.step(10)
        t0 = time.perf_counter()
        suite.update()
        elapsed += time.perf_counter() - t0
    suite.close()
    sim.close()
    return n * frames / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--envs", type=int, default=16)
    parser.add_argument("--beams", type=int, nargs="+", default=[360, 1080])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--ticks", type=int, default=40, help="env-steps per repeat")
    parser.add_argument("--camera-envs", type=int, default=4)
    parser.add_argument("--frames", type=int, default=30, help="frames per env and size")
    args = parser.parse_args()
    t_total = time.perf_counter()
    print(f"{os.cpu_count()} CPUs, mujoco {mujoco.__version__}, MUJOCO_GL="
          f"{os.environ.get('MUJOCO_GL', '(unset: egl)')}, medians of {args.repeats} repeats")
    print()
    print(f"lidar at N={args.envs}, microseconds per env-step (one tick)")
    print(f"{'beams':>6} {'ours':>9} {'bare 1t':>9} {'bare Nt':>9} {'ours/bare Nt':>13}")
    for beams in args.beams:
        ours, b1, bn, ratio = bench_lidar(args.envs, beams, args.ticks, args.repeats)
        print(f"{beams:>6} {ours:>9.0f} {b1:>9.0f} {bn:>9.0f} {ratio:>13.2f}", flush=True)
    print()
    print(f"camera at N={args.camera_envs}, frames/s over all envs (shadows, reflections off)")
    print(f"{'size':>9} {'rgb':>8} {'rgb+depth':>10}")
    for size in ((320, 240), (640, 480)):
        rgb = bench_camera(args.camera_envs, size, args.frames, ("rgb",))
        both = bench_camera(args.camera_envs, size, args.frames, ("rgb", "depth"))
        cells = [f"{v:.0f}" if v is not None else "no GL" for v in (rgb, both)]
        print(f"{size[0]:>4}x{size[1]:<4} {cells[0]:>8} {cells[1]:>10}", flush=True)
    print(f"(total {time.perf_counter() - t_total:.0f} s)")


if __name__ == "__main__":
    main()
