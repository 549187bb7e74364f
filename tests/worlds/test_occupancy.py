"""Occupancy-grid maps: loading (PGM, PNG, both YAML forms), walls that cover exactly the
occupied cells, world coordinates, coarsening, free space, and error texts."""

from __future__ import annotations

import functools
import math
import re
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from arena_gym.scene import SceneStore
from arena_gym.worlds.map_cover import MAX_WALLS, cover_map, walls_from_map
from arena_gym.worlds.occupancy import (
    MapError,
    OccupancyMap,
    coarsen,
    free_cells,
    is_free,
    load_map,
)

# name: (rows, cols), resolution, origin, occupied cells, free cells, walls at most (for each
# map the fewest any exact cover can have, found by an exhaustive search)
MAPS = {
    "map_empty": ((481, 626), 0.05, (0.0, 0.0, 0.0), 20804, 278156, 21),
    "map_empty_small": ((481, 626), 0.019, (-6.0, -6.0, 0.0), 20804, 278156, 21),
    "arena_rooms1": ((1300, 1300), 0.1, (-65.0, -65.0, 0.0), 1740, 75131, 12),
    "hospital": ((800, 800), 0.1, (-40.0, -40.0, 0.0), 11848, 109291, 1119),
    "experiment_rooms": ((300, 300), 0.1, (-15.0, -15.0, 0.0), 848, 13136, 20),
    "evaluation_floor": ((200, 200), 0.1, (-10.0, -10.0, 0.0), 1992, 23343, 150),
    "map1_small": ((188, 244), 0.06, (-6.0, -6.0, 0.0), 8809, 35641, 94),
}


@functools.cache
def _load(yaml_path: Path) -> OccupancyMap:
    return load_map(yaml_path)


@functools.cache
def _cover(yaml_path: Path, max_walls: int = MAX_WALLS):
    return cover_map(_load(yaml_path), max_walls)


def _yaml(assets: Path, name: str) -> Path:
    return assets / "worlds" / name / "map" / "map.yaml"


def rasterise(walls, m: OccupancyMap) -> np.ndarray:
    """Paint each wall's rectangle back onto m's grid; its corners must fall on cell corners."""
    grid = np.zeros(m.shape, bool)
    for wall in walls:
        (x0, y0), (x1, y1) = wall.start, wall.end
        dx, dy = (x1 - x0) / wall.length, (y1 - y0) / wall.length
        nx, ny = -dy * wall.thickness / 2, dx * wall.thickness / 2
        xs = np.array([x0 + nx, x0 - nx, x1 + nx, x1 - nx])
        ys = np.array([y0 + ny, y0 - ny, y1 + ny, y1 - ny])
        u, v = m.to_map(xs, ys)
        cols, ups = u / m.resolution, v / m.resolution
        assert np.allclose(cols, np.round(cols), atol=1e-6), wall
        assert np.allclose(ups, np.round(ups), atol=1e-6), wall
        c0, c1 = round(float(cols.min())), round(float(cols.max()))
        r0, r1 = m.shape[0] - round(float(ups.max())), m.shape[0] - round(float(ups.min()))
        assert 0 <= r0 < r1 <= m.shape[0] and 0 <= c0 < c1 <= m.shape[1], wall
        grid[r0:r1, c0:c1] = True
    return grid


def _pgm(path: Path, pixels: np.ndarray, maxval: int = 255) -> Path:
    header = f"P5\n# CREATOR: test\n{pixels.shape[1]} {pixels.shape[0]}\n{maxval}\n".encode()
    dtype = np.uint8 if maxval < 256 else ">u2"
    path.write_bytes(header + pixels.astype(dtype).tobytes())
    return path


def _plain_yaml(path: Path, image: str | Path, **overrides) -> Path:
    params = {"image": str(image), "resolution": 0.5, "origin": [1.0, 2.0, 0.0], "negate": 0,
              "occupied_thresh": 0.65, "free_thresh": 0.196, **overrides}
    path.write_text("".join(f"{k}: {v}\n" for k, v in params.items()))
    return path


