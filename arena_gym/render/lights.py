"""Drawing an env's light table (arena_gym.scene.lights) with MuJoCo's light slots: the one
implementation robot cameras, viewport captures and the viewer use.

Every model has `builders.LIGHT_SLOTS` (8) MuJoCo light slots (off); a render assigns the
table's lamps (render/lux.py: the lighting model in lux) to them for its view (`lit`):
directional lamps (domes, suns) first, then the rigs' room fills, then the fixtures. When
there are more fixtures than slots left (seven, beside a dome), they are reduced from the
view's eye: a tree over the fixtures, each node split at the median of its widest axis, is
cut where the nodes look small from the eye (the node that spans the widest angle is split
first), so near fixtures stay lamps of their own and a far wing becomes one lamp at its
centre of light with the sum of its light. While a table with a scene light (not only a
model's own lamps) is drawn, the model's default sun and the headlight are off, so what
the table says is all the light. Glow visuals (materials `<prim>:glow_<material>/<part>`,
arena_gym.scene.mesh_prims) of a light's `glow_prim` shine with it (lux.glow).

    frame = canvas.draw(data, camera, overlay, lights=table)

MuJoCo's classic renderer lights per vertex: a box face drawn as one quad cannot show a
spot's pool. Canvases that draw fixtures build their boxes from `FIXTURE_QUADS` quads a
side (`vis.quality.numquads`).
"""

from __future__ import annotations

import contextlib
import heapq
from collections.abc import Iterator

import mujoco
import numpy as np

from arena_gym.render import lux
from arena_gym.render.lux import Lamp
from arena_gym.scene import builders
from arena_gym.scene.lights import LightTable
from arena_gym.scene.mesh_prims import GLOW

FIXTURE_QUADS = 64  # quads per box side where fixtures light the scene
_FIELDS = ("light_active", "light_type", "light_pos", "light_dir", "light_diffuse",
           "light_ambient", "light_specular", "light_cutoff", "light_exponent",
           "light_attenuation", "light_castshadow")


def slot_ids(model: mujoco.MjModel) -> np.ndarray:
    return np.array([model.light(builders.LIGHT_SLOT.format(k)).id
                     for k in range(builders.LIGHT_SLOTS)])


class FixtureTree:
    """A tree over fixture positions (N, 3), each node split at the median of its widest
    axis down to single fixtures; `cut` chooses the nodes a view draws."""

    def __init__(self, points: np.ndarray) -> None:
        self.points = np.asarray(points, dtype=float).reshape(-1, 3)
        # nodes: (ids, lo, hi, children (a, b) or None)
        self.nodes: list[tuple[np.ndarray, np.ndarray, np.ndarray, tuple[int, int] | None]] = []
        if len(self.points):
            self._build(np.arange(len(self.points)))

    def _build(self, ids: np.ndarray) -> int:
        pts = self.points[ids]
        lo, hi = pts.min(axis=0), pts.max(axis=0)
        k = len(self.nodes)
        self.nodes.append((ids, lo, hi, None))
        if len(ids) > 1:
            axis = int(np.argmax(hi - lo))
            order = ids[np.argsort(pts[:, axis], kind="stable")]
            mid = len(order) // 2
            self.nodes[k] = (ids, lo, hi, (self._build(order[:mid]), self._build(order[mid:])))
        return k

    def cut(self, eye: np.ndarray, n: int) -> list[np.ndarray]:
        """At most `n` groups of fixture ids covering every fixture: starting from all in
        one, the group that spans the widest angle from `eye` (its extent over its distance)
        is split in two until there are `n` (or single fixtures)."""
        if not self.nodes or n <= 0:
            return []
        eye = np.asarray(eye, dtype=float)

        def key(k: int) -> float:
            ids, lo, hi, children = self.nodes[k]
            if children is None:
                return 0.0
            gap = np.linalg.norm(np.maximum(0.0, np.maximum(lo - eye, eye - hi)))
            return -float(np.linalg.norm(hi - lo)) / max(gap, 1e-6)

        heap = [(key(0), 0)]
        while len(heap) < n and heap[0][0] < 0:
            _, k = heapq.heappop(heap)
            for child in self.nodes[k][3]:  # type: ignore[union-attr]
                heapq.heappush(heap, (key(child), child))
        return [self.nodes[k][0] for _, k in sorted(heap, key=lambda item: item[1])]


def merge(group: list[Lamp]) -> Lamp:
    """One lamp with the sum of a group's light at its centre of light; a spot or panel
    when the group shares its aim, else a point."""
    if len(group) == 1:
        return group[0]
    weights = np.array([lamp.power for lamp in group]) + 1e-12
    pos = np.average([lamp.pos for lamp in group], axis=0, weights=weights)
    first = group[0]
    same = all(lamp.cutoff == first.cutoff and lamp.exponent == first.exponent
               and np.allclose(lamp.dir, first.dir) for lamp in group)
    return Lamp(False, pos, first.dir, sum(lamp.diffuse for lamp in group),
                sum(lamp.ambient for lamp in group),
                first.cutoff if same else 180.0, first.exponent if same else 0.0,
                first.attenuated, any(lamp.shadows for lamp in group))


