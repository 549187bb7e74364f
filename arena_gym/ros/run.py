"""`arena-gym bridge`: build the envs, start the node, serve until interrupted.

    arena-gym bridge --world default --robot builtin --envs 2 --lockstep
    arena-gym bridge --robot jackal/jackal.urdf --allow-root /data/obstacles
    arena-gym bridge --envs 1 --max-envs 4     # envs 1 .. 3 empty, filled by requests
    arena-gym bridge --robot-description-topic /robot_description --allow-root ~/ws/src
    arena-gym bridge --model humanoid.xml --envs 2  # an MJCF model as the world, as written
    arena-gym bridge --arena --lockstep --arena-root ~/arena4_ws   # an Arena-Rosnav session

Spawn requests read files only inside the robot's and the asset folders (files.py; more
with --allow-root). Exit status 0 after Ctrl-C or SIGTERM, 1 when the ROS node died.
"""

from __future__ import annotations

import faulthandler
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from arena_gym.assets.sources import is_xml_text
from arena_gym.scene.store import SceneStore
from arena_gym.sensors.suite import SensorSuite
from arena_gym.sim.simulator import Simulator

if TYPE_CHECKING:
    from arena_gym.ros.server import ArenaSession

BUILT_IN = ("default", "empty")
ARENA_MAX_ENVS = 64  # an Arena session's bound on envs made on first contact (memory)
DEFAULT_RADIUS = 0.3  # m: a URDF robot's footprint when no model_params.yaml comes with it


def robot_urdf(robot: str) -> Path | str:
    """The URDF of --robot: "builtin", a URDF path, or URDF text (a robot description from
    a topic: returned as it is)."""
    from arena_gym.worlds.default import builtin_robot_urdf

    if is_xml_text(robot):
        return robot
    urdf = builtin_robot_urdf() if robot == "builtin" else Path(robot)
    if not urdf.is_file():
        raise ValueError(f"--robot: expected 'builtin' or a URDF file, got {robot!r}")
    return urdf


def build_envs(world: str, robot: str, num_envs: int, seed: int,
               path_roots: tuple[Path, ...] | None = None,
               max_envs: int | None = None) -> tuple[SceneStore, str]:
    """`num_envs` envs of `world` with `robot` ("builtin", a URDF path, or URDF text: its
    `package://` URIs resolve in `path_roots`) in each; returns the store and the robot's
    name (a file's stem, the text's `<robot name>`). `max_envs` (> num_envs): the envs
    beyond stay empty (a ground plane and the sun, as Arena's server makes an env on first
    contact) until a request fills them. `world`: "default" (the 6 x 6 m room with random boxes, env
    i seeded seed + i), "empty" (a floor, the robot at the origin), a world source of the
    WORLDS registry ("random": the task's square room) or a ROS map.yaml path (its occupied
    cells as walls); in those two the robot starts at a free spot drawn with seed + i.
    `path_roots`: the store reads spawned files only inside these folders (files.py)."""
    from arena_gym.ros.files import package_paths
    from arena_gym.ros.topic_names import robot_name as check_name
    from arena_gym.worlds.default import ROBOT_NAME, build_default_world

    urdf = robot_urdf(robot)
    layout = None if world in BUILT_IN else world_layout(world)
    name = ROBOT_NAME if robot == "builtin" else robot_name(urdf)
    check_name(name, max(num_envs, max_envs or 0),  # its topics: before anything is built
               f"--robot {urdf.name}: robot name" if isinstance(urdf, Path)
               else "robot description: robot name")
    packages = package_paths(urdf, path_roots, path_roots if isinstance(urdf, str) else ())
    if max_envs is not None and max_envs < num_envs:
        raise ValueError(f"--max-envs: expected at least --envs ({num_envs}), got {max_envs}")
    store = SceneStore(num_envs=max(num_envs, max_envs or 0), path_roots=path_roots)
    for env in range(num_envs):
        rng = np.random.default_rng(seed + env)
        pose = (0.0, 0.0, 0.0)
        if world == "default":
            pose = build_default_world(store, env, rng)
            if robot != "builtin":
                store[env].delete([ROBOT_NAME])
        elif layout is not None:
            layout.build(store, env)
            pose = free_start(layout, rng, robot_radius(urdf))
        if world != "default" or robot != "builtin":
            store[env].spawn_urdf(name, urdf, pose=pose, package_paths=packages)
    return store, name


