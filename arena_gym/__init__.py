"""arena_gym: fast, vectorised MuJoCo navigation environments.

Importing the package does no work; subpackages load on first use:

    from arena_gym.scene import SceneStore
    from arena_gym.sim import Simulator
"""

__version__ = "0.1.0"
