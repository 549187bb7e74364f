"""The lighting model in lux: what each light of a table (arena_gym.scene.lights) puts on
the scene, as lamps MuJoCo can draw.

MuJoCo shades a surface of albedo a with a * (ambient + diffuse * cos(angle) * attenuation),
so a lamp's values are illuminances over REFERENCE_LUX: 400 lux on a surface facing the
light shows its material at full albedo.

- `dome` (E lux): DOME_GAIN of E, half as ambient light from everywhere, half straight down
  (a floor under a 400 lux dome shows 0.6 of its albedo, a wall 0.3).
- `distant` (a sun, E lux): E on a surface facing `direction`.
- fixtures (Phi lumens each, at `positions`): a luminous intensity I in candela, falling off
  with the square of the distance (E = I cos / d^2): a `sphere` or `cylinder` spreads Phi
  over the sphere (I = Phi / 4 pi), a `disk` or `rect` is a Lambertian emitter along
  `direction` (I = Phi / pi along it, times the cosine off it), a `cone` of full angle c
  puts Phi in that cone (I = Phi / 2 pi (1 - cos c/2)).
- a rig (a light with several fixtures) also fills its room: the light its fixtures put on
  the room's surfaces comes back at FILL_REFLECTANCE, spread over the room (its extent plus
  one fixture pitch each way, the fixtures' height; its surfaces counted both ways: floor
  and ceiling, each pair of walls), E = rho Phi / (S (1 - rho)), as one unattenuated lamp
  at half height over the rig's centre.

`level` scales everything a light gives; dead fixtures (`alive`) give nothing; `cct_k`
colours it (a blackbody's colour, brightest channel 1). A glow visual of the light's prim
shines with emission level ** GLOW_RESPONSE.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from arena_gym.scene.lights import Light

REFERENCE_LUX = 400.0  # lux on a surface facing the light that shows its full albedo
DOME_GAIN = 0.6  # of a dome's lux reaches a surface facing up (half ambient, half down)
FILL_REFLECTANCE = 0.4  # of a rig's light the room's surfaces give back
GLOW_RESPONSE = 0.65  # a glow visual's emission: level ** this
NEAR = 1e-4  # m^2 added to d^2 in a fixture's falloff (no division by zero at the lamp)
DOWN = np.array([0.0, 0.0, -1.0])


@dataclass(frozen=True)
class Lamp:
    """One MuJoCo light: `directional` (along `dir`) or a point at `pos` (a spot when
    `cutoff` < 180 deg: `exponent` 1 for a Lambertian emitter's cosine). `diffuse` and
    `ambient` are rgb values (illuminance / REFERENCE_LUX at 1 m for a point: its candela);
    `attenuated`: falls off with the distance squared."""

    directional: bool
    pos: np.ndarray
    dir: np.ndarray
    diffuse: np.ndarray
    ambient: np.ndarray
    cutoff: float = 180.0
    exponent: float = 0.0
    attenuated: bool = True
    shadows: bool = False

    @property
    def power(self) -> float:
        """How much light it gives (its brightest channel), for weighting merges."""
        return float(max(self.diffuse.max(), self.ambient.max()))


def cct_rgb(kelvin: float) -> np.ndarray:
    """A blackbody's colour at `kelvin` as MuJoCo draws colours (sRGB-encoded, brightest
    channel 1; 0: white): Planck's spectrum weighted by the CIE 1931 colour matching
    functions (analytic fits of Wyman, Sloan and Shirley 2013), converted to sRGB."""
    if kelvin <= 0:
        return np.ones(3)
    nm = np.arange(380.0, 781.0, 5.0)
    lam = nm * 1e-9
    planck = 1.0 / (lam ** 5 * (np.exp(1.4387769e-2 / (lam * kelvin)) - 1.0))

    def lobe(mu: float, s1: float, s2: float) -> np.ndarray:
        t = (nm - mu) * np.where(nm < mu, 1 / s1, 1 / s2)
        return np.exp(-0.5 * t * t)

    x = 1.056 * lobe(599.8, 37.9, 31.0) + 0.362 * lobe(442.0, 16.0, 26.7) \
        - 0.065 * lobe(501.1, 20.4, 26.2)
    y = 0.821 * lobe(568.8, 46.9, 40.5) + 0.286 * lobe(530.9, 16.3, 31.1)
    z = 1.217 * lobe(437.0, 11.8, 36.0) + 0.681 * lobe(459.0, 26.0, 13.8)
    xyz = np.array([planck @ x, planck @ y, planck @ z])
    rgb = np.array([[3.2406, -1.5372, -0.4986], [-0.9689, 1.8758, 0.0415],
                    [0.0557, -0.2040, 1.0570]]) @ xyz
    rgb = np.clip(rgb, 0.0, None) / rgb.max()
    encoded = np.where(rgb <= 0.0031308, 12.92 * rgb, 1.055 * rgb ** (1 / 2.4) - 0.055)
    return encoded / encoded.max()


def spread(light: Light) -> tuple[float, float, float]:
    """(steradians over which a fixture's lumens spread, MuJoCo cutoff deg, exponent)."""
    if 0 < light.cone < 180:
        half = math.radians(light.cone / 2)
        return 2 * math.pi * (1 - math.cos(half)), light.cone / 2, 0.0
    if light.shape in ("disk", "rect"):
        return math.pi, 90.0, 1.0  # Lambertian: I0 = Phi / pi, cosine falloff
    return 4 * math.pi, 180.0, 0.0


def lamps(light: Light) -> tuple[list[Lamp], list[Lamp], list[Lamp]]:
    """(directional lamps, room fills, fixtures) of one shining light."""
    colour = cct_rgb(light.cct_k) * light.level
    direction = np.asarray(light.direction) / np.linalg.norm(light.direction)
    origin = np.zeros(3)
    if light.shape == "dome":
        half = 0.5 * DOME_GAIN * light.intensity / REFERENCE_LUX * colour
        return [Lamp(True, origin, DOWN, half, half, shadows=light.cast_shadows)], [], []
    if light.shape == "distant":
        value = light.intensity / REFERENCE_LUX * colour
        return [Lamp(True, origin, direction, value, np.zeros(3),
                     shadows=light.cast_shadows)], [], []
    steradians, cutoff, exponent = spread(light)
    candela = light.intensity / steradians / REFERENCE_LUX * colour
    fixtures = [Lamp(False, np.asarray(p), direction, candela, np.zeros(3), cutoff, exponent,
                     shadows=light.cast_shadows) for p in light.lit_fixtures]
    fills = [fill] if (fill := room_fill(light, colour)) is not None else []
    return [], fills, fixtures


def room_fill(light: Light, colour: np.ndarray) -> Lamp | None:
    """The light a rig's room gives back (module docstring); None for a single fixture."""
    points = np.asarray(light.positions)
    if len(points) < 2:
        return None
    gaps = np.linalg.norm(points[:, None, :2] - points[None, :, :2], axis=2)
    pitch = float(gaps[gaps > 1e-9].min()) if (gaps > 1e-9).any() else 1.0
    length, width = (points[:, :2].max(axis=0) - points[:, :2].min(axis=0)) + pitch
    height = float(points[:, 2].mean())
    surface = 2.0 * (length * width + length * height + width * height)
    flux = light.intensity * len(light.lit_fixtures)
    lux = FILL_REFLECTANCE * flux / (surface * (1 - FILL_REFLECTANCE))
    centre = np.array([*points[:, :2].mean(axis=0), height / 2])
    return Lamp(False, centre, DOWN, lux / REFERENCE_LUX * colour, np.zeros(3),
                attenuated=False)


def glow(light: Light, time: float) -> float:
    """The emission of the light's glow visuals at sim time `time`."""
    return light.level ** GLOW_RESPONSE if light.shines(time) else 0.0
