"""ROS occupancy-grid maps (map_server YAML + PGM/PNG image) as walls and free space.

    >>> occupancy = load_map("worlds/hospital/map/map.yaml")
    >>> walls = walls_from_map(occupancy)            # list[Wall], names map/wall_<k>
    >>> store[0].spawn_walls(walls)
    >>> is_free(occupancy, 1.0, 2.0, clearance=0.3)

Pixels follow map_server: occupancy p = (255 - v) / 255 (v / 255 with `negate`), occupied
when p > occupied_thresh, free when p < free_thresh, unknown in between (and where a pixel's
alpha is 0). The image's bottom-left pixel has its lower-left corner at the origin.
"""

from __future__ import annotations

import difflib
import heapq
import io
import math
import warnings
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import yaml
from numpy.typing import ArrayLike

from arena_gym.files import MAX_DATA_BYTES, read_bytes, read_text
from arena_gym.scene.requests import Wall

WALL_HEIGHT = 1.0  # m
MAX_WALLS = 2000  # above this, the grid is coarsened (the assets' largest cover: ~1120)
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


# ------------------------------------------------------------------------------ walls
@dataclass(frozen=True, eq=False)
class MapCover:
    """Axis-aligned rectangles (r0, c0, r1, c1; end-exclusive cells) whose union is exactly
    `map.occupied`, where `map` is the input grid coarsened `factor` times per side.
    `counts` holds the number of rectangles at each resolution tried, finest first."""

    map: OccupancyMap
    factor: int
    rects: np.ndarray  # (k, 4) int
    counts: tuple[int, ...]

    def walls(self, height: float = WALL_HEIGHT, prefix: str = "map") -> list[Wall]:
        """One Wall per rectangle, along its longer side, named `<prefix>/wall_<k>`."""
        m, res, rows = self.map, self.map.resolution, self.map.shape[0]
        walls = []
        for k, (r0, c0, r1, c1) in enumerate(self.rects.tolist()):
            u0, u1 = c0 * res, c1 * res
            v0, v1 = (rows - r1) * res, (rows - r0) * res
            if u1 - u0 >= v1 - v0:
                a, b, thickness = (u0, (v0 + v1) / 2), (u1, (v0 + v1) / 2), v1 - v0
            else:
                a, b, thickness = ((u0 + u1) / 2, v0), ((u0 + u1) / 2, v1), u1 - u0
            xs, ys = m.to_world(np.array([a[0], b[0]]), np.array([a[1], b[1]]))
            start, end = (xs[0], ys[0]), (xs[1], ys[1])
            walls.append(Wall(f"{prefix}/wall_{k}", start, end, height, thickness))
        return walls


def cover_map(occupancy: OccupancyMap, max_walls: int = MAX_WALLS) -> MapCover:
    """Rectangles covering the occupied cells, coarsening the grid (2x per step, a coarse cell
    occupied if any of its cells is) until at most `max_walls` rectangles remain."""
    if isinstance(max_walls, bool) or not isinstance(max_walls, int) or max_walls < 1:
        raise MapError(f"max_walls: expected an integer >= 1, got {max_walls!r}")
    factor, current, counts = 1, occupancy, []
    while True:
        rects = _rectangles(current.occupied)
        counts.append(len(rects))
        if len(rects) <= max_walls:
            return MapCover(current, factor, rects, tuple(counts))
        current, factor = coarsen(current, 2), factor * 2


def walls_from_map(
    occupancy: OccupancyMap,
    height: float = WALL_HEIGHT,
    max_walls: int = MAX_WALLS,
    prefix: str = "map",
) -> list[Wall]:
    """The map's occupied cells as at most `max_walls` walls (see `cover_map`); warns when the
    grid had to be coarsened, naming the resolution used.

    >>> store[0].spawn_walls(walls_from_map(load_map("map.yaml"), height=0.5))
    """
    cover = cover_map(occupancy, max_walls)
    if cover.factor > 1:
        warnings.warn(
            f"map {occupancy.image}: {cover.counts[0]} walls at resolution "
            f"{occupancy.resolution:g} m exceed max_walls={max_walls}; coarsened {cover.factor}x "
            f"to {cover.map.resolution:g} m ({len(cover.rects)} walls)",
            stacklevel=2,
        )
    return cover.walls(height, prefix)


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


