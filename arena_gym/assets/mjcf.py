"""Reading an MJCF model (a file, or the XML text itself) into an MjSpec, for Scene.spawn_mjcf.

MuJoCo resolves the model's `<include>` files and its assets (meshes, textures, height
fields, skins) itself, relative to the model file (`compiler` meshdir, texturedir and
assetdir included); text resolves relative to `base` where given (its includes read from
there, each a regular file of at most MAX_INCLUDE_BYTES), else to the working directory.
With `path_roots`
(servers spawning what others send) the model file and every file the XML names, in
included files too, must lie inside those folders once resolved, or nothing is read.

    spec, source = load_mjcf("models/arm.xml", "model 'arm'")
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import mujoco

from arena_gym.assets.meshes import inside
from arena_gym.assets.sources import is_xml_text
from arena_gym.errors import SpawnError
from arena_gym.files import read_text

_DIRS = ("meshdir", "texturedir", "assetdir")
MAX_INCLUDE_BYTES = 64_000_000  # an included XML file read for text with a base folder


def load_mjcf(mjcf: str | Path, label: str, path_roots: tuple[Path, ...] | None = None,
              base: str | Path | None = None) -> tuple[mujoco.MjSpec, str]:
    """(the model's MjSpec, its source: the file name or "MJCF text"). SpawnError when the
    file is missing, leaves `path_roots`, names a file outside them, or MuJoCo rejects it
    (the message names `label`, the file and MuJoCo's words). `base`: the folder XML text
    resolves its includes and assets in (text only)."""
    if base is not None:
        return _from_text(mjcf, label, path_roots, Path(base))
    if isinstance(mjcf, (str, Path)) and not is_xml_text(mjcf):
        path = Path(mjcf)
        source = path.name
        if path_roots is not None and not inside(path, path_roots):
            raise SpawnError(f"{label}: MJCF file {str(path)!r}: expected a path inside the "
                             "allowed roots")
        if not path.is_file():
            raise SpawnError(f"{label}: MJCF file not found: expected a readable file, got "
                             f"{str(path)!r}")
        text = read_text(path, f"{label}: MJCF file {str(path)!r}", error=SpawnError,
                         errors="replace")
        if path_roots is not None:
            _confine(text, path.parent, path_roots, f"{label} ({source})")
        return _parse(lambda: mujoco.MjSpec.from_file(str(path)), f"{label} ({source})"), source
    if not isinstance(mjcf, str):
        raise SpawnError(f"{label}: expected an MJCF path or XML text, got "
                         f"{type(mjcf).__name__}")
    if path_roots is not None:
        _confine(mjcf, Path.cwd(), path_roots, f"{label} (MJCF text)")
    return _parse(lambda: mujoco.MjSpec.from_string(mjcf), f"{label} (MJCF text)"), "MJCF text"


def _from_text(mjcf: object, label: str, path_roots: tuple[Path, ...] | None,
               base: Path) -> tuple[mujoco.MjSpec, str]:
    """XML text whose includes and assets resolve in the folder `base`."""
    where = f"{label} (MJCF text)"
    if not is_xml_text(mjcf):
        raise SpawnError(f"{label}: base: expected MJCF text to resolve in the folder, got "
                         f"{str(mjcf)[:40]!r}")
    if not base.is_dir():
        raise SpawnError(f"{where}: base: expected a folder, got {str(base)!r}")
    if path_roots is not None:
        if not inside(base, path_roots):
            raise SpawnError(f"{where}: base {str(base)!r}: expected a folder inside the "
                             "allowed roots")
        _confine(mjcf, base, base, path_roots, where, set())  # type: ignore[arg-type]
    included = _includes(mjcf, base.resolve(), where, {})  # type: ignore[arg-type]

    def read() -> mujoco.MjSpec:
        spec = mujoco.MjSpec.from_string(mjcf, include=included)  # type: ignore[arg-type]
        spec.modelfiledir = f"{base.resolve()}/"  # meshes, textures: as beside a file there
        return spec

    return _parse(read, where), "MJCF text"


def _includes(text: str, base: Path, where: str, found: dict[str, bytes]) -> dict[str, bytes]:
    """The files `<include file=...>` names in `text` and in what it includes, by the name
    written, read from `base` (MuJoCo resolves includes beside the main model)."""
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise SpawnError(f"{where}: malformed XML: {exc}") from None
    for element in root.iter("include"):
        ref = element.get("file", "")
        if not ref or ref in found:
            continue
        path = base / ref
        if not path.is_file():
            raise SpawnError(f"{where}: <include file={ref!r}>: expected a readable file in "
                             f"{str(base)!r}, got none")
        size = path.stat().st_size
        if size > MAX_INCLUDE_BYTES:
            raise SpawnError(f"{where}: <include file={ref!r}>: expected at most "
                             f"{MAX_INCLUDE_BYTES} bytes, got {size}")
        found[ref] = path.read_bytes()
        _includes(found[ref].decode("utf-8", errors="replace"), base, where, found)
    return found


def _parse(read, where: str) -> mujoco.MjSpec:
    try:
        return read()
    except ValueError as exc:
        raise SpawnError(f"{where}: MuJoCo rejected the model: {one_line(exc)}") from None


def one_line(exc: Exception) -> str:
    """MuJoCo's message on one line: its lines joined by '; '."""
    return "; ".join(line.strip() for line in str(exc).strip().splitlines() if line.strip())


def _confine(text: str, main: Path, roots: tuple[Path, ...], where: str) -> None:
    """Refuse any file the XML (and what it includes) names that resolves outside `roots`,
    from any directory MuJoCo might resolve it against: MuJoCo applies a `<compiler>` of any
    included file to the whole model, so every file's references are checked against the
    directories of every `<compiler>` in the tree."""
    tree: list[tuple[ET.Element, Path]] = []  # each XML of the model and its folder
    _include(text, main, main, roots, where, tree, set())
    dirs = ["", *(d for root, _ in tree for c in root.iter("compiler") for k in _DIRS
                  if (d := c.get(k)))]
    bases = {folder / d for folder in {main, *(here for _, here in tree)} for d in dirs}
    for root, _ in tree:  # (included XML was checked as it was read)
        for element, attr, ref in _references(root):
            if element.tag not in ("include", "model") and any(
                    not inside(base / ref, roots) for base in bases):
                raise SpawnError(f"{where}: <{element.tag} {attr}={ref!r}>: expected a file "
                                 "inside the allowed roots")


def _include(text: str, main: Path, here: Path, roots: tuple[Path, ...], where: str,
             tree: list[tuple[ET.Element, Path]], seen: set[Path]) -> None:
    """Parse `text` (an XML of the model, in folder `here`) into `tree`, then the XML files
    it includes, each read only once it is known to lie inside `roots` (as a regular file
    under the size bound)."""
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise SpawnError(f"{where}: malformed XML: {exc}") from None
    tree.append((root, here))
    dirs = ["", *(d for c in root.iter("compiler") for k in _DIRS if (d := c.get(k)))]
    for element, attr, ref in _references(root):
        if element.tag not in ("include", "model"):  # XML that names files in turn
            continue
        candidates = [base / d / ref for base in (main, here) for d in dirs]
        if any(not inside(c, roots) for c in candidates):
            raise SpawnError(f"{where}: <{element.tag} {attr}={ref!r}>: expected a file "
                             "inside the allowed roots")
        for real in sorted({c.resolve() for c in candidates} - seen):
            if real.is_file():
                seen.add(real)
                _include(read_text(real, f"{where}: <{element.tag} {attr}={ref!r}>",
                                   error=SpawnError, errors="replace"),
                         main, real.parent, roots, where, tree, seen)


def _references(root: ET.Element) -> list[tuple[ET.Element, str, str]]:
    """(element, attribute, value) of every file an XML names (attributes `file*`)."""
    return [(element, attr, ref) for element in root.iter()
            for attr, ref in element.attrib.items() if attr.startswith("file") and ref]
