"""ROS occupancy-grid maps (map_server YAML + PGM/PNG image): the grid and its free space.

    >>> occupancy = load_map("worlds/hospital/map/map.yaml")
    >>> is_free(occupancy, 1.0, 2.0, clearance=0.3)

Its walls: arena_gym.worlds.map_cover.

Pixels follow map_server: occupancy p = (255 - v) / 255 (v / 255 with `negate`), occupied
when p > occupied_thresh, free when p < free_thresh, unknown in between (and where a pixel's
alpha is 0). The image's bottom-left pixel has its lower-left corner at the origin.
"""

from __future__ import annotations

import difflib
import io
import math
import warnings
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import yaml
from numpy.typing import ArrayLike

from arena_gym.files import MAX_DATA_BYTES, read_bytes, read_text

_REQUIRED = ("image", "resolution", "origin", "occupied_thresh", "free_thresh")
_OPTIONAL = ("negate", "mode", "type")  # `type` (indoor/outdoor) is Arena's, and unused here


class MapError(ValueError):
    """A map YAML or image that cannot be read; the message names the file and the field."""


@dataclass(frozen=True, eq=False)
class OccupancyMap:
    """An occupancy grid: `occupied` and `free` are read-only (H, W) bool arrays whose row 0
    is the image's top row; cells in neither are unknown.

    >>> m = load_map("map.yaml"); m.occupied.shape, m.resolution, m.origin
    ((800, 800), 0.1, (-40.0, -40.0, 0.0))
    """

    occupied: np.ndarray
    free: np.ndarray
    resolution: float  # m per cell
    origin: tuple[float, float, float]  # x, y, yaw of the lower-left corner of the bottom-left cell
    occupied_thresh: float = 0.65
    free_thresh: float = 0.196
    negate: bool = False
    image: Path | None = None

    def __post_init__(self) -> None:
        for name in ("occupied", "free"):
            grid = np.array(getattr(self, name), dtype=bool)  # a copy the caller cannot change
            if grid.ndim != 2:
                raise MapError(f"OccupancyMap.{name}: expected a 2-D grid, got shape {grid.shape}")
            grid.flags.writeable = False
            object.__setattr__(self, name, grid)
        if self.occupied.shape != self.free.shape:
            raise MapError(
                f"OccupancyMap: expected occupied and free of one shape, got "
                f"{self.occupied.shape} and {self.free.shape}"
            )
        if not (math.isfinite(self.resolution) and self.resolution > 0):
            raise MapError(
                f"OccupancyMap.resolution: expected a positive number, got {self.resolution!r}"
            )

    @property
    def shape(self) -> tuple[int, int]:
        return self.occupied.shape  # type: ignore[return-value]

    def to_world(self, u: ArrayLike, v: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
        """Map-frame metres (u right, v up from the origin) to world (x, y)."""
        x0, y0, yaw = self.origin
        c, s = math.cos(yaw), math.sin(yaw)
        u, v = np.asarray(u, float), np.asarray(v, float)
        return x0 + c * u - s * v, y0 + s * u + c * v

    def to_map(self, x: ArrayLike, y: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
        """World (x, y) to map-frame metres, the inverse of `to_world`."""
        x0, y0, yaw = self.origin
        c, s = math.cos(yaw), math.sin(yaw)
        dx, dy = np.asarray(x, float) - x0, np.asarray(y, float) - y0
        return c * dx + s * dy, -s * dx + c * dy

    def cell_at(self, x: float, y: float) -> tuple[int, int]:
        """(row, col) of the cell holding the world point (x, y); may lie off the grid."""
        u, v = self.to_map(x, y)
        return self.shape[0] - 1 - math.floor(v / self.resolution), math.floor(u / self.resolution)

    def cell_corner(self, row: int, col: int) -> tuple[float, float]:
        """World (x, y) of the lower-left corner of cell (row, col)."""
        x, y = self.to_world(col * self.resolution, (self.shape[0] - 1 - row) * self.resolution)
        return float(x), float(y)

    def cell_centers(self, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        """World (x, y) of cell centres, shape (n, 2): e.g. `m.cell_centers(*np.nonzero(grid))`."""
        rows, cols = np.asarray(rows), np.asarray(cols)
        u = (cols + 0.5) * self.resolution
        v = (self.shape[0] - rows - 0.5) * self.resolution
        return np.stack(self.to_world(u, v), axis=-1)


# ------------------------------------------------------------------------------ loading
def load_map(map_yaml: str | Path) -> OccupancyMap:
    """Read a map_server YAML (plain, or wrapped as `<node>: ros__parameters: {...}`) and its
    image (PGM read here, PNG and other formats through pillow); `image` is relative to the
    YAML's folder. Unknown keys warn."""
    path = Path(map_yaml)
    where = f"map yaml {path}"
    try:
        text = read_text(path, where, error=MapError)
    except FileNotFoundError:
        raise MapError(f"{where}: expected an existing file, got no such file") from None
    except (OSError, UnicodeDecodeError) as exc:  # binary, unreadable, a folder
        raise MapError(f"{where}: expected a readable UTF-8 YAML file, got {exc}") from None
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise MapError(f"{where}: expected valid YAML, got a syntax error{at}: {problem}") from None
    params = _unwrap(doc, where)
    missing = [k for k in _REQUIRED if k not in params]
    if missing:
        raise MapError(
            f"{where}: expected keys {', '.join(_REQUIRED)}, got no {', '.join(missing)} "
            f"(keys: {', '.join(map(str, params))})"
        )
    unknown = [str(k) for k in params if k not in _REQUIRED + _OPTIONAL]
    for key in unknown:
        close = difflib.get_close_matches(key, _REQUIRED + _OPTIONAL, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        warnings.warn(f"{where}: unknown key {key!r} ignored{hint}", stacklevel=2)
    resolution = _number(where, "resolution", params["resolution"])
    if resolution <= 0:
        raise MapError(f"{where}: 'resolution': expected a positive number, got {resolution!r}")
    origin = params["origin"]
    if not isinstance(origin, (list, tuple)) or len(origin) != 3:
        raise MapError(f"{where}: 'origin': expected [x, y, yaw], got {origin!r}")
    origin = tuple(_number(where, "origin", v) for v in origin)
    occ_th = _number(where, "occupied_thresh", params["occupied_thresh"])
    free_th = _number(where, "free_thresh", params["free_thresh"])
    if not 0.0 <= free_th <= occ_th <= 1.0:
        raise MapError(
            f"{where}: expected 0 <= free_thresh <= occupied_thresh <= 1, got "
            f"free_thresh {free_th}, occupied_thresh {occ_th}"
        )
    negate = params.get("negate", 0)
    if negate not in (0, 1):  # also True/False
        raise MapError(f"{where}: 'negate': expected 0 or 1, got {negate!r}")
    mode = params.get("mode", "trinary")
    if mode not in ("trinary", "scale"):
        raise MapError(f"{where}: 'mode': expected 'trinary' or 'scale', got {mode!r}")
    image = params["image"]
    if not isinstance(image, str) or not image:
        raise MapError(f"{where}: 'image': expected a file name, got {image!r}")
    image_path = (path.parent / image).resolve()
    if not image_path.is_file():
        raise MapError(
            f"{where}: 'image': expected an image file at {image_path}, got no such file"
        )
    shade, known = _read_image(image_path)
    p = shade / 255.0 if negate else (255.0 - shade) / 255.0
    return OccupancyMap(
        occupied=(p > occ_th) & known,
        free=(p < free_th) & known,
        resolution=resolution,
        origin=origin,  # type: ignore[arg-type]
        occupied_thresh=occ_th,
        free_thresh=free_th,
        negate=bool(negate),
        image=image_path,
    )


def _unwrap(doc: object, where: str) -> dict:
    if not isinstance(doc, dict):
        raise MapError(f"{where}: expected a mapping of map_server keys, got {type(doc).__name__}")
    if len(doc) == 1:  # ROS 2 param file: {"/**": {"ros__parameters": {...}}}
        (inner,) = doc.values()
        if isinstance(inner, dict) and "ros__parameters" in inner:
            params = inner["ros__parameters"]
            if not isinstance(params, dict):
                raise MapError(
                    f"{where}: 'ros__parameters': expected a mapping, got {type(params).__name__}"
                )
            return params
    return doc


def _number(where: str, key: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise MapError(f"{where}: {key!r}: expected a finite number, got {value!r}")
    return float(value)


def _read_image(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """(H, W) grey value in [0, 255] (mean of RGB) and a mask of known pixels (alpha > 0)."""
    try:
        data = read_bytes(path, f"map image {path}", MAX_DATA_BYTES, error=MapError)
    except OSError as exc:
        raise MapError(f"map image {path}: expected a readable file, got {exc}") from None
    if data[:2] in (b"P5", b"P2"):
        grey = _read_pgm(data, path)
        return grey, np.ones(grey.shape, bool)
    try:
        from PIL import Image
    except ImportError:
        raise ImportError(f"reading {path.name} needs pillow: pip install pillow") from None
    try:
        with Image.open(io.BytesIO(data)) as im:
            if im.mode.startswith("I"):  # 16-bit grey
                grey = np.asarray(im, dtype=float) * (255.0 / 65535.0)
                return grey, np.ones(grey.shape, bool)
            rgba = np.asarray(im.convert("RGBA"), dtype=float)
    except OSError as exc:
        raise MapError(
            f"map image {path}: expected a PGM or an image pillow reads, got {exc}"
        ) from None
    return rgba[..., :3].mean(axis=-1), rgba[..., 3] > 0


def _read_pgm(data: bytes, path: Path) -> np.ndarray:
    where = f"map image {path}"
    tokens: list[bytes] = []
    i = 0
    while len(tokens) < 4:  # magic, width, height, maxval; '#' starts a comment to end of line
        while i < len(data) and data[i : i + 1].isspace():
            i += 1
        if data[i : i + 1] == b"#":
            i = data.find(b"\n", i)
            i = len(data) if i < 0 else i
            continue
        j = i
        while j < len(data) and not data[j : j + 1].isspace() and data[j : j + 1] != b"#":
            j += 1
        if j == i:
            raise MapError(f"{where}: expected a PGM header, got {len(tokens)} of 4 fields")
        tokens.append(data[i:j])
        i = j
    try:
        width, height, maxval = (int(t) for t in tokens[1:])
    except ValueError:
        raise MapError(f"{where}: expected PGM width, height, maxval, got {tokens[1:]}") from None
    if not (width > 0 and height > 0 and 0 < maxval < 65536):
        raise MapError(f"{where}: expected sizes > 0 and 0 < maxval < 65536, got {tokens[1:]}")
    count = width * height
    if tokens[0] == b"P2":
        try:
            values = np.array(data[i:].split()[:count], dtype=float)
        except ValueError:
            raise MapError(f"{where}: expected ASCII PGM pixel values, got non-numbers") from None
    else:
        dtype = np.dtype(np.uint8) if maxval < 256 else np.dtype(">u2")
        pixels = data[i + 1 : i + 1 + count * dtype.itemsize]  # one whitespace byte ends the header
        values = np.frombuffer(pixels, dtype=dtype).astype(float)
    if values.size != count:
        raise MapError(f"{where}: expected {count} pixels ({width}x{height}), got {values.size}")
    return values.reshape(height, width) * (255.0 / maxval)


# ------------------------------------------------------------------------------ grids
def coarsen(occupancy: OccupancyMap, factor: int) -> OccupancyMap:
    """The grid with `factor` x `factor` cells merged, aligned at the origin (bottom-left):
    occupied if any cell is, free only if all are. The origin stays where it was."""
    if isinstance(factor, bool) or not isinstance(factor, int) or factor < 1:
        raise MapError(f"coarsen factor: expected an integer >= 1, got {factor!r}")
    rows, cols = occupancy.shape
    pad_top, pad_right = -rows % factor, -cols % factor  # the top and right edges get padding

    def pool(grid: np.ndarray, fill: bool, reduce) -> np.ndarray:
        g = np.pad(grid, ((pad_top, 0), (0, pad_right)), constant_values=fill)
        g = g.reshape(g.shape[0] // factor, factor, g.shape[1] // factor, factor)
        return reduce(g, axis=(1, 3))

    return replace(
        occupancy,
        occupied=pool(occupancy.occupied, False, np.any),
        free=pool(occupancy.free, False, np.all),
        resolution=occupancy.resolution * factor,
    )


# ------------------------------------------------------------------------------ free space
def free_cells(occupancy: OccupancyMap, clearance: float = 0.0) -> np.ndarray:
    """(H, W) bool: cells whose centre is at least `clearance` metres from every cell that is
    not known free (occupied, unknown, or beyond the image), for start/goal sampling.

    >>> xy = m.cell_centers(*np.nonzero(free_cells(m, 0.5)))
    """
    reach = _reach(occupancy, clearance)
    out = np.zeros(occupancy.shape, bool)
    rows = np.flatnonzero(occupancy.free.any(axis=1))
    cols = np.flatnonzero(occupancy.free.any(axis=0))
    if rows.size == 0:
        return out
    # only the free cells' bounding box can hold an answer; all around it is blocked
    box = np.s_[rows[0] : rows[-1] + 1, cols[0] : cols[-1] + 1]
    n = len(reach) - 1
    blocked = np.pad(~occupancy.free[box], n + 1, constant_values=True)
    height, width = blocked.shape
    csum = np.zeros((height, width + 1), np.int32)
    np.cumsum(blocked, axis=1, out=csum[:, 1:])
    near = np.zeros_like(blocked)
    idx = np.arange(width)
    for i in range(-n, n + 1):  # row offset i: the blocked cells up to reach[|i|] columns away
        lo, hi = np.clip(idx - reach[abs(i)], 0, width), np.clip(idx + reach[abs(i)] + 1, 0, width)
        spread = (csum[:, hi] - csum[:, lo]) > 0
        near[max(0, -i) : height - max(0, i)] |= spread[max(0, i) : height - max(0, -i)]
    out[box] = ~near[n + 1 : -(n + 1), n + 1 : -(n + 1)]
    return out


def is_free(occupancy: OccupancyMap, x: float, y: float, clearance: float = 0.0) -> bool:
    """True when the world point (x, y) lies in a known-free cell and every cell within
    `clearance` metres of it is known free; points off the map are not free."""
    if clearance < 0:
        raise MapError(f"clearance: expected metres >= 0, got {clearance!r}")
    res, (rows, cols) = occupancy.resolution, occupancy.shape
    u, v = occupancy.to_map(x, y)
    cu, cv = float(u) / res, rows - float(v) / res  # column, row coordinates (row 0 at the top)
    n = math.ceil(clearance / res) + 1
    r, c = math.floor(cv), math.floor(cu)
    rr, cc = np.mgrid[r - n : r + n + 1, c - n : c + n + 1]
    du = np.maximum(np.maximum(cc - cu, cu - (cc + 1)), 0.0)  # distance to each cell, in cells
    dv = np.maximum(np.maximum(rr - cv, cv - (rr + 1)), 0.0)
    near = (np.hypot(du, dv) < clearance / res) | ((rr == r) & (cc == c))
    inside = (rr >= 0) & (rr < rows) & (cc >= 0) & (cc < cols)
    if (near & ~inside).any():
        return False
    return bool(occupancy.free[rr[near], cc[near]].all())


def _reach(occupancy: OccupancyMap, clearance: float) -> list[int]:
    """reach[i]: the column half-width of the cells within `clearance` of a cell's centre, in
    the row i rows away (a cell counts when its nearest point is closer than `clearance`)."""
    if not (math.isfinite(clearance) and clearance >= 0):
        raise MapError(f"clearance: expected metres >= 0, got {clearance!r}")
    radius = clearance / occupancy.resolution  # in cells
    reach = []
    i = 0
    while i == 0 or i - 0.5 < radius:  # row i away: its nearest point is i - 0.5 cells away
        dy, j = max(i - 0.5, 0.0), 0
        while math.hypot(j + 0.5, dy) < radius:  # likewise column j + 1 away: j + 0.5 cells
            j += 1
        reach.append(j)
        i += 1
    return reach
