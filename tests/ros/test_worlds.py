"""`arena-gym bridge --world` takes what the task takes: a world source of the WORLDS
registry or a ROS map.yaml; the robot starts where the task would start it (free, with its
clearance), drawn from seed + env."""

from __future__ import annotations

import re

import numpy as np
import pytest

from arena_gym.ros.run import build_envs, robot_radius, world_layout
from arena_gym.worlds.default import CLEARANCE, builtin_robot_urdf


def starts(store, n: int) -> np.ndarray:
    return np.array([store[e].get_pose("robot")[0][:2] for e in range(n)])


@pytest.mark.parametrize("world", ["random", "map"])
def test_the_robot_starts_free_in_a_registry_world_or_a_map(world, assets):
    if world == "map":
        world = str(assets / "worlds" / "map_empty_small" / "map" / "map.yaml")
    store, name = build_envs(world, "builtin", 2, seed=5)
    layout = world_layout(world)
    xy = starts(store, 2)
    keep = robot_radius(builtin_robot_urdf()) + CLEARANCE
    assert layout.free(xy, keep).all()  # clear of every wall by the task's start rule
    assert not np.allclose(xy[0], xy[1])  # env i draws with seed + i
    assert len(set(store[0].entities) - {name}) >= 4  # the world's walls
    again, _ = build_envs(world, "builtin", 2, seed=5)
    np.testing.assert_array_equal(starts(again, 2), xy)  # same seed, same starts


def test_an_unknown_world_names_what_is_accepted():
    with pytest.raises(ValueError, match=re.escape(
            "--world: expected default or empty, a ROS map.yaml path or one of ['random'], "
            "got 'moon'")):
        build_envs("moon", "builtin", 1, seed=0)
