"""Small occupancy maps with known shortest paths, built in memory."""

from __future__ import annotations

import numpy as np

from arena_gym.worlds.occupancy import OccupancyMap

RES = 0.05  # m per cell


def box_map(width: float, height: float,
            walls: list[tuple[float, float, float, float]]) -> OccupancyMap:
    """A width x height m map (origin at its lower-left corner) with a one-cell occupied
    border and the walls (x0, y0, x1, y1) occupied; the rest free."""
    rows, cols = round(height / RES), round(width / RES)
    x = (np.arange(cols) + 0.5) * RES
    y = (rows - np.arange(rows) - 0.5) * RES
    occupied = np.zeros((rows, cols), bool)
    occupied[[0, -1], :] = True
    occupied[:, [0, -1]] = True
    for x0, y0, x1, y1 in walls:
        occupied |= ((y[:, None] >= y0) & (y[:, None] <= y1)
                     & (x[None, :] >= x0) & (x[None, :] <= x1))
    return OccupancyMap(occupied, ~occupied, RES, (0.0, 0.0, 0.0))


def door_map(door: tuple[float, float] = (3.5, 4.5)) -> OccupancyMap:
    """10 x 5 m, a wall at x in [4.9, 5.1] with one door spanning y in `door`."""
    return box_map(10.0, 5.0, [(4.9, 0.0, 5.1, door[0]), (4.9, door[1], 5.1, 5.0)])