def table_lamps(table: LightTable, time: float) -> tuple[list[Lamp], list[Lamp], list[Lamp],
                                                          FixtureTree]:
    """The table's directional lamps, room fills, fixtures and their tree at `time` (kept
    until the table changes or a regime switches a light)."""
    shining = tuple(light.name for light in table.lights.values() if light.shines(time))
    key = (table.version, shining)
    cached = table.cache.get("lamps")
    if cached is None or cached[0] != key:
        directional: list[Lamp] = []
        fills: list[Lamp] = []
        fixtures: list[Lamp] = []
        for name in shining:
            d, f, x = lux.lamps(table.lights[name])
            directional += d
            fills += f
            fixtures += x
        tree = FixtureTree(np.array([lamp.pos for lamp in fixtures]))
        cached = table.cache["lamps"] = (key, (directional, fills, fixtures, tree))
    return cached[1]


def pick(table: LightTable, eye: np.ndarray, slots: int, time: float = 0.0) -> list[Lamp]:
    """The lamps a view from `eye` at sim time `time` gets (module docstring)."""
    directional, fills, fixtures, tree = table_lamps(table, time)
    chosen = directional[:slots]
    room = slots - len(chosen)
    if len(fills) > max(room - (1 if fixtures else 0), 1):
        fills = [merge(fills)]  # unattenuated: one lamp carries them all
    chosen += fills[:room]
    room = slots - len(chosen)
    return chosen + [merge([fixtures[i] for i in ids]) for ids in tree.cut(eye, room)]


@contextlib.contextmanager
def lit(model: mujoco.MjModel, data: mujoco.MjData, table: LightTable | None,
        eye: np.ndarray) -> Iterator[None]:
    """Within: the model's light slots (and `data`'s light poses) show `table` as seen
    from `eye`, the default sun and the headlight off (unless every light is a model's own
    lamp); after: as they were. No table, or an empty one: the model's own lighting."""
    if not table:
        yield
        return
    slots = slot_ids(model)
    sun = model.light(builders.SUN).id
    saved = {f: getattr(model, f).copy() for f in (*_FIELDS, "mat_emission", "mat_rgba")}
    headlight = model.vis.headlight.active
    time = float(data.time)
    try:
        model.light_active[slots] = False
        if table.replaces_default:
            model.light_active[sun] = False
            model.vis.headlight.active = 0
        _glow(model, table, time)
        picked = pick(table, eye, len(slots), time)
        for slot, lamp in zip(slots, picked, strict=False):
            _write(model, data, int(slot), lamp)
        if not picked and table.replaces_default:  # a black light: with none at all MuJoCo
            _write(model, data, int(slots[0]), Lamp(True, np.zeros(3), lux.DOWN,  # draws
                                                    np.zeros(3), np.zeros(3)))  # unlit
        yield
    finally:
        for f, values in saved.items():
            getattr(model, f)[:] = values
        model.vis.headlight.active = headlight


def glow_materials(model: mujoco.MjModel, prim: str) -> list[int]:
    """Ids of the materials of prim `prim`'s glow visuals (`<env>/<prim>:glow_...`)."""
    out = []
    for m in range(model.nmat):
        owner, glows, _ = (mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_MATERIAL, m)
                           or "").partition(f":{GLOW}")
        if glows and (owner == prim or owner.endswith("/" + prim)):
            out.append(m)
    return out


def _glow(model: mujoco.MjModel, table: LightTable, time: float) -> None:
    for light in table.lights.values():
        if not light.glow_prim:
            continue
        for material in glow_materials(model, light.glow_prim):
            model.mat_emission[material] = lux.glow(light, time)
            if light.glow_color is not None:
                model.mat_rgba[material, :3] = light.glow_color


def _write(model: mujoco.MjModel, data: mujoco.MjData, slot: int, lamp: Lamp) -> None:
    model.light_active[slot] = True
    model.light_type[slot] = (mujoco.mjtLightType.mjLIGHT_DIRECTIONAL if lamp.directional
                              else mujoco.mjtLightType.mjLIGHT_SPOT)  # MuJoCo's own point
    model.light_pos[slot] = data.light_xpos[slot] = lamp.pos  # type draws unlit here: a
    direction = lamp.dir / np.linalg.norm(lamp.dir)  # spot of cutoff 180 is OpenGL's point
    model.light_dir[slot] = data.light_xdir[slot] = direction
    model.light_diffuse[slot] = lamp.diffuse
    model.light_ambient[slot] = lamp.ambient
    model.light_specular[slot] = 0.0
    model.light_cutoff[slot] = lamp.cutoff
    model.light_exponent[slot] = lamp.exponent
    model.light_attenuation[slot] = (lux.NEAR, 0.0, 1.0) if lamp.attenuated else (1.0, 0.0, 0.0)
    model.light_castshadow[slot] = lamp.shadows
