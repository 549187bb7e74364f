"""The mechanism tick: doors open for whoever approaches, gates stay shut while locked,
plates drive their doors, caps count who is inside, elevators carry their riders.

    mechanisms = Mechanisms(sim, load_mechanisms("worlds/lab/mechanisms.yaml"))
    sim.step(500)                                    # doors and cabins move at every tick
    mechanisms.set_locked(0, "lab_door", True)       # a gate now

Doors and cabins are movable box prims (mocap bodies, spawned by MechanismSet.spawn), so
they move through the envs' state views (`Simulator.state(env, "mocap_pos")`, the store's
in-place path for movable prims, as episodes move the obstacle pool): never a recompile,
and lidar, cameras and the collision rule see them where this tick left them. The tick
is a simulator tick hook, registered only when a world declares mechanisms, so a world
without any steps exactly as before.

Agents are every robot (its root body) and every placed pedestrian of an env. A rider of
an elevator is an agent over its cabin floor; the tick moves riders with the cabin (a
robot through its free joint's z, a pedestrian through its mocap z), so they arrive at
the destination's floor height standing as they stood.
"""

from __future__ import annotations

import math

import mujoco
import numpy as np

from arena_gym.errors import unknown
from arena_gym.geometry.rotations import yaw_quat
from arena_gym.sim.simulator import Simulator
from arena_gym.worlds.mechanisms import CABIN_THICKNESS, SWING_ANGLE, MechanismSet

_PARKED_BELOW = -1.0  # m: pedestrian slots below this height are parked, not agents
_RIDER_HEIGHT = 1.5  # m above a cabin floor that still counts as standing in it
_RIDER_SLACK = 0.05  # m below it (a robot's origin may sit at its wheels' axle or lower)


class _EnvViews:
    """One env's live state views and the ids the tick needs, for one model layout."""

    def __init__(self, sim: Simulator, env: int, names: list[str]) -> None:
        scene = sim.store.scene(env)
        model = scene.model
        self.mocap_pos = sim.state(env, "mocap_pos")
        self.mocap_quat = sim.state(env, "mocap_quat")
        self.qpos = sim.state(env, "qpos")
        self.mocap = np.array([model.body_mocapid[model.body(scene.entity(n).body).id]
                               for n in names], dtype=np.int64)
        roots = [model.body(r.root_body).id for r in scene.robots()]
        self.robot_z = np.array([model.jnt_qposadr[model.body_jntadr[b]] + 2 for b in roots
                                 if model.body_jntnum[b] and model.jnt_type[model.body_jntadr[b]]
                                 == mujoco.mjtJoint.mjJNT_FREE], dtype=np.int64)
        peds = scene.pedestrians
        self.ped_mocap = (np.array([model.body_mocapid[model.body(b).id] for b in peds.bodies],
                                   dtype=np.int64) if peds.built else np.zeros(0, np.int64))

    def agents(self) -> tuple[np.ndarray, np.ndarray]:
        """(A, 3) agent positions and, per agent, its index into qpos (robot, >= 0) or
        -1 - its mocap row (pedestrian)."""
        robots = np.stack([self.qpos[self.robot_z - 2], self.qpos[self.robot_z - 1],
                           self.qpos[self.robot_z]], axis=1)
        peds = self.mocap_pos[self.ped_mocap]
        placed = peds[:, 2] > _PARKED_BELOW
        where = np.concatenate([self.robot_z, -1 - self.ped_mocap[placed]])
        return np.concatenate([robots, peds[placed]]), where

    def lift(self, where: np.ndarray, dz: float) -> None:
        self.qpos[where[where >= 0]] += dz
        self.mocap_pos[-1 - where[where < 0], 2] += dz


