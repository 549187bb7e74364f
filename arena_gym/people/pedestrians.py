"""A pedestrian request (Pedestrian) and the pool's layout: slot bodies, their size, where
free slots park (the pool itself: arena_gym.people.pool)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from arena_gym import checks
from arena_gym.errors import SceneError
from arena_gym.geometry.rotations import yaw_quat
from arena_gym.people.body_joints import checked_joints

# pedestrians an env can hold at once. Each pooled body costs MuJoCo time at every physics
# step, walking or parked (about 0.1 us: 64 add ~6 us to a small robot world's 7 us step),
# so a store can size its pools (SceneStore(pedestrian_pool=...)) to what its envs use.
POOL_SIZE = 64
RADIUS = 0.25  # m, the capsule's radius (shoulder half-width)
HEIGHT = 1.75  # m, the capsule's full height, standing on z = 0
PARKED_Z = -10.0  # m: free slots wait below the ground (and below parked pool boxes)
PARKED_STEP = 2.0  # m between parked capsules (> HEIGHT: they never touch)
POOL_BODY = "pedestrians/slot_{}"


@dataclass(frozen=True)
class Pedestrian:
    """A pedestrian request: `name` (an `env_<id>/` prefix names its env when the request
    carries no env id), `pose` (x, y, yaw; yaw is the heading), optionally the actor it
    wears (an SDF path with a skinned mesh: arena_gym.people.skins) and, for such an actor,
    `joints`: ROS4HRI joint angles (name -> rad, arena_gym.people.body_joints), as Arena's
    task generator sends them. A request with joints poses the skeleton from them; one
    without plays the actor's clips again.

    >>> Pedestrian("env_2/visitor", pose=(1.0, -0.5, 1.57))
    >>> Pedestrian("env_0/w", pose=(0.0, 0.0, 0.0), actor=sdf, joints={"l_knee": -1.2})
    """

    name: str
    pose: tuple[float, float, float] = (0.0, 0.0, 0.0)
    actor: str | None = None
    joints: Mapping[str, float] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name or self.name.endswith("/"):
            raise SceneError(f"Pedestrian.name: expected a non-empty name not ending in '/', "
                             f"got {self.name!r}")
        pose = checks.floats(f"Pedestrian {self.name!r} pose", self.pose, 3)
        object.__setattr__(self, "pose", pose)
        object.__setattr__(self, "joints",
                           checked_joints(f"Pedestrian {self.name!r}", self.joints))


def split_env(name: str) -> tuple[int | None, str]:
    """(env id, rest) of an `env_<id>/rest` name; (None, name) without such a prefix."""
    head, sep, rest = name.partition("/")
    if sep and head.startswith("env_") and head[4:].isdigit() and rest:
        return int(head[4:]), rest
    return None, name


def pose_rows(peds: list[Pedestrian]) -> tuple[np.ndarray, np.ndarray]:
    """mocap_pos (n, 3) and mocap_quat (n, 4) rows of pedestrians standing on the ground."""
    pos = np.array([(p.pose[0], p.pose[1], 0.0) for p in peds]).reshape(-1, 3)
    quat = np.array([yaw_quat(p.pose[2]) for p in peds]).reshape(-1, 4)
    return pos, quat


def parked(slots: np.ndarray) -> np.ndarray:
    """mocap_pos rows of free slots: one below the other, so no two parked capsules touch."""
    slots = np.asarray(slots, dtype=float)
    return np.column_stack([np.zeros_like(slots), np.zeros_like(slots),
                            PARKED_Z - PARKED_STEP * slots])

