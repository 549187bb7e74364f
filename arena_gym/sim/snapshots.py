"""Post-tick snapshots for consumers of a free-running simulator (as mujoco_ros2_control's
MujocoSimulation): the stepping thread publishes, consumers take, neither waits on the other.

    snapshots = runner.snapshots                  # enables publishing (off until then)
    with snapshots.take() as snap:                # the latest completed tick, held
        snap.step_count, snap.clock, snap.field("qpos", env)

Whenever stepping reaches a tick boundary (every tick of the free-running loop; in a
lockstep `step(n)`, every tick when hooks run, else the end of the call), and after every
reset or state edit made through the simulator, the stepping thread copies FIELDS of every
env into a buffer no consumer holds and makes it the latest with a swap. `take()` only
counts a reference under a lock held for that swap, never for a step: a consumer copies
nothing and never delays physics, and a buffer it holds is not written until it is
released. Buffers are reused; one more is made only when every one is held or latest (so
at most consumers + 2 exist).

Arrays handed out are read-only views of the buffer; copy what must outlive the release.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from arena_gym.sim.groups import BatchGroup, PoolGroup

# what consumers read (the bridge's joint states, a viewer's pose, sensor outputs)
FIELDS = ("time", "qpos", "qvel", "act", "ctrl", "mocap_pos", "mocap_quat", "sensordata")


class Snapshot:
    """One env-consistent state of every env after a tick: all fields belong to `step_count`."""

    def __init__(self, groups: list[BatchGroup | PoolGroup], num_envs: int) -> None:

        self.groups = list(groups)  # the layout the blocks were made for
        self.seq = 0  # publication number: strictly increasing from one publish to the next
        self.step_count = 0
        self.clock = 0.0
        self._refs = 0
        # one block per batch group ((n, ...) per field), one per pooled env ((1, ...))
        self._blocks: list[dict[str, np.ndarray]] = []
        self._where = np.zeros((num_envs, 2), dtype=np.int64)  # env -> (block, row)
        for group in groups:
            if isinstance(group, BatchGroup):
                self._where[group.env_ids] = [(len(self._blocks), r)
                                              for r in range(len(group.env_ids))]
                self._blocks.append({f: np.array(group.bound(f)) for f in FIELDS})
            else:
                for scene in group.scenes:
                    self._where[scene.env_id] = (len(self._blocks), 0)
                    self._blocks.append({f: np.array(getattr(scene.compiled_data, f))[None]
                                         for f in FIELDS})

    def fill(self, step_count: int, clock: float, seq: int) -> None:
        """Copy the groups' current state in (the stepping thread, under the step lock)."""

        blocks = iter(self._blocks)
        for group in self.groups:
            if isinstance(group, BatchGroup):
                block = next(blocks)
                for f in FIELDS:
                    np.copyto(block[f], group.bound(f))
            else:
                for scene in group.scenes:
                    block = next(blocks)
                    for f in FIELDS:
                        block[f][0] = getattr(scene.compiled_data, f)
        self.step_count, self.clock, self.seq = step_count, clock, seq

    def field(self, name: str, env: int) -> np.ndarray:
        """A read-only view of env's `name` (one of FIELDS) in this snapshot."""
        if name not in FIELDS:
            raise KeyError(f"snapshot field: expected one of {list(FIELDS)}, got {name!r}")
        block, row = self._where[env]
        view = self._blocks[block][name][row].view()
        view.flags.writeable = False
        return view

    def time(self, env: int) -> float:
        return float(self._blocks[self._where[env, 0]]["time"][self._where[env, 1]])

    def columns(self, name: str, cols: np.ndarray) -> np.ndarray:
        """(num_envs, len(cols)): columns of a field every env has at the same place (a
        copy of just those columns, one fancy-indexed read per block)."""
        cols = np.asarray(cols, dtype=np.int64)
        out = np.empty((len(self._where), len(cols)))
        blocks = self._where[:, 0]
        for block in np.unique(blocks):
            envs = np.flatnonzero(blocks == block)
            out[envs] = self._blocks[block][name][self._where[envs, 1][:, None], cols]
        return out


class Lease:
    """A held snapshot: `with lease as snap` or `lease.snapshot` ... `lease.release()`."""

    def __init__(self, owner: Snapshots, snapshot: Snapshot) -> None:
        self._owner, self.snapshot = owner, snapshot
        self._held = True

    def release(self) -> None:
        """Hand the buffer back (again: nothing happens)."""
        if self._held:
            self._held = False
            self._owner._release(self.snapshot)

    def __enter__(self) -> Snapshot:
        return self.snapshot

    def __exit__(self, *exc: Any) -> None:
        self.release()


class Snapshots:
    """The buffers of one simulator: `publish` from the stepping thread, `take` from any."""

    def __init__(self, num_envs: int) -> None:
        self.num_envs = num_envs
        self.published = 0
        self._swap = threading.Lock()  # held for a reference count or a swap, never a step
        self._free: list[Snapshot] = []
        self._latest: Snapshot | None = None

    def publish(self, groups: list[BatchGroup | PoolGroup], step_count: int,
                clock: float) -> None:
        """Fill a buffer no one holds with the groups' state and make it the latest."""
        with self._swap:
            buffer = self._free.pop() if self._free else None
        if buffer is None or buffer.groups != groups:  # the same group objects?
            # first, or the envs were regrouped (maybe more of them: Simulator.add_envs)
            self.num_envs = sum(len(g.env_ids) for g in groups)
            buffer = Snapshot(groups, self.num_envs)
        buffer.fill(step_count, clock, self.published + 1)
        with self._swap:
            old, self._latest = self._latest, buffer
            self.published += 1
            if old is not None and old._refs == 0:
                self._free.append(old)

    def take(self) -> Lease:
        """The latest snapshot, held until the lease is released."""
        with self._swap:
            snapshot = self._latest
            if snapshot is None:
                raise RuntimeError("snapshots: none published yet; expected the simulator "
                                   "to publish when `runner.snapshots` is first read")
            snapshot._refs += 1
        return Lease(self, snapshot)

    def _release(self, snapshot: Snapshot) -> None:
        with self._swap:
            snapshot._refs -= 1
            if snapshot._refs == 0 and snapshot is not self._latest:
                self._free.append(snapshot)