# ------------------------------------------------------------------------- asset maps
@pytest.mark.parametrize("name", MAPS)
def test_every_asset_map_loads_with_its_yaml_values(assets, name):
    shape, resolution, origin, n_occupied, n_free, _ = MAPS[name]
    m = _load(_yaml(assets, name))
    assert m.shape == shape and m.resolution == resolution and m.origin == origin
    assert (int(m.occupied.sum()), int(m.free.sum())) == (n_occupied, n_free)
    assert not (m.occupied & m.free).any()
    assert not m.negate and (m.occupied_thresh, m.free_thresh) == (0.65, 0.196)
    assert m.image == _yaml(assets, name).parent / m.image.name
    # the image's bottom-left pixel has its lower-left corner at the origin
    assert m.cell_corner(shape[0] - 1, 0) == pytest.approx(origin[:2])
    top_right = (origin[0] + (shape[1] - 1) * resolution, origin[1] + (shape[0] - 1) * resolution)
    assert m.cell_corner(0, shape[1] - 1) == pytest.approx(top_right)


@pytest.mark.parametrize("name", MAPS)
def test_walls_cover_exactly_the_occupied_cells(assets, name):
    cover = _cover(_yaml(assets, name))
    walls = cover.walls(height=0.7)
    assert cover.factor == 1 and cover.map.resolution == MAPS[name][1]
    assert len(walls) <= min(MAPS[name][5], MAX_WALLS)
    assert [w.name for w in walls] == [f"map/wall_{k}" for k in range(len(walls))]
    assert all(w.height == 0.7 and w.thickness <= w.length + 1e-9 for w in walls)
    np.testing.assert_array_equal(rasterise(walls, cover.map), cover.map.occupied)


def test_a_known_wall_of_arena_rooms1_lies_where_the_image_puts_it(assets):
    m = _load(_yaml(assets, "arena_rooms1"))
    # image row 339, columns 570..730 is the top wall: y = -65 + (1299 - 339) * 0.1 = 31.0
    assert m.occupied[339, 570:731].all() and not m.occupied[338, 570:731].any()
    assert m.cell_corner(339, 570) == pytest.approx((-8.0, 31.0))
    assert m.cell_at(0.05, 31.05) == (339, 650) and m.occupied[m.cell_at(0.05, 31.05)]
    top = [w for w in _cover(_yaml(assets, "arena_rooms1")).walls() if w.start[1] > 31.0]
    assert len(top) == 1
    assert top[0].start == pytest.approx((-8.0, 31.05))
    assert top[0].end == pytest.approx((8.1, 31.05))
    assert top[0].thickness == pytest.approx(0.1)


def test_hospital_walls_spawn_and_compile(assets):
    walls = walls_from_map(_load(_yaml(assets, "hospital")), height=0.5)
    store = SceneStore(1)
    store[0].spawn_walls(walls)
    model = store[0].model
    assert model.ngeom == 1 + len(walls) and len(walls) > 1000  # the ground plane + walls
    geom = model.geom(f"env_0/{walls[0].name}/geom")
    assert geom.size == pytest.approx([walls[0].length / 2, walls[0].thickness / 2, 0.25])
    centre = np.add(walls[0].start, walls[0].end) / 2
    assert store[0].data.geom_xpos[geom.id] == pytest.approx([*centre, 0.25])


# ------------------------------------------------------------------------- coarsening
def test_too_many_walls_coarsen_the_grid_conservatively_and_warn(assets):
    fine = _load(_yaml(assets, "hospital"))
    with pytest.warns(UserWarning, match=re.escape(
        f"map {fine.image}: 1119 walls at resolution 0.1 m exceed max_walls=500; coarsened 4x "
        "to 0.4 m (328 walls)"
    )):
        walls = walls_from_map(fine, max_walls=500)
    cover = _cover(_yaml(assets, "hospital"), 500)
    assert (cover.factor, cover.counts, len(walls)) == (4, (1119, 648, 328), 328)
    assert cover.map.resolution == pytest.approx(0.4) and cover.map.origin == fine.origin
    np.testing.assert_array_equal(rasterise(walls, cover.map), cover.map.occupied)
    # every fine occupied cell lies inside an occupied coarse cell (same world point)
    rows, cols = np.nonzero(fine.occupied)
    for x, y in fine.cell_centers(rows, cols)[::37]:
        assert cover.map.occupied[cover.map.cell_at(x, y)]


