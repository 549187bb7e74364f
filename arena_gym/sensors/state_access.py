"""Where each env's state lives while sensors sample it, and snapshots of it.

While stepping, a batched env's state is a row of its group's `mujoco.batch.Batch`; the
scene's own MjData is behind. Sensors never pull it (that would mark it edited): they read
state rows and bound outputs directly (lidar poses, contact-count history), cast rays
through `Simulator.cast_rays`, and copy an env into a private MjData (a "snapshot") only
for renders and contact lists (a collision to classify) and forced samples.

At a tick (`forced=False`) a snapshot gets fresh kinematics at the current state (camera
poses too, when asked: mj_comPos then mj_camlight, as mj_forward poses them); a light one
(rays) copies only the state vector, a full one (contacts) the whole MjData, whose
contacts and sensor outputs are those MuJoCo computed in the last substep, as after any
`mj_step`. A forced sampling (after a reset, when the last step's outputs are stale) runs
`mj_forward` on a full snapshot instead. Camera sensors draw `drawn(env)`: a second
private MjData at the current state after `mj_forward`, what `mujoco.Renderer` draws.
"""

from __future__ import annotations

import mujoco
import numpy as np

from arena_gym.scene.scene import Scene
from arena_gym.sensors.workers import Workers
from arena_gym.sim.groups import STATE, BatchGroup
from arena_gym.sim.simulator import Simulator


