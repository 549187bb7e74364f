"""Sensor plugins from a library path (issue 34 item 2): `Simulation(plugin_libraries=[path])`
loads MuJoCo plugin libraries before the model compiles, and a model's `<plugin>` sensor
reads through the "mujoco" kind. The library is MuJoCo's own bundled `libsensor.so` (its
"mujoco.sensor.touch_grid"), the one the wheel ships."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import mujoco
import numpy as np
import pytest

from arena_gym import Simulation
from arena_gym.assets.plugin_libraries import bundled_plugin_folder, load_plugin_libraries

TOUCH_GRID = Path(__file__).resolve().parent / "mjcf" / "touch_grid.xml"
G = 9.81


def test_a_touch_grid_plugin_sensor_reads_through_the_mujoco_kind_as_mujoco_alone_does():
    library = bundled_plugin_folder() / "libsensor.so"
    with Simulation(model_path=TOUCH_GRID, num_envs=2, plugin_libraries=[library]) as sim:
        assert sim.plugin_libraries == [library.resolve()]
        sim.step(500)  # 1 s: the weight rests on the pad
        grid = sim.sensor_suite["model/mujoco"]["grid"]
        assert grid.shape == (2, 16)
        assert grid.sum(axis=1) == pytest.approx([2.0 * G] * 2, rel=1e-6)  # its weight
        alone = mujoco.MjModel.from_xml_path(str(TOUCH_GRID))
        data = mujoco.MjData(alone)
        for _ in range(500):
            mujoco.mj_step(alone, data)
        assert grid[0] == pytest.approx(data.sensordata, abs=1e-6)  # the same taxels
        assert np.count_nonzero(grid[0]) == 4  # the weight covers the middle 2 x 2


def test_a_missing_library_and_a_file_that_is_no_library_are_named(tmp_path):
    missing = tmp_path / "libnothing.so"
    with pytest.raises(ValueError, match=re.escape(
            f"plugin_libraries: {str(missing)!r}: expected a MuJoCo plugin library file, got "
            "no such file")):
        Simulation(model_path=TOUCH_GRID, plugin_libraries=[missing])
    text = tmp_path / "libtext.so"
    text.write_text("not a library\n")
    with pytest.raises(ValueError, match=re.escape(
            f"plugin_libraries: {str(text)!r}: expected a MuJoCo plugin library, got a file "
            "that does not load: Error loading plugin library")):
        load_plugin_libraries([text])
    with pytest.raises(ValueError, match=re.escape(
            "plugin_libraries: expected a list of paths, got a single path 'libsensor.so' "
            "(write [path])")):
        load_plugin_libraries("libsensor.so")


@pytest.mark.skipif(shutil.which("cc") is None, reason="needs a C compiler to build a library")
def test_a_shared_library_that_registers_no_plugin_is_named(tmp_path):
    source = tmp_path / "nothing.c"
    source.write_text("int arena_gym_nothing(void) { return 0; }\n")
    library = tmp_path / "libnothing.so"
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(library), str(source)], check=True)
    with pytest.raises(ValueError, match=re.escape(
            f"plugin_libraries: {str(library)!r}: expected a MuJoCo plugin library, got a "
            "shared library that registers no plugin")):
        Simulation(model_path=TOUCH_GRID, plugin_libraries=[library])