def test_coarsen_aligns_blocks_at_the_bottom_left():
    occupied = np.zeros((3, 5), bool)
    occupied[0, 4] = occupied[2, 0] = True  # top-right and bottom-left cells
    m = OccupancyMap(occupied, ~occupied, 1.0, (0.0, 0.0, 0.0))
    c = coarsen(m, 2)
    # padded with one row on top and one column on the right
    np.testing.assert_array_equal(c.occupied, [[False, False, True], [True, False, False]])
    np.testing.assert_array_equal(c.free, [[False, False, False], [False, True, False]])
    assert c.cell_corner(1, 0) == (0.0, 0.0) and c.resolution == 2.0


def test_a_checkerboard_needs_coarsening_until_it_fits():
    board = (np.indices((8, 8)).sum(axis=0) % 2).astype(bool)
    m = OccupancyMap(board, ~board, 0.1, (0.0, 0.0, 0.0))
    assert len(cover_map(m).rects) == 32
    cover = cover_map(m, max_walls=1)
    assert (cover.factor, cover.counts) == (2, (32, 1))
    np.testing.assert_array_equal(rasterise(cover.walls(), cover.map), np.ones((4, 4), bool))
    with _raises("max_walls: expected an integer >= 1, got 0"):
        cover_map(m, max_walls=0)


def test_crossing_walls_overlap_as_two_rectangles():
    plus = np.zeros((5, 5), bool)
    plus[2, :] = plus[:, 2] = True
    m = OccupancyMap(plus, ~plus, 0.1, (0.0, 0.0, 0.0))
    assert cover_map(m).rects.tolist() == [[0, 2, 5, 3], [2, 0, 3, 5]]


@st.composite
def grids(draw) -> np.ndarray:
    """Small grids: a few filled rectangles (walls, junctions, blocks) with single cells
    flipped (ragged outlines, specks, holes)."""
    rows, cols = draw(st.integers(1, 12)), draw(st.integers(1, 12))
    grid = np.zeros((rows, cols), bool)
    row, col = st.integers(0, rows - 1), st.integers(0, cols - 1)
    for r0, c0, r1, c1 in draw(st.lists(st.tuples(row, col, row, col), max_size=6)):
        grid[min(r0, r1) : max(r0, r1) + 1, min(c0, c1) : max(c0, c1) + 1] = True
    for r, c in draw(st.lists(st.tuples(row, col), max_size=8)):
        grid[r, c] = not grid[r, c]
    return grid


@settings(max_examples=300, deadline=None)
@given(grid=grids())
@example(grid=np.array([[1, 0, 1, 1, 0],  # the greedy step takes row 2's run of three first;
                        [1, 0, 1, 0, 1],  # the rectangles it takes later cover it
                        [0, 1, 1, 1, 0],
                        [1, 1, 0, 1, 1],
                        [1, 0, 1, 0, 1]], bool))
def test_covers_are_exact_maximal_and_without_redundant_rectangles(grid):
    m = OccupancyMap(grid, ~grid, 0.1, (0.0, 0.0, 0.0))
    cover = cover_map(m)
    again = cover_map(OccupancyMap(grid.copy(), ~grid, 0.1, (0.0, 0.0, 0.0)))
    assert cover.rects.tolist() == again.rects.tolist()
    np.testing.assert_array_equal(rasterise(cover.walls(), m), grid)
    coverage = np.zeros(grid.shape, int)
    for r0, c0, r1, c1 in cover.rects.tolist():
        coverage[r0:r1, c0:c1] += 1
    padded = np.pad(grid, 1)  # off the grid: not occupied
    for r0, c0, r1, c1 in (cover.rects + 1).tolist():  # in padded's cells
        assert (coverage[r0 - 1 : r1 - 1, c0 - 1 : c1 - 1] == 1).any()  # needed by the cover
        # maximal: the cells just beyond each side are not all occupied
        assert not padded[r0 - 1, c0:c1].all() and not padded[r1, c0:c1].all()
        assert not padded[r0:r1, c0 - 1].all() and not padded[r0:r1, c1].all()


