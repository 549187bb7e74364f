"""A user's MuJoCo model as the world of every env: what `arena_gym.Simulation(model_path=...)`
and `arena-gym bridge --model FILE.xml` run, as a NavigationCore holds an env config's world.

The model is the world: each env's spec starts as the model's empty world (its compiler
settings, options, visual settings, statistics and sizes: scene.models.model_world) and the
model is attached to it as entity "model", so each env compiles to the model MuJoCo compiles
from the file, names aside (`env_<i>/model/...`). Nothing is added (no ground plane, no
light) unless `floor=True` asks for the navigation world's ground plane and sun.

    world = ModelWorld.load("humanoid.xml", num_envs=4, seed=0)
    world.sim.step(7); world.sensor_suite["model/mujoco"]["torso_vel"]
    world.close()
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from arena_gym.config import PluginConfig
from arena_gym.plugins import PluginHandle
from arena_gym.scene import builders
from arena_gym.scene.models import model_world
from arena_gym.scene.store import SceneStore
from arena_gym.scene.urdf_models import load_model
from arena_gym.sensors.suite import SensorSuite, default_specs
from arena_gym.sim.simulator import Simulator

MODEL = "model"  # the entity name of a loaded model in every env (`env_<i>/model/...`)


def plugin_configs(plugins: Iterable[PluginConfig | Mapping[str, Any]]) -> tuple[PluginConfig, ...]:
    """Runtime plugins as PluginConfigs: each a PluginConfig or a mapping {type, params}."""
    if isinstance(plugins, (str, bytes, Mapping)):
        raise ValueError(f"plugins: expected a list of {{type, params}} entries, got "
                         f"{plugins!r}")
    configs = []
    for i, entry in enumerate(plugins):
        if isinstance(entry, PluginConfig):
            configs.append(entry)
            continue
        if not isinstance(entry, Mapping) or set(entry) - {"type", "params"}:
            raise ValueError(f"plugins[{i}]: expected a PluginConfig or a mapping with keys "
                             f"type and params, got {entry!r}")
        configs.append(PluginConfig(**entry))
    return tuple(configs)


@dataclasses.dataclass
class ModelWorld:
    """A loaded MJCF or URDF model in every env: its scenes, simulator, sensor suite and
    runtime plugins (what a navigation core holds for an env config). `source` is the model
    (a path or its XML text), `base` the folder XML text's includes and assets resolve in."""

    store: SceneStore
    sim: Simulator
    sensor_suite: SensorSuite
    source: str | Path
    plugins: list[Any] = dataclasses.field(default_factory=list)
    generation: int = 0  # advances when the world closes: plugin handles go stale

    @classmethod
    def load(cls, source: str | Path, num_envs: int, seed: int | None,
             srdf: str | Path | None = None, floor: bool = False,
             plugins: Iterable[PluginConfig] = (),
             base: str | Path | None = None,
             path_roots: tuple[Path, ...] | None = None) -> ModelWorld:
        """`source` (an MJCF or URDF path, or its XML text; `srdf` with a URDF) in
        `num_envs` envs; `plugins`: runtime plugins (arena_gym.plugins), loaded once the
        world is built; `base`: the folder XML text resolves its files in; `path_roots`:
        the folders every file read must lie in (SceneStore's: a server's)."""
        spec, _ = load_model(source, f"model {MODEL!r}", path_roots, srdf, base)
        world = model_world(spec)
        if floor:
            builders.add_sun(world)
            builders.add_ground(world)
        store = SceneStore(num_envs, timestep=float(spec.option.timestep), world=world,
                           path_roots=path_roots)
        for scene in store:
            scene.spawn_mjcf(MODEL, source, srdf=srdf, base=base)
        sim = Simulator(store)
        suite = SensorSuite(sim, default_specs(store), seed=seed, hook=False)
        loaded = cls(store, sim, suite, source)
        try:
            loaded.plugins = [PluginHandle(p.type, dict(p.params), loaded,
                                           lambda: loaded.generation) for p in plugins]
        except Exception:
            loaded.close()
            raise
        return loaded

    def close(self) -> None:
        self.generation += 1
        self.sensor_suite.close()
        self.sim.close()
