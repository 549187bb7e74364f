"""A loaded model as written (issue 42): nothing added to it (no floor: a free body falls as
MuJoCo lets it fall; `floor=True` asks for one), its compiler settings kept, readings live
after every physics step while cameras keep their cadence, runtime plugins with a model,
and the rest of the face: settable `running`, `sim_info` with the model and its load
state, keyframes by name or index, `load_from_string` with a base folder, attach conflicts
in a navigation world as AssetWarnings."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import mujoco
import numpy as np
import pytest

from arena_gym import Simulation
from arena_gym.errors import AssetWarning, SpawnError
from arena_gym.plugins import Plugin
from arena_gym.registry import PLUGINS
from arena_gym.scene import SceneStore
from arena_gym.sensors import CameraSpec
from tests.waiting import wait_until

MJCF = Path(__file__).resolve().parents[1] / "scene" / "mjcf"

FALLING = """<mujoco model="falling">
  <compiler settotalmass="3"/>
  <option timestep="0.005"/>
  <worldbody>
    <camera name="side" pos="0 -3 0" xyaxes="1 0 0 0 0 1"/>
    <body name="ball" pos="0 0 0.1"><freejoint/><geom type="sphere" size="0.05"/>
      <geom type="box" size="0.02 0.02 0.02" pos="0 0 0.07"/></body>
  </worldbody>
  <keyframe><key name="high" qpos="0 0 2 1 0 0 0"/><key qpos="0 0 5 1 0 0 0"/></keyframe>
  <sensor><framepos name="where" objtype="body" objname="ball"/>
    <velocimeter name="speed" site="tip"/></sensor>