# ------------------------------------------------------------------------- YAML and images
def test_plain_yaml_and_ros2_wrapper_load_the_same_map(assets, tmp_path):
    wrapped = _load(_yaml(assets, "map1_small"))
    plain = load_map(_plain_yaml(tmp_path / "plain.yaml", wrapped.image, resolution=0.06,
                                 origin=[-6.0, -6.0, 0.0]))  # no `type:` key
    assert plain.image == wrapped.image and plain.origin == wrapped.origin
    np.testing.assert_array_equal(plain.occupied, wrapped.occupied)
    np.testing.assert_array_equal(plain.free, wrapped.free)


def test_pgm_thresholds_and_negate(tmp_path):
    pixels = np.array([[0, 100, 205, 254, 255]])
    _pgm(tmp_path / "m.pgm", pixels)
    m = load_map(_plain_yaml(tmp_path / "m.yaml", "m.pgm"))  # image relative to the YAML
    # p = (255 - v) / 255: 1.0 occupied, 0.61 and 0.196 (map_saver's 205) unknown, ~0 free
    np.testing.assert_array_equal(m.occupied, [[True, False, False, False, False]])
    np.testing.assert_array_equal(m.free, [[False, False, False, True, True]])
    n = load_map(_plain_yaml(tmp_path / "n.yaml", "m.pgm", negate=1))  # p = v / 255
    assert n.negate
    np.testing.assert_array_equal(n.occupied, [[False, False, True, True, True]])
    np.testing.assert_array_equal(n.free, [[True, False, False, False, False]])
    _pgm(tmp_path / "w.pgm", pixels * 257, maxval=65535)  # 16-bit PGM: same shades
    w = load_map(_plain_yaml(tmp_path / "w.yaml", "w.pgm"))
    np.testing.assert_array_equal(w.occupied, m.occupied)
    np.testing.assert_array_equal(w.free, m.free)


def test_png_alpha_zero_is_unknown_and_rgb_is_averaged(tmp_path):
    from PIL import Image

    rgba = np.array([[[0, 0, 0, 255], [0, 0, 0, 0], [255, 255, 255, 255], [0, 0, 240, 255]]],
                    np.uint8)
    Image.fromarray(rgba).save(tmp_path / "m.png")  # (h, w, 4) uint8: RGBA
    m = load_map(_plain_yaml(tmp_path / "m.yaml", "m.png"))
    # blue (0, 0, 240): mean 80 -> p = 0.69 > 0.65 occupied
    np.testing.assert_array_equal(m.occupied, [[True, False, False, True]])
    np.testing.assert_array_equal(m.free, [[False, False, True, False]])


def test_origin_yaw_rotates_the_grid_about_the_origin(tmp_path):
    _pgm(tmp_path / "m.pgm", np.array([[0, 0, 0], [0, 255, 255]]))
    m = load_map(_plain_yaml(tmp_path / "m.yaml", "m.pgm", origin=[1.0, 2.0, math.pi / 2]))
    # the image's bottom row runs along +y from the origin, its rows go up along -x:
    # cell (0, 0) spans x in [0, 0.5], y in [2, 2.5]
    assert m.cell_corner(1, 0) == pytest.approx((1.0, 2.0))
    assert m.cell_corner(1, 1) == pytest.approx((1.0, 2.5))
    assert m.cell_corner(0, 0) == pytest.approx((0.5, 2.0))
    assert m.cell_at(0.25, 2.25) == (0, 0) and m.cell_at(0.25, 3.25) == (0, 2)
    assert m.cell_at(0.75, 2.25) == (1, 0)
    walls = walls_from_map(m)
    np.testing.assert_array_equal(rasterise(walls, m), m.occupied)
    assert len(walls) == 2  # the top image row, then the cell below its left end
    assert walls[0].start == pytest.approx((0.25, 2.0))
    assert walls[0].end == pytest.approx((0.25, 3.5))


# ------------------------------------------------------------------------- free space
def _brute_free(m: OccupancyMap, clearance: float) -> np.ndarray:
    rows, cols = m.shape
    out = np.zeros(m.shape, bool)
    for r in range(rows):
        for c in range(cols):
            ok = m.free[r, c]
            for rr in range(r - 4, r + 5):
                for cc in range(c - 4, c + 5):
                    d = math.hypot(max(abs(rr - r) - 0.5, 0), max(abs(cc - c) - 0.5, 0))
                    d *= m.resolution
                    blocked = not (0 <= rr < rows and 0 <= cc < cols) or not m.free[rr, cc]
                    if d < clearance and blocked:
                        ok = False
            out[r, c] = ok
    return out