class Mechanisms:
    """The doors and elevators of `mechanisms` in every env of `sim` (each env spawned
    them, MechanismSet.spawn); state arrays are (num_envs, doors) or (num_envs, elevators)."""

    def __init__(self, sim: Simulator, mechanisms: MechanismSet) -> None:
        self.sim, self.set = sim, mechanisms
        n, doors, lifts = sim.store.num_envs, mechanisms.doors, mechanisms.elevators
        self.opening = np.zeros((n, len(doors)))  # 0 shut .. 1 open
        self.locked = np.tile([d.locked for d in doors], (n, 1)).reshape(n, len(doors))
        self.counts = np.zeros((n, len(doors)), dtype=np.int64)  # agents in each door's cap
        self._last_trigger = np.full((n, len(doors)), -np.inf)
        self.cabin_z = np.tile([e.levels[e.start] for e in lifts], (n, 1)).reshape(n, len(lifts))
        self._target = self.cabin_z.copy()
        self._boarded = np.zeros((n, len(lifts)))  # s riders have stood in a resting cabin
        self._served = np.zeros((n, len(lifts)), dtype=bool)  # carried since they boarded
        self._names = [d.name for d in doors] + [e.name for e in lifts]
        self._views: list[_EnvViews] = []
        self._version: tuple[int, ...] | None = None
        self._door_xy = np.array([d.pose[:2] for d in doors]).reshape(-1, 2)
        if mechanisms:
            sim.add_tick_hook(self.tick)

    def close(self) -> None:
        if self.set and self.tick in self.sim._hooks:
            self.sim.remove_tick_hook(self.tick)

    # ------------------------------------------------------------------ control
    def set_locked(self, env: int, door: str, locked: bool) -> None:
        """Lock (a gate: it closes and stays shut) or unlock a door of env `env`."""
        self.locked[env, self._door(door)] = bool(locked)

    def door_index(self, door: str) -> int:
        return self._door(door)

    def _door(self, name: str) -> int:
        names = [d.name for d in self.set.doors]
        if name not in names:
            raise unknown("door", name, names)
        return names.index(name)

    def reset(self, envs: list[int]) -> None:
        """Doors shut (locks as declared), cabins at their start level, for these envs."""
        for e in envs:
            self.opening[e] = 0.0
            self.locked[e] = [d.locked for d in self.set.doors]
            self._last_trigger[e] = -np.inf
            self.cabin_z[e] = [el.levels[el.start] for el in self.set.elevators]
            self._target[e] = self.cabin_z[e]
            self._boarded[e], self._served[e] = 0.0, False
        self._refresh()
        for e in envs:
            self._place(e)

    # ------------------------------------------------------------------ the tick
    def _refresh(self) -> None:
        version = self.sim.layout_version
        if version != self._version or not self._views:
            self._views = [_EnvViews(self.sim, e, self._names)
                           for e in range(self.sim.store.num_envs)]
            self._version = self.sim.layout_version

    def tick(self, sim: Simulator) -> None:
        """Advance every mechanism by one tick (a Simulator tick hook)."""
        self._refresh()
        dt = sim.tick_steps * sim.timestep
        for e, views in enumerate(self._views):
            agents, where = views.agents()
            if len(self.set.doors):
                self._doors(e, agents, sim.clock, dt)
            for k in range(len(self.set.elevators)):
                self._elevator(e, k, views, agents, where, dt)
            self._place(e)

    def _doors(self, e: int, agents: np.ndarray, now: float, dt: float) -> None:
        for i, door in enumerate(self.set.doors):
            if door.plate is not None:
                px, py, r = door.plate
                near = np.hypot(agents[:, 0] - px, agents[:, 1] - py) < r
            else:
                x, y = self._door_xy[i]
                near = np.hypot(agents[:, 0] - x, agents[:, 1] - y) < door.zone
            near &= agents[:, 2] < door.size[2]  # not a storey above
            trigger = bool(near.any())
            if door.cap is not None:
                x0, y0, x1, y1 = door.cap.zone
                inside = ((agents[:, 0] >= x0) & (agents[:, 0] <= x1)
                          & (agents[:, 1] >= y0) & (agents[:, 1] <= y1))
                self.counts[e, i] = int(inside.sum())
                trigger &= self.counts[e, i] < door.cap.max
            if trigger:
                self._last_trigger[e, i] = now
        target = ((now - self._last_trigger[e] <= np.array([d.hold for d in self.set.doors]))
                  & ~self.locked[e]).astype(float)
        rate = dt / np.array([d.open_time for d in self.set.doors])
        self.opening[e] += np.clip(target - self.opening[e], -rate, rate)

    def _elevator(self, e: int, k: int, views: _EnvViews, agents: np.ndarray,
                  where: np.ndarray, dt: float) -> None:
        lift = self.set.elevators[k]
        z = self.cabin_z[e, k]
        x, y, yaw = lift.pose
        c, s = math.cos(yaw), math.sin(yaw)
        dx, dy = agents[:, 0] - x, agents[:, 1] - y
        u, v = c * dx + s * dy, -s * dx + c * dy  # in the cabin's frame
        above = agents[:, 2] - z
        riders = ((np.abs(u) <= lift.size[0] / 2) & (np.abs(v) <= lift.size[1] / 2)
                  & (above >= -_RIDER_SLACK) & (above <= _RIDER_HEIGHT))
        if z == self._target[e, k]:  # resting
            if not riders.any():
                self._boarded[e, k], self._served[e, k] = 0.0, False
                return
            self._boarded[e, k] += dt
            if self._boarded[e, k] < lift.dwell or self._served[e, k]:
                return
            start, dest = lift.levels[lift.start], lift.levels[lift.destination]
            self._target[e, k] = dest if abs(z - start) < abs(z - dest) else start
        step = float(np.clip(self._target[e, k] - z, -lift.speed * dt, lift.speed * dt))
        self.cabin_z[e, k] = z + step
        views.lift(where[riders], step)
        if self.cabin_z[e, k] == self._target[e, k]:
            self._boarded[e, k], self._served[e, k] = 0.0, True

    def _place(self, e: int) -> None:
        """Write env e's door and cabin poses into its state."""
        views = self._views[e]
        for i, door in enumerate(self.set.doors):
            x, y, yaw = door.pose
            w, _, h = door.size
            f = self.opening[e, i]
            if door.motion == "slide":
                pos, quat = (x + f * w * math.cos(yaw), y + f * w * math.sin(yaw)), None
            else:  # about the hinge at the door's -x edge
                hx, hy = x - w / 2 * math.cos(yaw), y - w / 2 * math.sin(yaw)
                turned = yaw + f * SWING_ANGLE
                pos = (hx + w / 2 * math.cos(turned), hy + w / 2 * math.sin(turned))
                quat = yaw_quat(turned)
            m = views.mocap[i]
            views.mocap_pos[m] = (*pos, h / 2)
            if quat is not None:
                views.mocap_quat[m] = quat
        cabins = views.mocap[len(self.set.doors):]
        views.mocap_pos[cabins, 2] = self.cabin_z[e] - CABIN_THICKNESS / 2
