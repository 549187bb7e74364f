"""GPS readings in latitude, longitude and altitude: a mounted Gazebo `gps` sensor reads
MuJoCo's framepos of its site (world metres, arena_gym.scene.mujoco_mounts); this turns
world positions into WGS84 coordinates about an origin, as Gazebo's
`<spherical_coordinates>` does (world x east, y north, z up at the origin, heading 0).

    pos = suite["robot/mujoco"]["base_link_sensor_gps_pos"]          # (num_envs, 3) m
    lla = geodetic(pos, latitude=49.0, longitude=8.4, altitude=110.0)  # degrees, degrees, m

A URDF carries no world and so no spherical coordinates: the origin is the caller's (a
world's `<spherical_coordinates>`, a launch parameter).
"""

from __future__ import annotations

import math

import numpy as np

WGS84_A = 6378137.0  # m: semi-major axis
WGS84_F = 1.0 / 298.257223563
_E2 = WGS84_F * (2.0 - WGS84_F)  # first eccentricity squared


def geodetic(enu: np.ndarray, latitude: float, longitude: float,
             altitude: float = 0.0) -> np.ndarray:
    """(..., 3) world positions (east, north, up; metres from the origin) as (..., 3)
    latitude and longitude (degrees) and altitude (metres above the WGS84 ellipsoid), the
    origin at `latitude`, `longitude` (degrees), `altitude` (m). Exact (through
    Earth-centred coordinates), not a flat-earth approximation."""
    values = np.asarray(enu, dtype=float)
    if values.shape[-1:] != (3,):
        raise ValueError(f"geodetic: expected positions of shape (..., 3), got {values.shape}")
    if not (-90.0 <= latitude <= 90.0 and math.isfinite(longitude) and math.isfinite(altitude)):
        raise ValueError(f"geodetic: expected latitude in [-90, 90] and a finite longitude and "
                         f"altitude, got {latitude}, {longitude}, {altitude}")
    lat, lon = math.radians(latitude), math.radians(longitude)
    origin = _ecef(lat, lon, altitude)
    sl, cl, so, co = math.sin(lat), math.cos(lat), math.sin(lon), math.cos(lon)
    to_ecef = np.array([[-so, -sl * co, cl * co],  # columns: east, north, up in ECEF
                        [co, -sl * so, cl * so],
                        [0.0, cl, sl]])
    xyz = origin + values @ to_ecef.T
    return _lla(xyz)


def _ecef(lat: float, lon: float, alt: float) -> np.ndarray:
    n = WGS84_A / math.sqrt(1.0 - _E2 * math.sin(lat) ** 2)
    return np.array([(n + alt) * math.cos(lat) * math.cos(lon),
                     (n + alt) * math.cos(lat) * math.sin(lon),
                     (n * (1.0 - _E2) + alt) * math.sin(lat)])


def _lla(xyz: np.ndarray) -> np.ndarray:
    """Earth-centred coordinates as latitude, longitude (degrees) and altitude (m), by
    fixed-point iteration on the latitude (converges to < 1e-12 rad in a few rounds)."""
    x, y, z = xyz[..., 0], xyz[..., 1], xyz[..., 2]
    p = np.hypot(x, y)
    lat = np.arctan2(z, p * (1.0 - _E2))
    for _ in range(8):
        n = WGS84_A / np.sqrt(1.0 - _E2 * np.sin(lat) ** 2)
        alt = p / np.maximum(np.cos(lat), 1e-300) - n
        lat = np.arctan2(z, p * (1.0 - _E2 * n / (n + alt)))
    n = WGS84_A / np.sqrt(1.0 - _E2 * np.sin(lat) ** 2)
    alt = p / np.maximum(np.cos(lat), 1e-300) - n
    return np.stack([np.degrees(lat), np.degrees(np.arctan2(y, x)), alt], axis=-1)