def _rectangles(grid: np.ndarray) -> np.ndarray:
    """Few rectangles whose union is `grid`'s occupied cells, sorted.

    Any cover's rectangles can grow into maximal ones (occupied rectangles that no side can
    extend), so the cover is picked among those: first every one that alone covers some
    cell (any cover needs it), then greedily the one covering the most cells still
    uncovered; greedy picks whose cells the others cover too are dropped at the end."""
    rows, cols = np.flatnonzero(grid.any(axis=1)), np.flatnonzero(grid.any(axis=0))
    if rows.size == 0:
        return np.zeros((0, 4), np.int64)
    top, left = rows[0], cols[0]  # the work below scales with the grid: keep to the walls' box
    grid = grid[top : rows[-1] + 1, left : cols[-1] + 1]
    candidates = _maximal_rectangles(grid)
    alone = _integral(_coverage(grid.shape, candidates) == 1)
    essential = _sums(alone, candidates) > 0
    needed = candidates[essential]
    coverage = _coverage(grid.shape, needed)
    uncovered = grid & (coverage == 0)
    gains = _sums(_integral(uncovered), candidates)
    useful = ~essential & (gains > 0)
    picks = _greedy(uncovered, candidates[useful], gains[useful])
    rects = np.concatenate([needed, _without_redundant(coverage, picks)])
    return rects[np.lexsort(rects.T[::-1])] + [top, left, top, left]


def _maximal_rectangles(grid: np.ndarray) -> np.ndarray:
    """Every maximal rectangle of occupied cells, (r0, c0, r1, c1) sorted.

    Each occupied cell (r, c) gives the rectangle with bottom row r, as tall as the column
    of occupied cells ending at (r, c), widened left and right while the columns stay that
    tall: maximal except perhaps downwards. Every maximal rectangle arises so, from the
    cells of its bottom row whose columns are shortest; cells side by side with equally
    tall columns give the same one, and are taken together as a segment."""
    rows, cols = grid.shape
    c_by_col, r_by_col = np.nonzero(grid.T)
    top = _runs(c_by_col, r_by_col)[2]
    up = np.zeros(grid.shape, np.int32)  # occupied cells from (r, c) upwards, itself included
    up[r_by_col, c_by_col] = r_by_col + 1 - top
    r, c = np.nonzero(grid)  # row-major: each row's runs of occupied cells in order
    height = up[r, c]
    run_start, run_end, run_first, run_after = _runs(r, c)
    seg_start, seg_end, seg_first, seg_after = _runs(r * (rows + 1) + height, c)
    first, last = np.flatnonzero(seg_start), np.flatnonzero(seg_end)  # each segment's cells
    n = len(first)
    lower_left = _nearest_lower(height[first], np.where(run_start[first], n, np.arange(n) - 1))
    lower_right = _nearest_lower(height[first], np.where(run_end[last], n, np.arange(n) + 1))
    c0 = np.where(lower_left < n, np.append(seg_after[first], 0)[lower_left], run_first[first])
    c1 = np.where(lower_right < n, np.append(seg_first[first], 0)[lower_right], run_after[first])
    r0, r1 = r[first] + 1 - height[first], r[first] + 1
    # it extends downwards when the row below has a run from c0 to c1 or further
    after_below = np.zeros((rows + 1, cols), np.int32)
    after_below[r, c] = run_after
    maximal = after_below[r1, c0] < c1
    # segments of a bottom row as tall as its shortest give one rectangle: keep it once
    _, once = np.unique(((r1 * cols + c0) * (cols + 1) + c1)[maximal], return_index=True)
    rects = np.stack([r0, c0, r1, c1], axis=1)[maximal][once]
    return rects[np.lexsort(rects.T[::-1])]


