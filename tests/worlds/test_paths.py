"""Global paths on occupancy grids, with answers known from the geometry."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from arena_gym.config import PathConfig
from arena_gym.tasks.path_sampling import sample_path_episode
from arena_gym.tasks.sampling import NoRoomError, ObstaclePool
from arena_gym.tasks.subgoals import PathFollower
from arena_gym.worlds.paths import NoPathError, PathGrid
from tests.worlds.grids import box_map, door_map

CLEARANCE = 0.21  # arena_diffbot's radius 0.11 + a 0.1 m margin


def _length(path: np.ndarray) -> float:
    return float(np.hypot(*np.diff(path, axis=0).T).sum())


def test_a_path_through_the_one_door_goes_round_its_inflated_jambs():
    grid = PathGrid(door_map(door=(3.5, 4.5)), CLEARANCE)
    path = grid.field((8.0, 1.0)).path((2.0, 1.0))
    assert path[0].tolist() == [2.0, 1.0] and path[-1].tolist() == [8.0, 1.0]
    # the wall x in [4.9, 5.1] is crossed inside the door, CLEARANCE off its lower jamb
    inside = path[(path[:, 0] > 4.8) & (path[:, 0] < 5.3)]
    assert len(inside) and (inside[:, 1] >= 3.5 + CLEARANCE - 0.05).all()
    # over the inflated jamb corner (4.9 - c, 3.5 + c) and back: 2 hypot(2.9, 2.71) + 0.2
    assert _length(path) == pytest.approx(8.14, abs=0.1)
    # straight across, were there no wall: 6 m
    assert _length(path) > 8.0


def _crossing(path: np.ndarray, x: float) -> float:
    """y where the path crosses the vertical line at x (first crossing)."""
    k = int(np.flatnonzero((path[:-1, 0] - x) * (path[1:, 0] - x) <= 0)[0])
    (x0, y0), (x1, y1) = path[k], path[k + 1]
    return float(y0 + (y1 - y0) * (x - x0) / (x1 - x0))


def test_a_wall_cost_keeps_the_path_in_the_middle_of_the_door():
    door = door_map(door=(3.5, 4.5))  # centre line y = 4
    shortest = PathGrid(door, CLEARANCE).field((8.0, 1.0)).path((2.0, 1.0))
    middle = PathGrid(door, CLEARANCE, wall_cost=3.0, comfort=0.15).field((8.0, 1.0)).path(
        (2.0, 1.0))
    assert _crossing(shortest, 5.0) == pytest.approx(3.5 + CLEARANCE, abs=0.05)  # the jamb
    assert _crossing(middle, 5.0) == pytest.approx(4.0, abs=0.1)  # the middle, to 2 cells
    # and comes in wider: 0.3 m before the wall, over 0.2 m further from the jamb
    assert _crossing(middle, 4.6) - _crossing(shortest, 4.6) > 0.2
    assert _length(shortest) < _length(middle) < _length(shortest) + 0.5


def test_the_field_gives_the_path_length_from_any_point():
    grid = PathGrid(door_map(), CLEARANCE)
    field = grid.field((8.0, 1.0))
    graph = field.length([(2.0, 1.0), (8.0, 1.0)])
    # graph paths (8-connected cells) run at most 8% above the taut path, never below it
    taut = _length(field.path((2.0, 1.0)))
    assert taut <= graph[0] <= 1.08 * taut
    assert graph[1] == pytest.approx(0.0)


def test_in_an_open_room_the_path_is_the_straight_line():
    grid = PathGrid(box_map(6.0, 6.0, []), CLEARANCE)
    path = grid.field((5.0, 4.5)).path((1.0, 1.5))
    np.testing.assert_array_equal(path, [[1.0, 1.5], [5.0, 4.5]])


def test_two_regions_have_no_path_between_them():
    grid = PathGrid(box_map(10.0, 5.0, [(4.9, 0.0, 5.1, 5.0)]), CLEARANCE)
    with pytest.raises(NoPathError, match=re.escape(
            "no path from (2.00, 1.00) to (8.00, 1.00): expected both in one free region "
            "of the map, got separate regions")):
        grid.field((8.0, 1.0)).path((2.0, 1.0))


def test_inflation_closes_a_door_narrower_than_the_robot():
    narrow = door_map(door=(3.8, 4.1))  # 0.3 m: the robot's 0.42 m with margin does not pass
    with pytest.raises(NoPathError, match=re.escape("no path from (2.00, 1.00)")):
        PathGrid(narrow, CLEARANCE).field((8.0, 1.0)).path((2.0, 1.0))
    # a robot of clearance 0.1 m fits through the same door
    path = PathGrid(narrow, 0.1).field((8.0, 1.0)).path((2.0, 1.0))
    assert _length(path) > 8.0


def test_a_goal_where_the_robot_does_not_fit_is_refused():
    grid = PathGrid(door_map(), CLEARANCE)
    with pytest.raises(NoPathError, match=re.escape(
            "goal (5.00, 1.00): expected a point where the robot fits (clearance 0.21 m), "
            "got a blocked cell")):
        grid.field((5.0, 1.0))


class _Layout:
    """A map's bounds and free test, as the task's layouts answer them."""

    def __init__(self, grid: PathGrid) -> None:
        self.grid = grid

    def bounds(self):
        return np.zeros(2), np.array([10.0, 5.0])

    def free(self, points, clearance):
        from arena_gym.worlds.occupancy import free_cells

        ok = free_cells(self.grid.map, clearance)
        rows, cols, inside = self.grid._rowcol(points)
        out = np.zeros(len(rows), bool)
        out[inside] = ok[rows[inside], cols[inside]]
        return out


POOL = ObstaclePool.make(8, (0.2, 0.6))


def test_episode_sampling_with_no_long_enough_region_is_a_clear_error():
    grid = PathGrid(box_map(10.0, 5.0, [(4.9, 0.0, 5.1, 5.0)]), CLEARANCE)  # two 5 x 5 m rooms
    cfg = PathConfig(subgoal=True, min_length=8.0)  # longer than either room allows
    with pytest.raises(NoRoomError, match=re.escape(
            "the world: no start at a path length of >= 8 m from a goal (and >= 2 m straight) "
            "after 40 goals; expected a free region that long")):
        sample_path_episode(np.random.default_rng(0), _Layout(grid), grid, POOL, (0, 0),
                            0.11, 0.1, 2.0, cfg)


def test_episodes_start_in_the_goals_region_and_keep_obstacles_off_the_path():
    grid = PathGrid(door_map(), CLEARANCE)
    cfg = PathConfig(subgoal=True, min_length=6.0, obstacle_clearance=0.3)
    placed = 0
    for seed in range(20):
        drawn = sample_path_episode(np.random.default_rng(seed), _Layout(grid), grid, POOL,
                                    (6, 8), 0.11, 0.1, 2.0, cfg)
        ep = drawn.episode
        assert drawn.field.length([ep.start[:2]])[0] >= 6.0
        assert drawn.path[0].tolist() == list(ep.start[:2])
        assert drawn.path[-1].tolist() == list(ep.goal)
        # every box's outline (sampled densely) stays 0.11 + 0.3 m from the path's points
        dense = np.concatenate([np.linspace(a, b, 200) for a, b in
                                zip(drawn.path[:-1], drawn.path[1:], strict=True)])
        for x, y, yaw, sx, sy in ep.footprints(POOL):
            u = np.linspace(-0.5, 0.5, 41)
            local = np.concatenate([np.column_stack([u * sx, np.full(41, s * sy / 2)])
                                    for s in (-1, 1)] +
                                   [np.column_stack([np.full(41, s * sx / 2), u * sy])
                                    for s in (-1, 1)])
            c, s = math.cos(yaw), math.sin(yaw)
            world = local @ np.array([[c, s], [-s, c]]) + (x, y)
            gap = np.hypot(*(world[:, None] - dense[None]).T).min()
            assert gap >= 0.41 - 1e-6
            placed += 1
    assert placed >= 40  # most of the 6-8 boxes a episode found room


def test_the_follower_measures_the_path_to_go_and_leads_by_the_lookahead():
    grid = PathGrid(box_map(6.0, 6.0, [(2.0, 1.0, 3.0, 5.9)]), CLEARANCE)
    follower = PathFollower(1, lookahead=1.5, replan_distance=1.0, spacing=0.1)
    field = grid.field((4.0, 5.0))
    path = np.array([[1.0, 1.0], [1.0, 5.0], [4.0, 5.0]])  # an L: 4 m up, 3 m right
    follower.start(0, field, path)
    assert follower.path_length[0] == pytest.approx(7.0)
    # beside the first leg, 0.5 m off it: 0.5 to the path, 3 m more up it, then 3 m
    to_go, replanned = follower.update(np.array([[1.5, 2.0]]))
    assert replanned.tolist() == []
    assert to_go[0] == pytest.approx(6.5)
    np.testing.assert_allclose(follower.subgoal()[0], (1.0, 3.5))
    # near the corner the subgoal turns along the second leg
    follower.update(np.array([[1.0, 4.5]]))
    np.testing.assert_allclose(follower.subgoal()[0], (2.0, 5.0), atol=1e-9)
    assert follower.replans[0] == 0


def test_a_robot_that_strays_gets_a_new_path_from_where_it_stands():
    grid = PathGrid(box_map(6.0, 6.0, []), CLEARANCE)
    follower = PathFollower(1, lookahead=1.5, replan_distance=1.0, spacing=0.1)
    field = grid.field((5.0, 1.0))
    follower.start(0, field, field.path((1.0, 1.0)))
    before, replanned = follower.update(np.array([[2.0, 3.0]]))  # 2 m off the path
    assert replanned.tolist() == [0]
    assert before[0] == pytest.approx(2.0 + 3.0)  # measured on the old path
    assert follower.replans[0] == 1
    np.testing.assert_allclose(follower.path(0)[[0, -1]], [[2.0, 3.0], [5.0, 1.0]])
    assert follower.to_go(np.array([[2.0, 3.0]]))[0] == pytest.approx(math.hypot(3.0, 2.0))
