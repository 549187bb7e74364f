"""Rewriting a URDF so that MuJoCo parses it as the robot Gazebo would simulate.

MuJoCo reads URDF itself but knows nothing of Gazebo's blocks, ROS package URIs or
xacro. `rewrite_urdf` reads what those blocks declare (sensors, friction, plugins),
removes them, resolves mesh URIs, drops the geometry whose mesh cannot be read (as
Gazebo does), and asks MuJoCo to keep visuals and static links.
"""

from __future__ import annotations

import copy
import re
import warnings
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

from arena_gym.assets.gazebo import (
    LinkSurface,
    PluginDecl,
    SensorDecl,
    parse_plugin,
    parse_sensor,
    parse_surface,
)
from arena_gym.assets.mesh_parts import mesh_parts
from arena_gym.assets.meshes import MeshUnavailable, PathRefused, inside, resolve_uri
from arena_gym.assets.sources import is_xml_text
from arena_gym.errors import SpawnError
from arena_gym.files import read_text

DROPPED_TAGS = ("gazebo", "transmission", "ros2_control")
_HOSTILE = re.compile(r"[^A-Za-z0-9_.]")
_XACRO = re.compile(r"\$[({]")


@dataclass
class RewrittenUrdf:
    """A URDF rewritten for MuJoCo: its XML and what the rewrite read out of it (robot name,
    `<gazebo>` sensors, link surfaces, plugins, joint types) or warned about."""

    xml: str
    robot_name: str
    sensors: list[SensorDecl] = field(default_factory=list)
    surfaces: dict[str, LinkSurface] = field(default_factory=dict)
    plugins: list[PluginDecl] = field(default_factory=list)
    joint_types: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


def fold_name(name: str) -> str:
    """Link and joint names as MuJoCo-friendly identifiers: `front-laser` -> `front_laser`."""
    return _HOSTILE.sub("_", name)


def _check_no_xacro(root: ET.Element, source: str) -> None:
    for elem in root.iter():
        for key, value in elem.attrib.items():
            if _XACRO.search(value):
                owner = elem.get("name")
                where = f"<{elem.tag}{f' name={owner!r}' if owner else ''}>"
                raise SpawnError(
                    f"{source}: unexpanded xacro in {where} attribute {key}={value!r}; "
                    "expected a plain URDF (run xacro first)"
                )


def robot_root(text: str, source: str) -> ET.Element:
    """The `<robot>` root element of a URDF's (or an SRDF's) text; SpawnError naming
    `source` when it is not XML or has another root."""
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise SpawnError(f"{source}: malformed XML: {exc}") from None
    if root.tag != "robot":
        raise SpawnError(f"{source}: expected a <robot> root element, got <{root.tag}>")
    return root


def _parse(text: str, source: str) -> ET.Element:
    root = robot_root(text, source)
    _check_no_xacro(root, source)
    return root


def _fold_names(root: ET.Element) -> None:
    for elem in root.iter():
        if elem.tag in ("link", "joint") and elem.get("name"):
            elem.set("name", fold_name(elem.get("name", "")))
        if elem.tag in ("parent", "child") and elem.get("link"):
            elem.set("link", fold_name(elem.get("link", "")))
        if elem.tag == "gazebo" and elem.get("reference"):
            elem.set("reference", fold_name(elem.get("reference", "")))


def _read_gazebo(root: ET.Element, out: RewrittenUrdf, source: str) -> None:
    links = {link.get("name") for link in root.findall("link")}
    joint_child = {
        j.get("name"): j.find("child").get("link")  # type: ignore[union-attr]
        for j in root.findall("joint")
        if j.find("child") is not None
    }
    for block in root.findall("gazebo"):
        ref = block.get("reference")
        if ref is None:
            out.plugins.extend(parse_plugin(p) for p in block.findall("plugin"))
            continue
        link = ref if ref in links else joint_child.get(ref)
        for sensor in block.findall("sensor"):
            if link is None:
                out.warnings.append(
                    f"{source}: sensor {sensor.get('name')!r} dropped: its reference "
                    f"{ref!r} names no link or joint"
                )
                continue
            out.sensors.append(parse_sensor(sensor, link))
        surface = parse_surface(block, link or ref)
        if surface is not None and link is not None:
            out.surfaces[link] = surface


def _resolve_meshes(
    root: ET.Element,
    out: RewrittenUrdf,
    base_dir: Path,
    package_paths: tuple[Path, ...],
    source: str,
    path_roots: tuple[Path, ...] | None,
) -> None:
    for link in root.findall("link"):
        for kind in ("visual", "collision"):
            for geom_owner in link.findall(kind):
                mesh = geom_owner.find("geometry/mesh")
                if mesh is None:
                    continue
                uri = mesh.get("filename", "")
                try:
                    path = resolve_uri(uri, base_dir, package_paths, path_roots)
                    parts = mesh_parts(path)
                except PathRefused as exc:  # hostile, not missing: refuse the whole robot
                    raise SpawnError(
                        f"{source}: {kind} mesh of link {link.get('name')!r} refused: {exc}"
                    ) from None
                except MeshUnavailable as exc:
                    link.remove(geom_owner)
                    out.warnings.append(
                        f"{source}: {kind} of link {link.get('name')!r} dropped: "
                        f"mesh {uri!r}: {exc}"
                    )
                    continue
                _split_parts(link, geom_owner, parts, kind == "visual")


