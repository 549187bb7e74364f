"""`arena-gym bridge`: build the envs, start the node, serve until interrupted.

    arena-gym bridge --world default --robot builtin --envs 2 --lockstep
"""

from __future__ import annotations

import faulthandler
import signal
import sys
from pathlib import Path

import numpy as np

from arena_gym.scene.store import SceneStore
from arena_gym.sensors.suite import SensorSuite
from arena_gym.sim.simulator import Simulator

WORLDS = ("default", "empty")


def build_envs(world: str, robot: str, num_envs: int, seed: int) -> tuple[SceneStore, str]:
    """`num_envs` envs of `world` ("default": the 6 x 6 m room with random boxes, env i
    seeded seed + i; "empty": a floor) with `robot` ("builtin" or a URDF path) in each;
    returns the store and the robot's name."""
    from arena_gym.worlds.default import ROBOT_NAME, build_default_world, builtin_robot_urdf

    if world not in WORLDS:
        raise ValueError(f"--world: expected one of {list(WORLDS)}, got {world!r}")
    urdf = builtin_robot_urdf() if robot == "builtin" else Path(robot)
    if not urdf.is_file():
        raise ValueError(f"--robot: expected 'builtin' or a URDF file, got {robot!r}")
    name = ROBOT_NAME if robot == "builtin" else urdf.stem
    store = SceneStore(num_envs=num_envs)
    for env in range(num_envs):
        pose = (0.0, 0.0, 0.0)
        if world == "default":
            pose = build_default_world(store, env, np.random.default_rng(seed + env))
            if robot != "builtin":
                store.delete_prims(env, [ROBOT_NAME])
        if world == "empty" or robot != "builtin":
            store.spawn_urdf(env, name, urdf, pose=pose)
    return store, name


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def run(world: str, robot: str, num_envs: int, lockstep: bool, rt_factor: float, seed: int,
        venv: str | None, view: bool = False) -> int:
    from arena_gym.ros.server import Bridge

    store, name = build_envs(world, robot, num_envs, seed)
    # kill -USR1: every thread's stack to the real stderr, the server keeps running
    faulthandler.register(signal.SIGUSR1, file=sys.__stderr__, all_threads=True)
    signal.signal(signal.SIGTERM, _interrupt)  # clean up (node, shared memory) as on Ctrl-C
    sim = Simulator(store)
    suite = SensorSuite(sim, seed=seed)
    bridge = Bridge.start(sim, suite, name, venv=Path(venv) if venv else None)
    bridge.rt_factor = rt_factor
    mode = (f"free-running x{rt_factor:g}" if not lockstep
            else "lockstep (paused; /mujoco/step advances)")
    print(f"bridge up: {num_envs} env(s) of {world!r}, robot {name!r}, {mode}", flush=True)
    viewer = None
    try:
        if view:  # MuJoCo's viewer on env 0, fed from its own thread: serving never waits
            from arena_gym.render.live_viewer import LiveViewer

            viewer = LiveViewer(sim, 0).start()
        bridge.serve(lockstep=lockstep)
    except KeyboardInterrupt:
        pass
    finally:
        if viewer is not None:
            viewer.close()
        bridge.close()
        suite.close()
        sim.close()
    return 0