@pytest.mark.parametrize("clearance", [0.0, 0.12, 0.26])
def test_free_cells_match_brute_force_and_is_free(clearance):
    rng = np.random.default_rng(3)
    occupied = rng.random((14, 17)) < 0.08
    unknown = np.zeros_like(occupied)
    unknown[:, 15:] = True
    m = OccupancyMap(occupied & ~unknown, ~occupied & ~unknown, 0.1, (-1.0, 0.5, 0.3))
    grid = free_cells(m, clearance)
    np.testing.assert_array_equal(grid, _brute_free(m, clearance))
    assert grid.any() and not grid.all()
    for (r, c), expected in np.ndenumerate(grid):
        x, y = m.cell_centers(r, c)
        assert is_free(m, x, y, clearance) == expected, (r, c)


def test_is_free_on_asset_maps(assets):
    m = _load(_yaml(assets, "arena_rooms1"))
    assert is_free(m, 0.0, 0.0, 0.5)
    assert not is_free(m, 0.05, 31.05)  # on the top wall
    assert is_free(m, 0.05, 30.5, 0.3) and not is_free(m, 0.05, 30.5, 0.6)
    assert not is_free(m, 100.0, 0.0)  # off the map
    grid = free_cells(m, 0.5)
    assert 0 < grid.sum() < m.free.sum()
    assert not (grid & ~m.free).any()


# ------------------------------------------------------------------------- errors
def _raises(message: str):
    return pytest.raises(MapError, match=re.escape(message))


def test_error_texts(tmp_path):
    missing = tmp_path / "nope.yaml"
    with _raises(f"map yaml {missing}: expected an existing file, got no such file"):
        load_map(missing)
    bad = tmp_path / "bad.yaml"
    bad.write_text("image: [map.pgm\n")
    with _raises(
        f"map yaml {bad}: expected valid YAML, got a syntax error at line 2: "
        "expected ',' or ']', but got '<stream end>'"
    ):
        load_map(bad)
    bad.write_text("- 1\n")
    with _raises(f"map yaml {bad}: expected a mapping of map_server keys, got list"):
        load_map(bad)
    bad.write_text("/**:\n  ros__parameters:\n    image: m.pgm\n    origin: [0, 0, 0]\n")
    with _raises(
        f"map yaml {bad}: expected keys image, resolution, origin, occupied_thresh, free_thresh, "
        "got no resolution, occupied_thresh, free_thresh (keys: image, origin)"
    ):
        load_map(bad)
    no_image = _plain_yaml(tmp_path / "m.yaml", "gone.pgm")
    with _raises(
        f"map yaml {no_image}: 'image': expected an image file at {tmp_path / 'gone.pgm'}, "
        "got no such file"
    ):
        load_map(no_image)
    _pgm(tmp_path / "m.pgm", np.zeros((2, 2)))
    with _raises(
        f"map yaml {tmp_path / 'r.yaml'}: 'resolution': expected a positive number, got -0.5"
    ):
        load_map(_plain_yaml(tmp_path / "r.yaml", "m.pgm", resolution=-0.5))
    with _raises("'origin': expected [x, y, yaw], got [0, 0]"):
        load_map(_plain_yaml(tmp_path / "o.yaml", "m.pgm", origin=[0, 0]))
    (tmp_path / "short.pgm").write_bytes(b"P5\n4 4\n255\n\x00\x00")
    with _raises(
        f"map image {tmp_path / 'short.pgm'}: expected 16 pixels (4x4), got 2"
    ):
        load_map(_plain_yaml(tmp_path / "s.yaml", "short.pgm"))


def test_unknown_keys_warn_with_a_suggestion(tmp_path):
    _pgm(tmp_path / "m.pgm", np.zeros((2, 2)))
    message = "unknown key 'occupied_tresh' ignored; did you mean 'occupied_thresh'?"
    with pytest.warns(UserWarning, match=re.escape(message)):
        load_map(_plain_yaml(tmp_path / "m.yaml", "m.pgm", occupied_tresh=0.5))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        load_map(_plain_yaml(tmp_path / "t.yaml", "m.pgm", type="indoor", mode="trinary"))
