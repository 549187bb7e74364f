"""A URDF (with an optional MoveIt SRDF) as a model: the robot as MuJoCo reads a URDF, its
root link fixed to the world, through our URDF loader (Gazebo blocks read and removed,
`package://` meshes resolved, visuals and static links kept), the Gazebo sensors MuJoCo has
mounted as MuJoCo sensors (mujoco_mounts.py), and the SRDF's `<disable_collisions>` pairs
as MuJoCo contact excludes. Unlike `Scene.spawn_urdf` (a mobile robot: free base, wheel
and joint servos, no self-collision) it adds no joint and no actuator: MuJoCo's reading of
the URDF, as mujoco_ros loads one.

    spec, source = urdf_model_spec("arm.urdf", "model 'arm'", srdf="arm.srdf")
"""

from __future__ import annotations

from pathlib import Path

import mujoco

from arena_gym.assets.mjcf import load_mjcf
from arena_gym.assets.sources import is_xml_text
from arena_gym.assets.srdf import disabled_pairs
from arena_gym.assets.urdf import rewrite_urdf
from arena_gym.errors import SpawnError
from arena_gym.scene.sensor_mounts import mount_sensors

URDF_SUFFIXES = (".urdf",)


def is_urdf(source: object) -> bool:
    """Whether a model source is a URDF: a `.urdf` path, or XML text of a `<robot>`."""
    if is_xml_text(source):
        return _root_tag(source) == "robot"
    return isinstance(source, (str, Path)) and Path(source).suffix.lower() in URDF_SUFFIXES


def urdf_model_spec(urdf: str | Path, label: str, srdf: str | Path | None = None,
                    path_roots: tuple[Path, ...] | None = None
                    ) -> tuple[mujoco.MjSpec, str]:
    """(the URDF's MjSpec, its source: the file name or "URDF text"); SpawnError naming
    `label` when the URDF or the SRDF does not load (see the module docstring)."""
    rewritten = rewrite_urdf(urdf, default_package_paths(urdf, path_roots), label=label,
                             path_roots=path_roots)
    source = "URDF text" if is_xml_text(urdf) else Path(urdf).name
    try:
        spec = mujoco.MjSpec.from_string(rewritten.xml)
    except ValueError as exc:
        raise SpawnError(f"{label} ({source}): MuJoCo rejected the URDF: "
                         f"{str(exc).strip()}") from None
    if spec.worldbody.first_body() is None:
        raise SpawnError(f"{label} ({source}): the URDF has no links")
    mount_sensors(spec, list(rewritten.sensors), None, f"{label} ({source})", fallback=False)
    if srdf is not None:
        links = [body.name for body in spec.bodies[1:]]
        try:
            pairs = disabled_pairs(srdf, links, path_roots)
        except ValueError as exc:
            raise SpawnError(f"{label}: {exc}") from None
        for a, b in pairs:
            spec.add_exclude(bodyname1=a, bodyname2=b)
    return spec, source


def default_package_paths(urdf: str | Path, path_roots: tuple[Path, ...] | None
                          ) -> tuple[Path, ...]:
    """Where a URDF file's `package://NAME/...` resolve: `packages/` beside it (the Arena
    robots' layout) and every folder above it; for URDF text, the allowed roots."""
    if is_xml_text(urdf):
        found = list(path_roots or ())
    else:
        path = Path(urdf).resolve()
        found = [path.parent / "packages", *path.parents]
    found = [p for p in found if p.is_dir()]
    if path_roots is not None:
        found = [p for p in found if any(p.resolve().is_relative_to(r) for r in path_roots)]
    return tuple(dict.fromkeys(found))


def _root_tag(text: str) -> str:
    """The root element's tag of XML text, without parsing all of it."""
    start = text.lstrip()
    while start.startswith(("<?", "<!--")):
        end = start.find("?>" if start.startswith("<?") else "-->")
        if end < 0:
            return ""
        start = start[end + (2 if start.startswith("<?") else 3):].lstrip()
    tag = start[1:].split(None, 1)[0] if start.startswith("<") else ""
    return tag.rstrip(">/")


def load_model(source: str | Path, label: str, path_roots: tuple[Path, ...] | None = None,
               srdf: str | Path | None = None, base: str | Path | None = None
               ) -> tuple[mujoco.MjSpec, str]:
    """A model source as an MjSpec: a URDF (is_urdf) through `urdf_model_spec`, else MJCF
    (assets.mjcf.load_mjcf; `base`: the folder MJCF text resolves its files in). An SRDF
    goes with a URDF only."""
    if is_urdf(source):
        if base is not None:
            raise SpawnError(f"{label}: base: expected MJCF text to go with, got a URDF "
                             "(its package:// paths resolve beside the file or in the "
                             "allowed roots)")
        return urdf_model_spec(source, label, srdf, path_roots)
    if srdf is not None:
        raise SpawnError(f"{label}: srdf: expected a URDF model (.urdf or <robot> text) to go "
                         f"with, got an MJCF model")
    return load_mjcf(source, label, path_roots, base)
