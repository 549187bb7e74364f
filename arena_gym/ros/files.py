"""Which files a ROS peer may make the bridge read: the folders of its robot and assets.

    roots = file_roots(urdf, extra=["/data/worlds"])   # the robot's package, assets, extras
    store = SceneStore(num_envs, path_roots=roots)      # every spawn reads only in there
    package_paths(urdf_path, roots)                      # where package:// URIs resolve

Any node on the ROS graph can call the bridge's spawn services (DDS listens on every
interface), so the bridge's store confines every file a request names (a URDF, its meshes, a
mesh prim, an actor) to these roots: the robot's folder (the URDF's, or the folder holding
its ROS package when a package.xml is above the URDF: its sibling packages resolve too),
arena_gym's own assets, $ARENA_GYM_ASSETS when set, and the folders given with --allow-root.

An Arena session (`arena-gym bridge --arena`) has no robot folder: its roots are the Arena
workspace (`--arena-root DIR`, else $ARENA_WS_DIR as Arena's arena.bash sets it: Arena's
sources, install, assets and the robot URDFs it generates under it), arena_gym's assets,
$ARENA_GYM_ASSETS and the --allow-root folders.

`package://NAME/...` resolves in the folders given, in `packages/` beside the URDF (the
Arena robots' layout: `jackal/jackal.urdf`, `jackal/packages/jackal_description/...`), and
in every folder above the URDF inside the roots.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from arena_gym.assets.sources import is_xml_text

ASSETS = Path(__file__).resolve().parent.parent / "assets"  # arena_gym's own robots
ARENA_ROOT_ENV = "ARENA_WS_DIR"  # Arena's workspace root, as its arena.bash exports it


def robot_root(urdf: Path) -> Path:
    """The folder holding a URDF's ROS package (a package.xml above it), else its folder."""
    folder = urdf.resolve().parent
    for candidate in (folder, *folder.parents):
        if (candidate / "package.xml").is_file():
            return candidate.parent
    return folder


def arena_root(given: str | Path | None) -> Path:
    """An Arena session's workspace root: `given`, else $ARENA_WS_DIR."""
    raw = given if given else os.environ.get(ARENA_ROOT_ENV, "")
    if not raw:
        raise ValueError(f"--arena: expected Arena's workspace root (--arena-root DIR, or "
                         f"${ARENA_ROOT_ENV} as Arena's arena.bash sets it), got neither")
    path = Path(raw).expanduser()
    if not path.is_dir():
        raise ValueError(f"--arena-root: expected a folder, got {str(raw)!r}")
    return path


def file_roots(urdf: Path | str | None, extra: Iterable[str | Path] = ()) -> tuple[Path, ...]:
    """The folders spawn requests may read from (see the module docstring); URDF text (a
    description from a topic) or no robot (an Arena session, its root among `extra`) has
    no robot folder: the assets and `extra` only."""
    roots = [robot_root(urdf), ASSETS] if isinstance(urdf, Path) else [ASSETS]
    if os.environ.get("ARENA_GYM_ASSETS"):
        roots.append(Path(os.environ["ARENA_GYM_ASSETS"]))
    for folder in extra:
        path = Path(folder).expanduser()
        if not path.is_dir():
            raise ValueError(f"--allow-root: expected a folder, got {str(folder)!r}")
        roots.append(path)
    return tuple(dict.fromkeys(r.resolve() for r in roots))


def package_paths(urdf: str | Path, roots: tuple[Path, ...] | None,
                  given: Iterable[Path] = ()) -> list[Path]:
    """Where a URDF's `package://NAME/...` URIs resolve (see the module docstring); only
    folders inside `roots` (the store refuses the others)."""
    text = str(urdf)
    if is_xml_text(text):
        found = list(given)  # XML text: no folder of its own
    else:
        path = Path(text).resolve()
        found = [*given, path.parent / "packages", *path.parents]
    found = [p for p in found if p.is_dir()]
    if roots is not None:
        found = [p for p in found if any(p.resolve().is_relative_to(r) for r in roots)]
    return list(dict.fromkeys(found))
