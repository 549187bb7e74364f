"""What a camera draws is its world's (issue 42 item 3): a loaded model's cameras draw
MuJoCo's default geom groups 0, 1, 2 (a Menagerie robot's visual meshes sit in 2, its
collision geoms in 3); a navigation world's draw 0, 1, 3 because there a robot's collision
geoms are filed into group 2 and its visuals into 1 (geometry/groups.py): a camera sees
another robot's visual meshes, not its collision boxes. `CameraSpec.geomgroups` chooses."""

from __future__ import annotations

import mujoco
import numpy as np

from arena_gym.scene import SceneStore
from arena_gym.scene.models import model_world
from arena_gym.sensors import CameraSpec, SensorSuite
from arena_gym.sim import Simulator
from tests.sensors.worlds import camera_block, probe_urdf

# four boxes side by side in front of a camera, one per geom group 0..3
GROUPED = """<mujoco><worldbody>
  <camera name="eye" pos="0 -2 0.5" xyaxes="1 0 0 0 0 1"/>
  <body name="g0" pos="-0.6 0 0.5"><geom type="box" size="0.1 0.1 0.1" group="0"/></body>
  <body name="g1" pos="-0.2 0 0.5"><geom type="box" size="0.1 0.1 0.1" group="1"/></body>
  <body name="g2" pos="0.2 0 0.5"><geom type="box" size="0.1 0.1 0.1" group="2"/></body>
  <body name="g3" pos="0.6 0 0.5"><geom type="box" size="0.1 0.1 0.1" group="3"/></body>
</worldbody></mujoco>"""

# a robot whose visual (group 1 once spawned) is a thin plate and collision (group 2) a
# big box around it
TARGET = """<robot name="target">
  <link name="base_footprint"/>
  <joint name="base_joint" type="fixed"><parent link="base_footprint"/><child link="base_link"/>
    <origin xyz="0 0 0.3"/></joint>
  <link name="base_link">
    <inertial><mass value="5"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/>
    </inertial>
    <visual><geometry><box size="0.05 0.2 0.2"/></geometry></visual>
    <collision><geometry><box size="0.5 0.8 0.6"/></geometry></collision>
  </link>
</robot>"""


def _bodies_seen(suite: SensorSuite, key: str, model: mujoco.MjModel) -> set[str]:
    seg = suite[key].segmentation[0]
    ids = np.unique(seg[..., 0][seg[..., 1] == mujoco.mjtObj.mjOBJ_BODY])
    return {model.body(int(b)).name for b in ids}


def test_a_loaded_models_camera_draws_mujocos_default_groups_or_the_specs():
    store = SceneStore(1, world=model_world(mujoco.MjSpec.from_string(GROUPED)))
    store[0].spawn_mjcf("m", GROUPED)
    sim = Simulator(store)
    with SensorSuite(sim, [], seed=0) as suite:
        for key, groups in (("default", None), ("three", (3,))):
            suite.add(CameraSpec("m", "eye", key=key, resolution=(96, 48), geomgroups=groups,
                                 outputs=("segmentation",), segment_by="body"))
        sim.step(10)
        model = store[0].compiled
        assert _bodies_seen(suite, "default", model) == {f"env_0/m/g{g}" for g in (0, 1, 2)}
        assert _bodies_seen(suite, "three", model) == {"env_0/m/g3"}


def test_a_navigation_worlds_robot_camera_sees_visuals_not_collision_geoms():
    store = SceneStore(1)
    store[0].spawn_urdf("probe", probe_urdf(camera_block(width=64, height=48)))
    store[0].spawn_urdf("target", TARGET, pose=(1.5, 0.0, 0.0))
    sim = Simulator(store)
    with SensorSuite(sim, [], seed=0) as suite:
        for key, groups in (("navigation", None), ("mujoco", (0, 1, 2))):
            suite.add(CameraSpec("probe", key=key, geomgroups=groups,
                                 outputs=("segmentation",)))
        sim.step(10)
        model = store[0].compiled
        target = model.body("env_0/target/base_link").id
        geoms = np.flatnonzero(model.geom_bodyid == target)
        groups = {int(model.geom_group[g]): int(g) for g in geoms}
        assert sorted(groups) == [1, 2]  # its visual in group 1, its collision box in 2
        seen = {key: set(np.unique(suite[key].segmentation[0][..., 0]).tolist())
                for key in ("navigation", "mujoco")}
        assert groups[1] in seen["navigation"] and groups[2] not in seen["navigation"]
        assert groups[2] in seen["mujoco"]  # asked for: the collision box hides the plate
