"""arena_gym: fast, vectorised MuJoCo navigation environments.

    import gymnasium, arena_gym
    env = gymnasium.make("ArenaMujoco-v0")
    envs = gymnasium.make_vec("ArenaMujoco-v0", num_envs=16,
                              vectorization_mode="vector_entry_point")

Importing the package registers the env id (Gymnasium's convention) and builds nothing;
subpackages (scene, sim, tasks, envs, wrappers) load on first use.
"""

from arena_gym.make import ENV_ID, register_envs

__version__ = "0.1.0"
__all__ = ["ENV_ID", "Simulation", "__version__"]

register_envs()


def __getattr__(name: str) -> object:
    if name == "Simulation":  # on first use: the simulator's face (arena_gym.simulation)
        from arena_gym.simulation import Simulation

        return Simulation
    raise AttributeError(f"module 'arena_gym' has no attribute {name!r}")
