"""Light tables: rendered brightness follows a fixture's level, switching a light off
darkens its room, a spot's pool lies inside its cone on a wall, and no edit recompiles."""

from __future__ import annotations

import math
import re

import mujoco
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena_gym.errors import SceneError
from arena_gym.render.cameras import project, top_down_camera
from arena_gym.render.canvas import open_canvas
from arena_gym.render.lights import FIXTURE_QUADS
from arena_gym.scene import SceneStore
from arena_gym.scene.builders import LIGHT_SLOTS
from arena_gym.scene.lights import Light, LightTable, LightTree
from arena_gym.scene.requests import Slab, Wall

LSB = 1.0  # one 8-bit step: each pixel is rounded once, a patch's mean by at most half


def _none(_scene):
    return None


def _top_down(store, lo, hi, lights, size=(160, 80), quads=FIXTURE_QUADS):
    model, data = store[0].model, store[0].data
    canvas = open_canvas(model, *size, quads=quads)
    try:
        camera, fovy = top_down_camera(np.array(lo), np.array(hi), *size)
        return canvas.draw(data, camera, _none, fovy=fovy, lights=lights).astype(float)
    finally:
        canvas.close()


def test_floor_brightness_follows_a_bulbs_level_linearly_and_nothing_recompiles():
    store = SceneStore(1)
    store[0].spawn_floors([Slab("floor", (0.0, 0.0, 0.0), (3.0, 3.0))])
    _ = store[0].model  # compiled: from here on only the table changes
    compiles = store[0].compile_count
    table = LightTable()
    table.spawn(Light("bulb", "bulb", pos=(0.0, 0.0, 2.0)))
    levels = np.linspace(0.1, 0.6, 6)
    means = []
    for level in levels:
        table.dim("bulb", level)
        frame = _top_down(store, (-1, -1), (1, 1), table)
        h, w, _ = frame.shape
        means.append(frame[h // 2 - 5:h // 2 + 5, w // 2 - 5:w // 2 + 5].mean())
    slope, intercept = np.polyfit(levels, means, 1)
    residual = np.asarray(means) - (slope * levels + intercept)
    assert np.abs(residual).max() < LSB
    assert slope * (levels[-1] - levels[0]) > 40 * LSB  # the effect, far above the tolerance
    table.switch("bulb", False)  # the line's level 0: dark
    frame = _top_down(store, (-1, -1), (1, 1), table)
    h, w, _ = frame.shape
    assert frame[h // 2 - 5:h // 2 + 5, w // 2 - 5:w // 2 + 5].mean() == pytest.approx(
        intercept, abs=LSB)
    table.move("bulb", (5.0, 5.0, 2.0))
    assert store[0].compile_count == compiles


def test_a_light_switched_off_darkens_its_room_only():
    store = SceneStore(1)
    store[0].spawn_floors([Slab("a", (-2.0, 0.0, 0.0), (3.8, 3.8)),
                           Slab("b", (2.0, 0.0, 0.0), (3.8, 3.8))])
    table = LightTable()
    for name, x in (("lamp_a", -2.0), ("lamp_b", 2.0)):
        table.spawn(Light(name, "spot", pos=(x, 0.0, 2.5), cutoff=30.0, level=0.8))
    on = _top_down(store, (-4, -2), (4, 2), table)
    table.switch("lamp_a", False)
    off = _top_down(store, (-4, -2), (4, 2), table)
    w = on.shape[1]
    room_a, room_b = slice(0, w // 2 - 2), slice(w // 2 + 2, w)
    assert on[:, room_a].mean() > 20 * LSB
    assert off[:, room_a].max() == 0.0  # dark
    np.testing.assert_array_equal(off[:, room_b], on[:, room_b])


def test_a_spots_pool_lies_between_its_cone_corners_on_a_wall():
    store = SceneStore(1)
    store[0].spawn_walls([Wall("wall", (3.0, -3.0), (3.0, 3.0), height=2.0)])
    table = LightTable()
    cutoff = 15.0
    table.spawn(Light("spot", "spot", pos=(0.0, 0.0, 1.0), dir=(1.0, 0.0, 0.0), cutoff=cutoff))
    face = 3.0 - 0.05
    radius = face * math.tan(math.radians(cutoff))
    model, data = store[0].model, store[0].data
    canvas = open_canvas(model, 320, 240, quads=FIXTURE_QUADS)
    camera = mujoco.MjvCamera()
    camera.type = mujoco.mjtCamera.mjCAMERA_FREE
    camera.lookat[:], camera.distance, camera.azimuth, camera.elevation = (face, 0, 1), 4, 0, 0
    frame = canvas.draw(data, camera, _none, lights=table).mean(axis=2)

    def at(dy, dz):
        u, v = project(canvas.scene, np.array([face, dy, 1.0 + dz]), 320, 240)
        return frame[int(v), int(u)]

    centre = at(0.0, 0.0)
    assert centre > 150  # the wall's grey (0.75) lit head-on
    for angle in np.linspace(0, 2 * np.pi, 12, endpoint=False):
        c, s = math.cos(angle), math.sin(angle)
        assert at(0.85 * radius * c, 0.85 * radius * s) > centre / 2, angle  # in the cone: lit
        assert at(1.15 * radius * c, 1.15 * radius * s) == 0, angle  # outside: dark
    canvas.close()


def test_bad_lights_and_unknown_names_are_refused_with_what_was_expected():
    with pytest.raises(SceneError, match=re.escape(
            "Light 'x' kind: expected one of ['dome', 'sun', 'spot', 'bulb', 'panel'], "
            "got 'laser'")):
        Light("x", "laser")
    with pytest.raises(SceneError, match=re.escape("Light 'x' level: expected a number in "
                                                   "[0, 1000], got -1")):
        Light("x", "bulb", level=-1)
    with pytest.raises(SceneError, match=re.escape("Light 'x' level: expected a number in "
                                                   "[0, 1000], got 1e+300")):
        Light("x", "bulb", level=1e300)
    with pytest.raises(SceneError, match=re.escape("Light 'x' pos: expected numbers within "
                                                   "+-10000 (m, rad), got (1e+300, 0.0, 3.0)")):
        Light("x", "bulb", pos=(1e300, 0.0, 3.0))
    table = LightTable()
    table.spawn(Light("lamp", "bulb"))
    with pytest.raises(SceneError, match=re.escape("unknown light 'lamb'; did you mean "
                                                   "'lamp'?")):
        table.dim("lamb", 0.5)
    with pytest.raises(SceneError, match=re.escape("Light 'lamp' level: expected a number "
                                                   "in [0, 1000], got nan")):
        table.dim("lamp", float("nan"))
    assert table.get("lamp").level == 1.0  # unchanged


def test_more_fixtures_than_slots_give_each_view_its_nearest_ones_suns_first():
    table = LightTable()
    table.spawn(Light("sky", "dome", level=0.2))
    grid = [(x, y) for x in range(6) for y in range(5)]
    for x, y in grid:
        table.spawn(Light(f"b{x}{y}", "bulb", pos=(2.0 * x, 2.0 * y, 2.5)))
    table.switch("b00", False)
    eye = np.array([0.5, 0.0, 1.0])
    picked = table.pick(eye, LIGHT_SLOTS)
    assert picked[0].name == "sky" and len(picked) == LIGHT_SLOTS
    on = [light for light in table.lights.values() if light.kind == "bulb" and light.on]
    nearest = sorted(on, key=lambda light: (np.sum((np.array(light.pos) - eye) ** 2)))
    assert [p.name for p in picked[1:]] == [light.name for light in nearest[:LIGHT_SLOTS - 1]]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(*[st.floats(-50, 50)] * 3), min_size=1, max_size=40),
       st.tuples(*[st.floats(-60, 60)] * 3), st.integers(1, 10))
def test_the_tree_finds_the_nearest_points(points, query, k):
    pts, q = np.array(points), np.array(query)
    found = LightTree(pts).nearest(q, k)
    d = np.sum((pts - q) ** 2, axis=1)
    np.testing.assert_array_equal(np.sort(d[found]), np.sort(d)[:min(k, len(pts))])


def test_an_envs_frames_show_its_light_table():
    from arena_gym.envs.vector_env import ArenaVectorEnv

    env = ArenaVectorEnv(2, render_mode="rgb_array",
                         render={"view": "top_down", "width": 96, "height": 96})
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


def _glowing_box() -> tuple[mujoco.MjModel, mujoco.MjData]:
    """The base world with a white box whose material `shade` does not glow by itself."""
    from arena_gym.scene.builders import base_world

    spec = base_world(0.005)
    spec.add_material(name="shade", rgba=[1.0, 1.0, 1.0, 1.0], emission=0.0)
    spec.worldbody.add_geom(type=mujoco.mjtGeom.mjGEOM_BOX, size=[0.5, 0.5, 0.5],
                            pos=[0.0, 0.0, 0.5], material="shade")
    model = spec.compile()
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    return model, data


def _box_brightness(model, data, table) -> float:
    canvas = open_canvas(model, 80, 80)
    try:
        camera, fovy = top_down_camera(np.array([-1.0, -1.0]), np.array([1.0, 1.0]), 80, 80)
        frame = canvas.draw(data, camera, _none, fovy=fovy, lights=table).astype(float)
    finally:
        canvas.close()
    return float(frame[35:45, 35:45].mean())


def test_a_glow_material_follows_its_light_and_a_regime_switches_it():
    model, data = _glowing_box()
    table = LightTable()
    # a spot pointing up lights nothing in view: what shows is the material's glow alone
    table.spawn(Light("lamp", "spot", pos=(3.0, 3.0, 3.0), dir=(0.0, 0.0, 1.0), glow="shade",
                      regime=(2.0, 1.0)))
    levels = (0.25, 0.5, 1.0)
    data.time = 0.5  # inside the regime's on second
    glow = []
    for level in levels:
        table.dim("lamp", level)
        glow.append(_box_brightness(model, data, table))
    slope, intercept = np.polyfit(levels, glow, 1)
    assert np.abs(np.asarray(glow) - (slope * np.asarray(levels) + intercept)).max() < LSB
    assert glow[-1] - glow[0] > 100 * LSB  # the effect
    data.time = 1.5  # the regime's off second: no glow, and the box is dark
    assert _box_brightness(model, data, table) == 0.0
    data.time = 2.5  # on again
    assert _box_brightness(model, data, table) == pytest.approx(glow[-1], abs=LSB)
    table.switch("lamp", False)
    assert _box_brightness(model, data, table) == 0.0
    assert model.mat_emission[0] == 0.0  # the model as it was after every render


def test_a_regime_must_fit_its_period():
    with pytest.raises(SceneError, match=re.escape(
            "Light 'x' regime: expected (period > 0, 0 <= seconds on <= period[, offset]), "
            "got (2.0, 3.0)")):
        Light("x", "bulb", regime=(2.0, 3.0))
    with pytest.raises(SceneError, match=re.escape(
            "Light 'x' regime: expected 2 finite numbers, got (1.0,)")):
        Light("x", "bulb", regime=(1.0,))
    assert [Light("x", "bulb", regime=(10, 4, 1)).shines(t) for t in (0.5, 1.5, 4.9, 5.1)] == [
        False, True, True, False]