def world_layout(world: str):
    """The task layer's layout of a WORLDS name or a map.yaml path (one reader of both)."""
    from arena_gym.worlds.default import ROOM_SIZE
    from arena_gym.worlds.layouts import WORLDS, expand_world, make_layout

    if world not in WORLDS and not expand_world(world).endswith((".yaml", ".yml")):
        raise ValueError(f"--world: expected {' or '.join(BUILT_IN)}, a ROS map.yaml path or "
                         f"one of {WORLDS.names()}, got {world!r}")
    return make_layout(world, "", room_size=ROOM_SIZE)


def robot_name(urdf: Path | str) -> str:
    """A URDF file's stem; URDF text's `<robot name>` (as a robot name: no '/')."""
    import xml.etree.ElementTree as ET

    from arena_gym.assets.urdf import fold_name

    if isinstance(urdf, Path):
        return urdf.stem
    try:
        name = ET.fromstring(urdf).get("name", "")
    except ET.ParseError as exc:
        raise ValueError(f"robot description: malformed XML: {exc}") from None
    return fold_name(name) or "robot"


def robot_radius(urdf: Path | str) -> float:
    """The robot's footprint radius from the model_params.yaml beside its URDF, if any."""
    from arena_gym.assets.model_params import MODEL_PARAMS_FILE
    from arena_gym.assets.robot_params import load_robot_params

    if isinstance(urdf, str):  # a description from a topic: no folder of its own
        return DEFAULT_RADIUS
    params = urdf.parent / MODEL_PARAMS_FILE
    return load_robot_params(params).radius if params.is_file() else DEFAULT_RADIUS


def free_start(layout, rng: np.random.Generator, radius: float) -> tuple[float, float, float]:
    """A start the task would draw in `layout` (no obstacles, no goal constraint)."""
    from arena_gym.tasks.sampling import ObstaclePool, sample_episode
    from arena_gym.worlds.default import CLEARANCE

    pool = ObstaclePool(np.zeros((0, 3)))
    return sample_episode(rng, layout, pool, (0, 0), radius, CLEARANCE, 0.0).start


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def arena_store(num_envs: int, max_envs: int | None, arena_root: str | None,
                allow_roots: tuple[str, ...]) -> tuple[SceneStore, tuple[Path, ...], int]:
    """An Arena session's store: `num_envs` empty envs (more made on first contact, up to
    `max_envs`), files read in the Arena root and the allowed folders; (store, roots,
    bound)."""
    from arena_gym.ros.files import arena_root as find_root
    from arena_gym.ros.files import file_roots

    bound = ARENA_MAX_ENVS if max_envs is None else max_envs
    if bound < num_envs:
        raise ValueError(f"--max-envs: expected at least --envs ({num_envs}), got {bound}")
    roots = file_roots(None, (find_root(arena_root), *allow_roots))
    return SceneStore(num_envs=num_envs, path_roots=roots), roots, bound


def check_arena(world: str, robot: str, topic: str | None, model: str | None) -> None:
    """An Arena session spawns its world and robots itself: no world or robot of ours."""
    for flag, value, default in (("--world", world, "default"), ("--robot", robot, "builtin"),
                                 ("--robot-description-topic", topic, None),
                                 ("--model", model, None)):
        if value != default:
            raise ValueError(f"--arena: expected no {flag} (an Arena session spawns its "
                             f"world and robots over /mujoco/Spawn*), got {value!r}")


def model_envs(model: str, num_envs: int, seed: int, roots: tuple[Path, ...]
               ) -> tuple[Simulator, SensorSuite, str]:
    """`--model`: the MJCF (or URDF) file as the world of every env, as `Simulation(
    model_path=...)` builds it (nothing added; its sensors, live); the simulator, its
    suite (sampled every tick) and the model's entity name."""
    from arena_gym.envs.model_world import MODEL, ModelWorld

    path = Path(model)
    if not path.is_file():
        raise ValueError(f"--model: expected an MJCF or URDF file, got {model!r}")
    loaded = ModelWorld.load(path, num_envs, seed, path_roots=roots)
    suite = loaded.sensor_suite
    loaded.sim.hooks.tick.append(lambda sim: suite.update())
    return loaded.sim, suite, MODEL


