"""Small mesh files written by tests: a non-convex L prism, coloured and empty OBJs."""

from __future__ import annotations

from pathlib import Path

import numpy as np

# an L-shaped outline (x, y), counter-clockwise: non-convex at (0.2, 0.2)
L_OUTLINE = np.array([(0, 0), (1, 0), (1, 0.2), (0.2, 0.2), (0.2, 1), (0, 1)], dtype=float)
L_CAPS = [(0, 1, 2), (0, 2, 3), (0, 3, 4), (0, 4, 5)]


def l_prism(height: float = 0.5) -> tuple[np.ndarray, np.ndarray]:
    """A closed L prism standing on z = 0 (20 triangles)."""
    n = len(L_OUTLINE)
    vertices = np.vstack([np.column_stack([L_OUTLINE, np.zeros(n)]),
                          np.column_stack([L_OUTLINE, np.full(n, height)])])
    faces = [tuple(reversed(f)) for f in L_CAPS] + [(a + n, b + n, c + n) for a, b, c in L_CAPS]
    for i in range(n):
        j = (i + 1) % n
        faces += [(i, j, j + n), (i, j + n, i + n)]
    return vertices, np.array(faces)


def write_obj(path: Path, vertices: np.ndarray, faces: np.ndarray, header: str = "") -> Path:
    lines = [header] if header else []
    lines += [f"v {x} {y} {z}" for x, y, z in vertices]
    lines += [f"f {a} {b} {c}" for a, b, c in np.asarray(faces) + 1]
    path.write_text("\n".join(lines) + "\n")
    return path


def box(lo, hi) -> tuple[np.ndarray, np.ndarray]:
    """A closed box from corner lo to corner hi (12 triangles, outward normals)."""
    (x0, y0, z0), (x1, y1, z1) = lo, hi
    v = np.array([(x, y, z) for z in (z0, z1) for y in (y0, y1) for x in (x0, x1)], float)
    f = [(0, 2, 1), (1, 2, 3), (4, 5, 6), (5, 7, 6), (0, 1, 4), (1, 5, 4),
         (2, 6, 3), (3, 6, 7), (0, 4, 2), (2, 4, 6), (1, 3, 5), (3, 7, 5)]
    return v, np.array(f)