class Frames:
    """Access to every env's current state for one sampling round."""

    def __init__(self, sim: Simulator, workers: Workers) -> None:
        self.sim = sim
        self.workers = workers
        self.scenes: list[Scene] = sim.store.scenes
        self.round = 0  # bumped by begin(): units cache their results per round
        self.forced = False
        self._groups: list = []
        self._where: dict[int, tuple[object, int]] = {}
        self._scratch: dict[int, tuple[mujoco.MjModel, mujoco.MjData, np.ndarray]] = {}
        self._snapped: dict[int, tuple[int, bool]] = {}  # env -> (level loaded, cameras posed)
        # what cameras draw: a second private MjData per env, after mj_forward (drawn())
        self._drawing: dict[int, tuple[mujoco.MjModel, mujoco.MjData]] = {}
        self._drawn: set[int] = set()  # envs drawn() brought to this round's state
        self._unbound: set[int] = set()  # batch groups whose bound outputs are not filled yet
        # the one batch group holding every env in row order (the usual case), while its
        # outputs are filled: reads of every env are then plain slices of its fields
        self._whole: BatchGroup | None = None
        self._single: BatchGroup | None = None  # that group, its outputs filled or not

    def begin(self, forced: bool) -> None:
        groups = self.sim.stepping_groups()
        if self._unbound:
            self._unbound = set()
        if groups != self._groups:  # groups compare by identity: a regroup makes new ones
            self._groups = groups
            self._where = {}
            for group in groups:
                for i, env in enumerate(group.env_ids):
                    row = group.row[env] if isinstance(group, BatchGroup) else i
                    self._where[env] = (group, row)
                if isinstance(group, BatchGroup):
                    # an output bound now fills from the next call on: until then, snapshots
                    group.batch.bind("sensordata")
                    group.bound("history")
                    self._unbound.add(id(group))
            single = groups[0] if len(groups) == 1 else None
            self._single = single if (isinstance(single, BatchGroup) and single.env_ids
                                      == list(range(len(self.scenes)))) else None
        single = self._single
        self._whole = single if single is not None and id(single) not in self._unbound else None
        self.forced = forced
        self.round += 1
        self._snapped = {}
        self._drawn = set()

    @property
    def whole_group(self) -> BatchGroup | None:
        """The one batch group holding every env in row order with its outputs filled (the
        usual case), else None (several groups, outputs not filled yet, a forced round)."""
        return None if self.forced else self._whole

    def model(self, env: int) -> mujoco.MjModel:
        return self.scenes[env].compiled  # type: ignore[return-value]

    def snapshot(self, env: int, cameras: bool = False, full: bool = False) -> mujoco.MjData:
        """A private MjData of env at the current state with kinematics computed (camera
        poses too if asked), made at most once a round. `full` also brings what the last
        step computed (contacts, sensordata); a light one copies only the state vector."""
        model = self.model(env)
        cached = self._scratch.get(env)
        if cached is None or cached[0] is not model:
            buffer = np.empty(mujoco.mj_stateSize(model, STATE))
            cached = self._scratch[env] = (model, mujoco.MjData(model), buffer)
        data = cached[1]
        level, posed = self._snapped.get(env, (0, False))
        need = 2 if full or self.forced else 1
        if level < need:
            self._load(env, model, data, cached[2], full=need == 2)
            if self.forced:
                mujoco.mj_forward(model, data)
            else:
                mujoco.mj_kinematics(model, data)
            level, posed = need, self.forced
        if cameras and not posed:
            mujoco.mj_comPos(model, data)  # subtree_com: trackcom, targetbodycom cameras
            mujoco.mj_camlight(model, data)
            posed = True
        self._snapped[env] = (level, posed)
        return data

    def drawn(self, env: int) -> mujoco.MjData:
        """A private MjData of env at the current state after mj_forward, made at most once
        a round: what MuJoCo draws there (camera and light poses, tendon paths, rangefinder
        rays, contacts) as `mujoco.Renderer` draws it after mj_forward at that state."""
        model = self.model(env)
        cached = self._drawing.get(env)
        if cached is None or cached[0] is not model:
            cached = self._drawing[env] = (model, mujoco.MjData(model))
        data = cached[1]
        if env not in self._drawn:
            group, row = self._where[env]
            if isinstance(group, BatchGroup):
                mujoco.mj_setState(model, data, group.batch.state[row], STATE)
            else:
                live = self.scenes[env].compiled_data
                state = np.empty(mujoco.mj_stateSize(model, STATE))
                mujoco.mj_getState(model, live, state, STATE)
                mujoco.mj_setState(model, data, state, STATE)
            mujoco.mj_forward(model, data)
            self._drawn.add(env)
        return data

    def _load(self, env: int, model: mujoco.MjModel, data: mujoco.MjData, buffer: np.ndarray,
              full: bool) -> None:
        group, row = self._where[env]
        live = self.scenes[env].compiled_data
        if isinstance(group, BatchGroup):
            if full:
                group.batch.get_data(row, data)
            else:
                mujoco.mj_setState(model, data, group.batch.state[row], STATE)
        elif full:
            mujoco.mj_copyData(data, model, live)
        else:
            mujoco.mj_getState(model, live, buffer, STATE)
            mujoco.mj_setState(model, data, buffer, STATE)

    def state(self, env: int, field: str) -> np.ndarray:
        """A state field of env (qpos, qvel, ...), current, read-only by convention."""
        if self.forced:
            return getattr(self.snapshot(env, full=True), field)
        group, row = self._where[env]
        if isinstance(group, BatchGroup):
            return group.batch.bind(field)[row]
        return getattr(self.scenes[env].compiled_data, field)

    def rows(self, field: str, envs: np.ndarray, start: np.ndarray, width: int
             ) -> np.ndarray:
        """(len(envs), width): state field[start[i]:start[i] + width] of each env, current
        (state is, even in a forced round: no snapshot). For envs not held by one batch
        group in order (else `whole_state` reads them all at once)."""
        out = np.empty((len(envs), width))
        for i, env in enumerate(envs.tolist()):
            group, row = self._where[env]
            live = group.bound(field)[row] if isinstance(group, BatchGroup) else getattr(
                self.scenes[env].compiled_data, field)
            out[i] = live[int(start[i]):int(start[i]) + width]
        return out

    def row(self, field: str, env: int) -> np.ndarray:
        """An MjData field (history, time, ...) of env: state as it is, outputs as the last
        step left them (a forced round's snapshot: at the current state)."""
        group, row = self._where[env]
        if self.forced or id(group) in self._unbound:
            return np.asarray(getattr(self.snapshot(env, full=True), field))
        if isinstance(group, BatchGroup):
            return group.bound(field)[row]
        return np.asarray(getattr(self.scenes[env].compiled_data, field))

    def whole_state(self, field: str) -> np.ndarray | None:
        """(num_envs, ...): every env's state field (qpos, qvel, ...) as the live view of the
        one batch group that holds them all in row order, current in any round; None where
        the envs are not so held. To read before the next step, never to write."""
        return None if self._single is None else self._single.bound(field)

    def whole(self, field: str) -> np.ndarray | None:
        """(num_envs, ...): every env's field as the live view of the one batch group that
        holds them all in row order, outputs as the last step left them; None where that
        is not so (several groups, outputs not filled yet, or a forced round). To read
        before the next step, never to write."""
        if self._whole is None or self.forced:
            return None
        return self._whole.bound(field)

    def sensordata(self, env: int) -> np.ndarray:
        """sensordata of env: as the last step computed it, or (forced) at the current state."""
        group, row = self._where[env]
        if self.forced or id(group) in self._unbound:
            return self.snapshot(env, full=True).sensordata
        if isinstance(group, BatchGroup):
            return group.batch.bind("sensordata")[row]
        return self.scenes[env].compiled_data.sensordata

    def forget(self, env: int) -> None:
        self._scratch.pop(env, None)
        self._drawing.pop(env, None)
