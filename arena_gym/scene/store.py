"""SceneStore: one scene per env_id; it hands out scenes (the Arena MuJoCo backend's
operations are Scene methods) and routes pedestrians named `env_<id>/...` to theirs.

    store = SceneStore(num_envs=4)
    store[0].spawn_urdf("burger", "burger.urdf", pose=(0, 0, 0), package_paths=[pkg_root])
    store[0].spawn_prims([Prim("box", pose=(1, 0, 0.25, 0), scale=(0.5, 0.5, 0.5))])
    position, quat = store[0].get_pose("burger")

An operation on one env never touches its siblings.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import replace
from pathlib import Path

import mujoco
import numpy as np

from arena_gym.errors import SceneError
from arena_gym.people.pedestrians import POOL_SIZE, Pedestrian, split_env
from arena_gym.scene.scene import Scene


class SceneStore:
    """The scenes of `num_envs` envs, ids 0 .. num_envs - 1."""

    def __init__(self, num_envs: int = 1, timestep: float = 0.002,
                 path_roots: Iterable[str | Path] | None = None,
                 pedestrian_pool: int = POOL_SIZE, world: mujoco.MjSpec | None = None) -> None:
        """`path_roots`: confine every file a spawn reads (URDF, package paths, plain mesh
        paths) to these folders, for servers that spawn what others send.
        `pedestrian_pool`: the slots each env's pedestrian pool gets (built by its first
        pedestrian; every slot costs physics time, walking or not). `world`: the spec each
        env starts from (a copy; scene.models.model_world gives a loaded model's empty
        world); None: the navigation base world (ground plane, sun) at `timestep`."""
        if not isinstance(num_envs, int) or isinstance(num_envs, bool) or num_envs < 1:
            raise SceneError(f"num_envs: expected an integer >= 1, got {num_envs!r}")
        if not timestep > 0:
            raise SceneError(f"timestep: expected a positive number of seconds, got {timestep!r}")
        if isinstance(path_roots, (str, bytes, Path)):
            raise SceneError(f"path_roots: expected a list of folders, got {str(path_roots)!r}")
        if (not isinstance(pedestrian_pool, int) or isinstance(pedestrian_pool, bool)
                or not 1 <= pedestrian_pool <= 1000):
            raise SceneError(f"pedestrian_pool: expected an integer in [1, 1000], got "
                             f"{pedestrian_pool!r}")
        roots = None if path_roots is None else tuple(Path(r).resolve() for r in path_roots)
        self._made = (timestep, pedestrian_pool, roots, world)  # how add_envs makes a scene
        self.scenes: list[Scene] = []
        self.add_envs(num_envs)

    def add_envs(self, count: int) -> list[int]:
        """`count` more envs, empty (as every env starts: the navigation base world, or a
        copy of the store's `world`); returns their ids. A simulator stepping this store
        takes them through its own `add_envs` (sim/simulator.py), which calls this."""
        timestep, pool, roots, world = self._made
        first = len(self.scenes)
        for env in range(first, first + count):
            scene = Scene(env, timestep, pool, world)
            scene.path_roots = roots
            self.scenes.append(scene)
        return list(range(first, first + count))

    @property
    def num_envs(self) -> int:
        return len(self.scenes)

    def __len__(self) -> int:
        return len(self.scenes)

    def __iter__(self) -> Iterator[Scene]:
        return iter(self.scenes)

    def __getitem__(self, env_id: int) -> Scene:
        """The scene of `env_id`, checked: `store[0].spawn_prims([...])`."""
        return self.scene(env_id)

    def scene(self, env_id: int) -> Scene:
        if isinstance(env_id, (bool, float)) or not isinstance(env_id, (int, np.integer)):
            raise SceneError(f"env_id: expected an integer, got {env_id!r}")
        if not 0 <= env_id < len(self.scenes):
            raise SceneError(
                f"unknown env_id {env_id}: expected 0 <= env_id < {len(self.scenes)}"
            )
        return self.scenes[int(env_id)]

    # pedestrians (a 64-slot mocap pool per env: arena_gym.people.pedestrians)
    def spawn_pedestrians(self, peds: Iterable[Pedestrian], env_id: int | None = None
                          ) -> dict[int, list[int]]:
        """Stand pedestrians in their envs (each one's `env_<id>/` name prefix, or `env_id`);
        returns the pool slots per env. All or nothing: every env's request is checked
        before any pedestrian is placed."""
        routed = self._route(peds, env_id, "spawn_pedestrians")
        for env, group in routed.items():
            self.scene(env).pedestrians.check_new(env, group)
        return {env: self.scene(env).pedestrians.spawn(group) for env, group in routed.items()}

    def move_pedestrians(self, peds: Iterable[Pedestrian], env_id: int | None = None) -> None:
        """Teleport pedestrians (their walk clip restarts)."""
        routed = self._route(peds, env_id, "move_pedestrians")
        self._check_known(routed)
        for env, group in routed.items():
            self.scene(env).pedestrians.move(group)

    def update_pedestrians(self, peds: Iterable[Pedestrian], env_id: int | None = None) -> None:
        """Continuous pose updates of pedestrians (heading included)."""
        routed = self._route(peds, env_id, "update_pedestrians")
        self._check_known(routed)
        for env, group in routed.items():
            self.scene(env).pedestrians.update(group)

    def delete_pedestrians(self, names: Iterable[str], env_id: int | None = None
                           ) -> dict[int, list[str]]:
        """Return pedestrians to their env's pool (no compile); the names deleted per env."""
        names = [names] if isinstance(names, str) else list(names)
        routed = self._route([Pedestrian(n) if isinstance(n, str) else n for n in names],
                             env_id, "delete_pedestrians")
        self._check_known(routed)
        return {env: self.scene(env).pedestrians.delete([p.name for p in group])
                for env, group in routed.items()}

    def _route(self, peds: Iterable[Pedestrian], env_id: int | None, what: str
               ) -> dict[int, list[Pedestrian]]:
        """Pedestrians per env, their names without the env prefix."""
        if isinstance(peds, Pedestrian):
            peds = [peds]
        if env_id is not None:
            self.scene(env_id)
        routed: dict[int, list[Pedestrian]] = {}
        for ped in peds:
            if not isinstance(ped, Pedestrian):
                raise SceneError(f"{what}: expected Pedestrian records, got {type(ped).__name__}")
            env, name = split_env(ped.name)
            if env is None and env_id is None:
                raise SceneError(f"{what}: pedestrian {ped.name!r}: expected an env id or an "
                                 "'env_<id>/' name prefix, got neither")
            if env is not None and env_id is not None and env != env_id:
                raise SceneError(f"{what}: pedestrian {ped.name!r}: its prefix names env {env}, "
                                 f"but the request is for env {env_id}")
            env = env_id if env is None else env
            self.scene(env)  # a clear error for an unknown env
            routed.setdefault(int(env), []).append(replace(ped, name=name))  # type: ignore[arg-type]
        return routed

    def _check_known(self, routed: dict[int, list[Pedestrian]]) -> None:
        for env, group in routed.items():
            for ped in group:
                self.scene(env).pedestrians.slot(env, ped.name)
