"""The default world: a 6 x 6 m walled room, random boxes, and the built-in robot.

    >>> import numpy as np
    >>> from arena_gym.scene import SceneStore
    >>> store = SceneStore(num_envs=1)
    >>> x, y, yaw = build_default_world(store, 0, np.random.default_rng(0))

The room is centred on the origin. All randomness comes from the generator passed in, so
the same seed gives the same world.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from arena_gym.assets.model_params import MODEL_PARAMS_FILE
from arena_gym.assets.robot_params import load_robot_params
from arena_gym.config import EnvConfig
from arena_gym.geometry.footprints import distance_to_boxes
from arena_gym.scene.requests import WALL_THICKNESS, Prim, Wall
from arena_gym.scene.store import SceneStore

# the navigation task's reference room (EnvConfig's defaults): one source for both
ROOM_SIZE = EnvConfig.room_size  # m, side of the square room, between wall centre lines
WALL_HEIGHT = 0.5
BOX_SIZE_RANGE = EnvConfig.obstacle_size  # m, each extent of a box (width, depth, height)
ROBOT_NAME = "robot"
CLEARANCE = 0.4  # m, free space between the robot's footprint and any box or wall
MAX_TRIES = 1000

Box = tuple[float, float, float, float, float, float]  # x, y, yaw, sx, sy, sz


def builtin_robot_urdf() -> Path:
    """Path of arena_gym's own differential-drive robot (arena_diffbot) URDF."""
    assets = Path(__file__).resolve().parent.parent / "assets"
    return assets / "robots" / "arena_diffbot" / "arena_diffbot.urdf"


def _robot_radius() -> float:
    """The built-in robot's footprint radius, from its model_params.yaml (the one reader)."""

    return load_robot_params(builtin_robot_urdf().parent / MODEL_PARAMS_FILE).radius


def build_default_world(
    store: SceneStore, env_id: int, rng: np.random.Generator, num_obstacles: int = 8
) -> tuple[float, float, float]:
    """Spawn the room, `num_obstacles` boxes and the robot "robot" into an empty env.

    The boxes are named `obstacles/box_<k>` and lie inside the room (they may overlap one
    another). The robot starts where its footprint keeps CLEARANCE from every box and wall.
    Returns the robot's start pose (x, y, yaw).
    """
    inner = ROOM_SIZE / 2 - WALL_THICKNESS / 2  # half side of the free floor
    boxes = [_random_box(rng, inner) for _ in range(num_obstacles)]
    start = _free_pose(rng, inner, boxes)
    # the robot first: its spawn compiles, and the static bodies then compile once, lazily
    store[env_id].spawn_urdf(ROBOT_NAME, builtin_robot_urdf(), pose=start)
    store[env_id].spawn_walls(room_walls())
    store[env_id].spawn_prims([
        Prim(f"obstacles/box_{k}", pose=(x, y, sz / 2, yaw), scale=(sx, sy, sz))
        for k, (x, y, yaw, sx, sy, sz) in enumerate(boxes)
    ])
    return start


def room_walls(size: float = ROOM_SIZE, height: float = WALL_HEIGHT) -> list[Wall]:
    """Four walls of a square room of side `size` (wall centre lines), centred on 0."""
    h = size / 2
    e = h + WALL_THICKNESS / 2  # the x-running walls cover the corners
    return [
        Wall("walls/south", (-e, -h), (e, -h), height),
        Wall("walls/north", (-e, h), (e, h), height),
        Wall("walls/west", (-h, -h), (-h, h), height),
        Wall("walls/east", (h, -h), (h, h), height),
    ]


def _random_box(rng: np.random.Generator, inner: float) -> Box:
    sx, sy, sz = rng.uniform(*BOX_SIZE_RANGE, size=3)
    reach = inner - math.hypot(sx, sy) / 2  # keeps every corner inside the room
    x, y = rng.uniform(-reach, reach, size=2)
    yaw = rng.uniform(0.0, math.pi)
    return float(x), float(y), float(yaw), float(sx), float(sy), float(sz)


def _free_pose(
    rng: np.random.Generator, inner: float, boxes: list[Box]
) -> tuple[float, float, float]:
    keep_out = _robot_radius() + CLEARANCE
    reach = inner - keep_out
    footprints = np.array([box[:5] for box in boxes]).reshape(-1, 5)  # x, y, yaw, sx, sy
    for _ in range(MAX_TRIES):
        x, y = (float(v) for v in rng.uniform(-reach, reach, size=2))
        if distance_to_boxes(np.array([x, y]), footprints)[0] >= keep_out:
            return x, y, float(rng.uniform(-math.pi, math.pi))
    raise RuntimeError(
        f"no free start pose for the robot among {len(boxes)} boxes after {MAX_TRIES} tries; "
        "expected fewer obstacles"
    )
