"""Test robots and rooms with known geometry, for sensor tests.

The probe robot: a 0.3 x 0.3 x 0.4 m collision box resting on the ground (root link
base_footprint, base_link 0.2 m up), a mast (a collision cylinder on its own link) next to
the sensor, and a sensor link 0.25 m above the ground whose own collision cylinder encloses
the sensor origin. A carrier-blind lidar sees through all three.
"""

from __future__ import annotations

import math

import numpy as np

from arena_gym.scene import SceneStore, Wall

SCAN_HEIGHT = 0.25  # m above the ground
HALF = 0.15  # half side of the probe's box
ROOM = (-2.0, 3.0, -1.5, 2.5)  # inner faces of the walls: x_min, x_max, y_min, y_max
WALL_HEIGHT = 2.0
THICK = 0.1

INERTIAL = ('<inertial><mass value="{m}"/><inertia ixx="{i}" iyy="{i}" izz="{i}" ixy="0" ixz="0" '
            'iyz="0"/></inertial>')


def lidar_block(samples=360, min_angle=-math.pi, max_angle=math.pi, min_range=0.1, max_range=10.0,
                rate=50.0, rings=1, vmin=0.0, vmax=0.0, name="laser", pose="0 0 0 0 0 0",
                reference="scan_joint") -> str:
    vertical = (f"<vertical><samples>{rings}</samples><min_angle>{vmin}</min_angle>"
                f"<max_angle>{vmax}</max_angle></vertical>") if rings > 1 else ""
    return (
        f'<gazebo reference="{reference}"><sensor name="{name}" type="ray"><pose>{pose}</pose>'
        f"<update_rate>{rate}</update_rate><ray><scan><horizontal><samples>{samples}</samples>"
        f"<min_angle>{min_angle}</min_angle><max_angle>{max_angle}</max_angle></horizontal>"
        f"{vertical}</scan><range><min>{min_range}</min><max>{max_range}</max></range>"
        f"<noise><type>gaussian</type><stddev>0.02</stddev></noise></ray></sensor></gazebo>"
    )


def camera_block(name="cam", width=64, height=48, hfov=1.0472, near=0.1, far=50.0, rate=30.0,
                 pose="0 0 0.1 0 0 0", reference="scan_link") -> str:
    return (
        f'<gazebo reference="{reference}"><sensor name="{name}" type="camera"><pose>{pose}</pose>'
        f"<update_rate>{rate}</update_rate><camera><horizontal_fov>{hfov}</horizontal_fov>"
        f"<image><width>{width}</width><height>{height}</height></image>"
        f"<clip><near>{near}</near><far>{far}</far></clip></camera></sensor></gazebo>"
    )


def imu_block(name="imu", rate=0.0, reference="base_link") -> str:
    return (f'<gazebo reference="{reference}"><sensor name="{name}" type="imu">'
            f"<update_rate>{rate}</update_rate></sensor></gazebo>")


def probe_urdf(*blocks: str, name: str = "probe") -> str:
    """The probe robot with the given `<gazebo>` sensor blocks."""
    return f"""<robot name="{name}">
  <link name="base_footprint"/>
  <joint name="base_joint" type="fixed"><parent link="base_footprint"/><child link="base_link"/>
    <origin xyz="0 0 0.2"/></joint>
  <link name="base_link">{INERTIAL.format(m=2.0, i=0.05)}
    <collision><geometry><box size="{2 * HALF} {2 * HALF} 0.4"/></geometry></collision>
    <visual><geometry><box size="{2 * HALF} {2 * HALF} 0.4"/></geometry></visual></link>
  <joint name="mast_joint" type="fixed"><parent link="base_link"/><child link="mast"/>
    <origin xyz="0.1 0 0.15"/></joint>
  <link name="mast">{INERTIAL.format(m=0.1, i=0.001)}
    <collision><geometry><cylinder radius="0.03" length="0.3"/></geometry></collision></link>
  <joint name="scan_joint" type="fixed"><parent link="base_link"/><child link="scan_link"/>
    <origin xyz="0 0 {SCAN_HEIGHT - 0.2}"/></joint>
  <link name="scan_link">{INERTIAL.format(m=0.1, i=0.001)}
    <collision><geometry><cylinder radius="0.04" length="0.05"/></geometry></collision></link>
  {"".join(blocks)}
</robot>"""


def room_walls() -> list[Wall]:
    x0, x1, y0, y1 = ROOM
    h = THICK / 2
    return [
        Wall("walls/west", (x0 - h, y0 - THICK), (x0 - h, y1 + THICK), WALL_HEIGHT),
        Wall("walls/east", (x1 + h, y0 - THICK), (x1 + h, y1 + THICK), WALL_HEIGHT),
        Wall("walls/south", (x0 - THICK, y0 - h), (x1 + THICK, y0 - h), WALL_HEIGHT),
        Wall("walls/north", (x0 - THICK, y1 + h), (x1 + THICK, y1 + h), WALL_HEIGHT),
    ]


def room_store(num_envs: int, *blocks: str, poses=((0.0, 0.0, 0.0),)) -> SceneStore:
    """num_envs envs, each the room with one probe per pose (named probe, probe_1, ...)."""
    store = SceneStore(num_envs)
    for env in range(num_envs):
        for k, pose in enumerate(poses):
            name = "probe" if k == 0 else f"probe_{k}"
            store[env].spawn_urdf(name, probe_urdf(*blocks), pose=pose)
        store[env].spawn_walls(room_walls())
    return store


def room_distance(origin: np.ndarray, directions: np.ndarray, floor: bool = True) -> np.ndarray:
    """Distance along each unit direction from origin to the room's walls (and floor)."""
    x0, x1, y0, y1 = ROOM
    t = np.full(len(directions), np.inf)
    with np.errstate(divide="ignore", invalid="ignore"):
        for axis, low, high in ((0, x0, x1), (1, y0, y1)):
            d = directions[:, axis]
            for face in (low, high):
                s = (face - origin[axis]) / d
                t = np.where((s > 0) & (s < t), s, t)
        if floor:
            s = -origin[2] / directions[:, 2]
            t = np.where((s > 0) & (s < t), s, t)
    return t
