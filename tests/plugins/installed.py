"""Install a plugin package the way pip does, as far as discovery goes: its modules and a
`<name>.dist-info` with METADATA and entry_points.txt in a folder on sys.path."""

from __future__ import annotations

import importlib
import shutil
import sys
import tomllib
from contextlib import contextmanager
from pathlib import Path

from arena_gym import registry
from arena_gym.registry import PLUGINS, REWARD_TERMS, SENSOR_KINDS

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "plugin"


def write_dist(site: Path, name: str, entry_points: dict[str, str]) -> None:
    info = site / f"{name}-0.1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1.0\n")
    lines = [f"{k} = {v}" for k, v in entry_points.items()]
    (info / "entry_points.txt").write_text(
        f"[{registry.ENTRY_POINT_GROUP}]\n" + "\n".join(lines) + "\n")


@contextmanager
def installed(site: Path, packages: dict[str, dict[str, str]], copy: tuple[Path, ...] = ()):
    """`packages`: distribution name -> its entry points; `copy`: module folders to put
    on the path. Everything they registered is gone afterwards."""
    before = {r: set(r.names()) for r in (SENSOR_KINDS, REWARD_TERMS, PLUGINS)}
    for folder in copy:
        shutil.copytree(folder, site / folder.name)
    for name, eps in packages.items():
        write_dist(site, name, eps)
    sys.path.insert(0, str(site))
    importlib.invalidate_caches()
    try:
        yield registry.load_entry_points(reload=True)
    finally:
        sys.path.remove(str(site))
        for folder in copy:
            sys.modules.pop(folder.name, None)
        for reg, names in before.items():
            for name in set(reg.names()) - names:
                reg.unregister(name)
        importlib.invalidate_caches()
        registry.load_entry_points(reload=True)


def example_entry_points() -> dict[str, str]:
    """The example's entry points, read from its pyproject.toml (one source)."""
    project = tomllib.loads((EXAMPLE / "pyproject.toml").read_text())["project"]
    return project["entry-points"][registry.ENTRY_POINT_GROUP]