def run(world: str, robot: str, num_envs: int, lockstep: bool, rt_factor: float, seed: int,
        venv: str | None, view: bool = False, allow_roots: tuple[str, ...] = (),
        package_paths: tuple[str, ...] = (), max_envs: int | None = None,
        robot_description_topic: str | None = None, model: str | None = None,
        arena: bool = False, arena_root: str | None = None) -> int:
    from arena_gym.ros.files import file_roots
    from arena_gym.ros.server import ArenaSession

    if arena:
        check_arena(world, robot, robot_description_topic, model)
        store, roots, bound = arena_store(num_envs, max_envs, arena_root, allow_roots)
        sim = Simulator(store)
        return _serve(sim, SensorSuite(sim, seed=seed), None,
                      f"an Arena session (node 'mujoco', no robot of ours, envs made on first "
                      f"contact up to {bound})", lockstep, rt_factor, venv, view, roots,
                      package_paths, session=ArenaSession(bound))
    if arena_root is not None:
        raise ValueError("--arena-root: expected it with --arena, got it alone")
    if model is not None:
        roots = file_roots(Path(model), allow_roots)
        sim, suite, name = model_envs(model, num_envs, seed, roots)
        return _serve(sim, suite, name, f"{num_envs} env(s) of model {Path(model).name!r}",
                      lockstep, rt_factor, venv, view, roots, package_paths)
    if robot_description_topic is not None:
        if robot != "builtin":
            raise ValueError("--robot-description-topic: expected it instead of --robot, got "
                             f"both (--robot {robot!r})")
        from arena_gym.ros.description import fetch_robot_description

        robot = fetch_robot_description(robot_description_topic,
                                        Path(venv) if venv else None)
        print(f"bridge: robot description from {robot_description_topic} "
              f"({len(robot)} characters)", flush=True)
    roots = file_roots(robot_urdf(robot), allow_roots)
    store, name = build_envs(world, robot, num_envs, seed, roots, max_envs)
    sim = Simulator(store)
    suite = SensorSuite(sim, seed=seed)
    empty = store.num_envs - num_envs
    more = f" and {empty} empty one(s) for requests to fill" if empty else ""
    return _serve(sim, suite, name, f"{num_envs} env(s) of {world!r}{more}, robot {name!r}",
                  lockstep, rt_factor, venv, view, roots, package_paths)


def _serve(sim: Simulator, suite: SensorSuite, name: str | None, what: str, lockstep: bool,
           rt_factor: float, venv: str | None, view: bool, roots: tuple[Path, ...],
           package_paths: tuple[str, ...], session: ArenaSession | None = None) -> int:
    """Start the node for `sim` (its bridged entity `name`; None: no robot of ours) and
    serve until interrupted; `what` says what it serves, `session` an Arena session."""
    from arena_gym.ros.server import Bridge, NodeExited

    # kill -USR1: every thread's stack to the real stderr, the server keeps running
    faulthandler.register(signal.SIGUSR1, file=sys.__stderr__, all_threads=True)
    signal.signal(signal.SIGTERM, _interrupt)  # clean up (node, shared memory) as on Ctrl-C
    bridge = Bridge.start(sim, suite, name, venv=Path(venv) if venv else None,
                          session=session)
    bridge.rt_factor = rt_factor
    bridge.commands.package_paths = tuple(Path(p) for p in package_paths)
    mode = (f"free-running x{rt_factor:g}" if not lockstep
            else "lockstep (paused; /mujoco/step advances)")
    print(f"bridge up: {what}, {mode}", flush=True)
    print(f"bridge: spawn requests may read files in {', '.join(map(str, roots))}",
          flush=True)
    viewer = None
    status = 0
    try:
        if view:  # MuJoCo's viewer on env 0, fed from its own thread (serving never waits),
            # lit by the lights services' table
            from arena_gym.render.live_viewer import LiveViewer

            viewer = LiveViewer(sim, 0, lights=bridge.arena.lights.get).start()
        bridge.serve(lockstep=lockstep)
    except KeyboardInterrupt:
        pass
    except NodeExited as exc:
        print(f"bridge: {exc}", file=sys.stderr, flush=True)
        status = 1
    finally:
        if viewer is not None:
            viewer.close()
        bridge.close()
        suite.close()
        sim.close()
    return status
