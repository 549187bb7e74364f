"""Robots' meshes: every visual and collision mesh of the shared robots loads, none dropped."""

from __future__ import annotations

import re
import warnings

import pytest

from arena_gym.scene import SceneStore
from tests.conftest import ROBOTS, robot_paths


@pytest.mark.parametrize("robot", ROBOTS)
def test_every_mesh_of_the_shared_robots_loads(assets, robot):
    urdf, packages = robot_paths(assets, robot)
    declared = len(re.findall(r"<mesh\b", urdf.read_text()))
    store = SceneStore(1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        store[0].spawn_urdf(robot, urdf, package_paths=packages)
    assert not [w for w in caught if "mesh" in str(w.message)]
    model = store[0].model
    meshes = [g for g in range(model.ngeom) if model.geom_type[g] == 7]
    # the Dingo's COLLADA chassis counts four times: one geom per material
    assert len(meshes) == declared + (3 if robot == "dingo" else 0)
