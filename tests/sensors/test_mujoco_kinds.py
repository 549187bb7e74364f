"""The "mujoco" sensor kind against MuJoCo itself: per sensor type a small MJCF whose reading
is known in closed form, spawned in a batch of envs (Scene.spawn_mjcf), read through the
suite, and compared both with MuJoCo's own `sensordata` (the env's scene compiled and
stepped alone by mj_step: equal to 4 ulp) and with the closed form (within the tolerance
of the physics, stated at each)."""

from __future__ import annotations

import math
import re
from pathlib import Path

import mujoco
import numpy as np
import pytest

from arena_gym.scene import SceneStore
from arena_gym.scene.scene import forward_all
from arena_gym.sensors import ImuSpec, MujocoSpec, SensorError, SensorSuite, default_specs
from arena_gym.sensors.kinds import flat_observation
from arena_gym.sim import Simulator
from tests.sensors.worlds import imu_block, probe_urdf

EVERY = Path(__file__).resolve().parent / "mjcf" / "every_sensor.xml"
G = 9.81
DT = 0.002


def _run(mjcf, steps, poses=((0.0, 0.0, 0.0), (0.0, 0.0, 0.0)), specs=None, seed=0,
         setup=None, magnetic=None):
    """Model "m" in len(poses) envs, stepped `steps` physics steps with the suite sampling;
    returns (store, suite, MuJoCo's own (model, data) per env after the same steps). `setup(data,
    env)` edits each env's initial state (the scene's and MuJoCo's alike)."""
    store = SceneStore(len(poses))
    for env, scene in enumerate(store):
        if magnetic is not None:
            scene.spec.option.magnetic = magnetic
        scene.spawn_mjcf("m", mjcf, pose=poses[env])
    alone = []
    for env, scene in enumerate(store):
        model = scene.spec.copy().compile()
        data = mujoco.MjData(model)
        if setup is not None:
            setup(data, env)
            setup(scene.data, env)
        forward_all(model, data)
        alone.append((model, data))
    sim = Simulator(store)
    suite = SensorSuite(sim, specs, seed=seed)
    sim.step(steps)
    for model, data in alone:
        mujoco.mj_step(model, data, nstep=steps)
    return store, suite, alone


def _as_mujoco(reading, alone, names=None):
    """Every field of `reading` equals MuJoCo's own sensordata of that sensor, to 4 ulp."""
    for name in names or reading.data:
        for env, (_, data) in enumerate(alone):
            np.testing.assert_array_max_ulp(
                reading[name][env], data.sensor(f"env_{env}/m/{name}").data, maxulp=4)


def test_every_sensor_type_reads_as_mujoco_computes_it():
    store, suite, alone = _run(EVERY, 300, poses=((0.0, 0.0, 0.0), (1.0, 2.0, 0.5)))
    reading = suite["m/mujoco"]  # a model's own sensors are read by default
    every = set(mujoco.mjtSensor.__members__.values())
    assert {mujoco.mjtSensor(t) for t in reading.types.values()} == every
    assert len(reading.data) == len(every) == 49
    _as_mujoco(reading, alone)
    assert reading.valid.all() and reading.stamp == pytest.approx([0.6, 0.6])
    assert reading["touch"][:, 0] == pytest.approx([G, G], rel=1e-3)  # the 1 kg box rests


BOX = """<mujoco><worldbody><body name="box" pos="0 0 0.1"><freejoint/>
  <geom type="box" size="0.1 0.1 0.1" mass="2"/>
  <site name="zone" type="box" size="0.101 0.101 0.101"/></body></worldbody>
  <sensor><touch name="touch" site="zone"/><touch name="clipped" site="zone" cutoff="5"/>
  <accelerometer name="accel" site="zone"/><gyro name="gyro" site="zone"/>
  <framezaxis name="up" objtype="site" objname="zone"/>
  <framepos name="height" objtype="site" objname="zone" cutoff="0.05"/></sensor></mujoco>"""


