"""Per-env scenes: a live MjSpec, MjModel and MjData per env_id, and spawners."""

from arena_gym.scene.errors import AssetWarning, SceneError, SpawnError, UnknownNameError
from arena_gym.scene.gazebo import LinkSurface, PluginDecl, SensorDecl
from arena_gym.scene.obstacle_models import ModelError, ObstacleModel, load_model
from arena_gym.scene.pedestrians import Pedestrian
from arena_gym.scene.records import Prim, PrimEdit, Shape, Slab, Wall
from arena_gym.scene.robot import RobotInfo
from arena_gym.scene.scene import Scene
from arena_gym.scene.store import SceneStore

__all__ = [
    "AssetWarning",
    "LinkSurface",
    "ModelError",
    "ObstacleModel",
    "Pedestrian",
    "PluginDecl",
    "Prim",
    "PrimEdit",
    "RobotInfo",
    "Scene",
    "SceneError",
    "SceneStore",
    "SensorDecl",
    "Shape",
    "Slab",
    "SpawnError",
    "UnknownNameError",
    "Wall",
    "load_model",
]