def _runs(line: np.ndarray, at: np.ndarray) -> tuple[np.ndarray, ...]:
    """For cells listed by (line, at) in np.nonzero's order, their runs (consecutive `at` in
    one line): whether each cell starts its run, whether it ends it, the run's first `at`
    and the `at` just after its last."""
    start = np.ones(len(at), bool)
    start[1:] = (line[1:] != line[:-1]) | (at[1:] != at[:-1] + 1)
    end = np.ones(len(at), bool)
    end[:-1] = start[1:]
    run = np.cumsum(start) - 1
    return start, end, at[start][run], at[end][run] + 1


def _nearest_lower(height: np.ndarray, step: np.ndarray) -> np.ndarray:
    """For each i, the nearest j with height[j] < height[i] going along `step` (step[i]: the
    next one that way, or len(height) at the end of i's run); len(height) where none is."""
    n = len(height)
    heights = np.append(height, 0)
    nearest = np.append(step, n)
    # every cell strictly between i and nearest[i] is at least as tall as i: where
    # nearest[i] is too, jumping to its own nearest keeps that true
    todo = np.flatnonzero(heights[nearest[:n]] >= height)
    while todo.size:
        nearest[todo] = nearest[nearest[todo]]
        todo = todo[heights[nearest[todo]] >= height[todo]]
    return nearest[:n]


def _greedy(uncovered: np.ndarray, candidates: np.ndarray, gains: np.ndarray) -> np.ndarray:
    """Candidates covering the `uncovered` cells, each pick the one covering the most of
    those still uncovered (the first in `candidates` on a tie); `gains` holds how many
    each covers at first."""
    uncovered = uncovered.copy()
    boxes = candidates.tolist()
    n = len(boxes)
    queue = (np.arange(n) - gains.astype(np.int64) * n).tolist()  # best gain, then lowest i
    heapq.heapify(queue)
    picks = []
    while queue:
        key = heapq.heappop(queue)
        i = key % n
        r0, c0, r1, c1 = boxes[i]
        gain = int(np.count_nonzero(uncovered[r0:r1, c0:c1]))
        if gain < (i - key) // n:  # counted before later picks covered some of its cells
            if gain:
                heapq.heappush(queue, -gain * n + i)
            continue
        picks.append(i)
        uncovered[r0:r1, c0:c1] = False
    return candidates[picks].reshape(-1, 4)


def _without_redundant(coverage: np.ndarray, picks: np.ndarray) -> np.ndarray:
    """`picks` less those whose every cell another rectangle covers, the later picks (which
    covered fewer new cells) dropped first; `coverage` counts the other rectangles over
    each cell, and is changed."""
    boxes = picks.tolist()
    for r0, c0, r1, c1 in boxes:
        coverage[r0:r1, c0:c1] += 1
    keep = np.ones(len(boxes), bool)
    for i in range(len(boxes) - 1, -1, -1):
        r0, c0, r1, c1 = boxes[i]
        if coverage[r0:r1, c0:c1].min() >= 2:
            coverage[r0:r1, c0:c1] -= 1
            keep[i] = False
    return picks[keep]


def _coverage(shape: tuple[int, int], rects: np.ndarray) -> np.ndarray:
    """(H, W) int: how many of the rectangles cover each cell."""
    corners = np.zeros((shape[0] + 1, shape[1] + 1), np.int32)
    r0, c0, r1, c1 = rects.T
    for rows, cols, sign in ((r0, c0, 1), (r0, c1, -1), (r1, c0, -1), (r1, c1, 1)):
        np.add.at(corners, (rows, cols), sign)
    return _integral(corners)[1:-1, 1:-1]


def _integral(grid: np.ndarray) -> np.ndarray:
    """Summed-area table: [r, c] holds the sum of grid[:r, :c]."""
    table = np.zeros((grid.shape[0] + 1, grid.shape[1] + 1), np.int32)
    np.cumsum(grid, axis=1, out=table[1:, 1:])
    for r in range(1, len(table)):  # numpy's cumsum down the columns takes several times longer
        table[r] += table[r - 1]
    return table


def _sums(integral: np.ndarray, rects: np.ndarray) -> np.ndarray:
    """Each rectangle's sum, from the grid's summed-area table."""
    r0, c0, r1, c1 = rects.T
    return integral[r1, c1] - integral[r0, c1] - integral[r1, c0] + integral[r0, c0]


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
