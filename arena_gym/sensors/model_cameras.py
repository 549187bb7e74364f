"""An MJCF model's own `<camera>` elements as camera mounts, so that a CameraSpec naming a
model (Scene.spawn_mjcf, `Simulation(model_path=...)`) renders them as a robot's declared
cameras render:

    suite.add(CameraSpec("model", "overhead", outputs=("rgb", "segmentation")))

Optics come from the camera itself: its `resolution` (640 x 480 where the model leaves
MuJoCo's 1 x 1), its `fovy` (MuJoCo's vertical field of view; the horizontal one follows
from the resolution's aspect) and the model's clip planes (`<visual><map znear zfar>`
times the extent). The image is what MuJoCo's camera sees (it looks along its -z, y up);
`points` are in the frame the camera readings use, x along the optical axis, y left, z up.
Cameras given by focal length and sensor size, or orthographic ones, are refused: the
pinhole matrix K the readings carry would not describe them. Unnamed cameras are named
`camera_<k>` (k: their index in the model). Every mode MuJoCo has (fixed, track, trackcom,
targetbody, targetbodycom) is posed as MuJoCo poses it (sensors/state_access.py).
"""

from __future__ import annotations

import difflib
import math

import mujoco

from arena_gym.assets.gazebo import SensorDecl
from arena_gym.scene.models import ModelInfo
from arena_gym.scene.scene import Scene
from arena_gym.scene.sensor_mounts import SensorMount
from arena_gym.sensors.errors import SensorError

DEFAULT_SIZE = (640, 480)  # a camera that sets no resolution (MuJoCo's 1 x 1)


def model_camera(scene: Scene, info: ModelInfo, name: str | None) -> SensorMount:
    """The mount of the model's camera `name` (unprefixed; None: its first named camera)
    in this env's compiled model."""
    model = scene.compiled
    prefix = info.prefix
    full = [model.camera(i).name for i in range(model.ncam)]
    cameras = [n[len(prefix):] for n in full if n.startswith(prefix) and n != prefix]
    where = f"env {scene.env_id}: model {info.name!r}"
    if not cameras:
        raise SensorError(f"{where}: expected a named <camera> element in the model, got none")
    if name is None:
        name = cameras[0]
    elif name not in cameras:
        close = difflib.get_close_matches(name, cameras, n=3)
        hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
        raise SensorError(f"{where} has no camera named {name!r}{hint} (it has {cameras})")
    cam = model.camera(prefix + name)
    i = cam.id
    if model.cam_projection[i] != mujoco.mjtProjection.mjPROJ_PERSPECTIVE or any(
            model.cam_sensorsize[i]):
        raise SensorError(f"{where}: camera {name!r}: expected a perspective camera given by "
                          "fovy, got an orthographic one or one given by focal length and "
                          "sensor size")
    width, height = (int(v) for v in model.cam_resolution[i])
    if (width, height) == (1, 1):
        width, height = DEFAULT_SIZE
    fovy = math.radians(float(model.cam_fovy[i]))
    extent = float(model.stat.extent)
    decl = SensorDecl(
        name=name, kind="camera", link=model.body(int(model.cam_bodyid[i])).name,
        width=width, height=height,
        horizontal_fov=2 * math.atan(math.tan(fovy / 2) * width / height),
        near_clip=float(model.vis.map.znear) * extent,
        far_clip=float(model.vis.map.zfar) * extent)
    return SensorMount(name=name, kind="camera", decl=decl, source="mjcf", body=decl.link,
                       camera=cam.name)