def test_a_touch_plate_under_a_resting_mass_reads_its_weight_and_cutoff_clips_it():
    _, suite, alone = _run(BOX, 500)  # 1 s: the soft contacts have settled
    box = suite["m/mujoco"]
    _as_mujoco(box, alone)
    # at rest the contacts carry the weight: to 1e-3 of m g (contact softness, solver)
    np.testing.assert_allclose(box["touch"][:, 0], 2 * G, rtol=1e-3)
    np.testing.assert_array_equal(box["clipped"][:, 0], 5.0)  # positive: min(value, cutoff)
    # an accelerometer at rest reads gravity's reaction, up; a gyro nothing
    np.testing.assert_allclose(box["accel"], [[0, 0, G]] * 2, atol=1e-3)
    np.testing.assert_allclose(box["gyro"], 0.0, atol=1e-4)
    np.testing.assert_allclose(box["up"], [[0, 0, 1]] * 2, atol=1e-6)
    np.testing.assert_allclose(box["height"], [[0, 0, 0.05]] * 2, atol=1e-6)  # real: clipped


HANGING = """<mujoco><worldbody><body name="link" pos="0 0 1">
  <joint name="hinge" axis="0 1 0" damping="1"/>
  <geom type="capsule" fromto="0 0 0 0 0 -0.3" size="0.01" mass="0.2"/>
  <body name="weight" pos="0 0 -0.3"><geom type="sphere" size="0.05" mass="1.5"/>
  <site name="ft" pos="0.1 0 0"/></body></body></worldbody>
  <sensor><force name="force" site="ft"/><torque name="torque" site="ft"/></sensor></mujoco>"""


def test_a_force_torque_site_under_a_hanging_weight_reads_its_weight_and_lever():
    _, suite, alone = _run(HANGING, 200)
    ft = suite["m/mujoco"]
    _as_mujoco(ft, alone)
    # the link holds the 1.5 kg weight up (child to parent: +z); the site 0.1 m beside the
    # weight's centre sees that force's moment, m g d about +y; at rest: to 1e-9
    np.testing.assert_allclose(ft["force"], [[0, 0, 1.5 * G]] * 2, rtol=0, atol=1e-9)
    np.testing.assert_allclose(ft["torque"], [[0, 1.5 * G * 0.1, 0]] * 2, rtol=0, atol=1e-9)


COMPASS = """<mujoco><worldbody><body name="post" pos="0 0 0.5">
  <geom type="box" size="0.05 0.05 0.05"/><site name="needle"/></body></worldbody>
  <sensor><magnetometer name="field" site="needle"/></sensor></mujoco>"""


def test_a_magnetometer_in_a_set_field_reads_it_in_its_frame():
    field = np.array([0.3, 0.0, -0.4])
    _, suite, alone = _run(COMPASS, 20, poses=((0, 0, 0), (1, 1, math.pi / 2)), magnetic=field)
    compass = suite["m/mujoco"]
    _as_mujoco(compass, alone)
    # env 1 turned 90 degrees about z: the field in its frame is R^T B = (0, -0.3, -0.4)
    np.testing.assert_allclose(compass["field"], [field, [0.0, -0.3, -0.4]], atol=1e-12)


RANGE = """<mujoco><worldbody><body name="mount" pos="0.4 0 0.5">
  <geom type="sphere" size="0.05"/>
  <site name="ahead" zaxis="1 0 0"/><site name="above" zaxis="0 0 1"/></body>
  <body name="wall" pos="2 0 0.5"><geom type="box" size="0.1 1 0.5"/></body></worldbody>
  <sensor><rangefinder name="ahead" site="ahead"/><rangefinder name="above" site="above"/>
  </sensor></mujoco>"""


