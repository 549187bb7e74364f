"""Drawing an env's light table (arena_gym.scene.lights) with MuJoCo's light slots.

Every model has `builders.LIGHT_SLOTS` MuJoCo light slots (off); a render assigns the table
to them for its view (`lit`): directional lights (dome, sun) first, then the fixtures (spot,
bulb, panel) nearest the viewpoint, found in a tree split at the median of its widest axis,
when there are more than the slots. While a table with lights is drawn the model's default
sun and the headlight are off, so what the table says is all the light. A `glow` material
(by name, in the model) follows its light: its emission is the light's level while the
light shines, else 0.

    frame = canvas.draw(data, camera, overlay, lights=table)

MuJoCo's classic renderer lights per vertex: a box face drawn as one quad cannot show a
spot's pool. Canvases that draw fixtures build their boxes from `FIXTURE_QUADS` quads a
side (`vis.quality.numquads`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import mujoco
import numpy as np

from arena_gym.scene import builders
from arena_gym.scene.lights import Light, LightTable

FIXTURE_QUADS = 64  # quads per box side where fixtures light the scene
PANEL_CUTOFF = 80.0  # deg: a panel lights the half space below it, softly
BULB_CUTOFF = 180.0  # deg: OpenGL's point light (MuJoCo's own point type draws unlit here)
_TYPES = {"dome": mujoco.mjtLightType.mjLIGHT_DIRECTIONAL,
          "sun": mujoco.mjtLightType.mjLIGHT_DIRECTIONAL,
          "spot": mujoco.mjtLightType.mjLIGHT_SPOT,
          "bulb": mujoco.mjtLightType.mjLIGHT_SPOT,
          "panel": mujoco.mjtLightType.mjLIGHT_SPOT}


def slot_ids(model: mujoco.MjModel) -> np.ndarray:
    return np.array([model.light(builders.LIGHT_SLOT.format(k)).id
                     for k in range(builders.LIGHT_SLOTS)])


@contextlib.contextmanager
def lit(model: mujoco.MjModel, data: mujoco.MjData, table: LightTable | None,
        eye: np.ndarray) -> Iterator[None]:
    """Within: the model's light slots (and `data`'s light poses) show `table` as seen
    from `eye`, the default sun and the headlight off; after: as they were. No table, or
    an empty one: the model's own lighting, untouched."""
    if not table:
        yield
        return
    slots = slot_ids(model)
    sun = model.light(builders.SUN).id
    fields = ("light_active", "light_type", "light_pos", "light_dir", "light_diffuse",
              "light_ambient", "light_specular", "light_cutoff", "light_exponent",
              "light_attenuation", "light_castshadow")
    saved = {f: getattr(model, f).copy() for f in (*fields, "mat_emission")}
    headlight = model.vis.headlight.active
    time = float(data.time)
    try:
        model.light_active[slots] = False
        model.light_active[sun] = False
        model.vis.headlight.active = 0
        for light in table.lights.values():
            material = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_MATERIAL, light.glow) \
                if light.glow else -1
            if material >= 0:  # a glow naming no material of this model draws nothing
                model.mat_emission[material] = light.level if light.shines(time) else 0.0
        picked = table.pick(eye, len(slots), time)
        for slot, light in zip(slots, picked, strict=False):
            _write(model, data, int(slot), light)
        if not picked:  # a black light: with none at all MuJoCo draws unlit, not dark
            _write(model, data, int(slots[0]), Light("dark", "sun", level=0.0))
        yield
    finally:
        for f, values in saved.items():
            getattr(model, f)[:] = values
        model.vis.headlight.active = headlight


def _write(model: mujoco.MjModel, data: mujoco.MjData, slot: int, light: Light) -> None:
    power = np.asarray(light.colour) * light.level
    direction = np.asarray(light.dir) / np.linalg.norm(light.dir)
    model.light_active[slot] = True
    model.light_type[slot] = _TYPES[light.kind]
    model.light_pos[slot] = data.light_xpos[slot] = light.pos
    model.light_dir[slot] = data.light_xdir[slot] = direction
    dome = light.kind == "dome"
    model.light_diffuse[slot] = 0.0 if dome else power
    model.light_ambient[slot] = power if dome else 0.0
    model.light_specular[slot] = 0.0
    model.light_cutoff[slot] = {"panel": PANEL_CUTOFF, "bulb": BULB_CUTOFF}.get(light.kind,
                                                                  light.cutoff)
    model.light_exponent[slot] = 1.0 if light.kind == "panel" else 0.0
    model.light_attenuation[slot] = (1.0, 0.0, 0.0)
    model.light_castshadow[slot] = False