def _split_parts(link: ET.Element, element: ET.Element, parts: tuple, visual: bool) -> None:
    """One `<visual>`/`<collision>` per mesh part (mesh_parts): a COLLADA chassis of four
    materials becomes four visuals, each with its material's colour (a part that declares
    none keeps the element's own `<material>`)."""
    at = list(link).index(element)
    link.remove(element)
    for i, part in enumerate(parts):
        clone = copy.deepcopy(element)
        if len(parts) > 1 and clone.get("name"):
            clone.set("name", f"{clone.get('name')}_{i}")
        clone.find("geometry/mesh").set("filename", str(part.file))  # type: ignore[union-attr]
        if visual and part.rgba is not None:
            for old in clone.findall("material"):
                clone.remove(old)
            material = ET.SubElement(clone, "material", name=f"{link.get('name')}_part_{i}")
            ET.SubElement(material, "color", rgba=" ".join(f"{c:g}" for c in part.rgba))
        link.insert(at + i, clone)


def _inject_compiler(root: ET.Element) -> None:
    block = root.find("mujoco")
    if block is None:
        block = ET.SubElement(root, "mujoco")
    compiler = block.find("compiler")
    if compiler is None:
        compiler = ET.SubElement(block, "compiler")
    compiler.set("discardvisual", "false")
    compiler.set("fusestatic", "false")
    compiler.set("strippath", "false")
    compiler.set("balanceinertia", "true")


def rewrite_urdf(
    urdf: str | Path,
    package_paths: tuple[str | Path, ...] = (),
    *,
    label: str = "",
    emit_warnings: bool = True,
    path_roots: tuple[str | Path, ...] | None = None,
) -> RewrittenUrdf:
    """Rewrite a URDF (a path, or the XML text itself) for MuJoCo; see the module docstring.

    `label` names the robot in errors and warnings, e.g. "robot 'jackal'". `path_roots`
    (servers spawning what others send) confines the URDF file, the package paths and plain
    mesh paths to those folders.
    """
    roots = None if path_roots is None else tuple(Path(r) for r in path_roots)
    packages = package_path_list(package_paths, roots)
    text, source, base_dir = _load(urdf, roots)
    source = f"{label} ({source})" if label and source != "URDF" else (label or source)
    root = _parse(text, source)
    _fold_names(root)
    out = RewrittenUrdf(xml="", robot_name=root.get("name", "robot"))
    _read_gazebo(root, out, source)
    for tag in DROPPED_TAGS:
        for elem in root.findall(tag):
            root.remove(elem)
    out.joint_types = {j.get("name", ""): j.get("type", "") for j in root.findall("joint")}
    _resolve_meshes(root, out, base_dir, packages, source, roots)
    _inject_compiler(root)
    out.xml = ET.tostring(root, encoding="unicode")
    if emit_warnings:
        for message in out.warnings:
            warnings.warn(message, stacklevel=3)
    return out


def package_path_list(package_paths: object, roots: tuple[Path, ...] | None) -> tuple[Path, ...]:
    """`package_paths` as Paths: a list of folders (a bare string is a mistake, not a list of
    one-letter folders), each inside `roots` when given."""
    if isinstance(package_paths, (str, bytes, Path)):
        raise SpawnError(
            f"package_paths: expected a list of paths, got a single path {str(package_paths)!r} "
            "(write [path])"
        )
    try:
        paths = tuple(Path(p) for p in package_paths)  # type: ignore[union-attr]
    except TypeError:
        raise SpawnError(
            f"package_paths: expected a list of paths, got {package_paths!r}") from None
    for path in paths:
        if roots is not None and not inside(path, roots):
            raise SpawnError(f"package_paths: {str(path)!r} is outside the allowed roots")
    return paths


def _load(urdf: str | Path, roots: tuple[Path, ...] | None = None) -> tuple[str, str, Path]:
    if not is_xml_text(urdf):
        path = Path(urdf)
        if roots is not None and not inside(path, roots):
            raise SpawnError(f"URDF file {str(path)!r}: expected a path inside the allowed roots")
        if not path.is_file():
            raise SpawnError(f"URDF file not found: expected a readable file, got {str(path)!r}")
        try:
            text = read_text(path, f"URDF file {str(path)!r}", error=SpawnError)
        except (OSError, UnicodeDecodeError) as exc:
            raise SpawnError(
                f"URDF file {str(path)!r}: expected UTF-8 XML text, got {exc}") from None
        return text, path.name, path.parent
    return str(urdf), "URDF", Path.cwd()
