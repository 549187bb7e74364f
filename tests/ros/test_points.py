"""The lidar's `points` topic against a real rclpy process: an organised PointCloud2 of a
multi-ring lidar (one row per ring, one point per beam, NaN where the beam missed) whose
points are the suite's ranges times the beam directions, at the lidar's rate."""

from __future__ import annotations

import numpy as np
import pytest

from tests.ros.conftest import served
from tests.sensors.worlds import lidar_block, room_store

RINGS, BEAMS = 3, 90
ELEVATION = 0.1  # rad: rings at -0.1, 0, +0.1
RANGE_MAX = 2.0  # m: the room's far walls (3 m east, 2.5 m north) are out of range
POINTS, SCAN = "/probe/points", "/probe/scan"


@pytest.fixture(scope="module")
def bridge(ros_env):
    """A lockstep bridge over 1 env of the sensor tests' room, the probe robot carrying a
    10 Hz lidar of 3 rings x 90 beams."""
    store = room_store(1, lidar_block(samples=BEAMS, rings=RINGS, vmin=-ELEVATION,
                                      vmax=ELEVATION, max_range=RANGE_MAX, rate=10.0))
    with served(store, "probe", ros_env) as b:
        yield b


def test_points_are_the_ranges_along_the_beam_directions(bridge, probe):
    assert probe.listen(POINTS, "sensor_msgs/msg/PointCloud2") == 1
    assert probe.listen(SCAN, "sensor_msgs/msg/LaserScan") == 1
    reading = bridge.suite["probe/laser"]
    before = int(reading.count[0])
    assert probe.step(250)["success"]  # 0.5 s: samples at 0.02 s, then every 0.1 s
    samples = int(reading.count[0]) - before
    clouds = probe.take(POINTS, samples)
    assert samples == 6 and len(clouds) == samples  # one cloud per lidar sample
    msg = clouds[-1]
    assert (msg["height"], msg["width"], msg["point_step"], msg["row_step"]) == \
        (RINGS, BEAMS, 12, 12 * BEAMS)
    assert [(f["name"], f["offset"], f["datatype"], f["count"]) for f in msg["fields"]] == \
        [("x", 0, 7, 1), ("y", 4, 7, 1), ("z", 8, 7, 1)]
    assert msg["header"]["frame_id"] == "probe/laser"
    stamp = msg["header"]["stamp"]
    assert stamp["sec"] * 1_000_000_000 + stamp["nanosec"] == round(reading.stamp[0] * 1e9)

    points = np.frombuffer(bytes(msg["data"]), dtype="<f4").reshape(RINGS, BEAMS, 3)
    ranges = reading.ranges[0].astype(np.float64)  # (rings, beams)
    hit = np.isfinite(ranges)
    assert 0 < hit.sum() < hit.size  # both hits and misses in this room
    assert msg["is_dense"] is False
    # each beam's direction from the lidar's angles: ring j at elevation j, beam i at azimuth i
    az = reading.angle_min + np.arange(BEAMS) * reading.angle_increment
    el = np.array(reading.elevations)[:, None]
    direction = np.stack([np.cos(el) * np.cos(az), np.cos(el) * np.sin(az),
                          np.sin(el) * np.ones_like(az)], axis=-1)
    np.testing.assert_allclose(points[hit], ranges[hit][:, None] * direction[hit], atol=1e-6)
    assert np.isnan(points[~hit]).all()

    scan = probe.take(SCAN, samples)[-1]  # the LaserScan: the middle ring (elevation 0)
    np.testing.assert_array_equal(np.array(scan["ranges"], dtype=np.float32),
                                  reading.ranges[0, RINGS // 2])
