"""The package's layers, written once: every import (function-level and TYPE_CHECKING ones
too) goes to the same layer or one below, and no modules import each other in a cycle.

A layer's packages may import each other (sensors and tasks sit side by side), but not in a
cycle between modules. `docs/architecture.md` draws the same order.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "arena_gym"

# lowest first; a name is a module or a package (then every module under it)
LAYERS: tuple[tuple[str, ...], ...] = (
    ("caches", "errors", "checks", "files", "kernel_cache", "compiled", "registry",
     "geometry"),  # the base
    ("config", "plugins"),  # what a user asks for; runtime plugins' base class
    ("assets",),  # file formats: URDF, Gazebo SDF, meshes and their cache, hulls, .mdl
    ("people",),  # pedestrian bodies, skins, skeletons, crowd motion
    ("scene",),  # one MjSpec/MjModel/MjData per env: spawn, edit, delete, compile
    ("worlds",),  # world sources: the default world, maps, scenarios, mechanisms
    ("sim",),  # lockstep stepping of every env's scene, rays, control, divergence
    ("sensors", "tasks"),  # readings of the simulated state; episodes, rewards, ends
    ("render",),  # cameras and views for people to look at
    ("envs",),  # the Gymnasium envs around the task
    ("wrappers", "mjx"),  # observation wrappers; the MJX/Warp backend
    ("train", "distributed"),  # training, evaluation, policies, model files; Ray shards
    ("bench",),  # the benchmark runner
    ("ros",),  # the ROS 2 bridge
    ("simulation", "make"),  # the simulator's face; what gymnasium.make builds
    ("cli",),
    ("__init__",),
)


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path, name: str) -> set[str]:
    """Every arena_gym module `path` imports, wherever in the file."""
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".")[: len(name.split(".")) - node.level + is_package]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            found.add(target)
            found.update(f"{target}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def graph() -> dict[str, set[str]]:
    paths = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    return {name: {t for t in imports(path, name) if t in paths and t != name
                   and not name.startswith(t + ".")}  # a package's __init__ runs first anyway
            for name, path in paths.items()}


def layer_of(module: str) -> int:
    rest = module.split(".", 1)[1] if "." in module else "__init__"
    for i, names in enumerate(LAYERS):
        if any(rest == n or rest.startswith(n + ".") for n in names):
            return i
    raise AssertionError(f"{module}: in no layer of tests/test_layers.py; expected one of "
                         f"{[n for names in LAYERS for n in names]}")


def label(layer: int) -> str:
    return "base" if layer == 0 else "/".join(LAYERS[layer])


def upward(g: dict[str, set[str]]) -> list[str]:
    return sorted(f"{m} (layer {label(layer_of(m))}) imports {t} (layer "
                  f"{label(layer_of(t))})"
                  for m, targets in g.items() for t in targets if layer_of(t) > layer_of(m))


def cycles(g: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan's)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in g[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(g):
        if v not in index:
            visit(v)
    return out


def test_every_module_is_in_a_layer():
    for module in graph():
        layer_of(module)


def test_no_import_goes_up_a_layer():
    assert upward(graph()) == []


def test_no_modules_import_each_other_in_a_cycle():
    assert cycles(graph()) == []


@pytest.mark.parametrize(("module", "planted", "expected"), [
    ("arena_gym.scene.store", "arena_gym.sensors.kinds",
     "arena_gym.scene.store (layer scene) imports arena_gym.sensors.kinds (layer sensors/tasks)"),
    ("arena_gym.geometry.arrays", "arena_gym.envs.core",
     "arena_gym.geometry.arrays (layer base) imports arena_gym.envs.core (layer envs)"),
])
def test_a_planted_upward_import_is_caught(module, planted, expected):
    g = graph()
    g[module] = g[module] | {planted}
    assert expected in upward(g)


def test_a_planted_cycle_is_caught():
    g = graph()
    g["arena_gym.caches"] = g["arena_gym.caches"] | {"arena_gym.kernel_cache"}
    assert ["arena_gym.caches", "arena_gym.kernel_cache"] in cycles(g)
