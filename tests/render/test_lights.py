"""Light tables in lux: a floor under a 400 lux dome shows 0.6 of its albedo, a sun of 400
lux all of it, a bulb falls off with the square of its distance, brightness follows a
fixture's level, a light dimmed to 0 darkens its room only, a spot's pool lies inside its
cone, many fixtures reduce into the slots from the eye with their light summed, a rig
fills its room, glow visuals shine at level ** 0.65, and no edit recompiles."""

from __future__ import annotations

import math
import re

import mujoco
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena_gym.errors import SceneError
from arena_gym.render import lux
from arena_gym.render.cameras import project, top_down_camera
from arena_gym.render.canvas import open_canvas
from arena_gym.render.lights import FIXTURE_QUADS, FixtureTree, glow_materials, pick
from arena_gym.scene import SceneStore
from arena_gym.scene.builders import LIGHT_SLOTS
from arena_gym.scene.lights import Light, LightTable
from arena_gym.scene.requests import Prim, Slab, Wall

LSB = 1.0  # one 8-bit step: each pixel is rounded once, a patch's mean by at most half
WHITE = (1.0, 1.0, 1.0, 1.0)


def _none(_scene):
    return None


def _white_floor(size: float = 4.0, z: float = 0.5) -> SceneStore:
    """A white slab (full albedo) whose top face is at height `z` (clear of the ground)."""
    store = SceneStore(1)
    store[0].spawn_floors([Slab("floor", (0.0, 0.0, z), (size, size), rgba=WHITE)])
    return store


def _top_down(store, lo, hi, lights, size=(64, 64), quads=FIXTURE_QUADS):
    model, data = store[0].model, store[0].data
    canvas = open_canvas(model, *size, quads=quads)
    try:
        camera, fovy = top_down_camera(np.array(lo), np.array(hi), *size)
        return canvas.draw(data, camera, _none, fovy=fovy, lights=lights).astype(float)
    finally:
        canvas.close()


