"""Which geoms collide and which rays and cameras see them: one place for the geom
groups and collision bits every layer relies on.

Geom groups:
  GROUP_STATIC  0  obstacles, walls, floors: seen by lidar and cameras
  GROUP_VISUAL  1  robot visual meshes (URDF visuals): no collision; cameras draw them
  GROUP_ROBOT   2  robot collision geoms: lidars see them (not their own carrier's),
                   cameras do not draw them (they draw the visuals)
  GROUP_CEILING 3  ceilings: collide, cameras draw them, but the lidar skips them
  GROUP_HIDDEN  4  collision hulls not meant to be seen, switched-off wheel collisions, sites
  GROUP_SELF    5  a lidar's own robot, only while that lidar casts (arena_gym.sensors.lidar)
LIDAR_GROUPS and CAMERA_GROUPS are the masks the sensors use.

Collision bits: the world's geoms (conaffinity WORLD_CONAFFINITY) also accept mecanum rollers
(contype ROLLER_CONTYPE, conaffinity 0), which thereby touch only the world, never their own
robot nor each other. `set_detection` takes bodies out of collision detection where they
cannot matter (parked pool bodies, far pedestrians) and back.
"""

from __future__ import annotations

from typing import Any

import numpy as np

GROUP_STATIC = 0
GROUP_VISUAL = 1
GROUP_ROBOT = 2
GROUP_CEILING = 3
GROUP_HIDDEN = 4
GROUP_SELF = 5
LIDAR_GROUPS = (GROUP_STATIC, GROUP_ROBOT)
CAMERA_GROUPS = (GROUP_STATIC, GROUP_VISUAL, GROUP_CEILING)

ROLLER_CONTYPE = 2
WORLD_CONAFFINITY = 1 | ROLLER_CONTYPE


def set_detection(model: Any, bodies: np.ndarray, on: np.ndarray, contype: np.ndarray,
                  conaffinity: np.ndarray) -> None:
    """`bodies` of a compiled MjModel (edited in place) in MuJoCo's collision detection
    where `on`, with their bits as compiled (`contype`, `conaffinity`), and out of it
    elsewhere: a body whose bits are 0 is skipped by the broadphase, which otherwise bounds
    every collidable body at every physics step. Their geoms keep their own bits (what a
    contact rule reads of them)."""
    model.body_contype[bodies] = np.where(on, contype, 0)
    model.body_conaffinity[bodies] = np.where(on, conaffinity, 0)
