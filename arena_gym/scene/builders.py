"""Adding static bodies to an env's MjSpec: boxes, walls and slabs.
Geom groups and collision bits: arena_gym.geometry.groups.
"""

from __future__ import annotations

import math

import mujoco

from arena_gym.assets.mdl import MdlMaterial, add_mdl_material
from arena_gym.geometry.groups import GROUP_CEILING, GROUP_STATIC, WORLD_CONAFFINITY
from arena_gym.geometry.rotations import yaw_quat
from arena_gym.scene.requests import SLAB_THICKNESS, Prim, Slab, Wall

WALLS_FRAME = "walls"  # the world body's frame that holds every wall geom
GROUND_BODY = "ground"  # the static body of the ground plane (geom "ground")

LIGHT_SLOTS = 8  # MuJoCo lights every model has, off until a render assigns a light table
LIGHT_SLOT = "light_slot_{}"  # their names (arena_gym.render.lights fills them per view)
SUN = "sun"  # the default light, off while a light table is drawn
# a geom's rgba that lets its material's colour show (MuJoCo's default geom rgba)
MATERIAL_RGBA = [0.5, 0.5, 0.5, 1.0]



def add_box(spec: mujoco.MjSpec, name: str, prim: Prim) -> mujoco.MjsBody:
    x, y, z, _ = prim.pose
    body = spec.worldbody.add_body(name=name, pos=[x, y, z], quat=prim.orientation,
                                   mocap=prim.movable)
    body.add_geom(
        name=name + "/geom",
        type=mujoco.mjtGeom.mjGEOM_BOX,
        size=list(prim.half_extents),
        rgba=list(prim.rgba),
        group=GROUP_STATIC,
        conaffinity=WORLD_CONAFFINITY,
    )
    dress(spec, body.first_geom(), prim.material)
    return body


def dress(spec: mujoco.MjSpec, geom: mujoco.MjsGeom, material: MdlMaterial | None) -> None:
    """Give `geom` an .mdl material (its texture tiled, its colour instead of the geom's)."""
    if material is not None:
        geom.material = add_mdl_material(spec, material)
        geom.rgba = MATERIAL_RGBA


def set_box_size(body: mujoco.MjsBody, prim_scale: tuple[float, float, float]) -> None:
    geom = body.first_geom()
    geom.size = [max(s / 2, 0.0005) for s in prim_scale]


def add_wall(spec: mujoco.MjSpec, name: str, wall: Wall) -> mujoco.MjsGeom:
    """A wall is a box geom of the world body, not a body of its own: MuJoCo then treats all
    walls as static geometry (no per-body broadphase entry: a map's thousand walls cost the
    step little), and rays skip them in bulk. Its geom is named `<name>/geom` as before."""
    (x0, y0), (x1, y1) = wall.start, wall.end
    yaw = math.atan2(y1 - y0, x1 - x0)
    frame = spec.frame(WALLS_FRAME) or spec.worldbody.add_frame(name=WALLS_FRAME)
    geom = frame.add_geom(
        name=name + "/geom",
        type=mujoco.mjtGeom.mjGEOM_BOX,
        pos=[(x0 + x1) / 2, (y0 + y1) / 2, wall.z + wall.height / 2],
        quat=yaw_quat(yaw),
        size=[wall.length / 2, wall.thickness / 2, wall.height / 2],
        rgba=list(wall.rgba),
        group=GROUP_STATIC,
        conaffinity=WORLD_CONAFFINITY,
    )
    dress(spec, geom, wall.material)
    return geom


def add_slab(spec: mujoco.MjSpec, name: str, slab: Slab, ceiling: bool) -> mujoco.MjsBody:
    """A floor's top face lies at center z; a ceiling's bottom face does."""
    x, y, z = slab.center
    half = SLAB_THICKNESS / 2
    body = spec.worldbody.add_body(name=name, pos=[x, y, z + half if ceiling else z - half])
    body.add_geom(
        name=name + "/geom",
        type=mujoco.mjtGeom.mjGEOM_BOX,
        size=[slab.size[0] / 2, slab.size[1] / 2, half],
        rgba=list(slab.rgba),
        group=GROUP_CEILING if ceiling else GROUP_STATIC,
        conaffinity=WORLD_CONAFFINITY,
    )
    dress(spec, body.first_geom(), slab.material)
    return body


def never_sleep(body: mujoco.MjsBody) -> None:
    """A moving tree (a robot) is stepped every step: it never falls asleep."""
    body.sleep = mujoco.mjtSleepPolicy.mjSLEEP_NEVER


def base_world(timestep: float) -> mujoco.MjSpec:
    """An env's world before anything is spawned: options, a light and the ground plane."""
    spec = mujoco.MjSpec()
    spec.modelname = "arena"
    spec.option.timestep = timestep
    spec.option.integrator = mujoco.mjtIntegrator.mjINT_IMPLICITFAST
    # Sleeping lets MuJoCo skip the kinematics of static geometry (a map's walls: ~20 ns a
    # geom and step otherwise); robots never sleep (never_sleep), so dynamics are unchanged.
    spec.option.enableflags |= mujoco.mjtEnableBit.mjENBL_SLEEP
    add_sun(spec)
    # fixed slots: lights are spawned, switched, dimmed and moved in a table outside the
    # model (arena_gym.render.lights) and written into these per view, never recompiling
    for k in range(LIGHT_SLOTS):
        spec.worldbody.add_light(name=LIGHT_SLOT.format(k), active=False, pos=[0, 0, 0],
                                 dir=[0, 0, -1])
    add_ground(spec)
    return spec


def add_sun(spec: mujoco.MjSpec) -> None:
    """The default light: a sun straight above."""
    spec.worldbody.add_light(name=SUN, pos=[0, 0, 10], dir=[0, 0, -1],
                             type=mujoco.mjtLightType.mjLIGHT_DIRECTIONAL)


def add_ground(spec: mujoco.MjSpec) -> None:
    """The ground: an endless plane at z = 0 that the world's geoms' collision bits meet."""
    # the plane in a static body of its own, not the world body's: its endless box would
    # make every node of the world's bounding-volume tree endless (a map's walls live there),
    # and the midphase would descend it to the leaves for every robot body at every step
    ground = spec.worldbody.add_body(name=GROUND_BODY)
    ground.add_geom(
        name="ground",
        type=mujoco.mjtGeom.mjGEOM_PLANE,
        size=[0, 0, 1],
        rgba=[0.85, 0.85, 0.82, 1],
        group=GROUP_STATIC,
        conaffinity=WORLD_CONAFFINITY,
    )


def exclude_ground(spec: mujoco.MjSpec, prefix: str) -> None:
    """No contacts between the colliding bodies under `prefix` and the ground plane (a
    planar base rides above it on its joints; its chassis may reach the plane)."""
    if spec.body(GROUND_BODY) is None:
        return
    for body in spec.bodies:
        if body.name.startswith(prefix) and any(g.contype or g.conaffinity for g in body.geoms):
            spec.add_exclude(bodyname1=body.name, bodyname2=GROUND_BODY)
