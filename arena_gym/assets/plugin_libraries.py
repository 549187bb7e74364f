"""MuJoCo engine plugin libraries (sensor, actuator, SDF plugins) loaded from a path before a
model that uses them compiles.

    load_plugin_libraries(["/opt/plugins/libmy_sensor.so"])   # then <plugin> elements compile

`mj_loadPluginLibrary` loads a shared library whose static initialisers register plugins
with MuJoCo, once per process (a library already loaded stays loaded: loading it again
does nothing). MuJoCo's Python package loads its own bundled libraries (its `plugin/`
folder: `libsensor.so` with "mujoco.sensor.touch_grid" and "mujoco.sensor.touch_stress",
`libactuator.so`, `libsdf_plugin.so`) when it is imported.
"""

from __future__ import annotations

import ctypes
import os
from collections.abc import Iterable
from pathlib import Path

import mujoco

from arena_gym.assets.mjcf import one_line


def bundled_plugin_folder() -> Path:
    """The `plugin/` folder of MuJoCo's Python package (its bundled plugin libraries)."""
    return Path(mujoco.__file__).resolve().parent / "plugin"


def load_plugin_libraries(paths: Iterable[str | Path]) -> list[Path]:
    """Load each library (once per process); their resolved paths. ValueError naming the
    path when a file is missing, is no shared library, or loads but registers no plugin."""
    if isinstance(paths, (str, bytes, Path)):
        raise ValueError(f"plugin_libraries: expected a list of paths, got a single path "
                         f"{str(paths)!r} (write [path])")
    loaded = []
    for given in paths:
        path = Path(given)
        where = f"plugin_libraries: {str(path)!r}"
        if not path.is_file():
            raise ValueError(f"{where}: expected a MuJoCo plugin library file, got no such file")
        real = path.resolve()
        if _already_loaded(real):
            loaded.append(real)
            continue
        before = _plugin_count()
        try:
            mujoco.mj_loadPluginLibrary(str(real))
        except mujoco.FatalError as exc:
            raise ValueError(f"{where}: expected a MuJoCo plugin library, got a file that "
                             f"does not load: {one_line(exc)}") from None
        if _plugin_count() == before:
            raise ValueError(f"{where}: expected a MuJoCo plugin library, got a shared "
                             "library that registers no plugin")
        loaded.append(real)
    return loaded


def _already_loaded(path: Path) -> bool:
    """Whether the process has loaded `path` (dlopen's RTLD_NOLOAD: asks, loads nothing)."""
    try:
        ctypes.CDLL(str(path), mode=os.RTLD_NOLOAD | os.RTLD_LAZY)
    except OSError:
        return False
    return True


def _plugin_count() -> int:
    """How many plugins MuJoCo has registered (mjp_pluginCount of its C library)."""
    return int(_library().mjp_pluginCount())


_LIBRARY: list[ctypes.CDLL] = []


def _library() -> ctypes.CDLL:
    if not _LIBRARY:
        folder = Path(mujoco.__file__).resolve().parent
        candidates = sorted(folder.glob("libmujoco.so*")) + sorted(folder.glob("libmujoco*.dylib"))
        if not candidates:
            raise ValueError(f"plugin_libraries: MuJoCo's C library not found in {folder}")
        _LIBRARY.append(ctypes.CDLL(str(candidates[0])))
    return _LIBRARY[0]
