"""Sensor costs: the lidar against bare Batch.ray, the collision rule per control step,
camera frames/s.

    python benchmarks/sensors.py [--envs 16] [--beams 360 1080] [--repeats 5] [--ticks 40]
                                 [--camera-envs 4] [--frames 30]

Lidar: N envs of the default world (arena_gym.worlds.build_default_world, env i seeded with
i; the built-in robot with its lidar declared at `beams` beams) and a SensorSuite holding
only that lidar (hook=False, update() called per env-step). Per env-step (10 physics
steps) it times

  ours        SensorSuite.update(): the lidar pose from qpos, the carrier hidden, one
              Simulator.cast_rays (Batch.ray over all envs), REP 117 ranges, publishing
  bare        Batch.ray alone on the same batch with the same rays (origins and directions
              made untimed), the carrier excluded by bodyexclude (its lidar link: this
              robot's beams meet no other of its bodies)

taking turns every tick (physics in between is not timed), so a change in machine speed hits
both alike; the table shows medians over all ticks and the median of per-tick ratios. The
script checks that ours and bare give the same ranges. Target (issue 8): ours/bare <= 1.1
at N = 16, 360 beams.

Collision: the same N envs (no lidar) stepped 20 physics steps per control step (dt 0.005,
0.1 s), with a SensorSuite holding the CollisionSpec updated after each control step,
against the same envs with neither a suite nor the robots' contact-count sensors (deleted
from their models): the whole collision's cost per control step, MuJoCo's per-step counts
and history included. As in the task, a robot that collided starts over (both sets alike,
untimed); the table shows the share of env-steps in collision.

Camera: `--camera-envs` envs, the robot with a camera on its lidar link, rendered every tick:
frames/s over all envs for RGB, and for RGB + depth (one render pass gives both).
Machines are noisy: compare ratios measured in one run, not absolute numbers across runs.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import mujoco
import numpy as np

from arena_gym.scene import SceneStore
from arena_gym.sensors import CameraSpec, CollisionSpec, LidarSpec, SensorSuite
from arena_gym.sensors.lidar import LIDAR_MASK, LidarUnit
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
        store[env].delete([ROBOT_NAME])
        store[env].spawn_urdf(ROBOT_NAME, urdf, pose=start)
    sim = Simulator(store)
    for env in range(n):
        sim.set_cmd_vel(env, ROBOT_NAME, *CMD_VEL)
    return store, sim


class Bare:
    """Batch.ray of the suite's rays on the simulator's own batch."""

    def __init__(self, sim: Simulator, suite: SensorSuite) -> None:
        ((kind, _),) = sim.groups()
        assert kind == "batch", "the benchmark expects one batch group"
        self.sim, self.suite = sim, suite
        self.batch = sim.stepping_groups()[0].batch
        self.unit = next(u for u in suite.units.values() if isinstance(u, LidarUnit))
        self.envs = np.arange(sim.store.num_envs)
        mount = next(m for m in sim.store[0].robot(ROBOT_NAME).sensor_mounts if m.kind == "lidar")
        models = [sim.store[e].model for e in self.envs]
        sites = [m.site(mount.site.replace("env_0/", f"env_{e}/")).id for e, m in enumerate(models)]
        self.exclude = np.array([int(m.site_bodyid[s]) for m, s in zip(models, sites, strict=True)],
                                dtype=np.int32)
        self.pattern = self.unit.pattern

    def load(self) -> None:
        """The current rays (untimed): the same origins and directions the suite casts."""
        self.suite.frames.begin(forced=False)
        origins, directions = self.unit.rays(self.suite.frames, self.envs)
        self.pnt = np.ascontiguousarray(origins[:, None, :])
        self.vec = np.ascontiguousarray(directions)
        self.body = np.ascontiguousarray(np.repeat(self.exclude[:, None], self.vec.shape[1], 1))

    def run(self) -> float:
        t0 = time.perf_counter()
        self.dist, self.geomid = self.batch.ray(self.pnt, self.vec, geomgroup=LIDAR_MASK,
                                                flg_static=True, bodyexclude=self.body)
        return time.perf_counter() - t0

    def ranges(self) -> np.ndarray:
        p = self.pattern
        out = self.dist.astype(np.float32)
        out[(self.geomid < 0) | (self.dist > p.range_max)] = np.inf
        out[(self.geomid >= 0) & (self.dist < p.range_min)] = -np.inf
        return out


def bench_lidar(n: int, beams: int, ticks: int, repeats: int) -> tuple[float, float, float]:
    _, sim = world(n, robot_urdf(beams))
    suite = SensorSuite(sim, specs=[LidarSpec(ROBOT_NAME, rate=0.0)], hook=False)
    sim.step(50)
    bare = Bare(sim, suite)
    # the same rays from the same state give the same ranges
    bare.load()
    bare.run()
    suite.update()
    ours = suite[f"{ROBOT_NAME}/lidar"].ranges
    assert np.array_equal(ours, bare.ranges()), "ours and bare Batch.ray differ"
    results: dict[str, list[float]] = {"ours": [], "bare": []}
    ratios = []
    for _ in range(repeats):
        for tick in range(ticks):
            sim.step(10)
            bare.load()
            times = {}
            order = ("ours", "bare") if tick % 2 == 0 else ("bare", "ours")
            for which in order:
                if which == "ours":
                    t0 = time.perf_counter()
                    suite.update()
                    times["ours"] = time.perf_counter() - t0
                else:
                    times["bare"] = bare.run()
            for key, value in times.items():
                results[key].append(value / n * 1e6)
            ratios.append(times["ours"] / times["bare"])
    suite.close()
    sim.close()
    # medians of single ticks (and of the per-tick ratio): robust to other jobs' spikes
    ours_us, bare_us = (statistics.median(results[k]) for k in ("ours", "bare"))
    return ours_us, bare_us, statistics.median(ratios)


def bench_collision(n: int, steps: int, repeats: int) -> tuple[float, float, float, float]:
    """(us per control step with the collision suite, without, ratio, share of env-steps
    in collision): two identical sets of envs taking turns, one sampled after every
    control step. As in the task, a robot that collided starts over (its start pose, both
    sets alike), so collisions stay as rare as episode ends."""
    sims, suites, starts = [], [], []
    for with_suite in (True, False):
        store = SceneStore(num_envs=n, timestep=0.005)
        for env in range(n):
            build_default_world(store, env, np.random.default_rng(env))
            if not with_suite:  # no collision at all: the contact counters go too
                scene = store.scene(env)
                for sensor in [x for x in scene.spec.sensors if "/collision/" in x.name]:
                    scene.spec.delete(sensor)
                scene.compile()
        sim = Simulator(store)
        for env in range(n):
            sim.set_cmd_vel(env, ROBOT_NAME, *CMD_VEL)
        sims.append(sim)
        starts.append([sim.state(e, "qpos").copy() for e in range(n)])
        suites.append(SensorSuite(sim, specs=[CollisionSpec(ROBOT_NAME)], hook=False)
                      if with_suite else None)
    results: dict[str, list[float]] = {"with": [], "without": []}
    collided = 0
    for _ in range(repeats):
        sums = {"with": 0.0, "without": 0.0}
        for k in range(steps):
            order = ((0, "with"), (1, "without")) if k % 2 == 0 else ((1, "without"), (0, "with"))
            for i, key in order:
                t0 = time.perf_counter()
                sims[i].step(20)
                if suites[i] is not None:
                    suites[i].update()
                sums[key] += time.perf_counter() - t0
            hit = np.flatnonzero(suites[0][f"{ROBOT_NAME}/collision"].collided)  # untimed
            collided += hit.size
            for i in (0, 1):
                for env in hit.tolist():
                    sims[i].state(env, "qpos")[:] = starts[i][env]
                    sims[i].state(env, "qvel")[:] = 0.0
            if hit.size:
                suites[0].reset(hit)
        for key, values in results.items():
            values.append(sums[key] / steps * 1e6)
    for suite in suites:
        if suite is not None:
            suite.close()
    for sim in sims:
        sim.close()
    ratio = statistics.median(
        w / o for w, o in zip(results["with"], results["without"], strict=True))
    share = collided / (repeats * steps * n)
    return statistics.median(results["with"]), statistics.median(results["without"]), ratio, share


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
    print(f"{'beams':>6} {'ours':>9} {'bare':>9} {'ours/bare':>10}")
    for beams in args.beams:
        ours, bare, ratio = bench_lidar(args.envs, beams, args.ticks, args.repeats)
        print(f"{beams:>6} {ours:>9.0f} {bare:>9.0f} {ratio:>10.3f}", flush=True)
    print()
    print(f"collision at N={args.envs}, microseconds per control step (20 physics steps)")
    with_, without, ratio, share = bench_collision(args.envs, args.ticks, args.repeats)
    print(f"{'with':>9} {'without':>9} {'with/without':>13} {'collided':>9}")
    print(f"{with_:>9.0f} {without:>9.0f} {ratio:>13.3f} {share:>9.1%}", flush=True)
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
