"""Pedestrian motion: waypoint followers reach every waypoint in order (loop and ping-pong);
under the social force model two groups crossing a corridor never overlap and nobody
crosses a wall."""

from __future__ import annotations

import re

import numpy as np
import pytest

from arena_gym.people.crowd import ARRIVAL, LOOP, PING_PONG, AgentRanges, Crowd, nearest_on_boxes
from arena_gym.people.pedestrians import RADIUS

DT = 0.1


def _arrivals(crowd: Crowd, steps: int) -> list[tuple[int, tuple[float, float]]]:
    """(step, position) of agent 0 of env 0 each time it reaches a waypoint."""
    out = []
    for step in range(steps):
        before = crowd.reached[0, 0]
        crowd.step(DT)
        if crowd.reached[0, 0] > before:
            out.append((step, tuple(np.round(crowd.pos[0, 0], 9))))
    return out


@pytest.mark.parametrize(("mode", "order"), [(LOOP, [0, 1, 2, 0, 1, 2]),
                                             (PING_PONG, [0, 1, 2, 1, 0, 1])])
def test_waypoint_followers_reach_each_waypoint_in_order(mode, order):
    points = np.array([[2.0, 0.0], [2.0, 1.5], [0.0, 0.0]])  # a 6 m round from the start
    crowd = Crowd(2, 3, model="waypoints", ranges=AgentRanges(vmax=(0.5, 0.5)))
    rng = np.random.default_rng(0)
    for env in range(2):
        crowd.place(env, [(0.0, 0.0, 0.0)], [points], [mode], rng)
    arrivals = _arrivals(crowd, 300)
    visited = [int(np.flatnonzero((points == p).all(axis=1))[0]) for _, p in arrivals[:6]]
    assert visited == order  # each arrival stands exactly on its waypoint
    assert arrivals[0][0] + 1 == 40  # 2 m at 0.5 m/s in steps of 0.1 s
    np.testing.assert_array_equal(crowd.pos[1], crowd.pos[0])  # env 1 walked the same


def _corridor(length: float = 10.0, width: float = 3.0) -> np.ndarray:
    """Footprints (1, 4, 5) of a closed corridor along x: two long walls and two ends."""
    t = 0.1
    return np.array([[[0.0, width / 2, 0.0, length + t, t],
                      [0.0, -width / 2, 0.0, length + t, t],
                      [length / 2, 0.0, 0.0, t, width + t],
                      [-length / 2, 0.0, 0.0, t, width + t]]])


def test_two_groups_crossing_a_corridor_never_overlap_nor_cross_a_wall():
    walls = _corridor()
    crowd = Crowd(1, 8, model="social_force")
    ys = np.linspace(-0.9, 0.9, 4)
    starts = [(-3.8, y, 0.0) for y in ys] + [(3.8, y + 0.1, np.pi) for y in ys]
    waypoints = [[(3.8, y), (-3.8, y)] for y in ys] + [[(-3.8, y), (3.8, y)] for y in ys]
    crowd.place(0, starts, waypoints, [PING_PONG] * 8, np.random.default_rng(3))
    closest, wall_gap = np.inf, np.inf
    side = np.sign(crowd.pos[0, :, 1:2] - walls[0, None, :2, 1])  # below/above each long wall
    for _ in range(1000):
        crowd.step(DT, walls, None)
        d = np.hypot(*(crowd.pos[0, :, None] - crowd.pos[0, None, :]).transpose(2, 0, 1))
        closest = min(closest, d[~np.eye(8, dtype=bool)].min())
        _, gap = nearest_on_boxes(crowd.pos, walls, None)
        wall_gap = min(wall_gap, gap.min())
        assert (np.sign(crowd.pos[0, :, 1:2] - walls[0, None, :2, 1]) == side).all()
        assert (np.abs(crowd.pos[0, :, 0]) < 5.0).all()
    assert closest > 2 * RADIUS
    assert wall_gap >= RADIUS - 1e-9
    assert crowd.separations == 0  # the forces alone kept them apart, not the constraint
    assert (crowd.reached[0] >= 2).all()  # everyone crossed the corridor and came back


def test_a_step_too_long_for_the_radius_is_refused():
    crowd = Crowd(1, 1, ranges=AgentRanges(vmax=(0.5, 0.5)))
    crowd.place(0, [(0.0, 0.0, 0.0)], [[(5.0, 0.0)]], [LOOP], np.random.default_rng(0))
    with pytest.raises(ValueError, match=re.escape(
            "crowd step: expected vmax * dt < the radius (0.25 m) so that nobody skips through "
            "a wall, got dt 0.5 s with vmax up to 0.5 m/s")):
        crowd.step(0.5)


@pytest.mark.parametrize(("boxes", "mask", "robots", "shapes"), [
    ((2, 3), None, None, "(2, 3), (2, 3) and (2, 2)"),  # no box axis
    ((1, 3, 5), None, None, "(1, 3, 5), (1, 3) and (2, 2)"),  # one env's boxes for two
    ((2, 3, 4), None, None, "(2, 3, 4), (2, 3) and (2, 2)"),  # a footprint short of yaw
    ((2, 3, 5), (2, 2), None, "(2, 3, 5), (2, 2) and (2, 2)"),  # a mask of other boxes
    ((2, 3, 5), None, (1, 2), "(2, 3, 5), (2, 3) and (1, 2)"),  # one robot for two envs
])
def test_a_step_among_boxes_or_robots_of_the_wrong_shape_is_refused(boxes, mask, robots,
                                                                   shapes):
    """The compiled step reads every env's boxes, mask and robot unchecked: shapes that do not
    fit the crowd raise before anyone moves."""
    crowd = Crowd(2, 1, ranges=AgentRanges(vmax=(0.5, 0.5)))
    for env in range(2):
        crowd.place(env, [(0.0, 0.0, 0.0)], [[(5.0, 0.0)]], [LOOP], np.random.default_rng(0))
    before = crowd.pos.copy()
    with pytest.raises(ValueError, match=re.escape(
            "crowd step: expected boxes (2, B, 5), box_mask (2, B) and robots (2, 2+), got "
            f"shapes {shapes}")):
        crowd.step(DT, np.zeros(boxes), None if mask is None else np.ones(mask, bool),
                   None if robots is None else np.zeros(robots))
    assert np.array_equal(crowd.pos, before)


def test_a_pedestrian_walks_around_a_standing_robot():
    crowd = Crowd(2, 1, model="social_force", ranges=AgentRanges(vmax=(0.4, 0.4)))
    for env in range(2):
        crowd.place(env, [(-3.0, 0.05, 0.0)], [[(3.0, 0.05)]], [LOOP], np.random.default_rng(1))
    robots = np.array([[0.0, 0.0], [0.0, 10.0]])  # env 1's robot is far away
    closest = np.full(2, np.inf)
    for _ in range(400):
        crowd.step(DT, robots=robots, robot_radius=0.2)
        closest = np.minimum(closest, np.hypot(*(crowd.pos[:, 0] - robots).T))
    assert closest[0] > RADIUS + 0.2 + 0.1  # kept a gap of over 10 cm from the robot
    assert closest[0] - 0.05 > 0.3  # so it left its straight line, which passes 5 cm away
    assert (crowd.reached == 1).all()  # both got there, and stay (a single waypoint)
    np.testing.assert_allclose(crowd.pos[:, 0], [[3.0, 0.05]] * 2, atol=ARRIVAL)
