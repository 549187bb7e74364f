"""What a URDF's `<gazebo>` blocks declare: sensors, per-link friction, and plugins.

MuJoCo ignores these blocks, so they are read here, before the URDF is handed to MuJoCo,
into plain records kept with the robot.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field


@dataclass(frozen=True)
class SensorDecl:
    """A sensor as its URDF declares it (SDF `<sensor>` inside `<gazebo reference=...>`).

    `pose` is (x, y, z, roll, pitch, yaw) relative to `link`. Ray fields hold for `ray`,
    `gpu_ray` and `lidar` kinds; camera fields for `camera` and `depth`.
    """

    name: str
    kind: str
    link: str
    pose: tuple[float, float, float, float, float, float] = (0.0,) * 6
    update_rate: float = 0.0
    # ray
    samples: int = 0
    min_angle: float = 0.0
    max_angle: float = 0.0
    vertical_samples: int = 1
    vertical_min_angle: float = 0.0
    vertical_max_angle: float = 0.0
    min_range: float = 0.0
    max_range: float = 0.0
    # camera
    horizontal_fov: float = 0.0
    width: int = 0
    height: int = 0
    near_clip: float = 0.0
    far_clip: float = 0.0
    noise_stddev: float = 0.0

    @property
    def is_ray(self) -> bool:
        return self.kind in ("ray", "gpu_ray", "lidar", "gpu_lidar")

    @property
    def is_camera(self) -> bool:
        return self.kind in ("camera", "depth", "rgbd_camera", "depth_camera")


@dataclass(frozen=True)
class LinkSurface:
    """Friction a `<gazebo reference=link>` block declares (Gazebo's ODE surface fields)."""

    link: str
    mu1: float | None = None
    mu2: float | None = None
    fdir1: tuple[float, float, float] | None = None


@dataclass(frozen=True)
class PluginDecl:
    """A model plugin (`<gazebo><plugin filename=... name=...>`) with its scalar parameters."""

    filename: str
    name: str
    params: dict[str, str] = field(default_factory=dict)


def _text(elem: ET.Element | None, tag: str) -> str | None:
    """A child's value: its text, or its `value` attribute (`<mu1 value="0.5"/>`)."""
    if elem is None:
        return None
    child = elem.find(tag)
    if child is None:
        return None
    if child.get("value") is not None:
        return child.get("value")
    return (child.text or "").strip() or None


def _num(elem: ET.Element | None, tag: str, default: float) -> float:
    value = _text(elem, tag)
    return float(value) if value is not None else default


def _pose(elem: ET.Element) -> tuple[float, ...]:
    value = _text(elem, "pose")
    if not value:
        return (0.0,) * 6
    parts = [float(v) for v in value.split()]
    return tuple(parts + [0.0] * (6 - len(parts)))[:6]


def parse_sensor(sensor: ET.Element, link: str) -> SensorDecl:
    kind = sensor.get("type", "")
    common = {
        "name": sensor.get("name", kind),
        "kind": kind,
        "link": link,
        "pose": _pose(sensor),
        "update_rate": _num(sensor, "update_rate", 0.0),
    }
    ray = sensor.find("ray")
    if ray is None:
        ray = sensor.find("lidar")
    if ray is not None:
        horizontal = ray.find("scan/horizontal")
        vertical = ray.find("scan/vertical")
        rng = ray.find("range")
        return SensorDecl(
            **common,
            samples=int(_num(horizontal, "samples", 1)),
            min_angle=_num(horizontal, "min_angle", 0.0),
            max_angle=_num(horizontal, "max_angle", 0.0),
            vertical_samples=int(_num(vertical, "samples", 1)),
            vertical_min_angle=_num(vertical, "min_angle", 0.0),
            vertical_max_angle=_num(vertical, "max_angle", 0.0),
            min_range=_num(rng, "min", 0.0),
            max_range=_num(rng, "max", 0.0),
            noise_stddev=_num(ray.find("noise"), "stddev", 0.0),
        )
    camera = sensor.find("camera")
    if camera is not None:
        image = camera.find("image")
        clip = camera.find("clip")
        return SensorDecl(
            **common,
            horizontal_fov=_num(camera, "horizontal_fov", math.radians(60)),
            width=int(_num(image, "width", 640)),
            height=int(_num(image, "height", 480)),
            near_clip=_num(clip, "near", 0.1),
            far_clip=_num(clip, "far", 100.0),
            noise_stddev=_num(camera.find("noise"), "stddev", 0.0),
        )
    return SensorDecl(**common)


def parse_surface(block: ET.Element, link: str) -> LinkSurface | None:
    mu1, mu2, fdir = _text(block, "mu1"), _text(block, "mu2"), _text(block, "fdir1")
    if mu1 is None and mu2 is None and fdir is None:
        return None
    return LinkSurface(
        link=link,
        mu1=float(mu1) if mu1 is not None else None,
        mu2=float(mu2) if mu2 is not None else None,
        fdir1=tuple(float(v) for v in fdir.split()) if fdir else None,  # type: ignore[arg-type]
    )


def parse_plugin(plugin: ET.Element) -> PluginDecl:
    params = {c.tag: (c.text or "").strip() for c in plugin if len(c) == 0 and c.text}
    return PluginDecl(plugin.get("filename", ""), plugin.get("name", ""), params)
