"""The Simulation façade loads a URDF as a model (issue 34 items 1 and 5): through our URDF
loader, with an optional SRDF whose disabled pairs become MuJoCo contact excludes, and the
Gazebo sensors MuJoCo has (force_torque, magnetometer, gps, contact) mounted as MuJoCo's own
sensors, read through the "mujoco" kind: MuJoCo's numbers."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena_gym import Simulation
from arena_gym.assets.srdf import disabled_pairs
from arena_gym.errors import SpawnError

URDF = Path(__file__).resolve().parents[1] / "scene" / "urdf"
TOUCHING, SRDF, SENSORS = URDF / "touching.urdf", URDF / "touching.srdf", URDF / "sensors.urdf"
G = 9.81


def _arm_contacts(sim: Simulation, env: int) -> int:
    """Contacts between the two arms of touching.urdf in one env."""
    model, data = sim.store[env].model, sim.store[env].data
    arms = {model.body(f"env_{env}/model/{name}").id for name in ("left_arm", "right_arm")}
    return sum({int(model.geom_bodyid[c.geom1]), int(model.geom_bodyid[c.geom2])} == arms
               for c in data.contact[:data.ncon])


def test_an_srdf_disabled_pair_makes_the_contacts_of_two_touching_links_vanish():
    with Simulation(model_path=TOUCHING, num_envs=2) as sim:
        sim.step(1)
        assert [_arm_contacts(sim, env) for env in range(2)] == [4, 4]  # box on box: 4 points
    with Simulation(model_path=TOUCHING, srdf=SRDF, num_envs=2) as sim:
        sim.step(1)
        assert [sim.store[env].data.ncon for env in range(2)] == [0, 0]


def test_load_from_path_takes_a_urdf_with_its_srdf_and_urdf_text_loads_from_a_string():
    with Simulation(model_path=TOUCHING) as sim:
        sim.load_from_path(TOUCHING, srdf=SRDF)
        sim.step(1)
        assert (sim.load_count, sim.store[0].data.ncon) == (2, 0)
        sim.load_from_string(TOUCHING.read_text())
        sim.step(1)
        assert (sim.load_count, _arm_contacts(sim, 0)) == (3, 4)


def test_an_srdf_pair_naming_an_unknown_link_is_refused_naming_the_srdf_and_the_links(tmp_path):
    bad = tmp_path / "bad.srdf"
    bad.write_text('<robot name="touching"><disable_collisions link1="left-arm" link2="hand"/>'
                   "</robot>")
    with pytest.raises(SpawnError, match=re.escape(
            f"model 'model': SRDF {str(bad)!r}: <disable_collisions link1='left-arm' "
            "link2='hand'> names 'hand', not a link of the robot; expected links of "
            "['base', 'left_arm', 'right_arm']")):
        Simulation(model_path=TOUCHING, srdf=bad)
    with Simulation(model_path=TOUCHING) as sim:
        with pytest.raises(SpawnError, match=re.escape("names 'hand', not a link")):
            sim.load_from_path(TOUCHING, srdf=bad)
        assert sim.load_count == 1  # the current load still runs
        sim.step(1)


def test_an_srdf_goes_with_a_urdf_only():
    mjcf = Path(__file__).resolve().parents[1] / "scene" / "mjcf" / "arm.xml"
    with pytest.raises(ValueError, match=re.escape(
            f"Simulation: srdf: expected a URDF model_path to go with, got {str(mjcf)!r}")):
        Simulation(model_path=mjcf, srdf=SRDF)
    with pytest.raises(ValueError, match=re.escape(
            "Simulation: srdf: expected a URDF model_path to go with, got none")):
        Simulation("default", srdf=SRDF)


@settings(max_examples=25, deadline=None)
@given(st.text(max_size=60))
def test_random_srdf_text_is_refused_with_a_value_error_or_read(text):
    try:
        pairs = disabled_pairs("<" + text, ["base", "left_arm", "right_arm"])
    except ValueError as exc:
        assert str(exc).startswith("SRDF text: ")
        assert "\n" not in str(exc)
    else:
        assert all(a in ("base", "left_arm", "right_arm") for pair in pairs for a in pair)


def test_gazebo_force_torque_magnetometer_gps_and_contact_read_as_mujoco_sensors():
    field = np.array([0.3, 0.0, -0.4])
    # a URDF has no floor: floor=True puts the navigation world's ground plane under it
    with Simulation(model_path=SENSORS, num_envs=2, floor=True,
                    options={"magnetic": field.tolist()}) as sim:
        sim.step(500)  # 1 s: the block settles on the floor
        reading = sim.sensor_suite["model/mujoco"]
        # a 2 kg weight hanging still from the force-torque joint: the joint holds m g up
        assert reading["frame_sensor_wrist_ft_force"] == pytest.approx(
            np.tile([0.0, 0.0, 2.0 * G], (2, 1)), abs=1e-9)
        assert reading["frame_sensor_wrist_ft_torque"] == pytest.approx(np.zeros((2, 3)),
                                                                        abs=1e-9)
        # the set field in the sensor frame, turned 90 degrees about z: (x, y) -> (y, -x)
        assert reading["frame_sensor_compass_magnetic"] == pytest.approx(
            np.tile([0.0, -0.3, -0.4], (2, 1)), abs=1e-12)
        # the GPS site: 0.1 m below the weight's joint at (0.5, 0, 1), still
        assert reading["frame_sensor_gps_pos"] == pytest.approx(np.tile([0.5, 0, 0.9], (2, 1)))
        assert reading["frame_sensor_gps_vel"] == pytest.approx(np.zeros((2, 3)), abs=1e-9)
        # the 3 kg block resting on the floor: its contact reads its weight
        assert reading["frame_sensor_bumper_touch"][:, 0] == pytest.approx([3.0 * G] * 2,
                                                                           rel=1e-3)
        # MuJoCo's own numbers: the env's sensordata, as it stands
        model, data = sim.store[1].model, sim.store[1].data
        sensor = model.sensor("env_1/model/frame_sensor_wrist_ft_force")
        assert reading["frame_sensor_wrist_ft_force"][1] == pytest.approx(
            data.sensordata[sensor.adr[0]:sensor.adr[0] + 3], abs=0)


def test_a_robot_declaring_a_magnetometer_reads_it_through_the_mujoco_kind_by_default():
    from arena_gym.scene import SceneStore
    from arena_gym.sensors import SensorSuite
    from arena_gym.sim import Simulator
    from tests.sensors.worlds import probe_urdf

    block = ('<gazebo reference="base_link"><sensor name="compass" type="magnetometer">'
             "</sensor></gazebo>")
    store = SceneStore(2)
    for env, scene in enumerate(store):
        scene.spec.option.magnetic = [0.2, 0.0, -0.5]
        scene.spawn_urdf("probe", probe_urdf(block), pose=(0.0, 0.0, env * math.pi / 2))
    sim = Simulator(store, nthread=1)
    with SensorSuite(sim, seed=0) as suite:
        sim.step(10)
        field = suite["probe/mujoco"]["base_footprint_sensor_compass_magnetic"]
        # the robot faces +x in env 0 and +y in env 1: the field turns with it
        assert field[0] == pytest.approx([0.2, 0.0, -0.5], abs=1e-3)
        assert field[1] == pytest.approx([0.0, -0.2, -0.5], abs=1e-3)
    sim.close()



def test_gps_positions_turn_into_latitude_longitude_and_altitude_about_an_origin():
    from arena_gym.sensors.geodetic import WGS84_A, WGS84_F, geodetic

    e2 = WGS84_F * (2 - WGS84_F)
    enu = np.array([[0.0, 0.0, 0.0], [0.0, 1000.0, 0.0], [1000.0, 0.0, 0.0], [0.0, 0.0, 50.0]])
    lla = geodetic(enu, 0.0, 0.0, 0.0)
    # at the equator: 1 km north is 1 km along the meridian (radius a (1 - e2)); 1 km east
    # along the equator (radius a); both drop below the tangent plane by d^2 / (2 R)
    assert lla[0] == pytest.approx([0.0, 0.0, 0.0], abs=1e-9)
    assert lla[1, 0] == pytest.approx(math.degrees(1000.0 / (WGS84_A * (1 - e2))), rel=1e-6)
    assert lla[2, 1] == pytest.approx(math.degrees(1000.0 / WGS84_A), rel=1e-6)
    assert lla[1:3, 2] == pytest.approx([1000.0**2 / (2 * WGS84_A * (1 - e2)),
                                         1000.0**2 / (2 * WGS84_A)], rel=1e-3)
    assert lla[3] == pytest.approx([0.0, 0.0, 50.0], abs=1e-6)
    with Simulation(model_path=SENSORS) as sim:
        sim.step(10)
        gps = sim.sensor_suite["model/mujoco"]["frame_sensor_gps_pos"]
        assert geodetic(gps, 49.0, 8.4, 110.0)[0, 2] == pytest.approx(110.9, abs=1e-6)
    with pytest.raises(ValueError, match=re.escape(
            "geodetic: expected positions of shape (..., 3), got (2,)")):
        geodetic(np.zeros(2), 0.0, 0.0)
