"""Stepping groups: envs whose models give MjData one layout share a `mujoco.batch.Batch`;
the others step on a thread pool (`mj_step` releases the GIL).

Each group owns the authoritative state of its envs while stepping. A scene's MjData is
brought up to date (`pull`) only when someone reads it, and written back (`push`) before the
next step, so the hot path copies nothing.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import mujoco
import mujoco.batch
import numpy as np

from arena_gym.scene.scene import Scene

STATE = mujoco.mjtState.mjSTATE_INTEGRATION
BADQACC = int(mujoco.mjtWarning.mjWARN_BADQACC)

# MjModel sizes that describe model-only contents (assets, names), not MjData's layout
_MODEL_ONLY_SIZES = ("nmesh", "ntex", "nhfield", "nnames", "npaths", "nbuffer", "ntext",
                     "nnumeric", "ntuple", "nkey", "nmat", "nskin", "nplugin", "nuser_")


def layout_signature(model: mujoco.MjModel) -> tuple[int, ...]:
    """Sizes that decide MjData's layout: envs with equal signatures can share a Batch."""
    names = sorted(
        n for n in dir(model)
        if n.startswith("n") and isinstance(getattr(model, n), int)
        and not n.startswith(_MODEL_ONLY_SIZES)
    )
    return tuple(getattr(model, n) for n in names)


class BatchGroup:
    """Envs with one MjData layout, stepped by one persistent Batch."""

    def __init__(self, scenes: list[Scene], nthread: int) -> None:
        self.scenes = scenes
        self.env_ids = [s.env_id for s in scenes]
        self.row = {env: i for i, env in enumerate(self.env_ids)}
        models = [s._model for s in scenes]
        self.batch = mujoco.batch.Batch(models[0], len(models), nthread=nthread, persistent=True)
        self.batch.set_models(models)
        self.ctrl = self.batch.bind("ctrl")
        for scene in scenes:
            self.push(scene)

    def push(self, scene: Scene) -> None:
        mujoco.mj_getState(scene._model, scene._data, self.batch.state[self.row[scene.env_id]], STATE)

    def pull(self, scene: Scene) -> None:
        self.batch.get_data(self.row[scene.env_id], scene._data)

    def ctrl_of(self, env_id: int) -> np.ndarray:
        return self.ctrl[self.row[env_id]]

    def bad_counts(self) -> np.ndarray:
        return self.batch.warning[:, BADQACC, 0].copy()

    def step(self, nstep: int) -> list[int]:
        """Step every env; return the env ids whose physics diverged (and were reset)."""
        before = self.bad_counts()
        try:
            self.batch.step(nstep=nstep)
        except mujoco.batch.SimulationError as exc:
            return [self.env_ids[i] for i in exc.ids]
        after = self.bad_counts()
        return [self.env_ids[i] for i in np.flatnonzero(after > before)]


class PoolGroup:
    """Envs stepped one MjData each, on a thread pool."""

    def __init__(self, scenes: list[Scene], pool: ThreadPoolExecutor | None) -> None:
        self.scenes = scenes
        self.env_ids = [s.env_id for s in scenes]
        self.pool = pool

    def push(self, scene: Scene) -> None:  # the scene's own MjData is the state
        pass

    def pull(self, scene: Scene) -> None:
        pass

    def ctrl_of(self, env_id: int) -> np.ndarray:
        return self.scenes[self.env_ids.index(env_id)]._data.ctrl

    @staticmethod
    def _step_one(scene: Scene, nstep: int) -> bool:
        model, data = scene._model, scene._data
        before = data.warning[BADQACC].number
        mujoco.mj_step(model, data, nstep)
        return data.warning[BADQACC].number > before

    def step(self, nstep: int) -> list[int]:
        if self.pool is None or len(self.scenes) == 1:
            bad = [self._step_one(s, nstep) for s in self.scenes]
        else:
            bad = list(self.pool.map(lambda s: self._step_one(s, nstep), self.scenes))
        return [env for env, b in zip(self.env_ids, bad) if b]


def make_groups(
    scenes: list[Scene], nthread: int, pool: ThreadPoolExecutor | None
) -> list[BatchGroup | PoolGroup]:
    by_layout: dict[tuple[int, ...], list[Scene]] = {}
    for scene in scenes:
        by_layout.setdefault(layout_signature(scene._model), []).append(scene)
    groups: list[BatchGroup | PoolGroup] = []
    odd: list[Scene] = []
    for members in by_layout.values():
        if len(members) < 2:
            odd += members
            continue
        try:
            groups.append(BatchGroup(members, nthread))
        except ValueError:  # a layout difference the signature missed
            odd += members
    if odd:
        groups.append(PoolGroup(odd, pool))
    return groups
