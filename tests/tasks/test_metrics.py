"""Arena's per-episode metrics on hand-made trajectories with known answers."""

from __future__ import annotations

import math

import numpy as np
import pytest

from arena_gym.tasks import metrics as m


def _circle(radius: float, step: float, n: int) -> np.ndarray:
    """n + 1 poses on a circle, counter-clockwise, heading along the tangent."""
    a = np.arange(n + 1) * step
    return np.column_stack([radius * np.sin(a), radius * (1 - np.cos(a)), a])


def test_straight_line_at_constant_speed():
    pose = np.column_stack([np.linspace(0, 1, 11), np.zeros(11), np.zeros(11)])
    out = m.trajectory_metrics(pose, np.zeros(10, bool), dt=0.5)
    assert out["path_length"] == pytest.approx(1.0, abs=1e-12)
    assert out["time"] == 5.0
    assert out["mean_speed"] == pytest.approx(0.2, abs=1e-12)
    assert out["max_speed"] == pytest.approx(0.2, abs=1e-12)
    for key in ("acceleration", "jerk", "curvature", "normalized_curvature", "roughness",
                "angle_over_length"):
        assert out[key] == pytest.approx(0.0, abs=1e-9), key
    assert out["collisions"] == 0


def test_circle_curvature_is_the_inverse_radius():
    step = math.radians(10)
    pose = _circle(2.0, step, 18)
    out = m.trajectory_metrics(pose, np.zeros(18, bool), dt=0.1)
    chord = 2 * 2.0 * math.sin(step / 2)
    assert out["curvature"] == pytest.approx(0.5, rel=1e-9)
    assert out["normalized_curvature"] == pytest.approx(0.5 * 2 * chord, rel=1e-9)
    assert out["roughness"] == pytest.approx(math.tan(step / 2) / 2, rel=1e-9)
    assert out["path_length"] == pytest.approx(18 * chord, rel=1e-12)
    assert out["angle_over_length"] == pytest.approx(step / chord, rel=1e-9)


def test_right_angle_corner():
    xy = np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0]])
    curvature, normalised = m.curvatures(xy)
    np.testing.assert_allclose(curvature, [math.sqrt(2)], rtol=1e-12)
    np.testing.assert_allclose(normalised, [2 * math.sqrt(2)], rtol=1e-12)
    np.testing.assert_allclose(m.roughness(xy), [0.5], rtol=1e-12)


def test_speed_acceleration_and_jerk_of_a_speed_profile():
    # steps of 0.1, 0.2, 0.3 and 0 m at dt 0.1 s: speeds 1, 2, 3, 0 m/s
    pose = np.column_stack([[0.0, 0.1, 0.3, 0.6, 0.6], np.zeros(5), np.zeros(5)])
    out = m.trajectory_metrics(pose, np.zeros(4, bool), dt=0.1)
    assert out["mean_speed"] == pytest.approx(1.5, rel=1e-12)
    assert out["max_speed"] == pytest.approx(3.0, rel=1e-12)
    assert out["acceleration"] == pytest.approx((1 + 1 + 3) / 3 / 0.1, rel=1e-9)  # 16.7 m/s^2
    assert out["jerk"] == pytest.approx((0 + 4) / 2 / 0.01, rel=1e-9)  # 200 m/s^3


def test_turning_in_place_has_no_curvature_and_no_length():
    pose = np.column_stack([1e-5 * np.array([0, 1, 0, 1, 0]), np.zeros(5), np.arange(5) * 0.3])
    out = m.trajectory_metrics(pose, np.zeros(4, bool), dt=0.1)
    assert out["curvature"] == 0.0 and out["roughness"] == 0.0
    assert out["angle_over_length"] == 0.0


def test_heading_change_wraps_at_pi():
    yaw = np.array([3.1, -3.1])  # a turn of 0.083 rad through pi, not 6.2 rad
    assert m.angle_over_length(yaw, 1.0) == pytest.approx(2 * math.pi - 6.2, rel=1e-9)


@pytest.mark.parametrize(("flags", "count"), [
    ([0, 1, 1, 0, 1], 2), ([1, 0], 1), ([1, 1, 1], 1), ([0, 0], 0), ([], 0)])
def test_collisions_count_onsets(flags, count):
    assert m.collision_count(np.array(flags, bool)) == count


def test_episode_buffers_keep_envs_apart_and_freeze_diverged_steps():
    rec = m.EpisodeMetrics(2, max_steps=5)
    pose = np.zeros((2, 4))
    rec.reset(np.array([True, True]), pose)
    everyone = np.array([True, True])
    pose[:, 0] = [0.1, 0.2]
    rec.update(pose, np.array([False, True]), everyone, everyone)
    pose[:, 0] = [0.3, 5.0]  # env 1 diverged: its jump is not the policy's motion
    rec.update(pose, np.array([False, False]), everyone, np.array([True, False]))
    a, b = rec.episode(0, "timeout", 0.1), rec.episode(1, "diverged", 0.1)
    assert a["path_length"] == pytest.approx(0.3) and a["collisions"] == 0
    assert b["path_length"] == pytest.approx(0.2) and b["collisions"] == 1
    assert a["steps"] == 2 and a["trajectory"].shape == (3, 3) and a["time"] == pytest.approx(0.2)



def test_inactive_envs_record_nothing_and_a_full_trajectory_keeps_its_last_slot():
    rec = m.EpisodeMetrics(3, max_steps=2)  # slots 0 (start), 1, 2
    pose = np.zeros((3, 4))
    rec.reset(np.ones(3, bool), pose)
    active = np.array([True, False, True])
    for step in range(1, 5):  # two steps more than the trajectory holds
        pose[:, 0], pose[:, 1], pose[:, 3] = step, -step, 0.1 * step
        rec.update(pose, np.array([False, True, step == 4]), active, active)
    assert rec.steps.tolist() == [2, 0, 2]
    np.testing.assert_array_equal(rec.pose[1], np.zeros((3, 3)))  # never active: untouched
    assert not rec.collided[1].any()
    np.testing.assert_array_equal(rec.pose[0, 2], [4.0, -4.0, 0.4])  # the last step's pose
    np.testing.assert_array_equal(rec.pose[0, 1], [1.0, -1.0, 0.1])  # the first step's
    assert rec.collided[2].tolist() == [False, False, True]