</mujoco>""".replace('<geom type="box"', '<site name="tip"/><geom type="box"')


@pytest.fixture
def falling(tmp_path: Path) -> Path:
    path = tmp_path / "falling.xml"
    path.write_text(FALLING)
    return path


def _alone(steps: int) -> mujoco.MjData:
    model = mujoco.MjModel.from_xml_string(FALLING)
    data = mujoco.MjData(model)
    mujoco.mj_step(model, data, steps)
    return data


def test_nothing_is_added_a_floorless_body_falls_as_mujoco_lets_it(falling: Path):
    with Simulation(model_path=falling, num_envs=2) as sim:
        model = sim.store[0].compiled
        alone = mujoco.MjModel.from_xml_string(FALLING)
        assert (model.ngeom, model.nbody, model.nlight) == (alone.ngeom, alone.nbody, 0)
        assert model.body_mass.sum() == pytest.approx(3.0, abs=1e-12)  # settotalmass kept
        sim.step(100)  # 0.5 s: no plane at z = 0 stops it
        data = _alone(100)
        np.testing.assert_array_equal(sim.store[1].data.qpos, data.qpos)
        assert data.qpos[2] < -1.0
    with Simulation(model_path=falling, floor=True) as sim:  # asked for: the ground
        sim.step(100)
        assert sim.store[0].data.qpos[2] == pytest.approx(0.05, abs=2e-3)  # resting on it


def test_readings_are_mujocos_after_every_step_and_cameras_keep_their_cadence(falling: Path):
    with Simulation(model_path=falling, num_envs=2) as sim:
        camera = sim.cameras.add(CameraSpec("model", "side", key="side", resolution=(16, 12),
                                            outputs=("depth",)))
        reading = sim.sensor_suite["model/mujoco"]
        done, frames = 0, []
        for n in (1, 1, 3, 4, 2, 1, 9):  # ends between ticks and on them
            sim.step(n)
            done += n
            data = _alone(done)
            for env in range(2):
                np.testing.assert_array_equal(reading["where"][env], data.sensor("where").data)
                np.testing.assert_array_equal(reading["speed"][env], data.sensor("speed").data)
            assert reading.stamp[0] == pytest.approx(done * 0.005, abs=1e-12)
            frames.append((done, int(camera.count[0])))
        # the camera renders at its rate (30 Hz), on ticks only (every 10 steps)
        assert frames == [(1, 0), (2, 0), (5, 0), (9, 0), (11, 1), (12, 1), (21, 2)]
        assert camera.stamp.tolist() == pytest.approx([0.1, 0.1])


def test_runtime_plugins_load_with_a_model_and_step_after_every_tick(falling: Path):
    class Counter(Plugin):
        def load(self, env):
            self.model = env.store[0].compiled.nbody
            self.steps = 0

        def step(self, env):
            self.steps += 1

    PLUGINS.register("counter", Counter)
    try:
        with Simulation(model_path=falling, plugins=[{"type": "counter"}]) as sim:
            (handle,) = sim.plugins
            assert sim.plugin_names == ("counter",) and handle.plugin.model == 2
            sim.step(35)  # 3 ticks
            assert handle.plugin.steps == 3 and sim.plugin_stats[0].step.calls == 3
            sim.load_from_string(FALLING)  # another load: plugins come again
            assert sim.plugins[0] is not handle and sim.plugins[0].plugin.steps == 0
        with pytest.raises(ValueError, match=re.escape(
                "plugins[0]: expected a PluginConfig or a mapping with keys type and params, "
                "got 'counter'")):
            Simulation(model_path=falling, plugins=["counter"])
    finally:
        PLUGINS.unregister("counter")


def test_running_is_settable_and_sim_info_names_the_model_and_its_load(falling: Path):
    with Simulation(model_path=falling) as sim:
        info = sim.sim_info
        assert (info.model_path, info.model_valid, info.loading_state, info.load_error) == (
            str(falling), True, "ready", "")
        sim.settings.rt_factor = 0.0
        sim.settings.running = True
        wait_until(lambda: sim.sim_info.step_count >= 20, 60, "the loop to step")
        assert sim.settings.running and not sim.sim_info.paused
        sim.settings.running = False
        assert not sim.settings.running and sim.sim_info.paused
        with pytest.raises(ValueError, match=re.escape("running: expected true or false, "
                                                       "got 1")):
            sim.settings.running = 1
        with pytest.raises(SpawnError):
            sim.load_from_path(falling.parent / "missing.xml")
        info = sim.sim_info
        assert (info.model_valid, info.loading_state, info.model_path) == (
            True, "failed", str(falling))  # the model before it still runs
        assert info.load_error.startswith("model 'model': MJCF file not found")
        sim.load_from_string(FALLING)
        assert (sim.sim_info.model_path, sim.sim_info.loading_state) == ("", "ready")
    assert not sim.sim_info.model_valid  # closed


def test_keyframes_reset_by_the_models_name_or_by_index_unnamed_ones_too(falling: Path):
    with Simulation(model_path=falling, num_envs=2) as sim:
        sim.step(7)
        sim.reset("high")
        assert sim.store[0].data.qpos[2] == 2.0 and sim.store[1].data.qpos[2] == 2.0
        sim.reset(1, env_ids=[1])  # the unnamed one, by index
        assert (sim.store[0].data.qpos[2], sim.store[1].data.qpos[2]) == (2.0, 5.0)
        sim.reset("key_1", env_ids=[0])  # and by the name it was given
        assert sim.store[0].data.qpos[2] == 5.0
        alone = mujoco.MjModel.from_xml_string(FALLING)
        data = mujoco.MjData(alone)
        mujoco.mj_resetDataKeyframe(alone, data, 1)
        mujoco.mj_forward(alone, data)  # the sensors read the reset state at once
        np.testing.assert_array_equal(sim.sensor_suite["model/mujoco"]["where"][0],
                                      data.sensor("where").data)
        with pytest.raises(KeyError, match=re.escape("unknown keyframe in env 0 'low'")):
            sim.reset("low")
        sim.reset()  # the initial state: as loaded
        assert sim.store[0].data.qpos[2] == 0.1


def test_load_from_string_resolves_includes_and_meshes_in_a_base_folder(tmp_path: Path):
    text = (MJCF / "arm.xml").read_text()  # includes gripper.xml, a mesh in meshes/
    with Simulation(model_path=MJCF / "arm.xml", num_envs=1) as sim:
        alone = sim.store[0].compiled
        with pytest.raises(SpawnError, match=re.escape("gripper.xml")):
            sim.load_from_string(text)  # resolved in the working directory: not there
        assert sim.load_count == 1
        sim.load_from_string(text, base=MJCF)
        model = sim.store[0].compiled
        assert sim.load_count == 2 and (model.nmesh, model.ngeom) == (alone.nmesh, alone.ngeom)
        with pytest.raises(SpawnError, match=re.escape(
                f"model 'model' (MJCF text): base: expected a folder, got "
                f"{str(tmp_path / 'none')!r}")):
            sim.load_from_string(text, base=tmp_path / "none")


def test_attach_conflicts_in_a_navigation_world_are_asset_warnings(capfd):
    model = ('<mujoco><compiler settotalmass="7"/><visual><map znear="0.05"/></visual>'
             '<statistic meansize="0.2"/><size nkey="2"/><worldbody><body name="b">'
             '<freejoint/><geom size="0.1"/></body></worldbody></mujoco>')
    store = SceneStore(1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        store[0].spawn_mjcf("thing", model)
    told = [str(w.message) for w in caught if issubclass(w.category, AssetWarning)]
    assert told == ["env 0: model 'thing' (MJCF text) sets nkey=2, visual.map.znear=0.05, "
                    "stat.meansize=0.2, compiler.settotalmass=7; the scene's values apply "
                    "(every env steps alike)"]
    assert "Attach conflict" not in capfd.readouterr().out  # nothing printed by MuJoCo


def test_mujocos_compile_warnings_are_told_once_naming_the_model():
    from arena_gym.scene.models import mujoco_warnings

    with mujoco_warnings("env 1: model 'arm' (arm.xml)") as said:
        for _ in range(2):  # the compile alone and the compile in the scene say it twice
            warnings.warn("Attach conflict on attach, policy is 'warning'\nzfar: parent has "
                          "50 (default), child has 80, keeping parent value", UserWarning,
                          stacklevel=1)
            warnings.warn("compiler attribute 'x' is deprecated", UserWarning, stacklevel=1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        said.tell()
    assert [(w.category, str(w.message)) for w in caught] == [
        (AssetWarning, "env 1: model 'arm' (arm.xml): MuJoCo's attach conflict on attach, "
                       "policy is 'warning' zfar: parent has 50 (default), child has 80, "
                       "keeping parent value"),
        (UserWarning, "model 'arm' (arm.xml): compiler attribute 'x' is deprecated")]
