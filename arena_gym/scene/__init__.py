"""Per-env scenes: a live MjSpec, MjModel and MjData per env_id, and spawners."""

from arena_gym.assets.gazebo import LinkSurface, PluginDecl, SensorDecl
from arena_gym.assets.obstacle_models import ModelError, ObstacleModel, load_model
from arena_gym.assets.shapes import Shape
from arena_gym.errors import AssetWarning, SceneError, SpawnError, UnknownNameError
from arena_gym.people.pedestrians import Pedestrian
from arena_gym.scene.models import ModelInfo
from arena_gym.scene.requests import Prim, PrimEdit, Slab, Wall
from arena_gym.scene.robot import RobotInfo
from arena_gym.scene.scene import Scene
from arena_gym.scene.store import SceneStore

__all__ = [
    "AssetWarning",
    "LinkSurface",
    "ModelError",
    "ModelInfo",
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