def _centre(frame: np.ndarray, r: int = 3) -> float:
    h, w, _ = frame.shape
    return float(frame[h // 2 - r:h // 2 + r, w // 2 - r:w // 2 + r].mean())


@pytest.mark.parametrize("lux_", [400.0, 200.0, 100.0])
def test_a_floor_under_a_dome_shows_its_albedo_times_0_6_of_lux_over_400(lux_):
    store = _white_floor()
    table = LightTable()
    table.spawn(Light("sky", "dome", intensity=lux_))
    frame = _top_down(store, (-1, -1), (1, 1), table, quads=None)
    expected = 255 * lux.DOME_GAIN * lux_ / lux.REFERENCE_LUX  # 153 at the 400 lux reference
    assert frame.mean() == pytest.approx(expected, abs=LSB)
    assert frame.std() < LSB  # the dome lights the whole floor alike


def test_a_sun_of_400_lux_facing_a_floor_shows_its_full_albedo_and_a_slanted_one_less():
    store = _white_floor()
    table = LightTable()
    table.spawn(Light("sun", "distant", intensity=400.0))
    assert _top_down(store, (-1, -1), (1, 1), table, quads=None).mean() == pytest.approx(
        255, abs=LSB)
    table.remove("sun")
    table.spawn(Light("sun", "distant", intensity=400.0, direction=(1.0, 0.0, -1.0)))
    assert _top_down(store, (-1, -1), (1, 1), table, quads=None).mean() == pytest.approx(
        255 * math.cos(math.radians(45)), abs=LSB)


def test_a_bulb_lights_the_floor_below_it_as_lumens_over_4_pi_d_squared():
    store = _white_floor()
    means = []
    for height in (1.5, 3.0):
        table = LightTable()
        table.spawn(Light("bulb", "sphere", positions=[(0.0, 0.0, 0.5 + height)],
                          intensity=6000.0))
        means.append(_centre(_top_down(store, (-1, -1), (1, 1), table), r=1))
        lux_ = 6000.0 / (4 * math.pi * height ** 2)
        assert means[-1] == pytest.approx(255 * lux_ / lux.REFERENCE_LUX, abs=LSB)
    assert means[0] > 3.5 * means[1]  # twice as far: a quarter (the effect)


def test_floor_brightness_follows_a_fixtures_level_linearly_and_nothing_recompiles():
    store = _white_floor()
    _ = store[0].model  # compiled: from here on only the table changes
    compiles = store[0].compile_count
    table = LightTable()
    table.spawn(Light("panel", "rect", positions=[(0.0, 0.0, 2.5)], intensity=2400.0,
                      x_length=0.6, y_length=0.6))
    levels = np.linspace(0.2, 1.0, 5)
    means = []
    for level in levels:
        table.dim("panel", level)
        means.append(_centre(_top_down(store, (-1, -1), (1, 1), table)))
    slope, intercept = np.polyfit(levels, means, 1)
    assert np.abs(np.asarray(means) - (slope * levels + intercept)).max() < LSB
    assert abs(intercept) < LSB  # level 0: dark (a panel is all the light here)
    # a Lambertian panel: Phi / pi candela straight down, 2 m above the floor
    assert means[-1] == pytest.approx(255 * 2400.0 / math.pi / 4.0 / lux.REFERENCE_LUX,
                                      abs=LSB)
    table.move("panel", (5.0, 5.0, 2.5))
    assert store[0].compile_count == compiles


def test_a_light_dimmed_to_zero_darkens_its_room_only():
    store = SceneStore(1)
    store[0].spawn_floors([Slab("a", (-2.0, 0.0, 0.0), (3.8, 3.8), rgba=WHITE),
                           Slab("b", (2.0, 0.0, 0.0), (3.8, 3.8), rgba=WHITE)])
    table = LightTable()
    for name, x in (("lamp_a", -2.0), ("lamp_b", 2.0)):
        table.spawn(Light(name, "sphere", positions=[(x, 0.0, 2.5)], cone=60.0,
                          intensity=2000.0))
    on = _top_down(store, (-4, -2), (4, 2), table, size=(96, 48))
    table.dim("lamp_a", 0.0)
    off = _top_down(store, (-4, -2), (4, 2), table, size=(96, 48))
    w = on.shape[1]
    room_a, room_b = slice(0, w // 2 - 2), slice(w // 2 + 2, w)
    assert on[:, room_a].mean() > 20 * LSB
    assert off[:, room_a].max() == 0.0  # dark
    np.testing.assert_array_equal(off[:, room_b], on[:, room_b])


def test_a_spots_pool_lies_between_its_cone_corners_on_a_wall():
    store = SceneStore(1)
    store[0].spawn_walls([Wall("wall", (3.0, -3.0), (3.0, 3.0), height=2.0, rgba=WHITE)])
    table = LightTable()
    cone = 30.0
    table.spawn(Light("spot", "sphere", positions=[(0.0, 0.0, 1.0)], direction=(1.0, 0.0, 0.0),
                      cone=cone, intensity=3000.0))
    face = 3.0 - 0.05
    radius = face * math.tan(math.radians(cone / 2))
    model, data = store[0].model, store[0].data
    canvas = open_canvas(model, 160, 120, quads=FIXTURE_QUADS)
    camera = mujoco.MjvCamera()
    camera.type = mujoco.mjtCamera.mjCAMERA_FREE
    camera.lookat[:], camera.distance, camera.azimuth, camera.elevation = (face, 0, 1), 4, 0, 0
    frame = canvas.draw(data, camera, _none, lights=table).mean(axis=2)

    def at(dy, dz):
        u, v = project(canvas.scene, np.array([face, dy, 1.0 + dz]), 160, 120)
        return frame[int(v), int(u)]

    centre = at(0.0, 0.0)
    # all 3000 lm in a 30 degree cone: 3000 / 2 pi (1 - cos 15 deg) cd, 2.95 m away
    candela = 3000.0 / (2 * math.pi * (1 - math.cos(math.radians(15))))
    assert centre == pytest.approx(min(255.0, 255 * candela / face ** 2 / 400), abs=2 * LSB)
    for angle in np.linspace(0, 2 * np.pi, 12, endpoint=False):
        c, s = math.cos(angle), math.sin(angle)
        assert at(0.8 * radius * c, 0.8 * radius * s) > centre / 2, angle  # in the cone: lit
        assert at(1.2 * radius * c, 1.2 * radius * s) == 0, angle  # outside: dark
    canvas.close()


def test_bad_lights_and_unknown_names_are_refused_with_what_was_expected():
    with pytest.raises(SceneError, match=re.escape(
            "Light 'x' shape: expected one of ['dome', 'distant', 'sphere', 'cylinder', "
            "'disk', 'rect'], got 'laser'")):
        Light("x", "laser")
    with pytest.raises(SceneError, match=re.escape(
            "Light 'x' level: expected a number in [0, 1], got 1.5")):
        Light("x", "dome", level=1.5)
    with pytest.raises(SceneError, match=re.escape(
            "Light 'x' positions: expected at least one point (x, y, z) for a sphere fixture, "
            "got none")):
        Light("x", "sphere")
    with pytest.raises(SceneError, match=re.escape(
            "Light 'x' positions[0]: expected numbers within +-10000 (m, rad), got (1e+300, "
            "0.0, 2.0)")):
        Light("x", "sphere", positions=[(1e300, 0.0, 2.0)])
    with pytest.raises(SceneError, match=re.escape(
            "Light 'x' intensity: expected a number in [0, 1e+06], got 1e+300")):
        Light("x", "dome", intensity=1e300)
    with pytest.raises(SceneError, match=re.escape(
            "Light 'x' alive: expected at most one entry per fixture (1), got 2")):
        Light("x", "sphere", positions=[(0, 0, 2)], alive=(True, False))
    table = LightTable()
    table.spawn(Light("lamp", "sphere", positions=[(0, 0, 2)]))
    with pytest.raises(SceneError, match=re.escape("unknown light 'lamb'; did you mean "
                                                   "'lamp'?")):
        table.dim("lamb", 0.5)
    with pytest.raises(SceneError, match=re.escape("Light 'lamp' level: expected a number "
                                                   "in [0, 1], got nan")):
        table.dim("lamp", float("nan"))
    assert table.get("lamp").level == 1.0  # unchanged


def test_a_light_moves_by_its_first_fixture_turned_by_a_yaw():
    table = LightTable()
    table.spawn(Light("head", "sphere", positions=[(0, 0, 1), (1, 0, 1)], direction=(1, 0, 0),
                      cone=40.0))
    table.move("head", (2.0, 3.0, 0.5), yaw=math.pi / 2)
    light = table.get("head")
    np.testing.assert_allclose(light.positions, [(2, 3, 0.5), (2, 4, 0.5)], atol=1e-12)
    np.testing.assert_allclose(light.direction, (0, 1, 0), atol=1e-12)
    table.move("head", (0.0, 0.0, 1.0))  # from the layout it was spawned with, not the last
    np.testing.assert_allclose(table.get("head").positions, [(0, 0, 1), (1, 0, 1)], atol=1e-12)


def _row(n: int, pitch: float = 2.0) -> list[tuple[float, float, float]]:
    return [(pitch * k, 0.0, 2.5) for k in range(n)]


def test_more_fixtures_than_slots_keep_the_near_ones_apart_and_sum_a_far_wing():
    table = LightTable()
    table.spawn(Light("sky", "dome", intensity=100.0))
    table.spawn(Light("row", "sphere", positions=_row(40), intensity=1000.0))
    eye = np.array([-1.0, 0.0, 1.5])  # at the row's first end
    picked = pick(table, eye, LIGHT_SLOTS)
    assert len(picked) == LIGHT_SLOTS and picked[0].directional  # the dome first
    assert not picked[1].attenuated  # then the rig's room fill
    fixtures = picked[2:]
    one = lux.lamps(table.get("row"))[2][0].diffuse
    # no light lost: the lamps carry all 40 fixtures' light
    np.testing.assert_allclose(sum(lamp.diffuse for lamp in fixtures), 40 * one)
    singles = sorted(lamp.pos[0] for lamp in fixtures if np.allclose(lamp.diffuse, one))
    assert singles[:2] == [0.0, 2.0]  # the two nearest stay lamps of their own
    far = max(fixtures, key=lambda lamp: lamp.pos[0])
    assert far.diffuse[0] >= 16 * one[0] - 1e-12  # the far wing: one lamp, its light summed


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(*[st.floats(-50, 50)] * 3), min_size=1, max_size=40, unique=True),
       st.tuples(*[st.floats(-60, 60)] * 3), st.integers(1, 10))
def test_the_cut_covers_every_fixture_once_in_as_many_groups_as_slots(points, eye, n):
    groups = FixtureTree(np.array(points)).cut(np.array(eye), n)
    ids = np.sort(np.concatenate(groups))
    np.testing.assert_array_equal(ids, np.arange(len(points)))
    assert len(groups) == min(n, len(points))


def test_a_rig_fills_its_room_with_the_light_its_surfaces_give_back():
    grid = [(x, y, 2.58) for y in (1.8, 4.2) for x in (1.6, 4.0, 6.4)]
    rig = Light("hall", "rect", positions=grid, intensity=3600.0)
    _, (fill,), fixtures = lux.lamps(rig)
    assert len(fixtures) == 6 and not fill.attenuated
    np.testing.assert_allclose(fill.pos, (4.0, 3.0, 1.29))  # half height over the centre
    surface = 2 * (7.2 * 4.8 + 7.2 * 2.58 + 4.8 * 2.58)  # extent + one pitch; both ways
    expected = 0.4 * 6 * 3600.0 / (surface * 0.6) / lux.REFERENCE_LUX
    np.testing.assert_allclose(fill.diffuse, expected)
    dead = Light("hall", "rect", positions=grid, intensity=3600.0,
                 alive=(True, False, True, False, True, False))
    _, (half,), alive = lux.lamps(dead)
    assert len(alive) == 3
    np.testing.assert_allclose(half.diffuse, expected / 2)


def test_colour_temperature_warms_and_cools_a_light():
    warm, white, cool = (lux.cct_rgb(k) for k in (2700.0, 6500.0, 10000.0))
    assert warm[0] == 1.0 and warm[0] > warm[1] > warm[2]
    assert white.min() > 0.95  # daylight: white
    assert cool[2] == 1.0 and cool[2] > cool[1] > cool[0]
    np.testing.assert_array_equal(lux.cct_rgb(0.0), np.ones(3))


def test_an_envs_frames_show_its_light_table():
    from arena_gym.envs.vector_env import ArenaVectorEnv

    env = ArenaVectorEnv(2, render_mode="rgb_array",
                         render={"view": "top_down", "width": 64, "height": 64})
    env.reset(seed=0)
    compiles = [env.core.store[e].compile_count for e in range(2)]
    sunny, other = (f.astype(float) for f in env.render())
    table = env.view.lights(0)
    table.spawn(Light("sky", "dome", level=0.0))
    dark = env.render()[0].astype(float)
    table.dim("sky", 1.0)
    bright = env.render()[0].astype(float)
    assert dark.mean() < sunny.mean() / 4  # a dome at level 0 is all the light: dark
    assert bright.mean() > 2 * dark.mean()
    np.testing.assert_array_equal(env.render()[1], other)  # env 1 keeps its sun
    assert [env.core.store[e].compile_count for e in range(2)] == compiles
    env.close()


def test_a_models_own_lamp_adds_to_the_default_lighting():
    store = _white_floor()
    default = _top_down(store, (-1, -1), (1, 1), None, quads=None).mean()
    table = LightTable()
    table.spawn(Light("bulb", "sphere", positions=[(5.0, 5.0, 0.0)], intensity=1.0,
                      intrinsic=True))  # far and faint: the default light is what shows
    assert _top_down(store, (-1, -1), (1, 1), table, quads=None).mean() == pytest.approx(
        default, abs=LSB)


def _glow_lamp(tmp_path) -> SceneStore:
    """A prim whose one visual is a white `glow_Shade` cube, nothing lighting it."""
    from arena_gym.assets.shapes import Shape
    from tests.meshes.shapes import box, write_obj

    mesh = write_obj(tmp_path / "shade.obj", *box((-0.5, -0.5, -0.5), (0.5, 0.5, 0.5)))
    store = SceneStore(1, path_roots=[tmp_path])
    store[0].spawn_prims([Prim("lamp", pose=(0.0, 0.0, 0.5, 0.0), rgba=WHITE,
                               visuals=(Shape(mesh, name="glow_Shade", rgba=WHITE),))])
    return store


def test_glow_visuals_shine_at_level_to_the_0_65_in_their_prim_only(tmp_path):
    store = _glow_lamp(tmp_path)
    model = store[0].model
    (material,) = glow_materials(model, "lamp")
    assert model.material(material).name == "env_0/lamp:glow_Shade/0"
    table = LightTable()
    # a sun shining up lights nothing in view: what shows is the glow alone
    table.spawn(Light("lamp_bulb", "distant", intensity=1.0, direction=(0.0, 0.0, 1.0),
                      glow_prim="lamp", regime=(2.0, 1.0)))
    store[0].data.time = 0.5  # inside the regime's on second
    for level in (0.25, 0.5, 1.0):
        table.dim("lamp_bulb", level)
        brightness = _centre(_top_down(store, (-0.5, -0.5), (0.5, 0.5), table, quads=None))
        assert brightness == pytest.approx(255 * level ** 0.65, abs=LSB)
    table.remove("lamp_bulb")
    table.spawn(Light("lamp_bulb", "distant", intensity=1.0, direction=(0.0, 0.0, 1.0),
                      glow_prim="lamp", glow_color=(1.0, 0.5, 0.0)))
    frame = _top_down(store, (-0.5, -0.5), (0.5, 0.5), table, quads=None)
    h, w, _ = frame.shape
    np.testing.assert_allclose(frame[h // 2, w // 2], (255, 128, 0), atol=LSB)
    store[0].data.time = 1.5
    table.remove("lamp_bulb")
    table.spawn(Light("lamp_bulb", "distant", intensity=1.0, direction=(0.0, 0.0, 1.0),
                      glow_prim="lamp", regime=(2.0, 1.0)))
    assert _centre(_top_down(store, (-0.5, -0.5), (0.5, 0.5), table, quads=None)) == 0.0
    assert model.mat_emission[material] == 0.0  # the model as it was after every render
    assert tuple(model.mat_rgba[material]) == WHITE


def test_a_glow_prim_deleted_and_spawned_again_compiles(tmp_path):
    store = _glow_lamp(tmp_path)
    _ = store[0].model
    store[0].delete(["lamp"])
    assert glow_materials(store[0].model, "lamp") == []  # its materials went with it
    store[0].spawn_prims([Prim("lamp", pose=(1.0, 0.0, 0.5, 0.0), mesh_path=None,
                               scale=(0.2, 0.2, 0.2))])
    assert store[0].model.nbody >= 2