def test_a_rangefinder_reads_the_distance_to_a_wall_and_minus_one_to_nothing():
    _, suite, alone = _run(RANGE, 20, poses=((0, 0, 0), (-3, 5, 0)))
    ranges = suite["m/mujoco"]
    _as_mujoco(ranges, alone)
    # along the site's z: the wall's face at 2 - 0.1 from the site at 0.4 (a ray: exact)
    np.testing.assert_allclose(ranges["ahead"][:, 0], 1.5, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(ranges["above"][:, 0], -1.0)  # no ceiling in the scene


FRAMES = """<mujoco><worldbody>
  <body name="ref" pos="1 0 0.5" euler="0 0 90"><geom type="sphere" size="0.05"/>
  <site name="ref"/></body>
  <body name="target" pos="1 2 0.5"><geom type="sphere" size="0.05"/></body></worldbody>
  <sensor><framepos name="pos" objtype="body" objname="target" reftype="site" refname="ref"/>
  <framequat name="quat" objtype="body" objname="target" reftype="site" refname="ref"/>
  <framexaxis name="xaxis" objtype="body" objname="target" reftype="site" refname="ref"/>
  <framepos name="world" objtype="body" objname="target"/></sensor></mujoco>"""


def test_frame_sensors_read_in_their_reference_frame():
    _, suite, alone = _run(FRAMES, 20, poses=((0, 0, 0), (5, -1, math.pi)))
    frames = suite["m/mujoco"]
    _as_mujoco(frames, alone)
    # the target 2 m along world y from a reference turned 90 degrees: 2 m along its x,
    # turned -90 degrees in it; static bodies: exact
    np.testing.assert_allclose(frames["pos"], [[2, 0, 0]] * 2, atol=1e-12)
    half = math.sqrt(0.5)
    np.testing.assert_allclose(frames["quat"], [[half, 0, 0, -half]] * 2, atol=1e-12)
    np.testing.assert_allclose(frames["xaxis"], [[0, -1, 0]] * 2, atol=1e-12)
    # env 1's model stands at (5, -1) turned 180 degrees: its target at (4, -3)
    np.testing.assert_allclose(frames["world"], [[1, 2, 0.5], [4, -3, 0.5]], atol=1e-12)


SPIN = """<mujoco><worldbody><body name="top" pos="0 0 0.5">
  <joint name="spin" axis="0 0 1"/><geom type="cylinder" size="0.1 0.02" mass="1"/>
  </body></worldbody>
  <sensor><jointpos name="angle" joint="spin"/><jointvel name="rate" joint="spin"/>
  <jointpos name="late" joint="spin" delay="0.01" nsample="8"/>
  <jointpos name="held" joint="spin" interval="0.01" nsample="2"/>
  <jointpos name="kept" joint="spin" nsample="20"/></sensor></mujoco>"""
OMEGA = 2.0  # rad/s about the vertical axis: gravity has no moment, nothing damps it


def _spin(data, env):
    data.qvel[0] = OMEGA * (1 + env)


def test_jointpos_and_jointvel_delay_interval_and_history_follow_mujoco():
    steps = 110  # whole ticks of 10 steps: the suite samples at each tick's end
    _, suite, alone = _run(SPIN, steps, setup=_spin)
    top = suite["m/mujoco"]
    _as_mujoco(top, alone)
    omega = OMEGA * np.array([1.0, 2.0])  # env 1 spins twice as fast
    np.testing.assert_allclose(top["rate"][:, 0], omega, rtol=1e-12)
    # position sensors are computed at the start of a step: the state one step back
    np.testing.assert_allclose(top["angle"][:, 0], omega * (steps - 1) * DT, rtol=1e-9)
    # delay 0.01 s: 5 steps older; interval 0.01 s: held since the step that began at
    # t = 0.21 s, the last multiple of 0.01 s
    np.testing.assert_allclose(top["late"][:, 0], omega * (steps - 1 - 5) * DT, rtol=1e-9)
    np.testing.assert_allclose(top["held"][:, 0], omega * 0.21, rtol=1e-9)
    # history replay: MuJoCo's own buffer (values stamped with the time of the state they
    # were computed at), read at a past time as mj_readSensor reads it
    past = (steps - 10) * DT
    replay = suite.history("m/mujoco", "kept", past)
    for env, (model, data) in enumerate(alone):
        result = np.zeros(1)
        own = mujoco.mj_readSensor(model, data, model.sensor(f"env_{env}/m/kept").id, past,
                                   result, 0)
        np.testing.assert_array_max_ulp(replay[env], result if own is None else own[:1])
    np.testing.assert_allclose(replay[:, 0], omega * past, rtol=1e-9)
    linear = suite.history("m/mujoco", "kept", past + DT / 2, interp="linear")
    np.testing.assert_allclose(linear[:, 0], omega * (past + DT / 2), rtol=1e-9)
    with pytest.raises(SensorError, match=re.escape(
            "history: interp: expected one of ['zoh', 'linear', 'cubic'], got 'spline'")):
        suite.history("m/mujoco", "kept", past, interp="spline")


NOISY = """<mujoco><worldbody><body name="top" pos="0 0 0.5">
  <joint name="spin" axis="0 0 1"/><geom type="cylinder" size="0.1 0.02" mass="1"/>
  <site name="s"/></body></worldbody>
  <sensor><jointvel name="rate" joint="spin" noise="0.1"/>
  <framequat name="quat" objtype="site" objname="s" noise="0.05"/>
  <jointvel name="clean" joint="spin"/></sensor></mujoco>"""


def _noisy_ticks(seed, ticks=200):
    _, suite, _ = _run(NOISY, 0, setup=_spin, seed=seed)
    reading = suite["m/mujoco"]
    rates, quats = [], []
    for _ in range(ticks):
        suite.sim.step(10)
        rates.append(reading["rate"][:, 0] - reading["clean"][:, 0])
        quats.append(reading["quat"].copy())
    return np.array(rates), np.array(quats)


def test_declared_noise_is_applied_by_us_seeded_per_env_and_keeps_quaternions_unit():
    rates, quats = _noisy_ticks(seed=3)
    # N(0, 0.1) on the rate (MuJoCo's sensordata carries none; `clean` reads the same joint):
    # over 400 draws the sample std is within 15 % of 0.1 (its 4-sigma spread is 14 %)
    assert rates.std() == pytest.approx(0.1, rel=0.15)
    assert abs(rates.mean()) < 0.1 * 4 / math.sqrt(rates.size)
    np.testing.assert_allclose(np.linalg.norm(quats, axis=-1), 1.0, atol=1e-12)
    assert np.ptp(quats[:, 0, 0]) > 0.01  # and noisy
    again, _ = _noisy_ticks(seed=3)
    np.testing.assert_array_equal(again, rates)  # the same seeds: bit-identical
    other, _ = _noisy_ticks(seed=4)
    assert not np.array_equal(other, rates)
    assert not np.array_equal(rates[:, 0], rates[:, 1])  # env i draws from seed + i


def test_an_override_turns_noise_off_and_a_cutoff_holds_under_noise():
    _, suite, alone = _run(NOISY, 50, setup=_spin,
                           specs=[MujocoSpec("m", noise=0.0, key="clean")])
    _as_mujoco(suite["clean"], alone)  # noise 0: exactly MuJoCo's
    _, suite, _ = _run(BOX, 500, specs=[MujocoSpec("m", "clipped", noise=10.0)])
    clipped = suite["m/clipped"]["clipped"][:, 0]
    assert ((clipped >= 0) & (clipped <= 5.0)).all()  # positive, and within the cutoff


USER = """<mujoco><worldbody><body name="b" pos="0 0 0.5"><geom type="sphere" size="0.05"/>
  </body></worldbody><sensor><user name="clock2" dim="2" needstage="pos" datatype="real"/>
  <user name="clipped" dim="1" needstage="pos" datatype="real" cutoff="0.01"/>
  </sensor></mujoco>"""


def test_user_sensors_read_what_the_callback_returns():
    def user(name, model, data):
        return [data.time, 2 * data.time] if name == "clock2" else data.time

    _, suite, _ = _run(USER, 30, specs=[MujocoSpec("m", user=user)])
    with suite:
        reading = suite["m/mujoco"]
        # MuJoCo calls it inside each step, at the position stage: the last step's at 0.058 s
        np.testing.assert_allclose(reading["clock2"], [[0.058, 0.116]] * 2, rtol=1e-12)
        np.testing.assert_array_equal(reading["clipped"][:, 0], 0.01)  # MuJoCo's cutoff too
    # errors, and equality with MuJoCo's own callback: tests/sensors/test_user_sensors.py


def test_models_give_their_sensors_by_default_and_robots_do_not():
    store = SceneStore(2)
    for scene in store:
        scene.spawn_urdf("probe", probe_urdf(imu_block()), pose=(3.0, 0.0, 0.0))
    assert not [s for s in default_specs(store) if isinstance(s, MujocoSpec)]
    for scene in store:
        scene.spawn_mjcf("m", BOX)
        scene.spawn_mjcf("bare", '<mujoco><worldbody><body><geom size="0.1"/></body>'
                         "</worldbody></mujoco>", pose=(-3.0, 0.0, 0.0))
    assert [s for s in default_specs(store) if isinstance(s, MujocoSpec)] == [MujocoSpec("m")]
    sim = Simulator(store)
    suite = SensorSuite(sim)
    sim.step(10)
    space, values = flat_observation(suite["m/mujoco"])  # as the env's `sensors:` observe it
    assert space.shape == (1 + 1 + 3 + 3 + 3 + 3,)
    reading = suite["m/mujoco"]
    np.testing.assert_array_equal(values(np.arange(2)), np.concatenate(
        [reading[n] for n in ("touch", "clipped", "accel", "gyro", "up", "height")],
        axis=1).astype(np.float32))
    # a robot's own MuJoCo sensors (those its IMU mount added) by name, on request: the
    # same numbers the imu kind reads
    own = suite.add(MujocoSpec("probe", "base_footprint_sensor_imu_accel"))
    imu = suite["probe/imu"]  # (a default reading)
    sim.step(10)
    np.testing.assert_array_equal(own["base_footprint_sensor_imu_accel"],
                                  imu.linear_acceleration)


def test_a_reading_follows_its_sensors_when_a_recompile_moves_their_addresses():
    store, suite, _ = _run(BOX, 0)
    for scene in store:  # spawned before "m": deleting it moves m's sensordata addresses
        scene.spawn_mjcf("early", FRAMES, pose=(5.0, 0.0, 0.0))
    store2, suite2, _ = _run(BOX, 0)
    sim = suite.sim
    store[0].delete(["m"])
    store[0].spawn_mjcf("m", BOX)  # now after "early" in env 0, before it in env 1
    sim.step(500)
    address = [scene.model.sensor(f"env_{env}/m/touch").adr[0] for env, scene in enumerate(store)]
    assert address[0] != address[1]
    suite2.sim.step(500)
    reading = suite["m/mujoco"]
    for name in reading.data:
        np.testing.assert_allclose(reading[name], suite2["m/mujoco"][name], atol=1e-9)


def test_unknown_names_get_a_clear_error():
    _, suite, _ = _run(BOX, 0)
    with pytest.raises(SensorError, match=re.escape(
            "env 0: model 'm' has no MuJoCo sensor 'tuch'; did you mean 'touch'? (it has "
            "['touch', 'clipped', 'accel', 'gyro', 'up', 'height'])")):
        suite.add(MujocoSpec("m", "tuch"))
    with pytest.raises(SensorError, match=re.escape(
            "reading 'm/mujoco': expected one of its sensors ['touch', 'clipped', 'accel', "
            "'gyro', 'up', 'height'], got 'tuch'")):
        suite["m/mujoco"]["tuch"]
    with pytest.raises(SensorError, match=re.escape(
            "MujocoSpec: no env holds a robot or model named 'n'; expected one of ['m']")):
        suite.add(MujocoSpec("n"))
    with pytest.raises(SensorError, match=re.escape(
            "ImuSpec: no env holds a robot named 'm'; expected one of []")):
        suite.add(ImuSpec("m"))  # a model has no IMU mounts: the mujoco kind reads it
    with pytest.raises(SensorError, match=re.escape(
            "MujocoSpec.noise: expected a finite number >= 0, got -1")):
        MujocoSpec("m", noise=-1)
    with pytest.raises(SensorError, match=re.escape(  # not NaN forever, every sample kept
            "MujocoSpec.delay: expected seconds in [0, 10], got 1000000000.0")):
        MujocoSpec("m", delay=1e9)


def test_the_env_config_observes_a_robot_mujoco_sensor_like_any_kind():
    import gymnasium as gym

    import arena_gym  # noqa: F401 - registers the env

    env = gym.make_vec("ArenaMujoco-v0", num_envs=2, vectorization_mode="vector_entry_point",
                       sensors=[{"kind": "mujoco", "key": "accel",
                                 "sensor": "base_footprint_sensor_imu_accel"}])
    try:
        assert env.single_observation_space["accel"].shape == (3,)
        obs, _ = env.reset(seed=0)
        for _ in range(5):
            obs, *_ = env.step(np.zeros((2, 2)))
        reading = env.unwrapped.core.sensor_suite["accel"]
        np.testing.assert_array_equal(
            obs["accel"], reading["base_footprint_sensor_imu_accel"].astype(np.float32))
        # standing still on flat ground: gravity's reaction, up (the servos' hold: 0.2)
        np.testing.assert_allclose(obs["accel"], [[0, 0, G]] * 2, atol=0.2)
    finally:
        env.close()
