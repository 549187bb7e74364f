"""The URDF/Gazebo sensors MuJoCo has, mounted as MuJoCo's own sensors (read through the
"mujoco" sensor kind, so their numbers are MuJoCo's `sensordata`).

Gazebo `<sensor type>` -> MuJoCo sensors (named `<stem>_<part>`), in the frame of:
- force_torque (on a joint): force `_force` and torque `_torque` at a site at the child
  link's origin (the joint), in the site's frame;
- magnetometer: `_magnetic`, the world's `magnetic` option in the site's frame;
- gps: framepos `_pos` and framelinvel `_vel` of the site, world metres (geodetic.py turns
  them into latitude, longitude and altitude);
- contact: touch `_touch`, the normal force of the contacts inside a box over the link's
  collision geoms.

MuJoCo's force and torque sensors give the force and torque the parent side exerts on the
child link's subtree through the joint (MuJoCo's `cfrc_int`), in the site's frame, about
its origin: a weight of mass m hanging still below the joint, z up, reads (0, 0, +m g).
Gazebo's `<frame>` and `<measure_direction>` options are not modelled: MuJoCo's
convention holds (Gazebo's child frame; the sign of parent_to_child).
"""

from __future__ import annotations

import mujoco
import numpy as np

SENSOR_GROUP = 5  # the touch box: not drawn by default, as sensor sites
TOUCH_MARGIN = 0.01  # m added around the link's collision geoms: contact points lie on them

_S = mujoco.mjtSensor
SITE_SENSORS: dict[str, tuple[tuple[str, mujoco.mjtSensor], ...]] = {
    "force_torque": (("force", _S.mjSENS_FORCE), ("torque", _S.mjSENS_TORQUE)),
    "magnetometer": (("magnetic", _S.mjSENS_MAGNETOMETER),),
    "gps": (("pos", _S.mjSENS_FRAMEPOS), ("vel", _S.mjSENS_FRAMELINVEL)),
}


def at_site(spec: mujoco.MjSpec, site: mujoco.MjsSite, stem: str, kind: str
            ) -> tuple[str, ...]:
    """MuJoCo's sensors of a Gazebo `kind` (SITE_SENSORS) at `site`; their names."""
    names = []
    for part, sensor_type in SITE_SENSORS[kind]:
        sensor = spec.add_sensor(name=f"{stem}_{part}", type=sensor_type,
                                 objtype=mujoco.mjtObj.mjOBJ_SITE, objname=site.name)
        names.append(sensor.name)
    return tuple(names)


def touch(spec: mujoco.MjSpec, body: mujoco.MjsBody, stem: str) -> tuple[str, ...]:
    """A touch sensor whose site is a box over `body`'s collision geoms (TOUCH_MARGIN
    around them); none for a link without collision geoms."""
    box = _collision_box(spec, body.name)
    if box is None:
        return ()
    centre, half = box
    site = body.add_site(name=f"{stem}_touch_site", type=mujoco.mjtGeom.mjGEOM_BOX,
                         pos=centre.tolist(), size=(half + TOUCH_MARGIN).tolist(),
                         group=SENSOR_GROUP)
    sensor = spec.add_sensor(name=f"{stem}_touch", type=_S.mjSENS_TOUCH,
                             objtype=mujoco.mjtObj.mjOBJ_SITE, objname=site.name)
    return (sensor.name,)


def _collision_box(spec: mujoco.MjSpec, body: str) -> tuple[np.ndarray, np.ndarray] | None:
    """(centre, half sizes) in `body`'s frame of the box around its colliding geoms."""
    model = spec.compile()  # the geoms' extents (meshes too), as MuJoCo sizes them
    b = model.body(body).id
    corners = []
    signs = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)])
    for g in np.flatnonzero(model.geom_bodyid == b):
        if not (model.geom_contype[g] or model.geom_conaffinity[g]):
            continue
        rot = np.empty(9)
        mujoco.mju_quat2Mat(rot, model.geom_quat[g])
        aabb = model.geom_aabb[g]
        local = aabb[:3] + signs * aabb[3:]  # the geom's box, in the geom frame
        corners.append(model.geom_pos[g] + local @ rot.reshape(3, 3).T)
    if not corners:
        return None
    points = np.concatenate(corners)
    low, high = points.min(axis=0), points.max(axis=0)
    return (low + high) / 2, (high - low) / 2
