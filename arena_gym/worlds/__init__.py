"""Ready-made worlds to spawn into a SceneStore env, and the built-in robot they use."""

from arena_gym.worlds.default import build_default_world, builtin_robot_urdf

__all__ = ["build_default_world", "builtin_robot_urdf"]
