"""Pedestrians walking in a simulator: the Crowd's poses land in the pool's state (no
compile), a scenario of every shared world loads and plays, and an episode's walkers start
apart, on free ground, away from the robot."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena_gym.people.crowd import nearest_on_boxes
from arena_gym.people.pedestrians import RADIUS
from arena_gym.people.walkers import Walkers, sample_walks, spaced
from arena_gym.scene import Pedestrian, Prim, SceneStore
from arena_gym.sim import Simulator
from arena_gym.worlds import builtin_robot_urdf
from arena_gym.worlds.layouts import RoomLayout, ScenarioLayout
from arena_gym.worlds.scenario import scenario_walks

WORLDS = {  # one scenario per shared world; each has pedestrians
    "map_empty": "default.json", "map_empty_small": "default.json",
    "arena_rooms1": "2.json", "hospital": "default.json",
    "experiment_rooms": "default.json", "evaluation_floor": "obs10.json",
    "map1_small": "default.json",
}


def _walking(capacity: int, prims: list[Prim] | None = None
             ) -> tuple[SceneStore, Simulator, Walkers]:
    """Two 6 m rooms with the built-in robot (and `prims` spawned in each), their walkers
    placed: p0 walking east, p1 west, the others parked."""
    store = SceneStore(2)
    layout = RoomLayout(6.0)
    for env in range(2):
        store[env].spawn_urdf("robot", builtin_robot_urdf())
        layout.build(store, env)
        if prims:
            store[env].spawn_prims(prims)
    sim = Simulator(store)
    walkers = Walkers(sim, capacity=capacity, walls=layout.footprints())
    rng = np.random.default_rng(0)
    for env in range(2):
        walkers.place(env, [(-2.0, 1.0 + env, 0.0), (2.0, -1.0, np.pi)],
                      [[(2.0, 1.0 + env)], [(-2.0, -1.0)]], [0, 0], rng)
    return store, sim, walkers


def _assert_posed(store: SceneStore, walkers: Walkers, people: int) -> None:
    """Each env's first `people` walkers stand where the crowd has them, facing its heading."""
    for env in range(2):
        for k in range(people):
            pos, quat = store[env].get_pose(f"crowd/p{k}")
            np.testing.assert_allclose(pos[:2], walkers.crowd.pos[env, k])
            np.testing.assert_allclose(2 * np.arctan2(quat[3], quat[0]),
                                       walkers.crowd.yaw[env, k])


def test_walkers_write_their_poses_into_state_without_compiling():
    store, sim, walkers = _walking(4)
    counts = [store[e].compile_count for e in range(2)]
    for _ in range(20):
        walkers.step(0.1)
        sim.step(20)
    assert [store[e].compile_count for e in range(2)] == counts
    for env in range(2):
        pos, quat = store[env].get_pose("crowd/p0")
        np.testing.assert_allclose(pos[:2], walkers.crowd.pos[env, 0])
        assert pos[0] > -2.0 + 0.5  # walked east...
        np.testing.assert_allclose(2 * np.arctan2(quat[3], quat[0]), walkers.crowd.yaw[env, 0])
        assert store[env].get_pose("crowd/p3")[0][2] < -5  # not placed: parked


def test_walkers_write_each_env_when_their_pools_differ():
    # env 1's pool holds someone else first: its walkers take other slots (mocap rows) than
    # env 0's, so the poses cannot go to both envs in one write
    store = SceneStore(2)
    layout = RoomLayout(6.0)
    for env in range(2):
        layout.build(store, env)
    store.spawn_pedestrians([Pedestrian("env_1/visitor", pose=(0.0, -2.0, 0.0))])
    sim = Simulator(store)
    walkers = Walkers(sim, capacity=2, walls=layout.footprints())
    assert walkers.slots[0].tolist() != walkers.slots[1].tolist()
    rng = np.random.default_rng(0)
    for env in range(2):
        walkers.place(env, [(-2.0, 1.0 + env, 0.0), (2.0, -1.0, np.pi)],
                      [[(2.0, 1.0 + env)], [(-2.0, -1.0)]], [0, 0], rng)
    for _ in range(5):
        walkers.step(0.1)
        sim.step(20)
    _assert_posed(store, walkers, 2)
    np.testing.assert_allclose(store[1].get_pose("visitor")[0][:2], (0.0, -2.0))  # untouched


def test_walkers_near_a_robot_write_their_poses_before_and_after_a_recompile():
    # the env's path: robots given (people beyond reach leave collision detection). A box
    # spawned as a movable prim (a mocap body) into both envs recompiles them: a new layout,
    # new state arrays, a mocap row more; the poses must land in the new layout's rows
    store, sim, walkers = _walking(3, [Prim("crate_a", pose=(-2.5, -2.5, 0.3, 0.0),
                                            scale=(0.4, 0.4, 0.6), movable=True)])
    assert store.scene(0).pedestrians.mocap_ids()[walkers.slots[0]].tolist() == [1, 2, 3]
    robots = np.array([[0.0, -2.5], [0.0, 2.5]])

    def walk(steps: int) -> None:
        for _ in range(steps):
            walkers.step(0.1, robots, 0.2)
            sim.step(20)
        _assert_posed(store, walkers, 2)
        for env in range(2):
            assert store[env].get_pose("crowd/p2")[0][2] < -5  # not placed: parked

    walk(5)
    layout_before, rows = sim.layout_version, sim.state(None, "mocap_pos").shape[1]
    for env in range(2):
        store[env].spawn_prims([Prim("crate_b", pose=(2.5, 2.5, 0.3, 0.0),
                                     scale=(0.4, 0.4, 0.6), movable=True)])
    walk(5)
    assert sim.layout_version != layout_before
    assert sim.state(None, "mocap_pos").shape[1] == rows + 1
    for env in range(2):  # the crates where they were put: no pose of a person landed there
        np.testing.assert_allclose(store[env].get_pose("crate_a")[0], (-2.5, -2.5, 0.3))
        np.testing.assert_allclose(store[env].get_pose("crate_b")[0], (2.5, 2.5, 0.3))


@pytest.mark.parametrize("world", sorted(WORLDS))
def test_a_scenario_of_each_shared_world_loads_and_plays(assets, world):
    layout = ScenarioLayout(assets / "worlds" / world / "scenarios" / WORLDS[world])
    starts, waypoints, modes, vmax = scenario_walks(layout.scenario)
    assert len(starts) > 0
    store = SceneStore(1)
    layout.build(store, 0)
    sim = Simulator(store)
    walkers = Walkers(sim, capacity=len(starts), walls=layout.footprints())
    walkers.place(0, starts, waypoints, modes, np.random.default_rng(0), vmax)
    start = walkers.crowd.pos.copy()
    _, gap0 = nearest_on_boxes(start, walkers.boxes, walkers.box_mask)
    inside_at_start = (gap0.min(axis=2) < RADIUS)[0]  # some scenarios start people by walls
    moved = np.zeros(len(starts))  # path length walked
    for _ in range(100):
        before = walkers.crowd.pos[0].copy()
        walkers.step(0.1)
        sim.step(20)
        moved += np.hypot(*(walkers.crowd.pos[0] - before).T)
    walking = np.array([len(w) > 0 and np.hypot(*(w[0] - s[:2])) > 0.5
                        for w, s in zip(waypoints, starts, strict=True)])
    # most walk on; a few face a wall on the straight line to their waypoint and wait there
    # (pedestrians have no path planner, as in pedsim)
    assert walking.any() and (moved[walking] > 1.0).mean() >= 0.75
    _, gap = nearest_on_boxes(walkers.crowd.pos, walkers.boxes, walkers.box_mask)
    assert (gap.min(axis=2)[0][~inside_at_start] >= RADIUS - 1e-9).all()  # nobody in a wall
    pos, _ = store[0].get_pose("crowd/p0")
    np.testing.assert_allclose(pos[:2], walkers.crowd.pos[0, 0])


def greedy_reference(points: np.ndarray, gap: float, count: int) -> list[int]:
    """The plain greedy: each point in order, taken if it is `gap` from all taken so far."""
    taken: list[int] = []
    for k, p in enumerate(points):
        if len(taken) < count and all(np.hypot(*(p - points[j])) >= gap for j in taken):
            taken.append(k)
    return taken


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(0, 256), count=st.integers(0, 80),
       gap=st.floats(0.0, 3.0))
def test_spaced_starts_are_the_greedy_choice_and_keep_their_gap(seed, n, count, gap):
    points = np.random.default_rng(seed).uniform(-10.0, 10.0, size=(n, 2))
    taken = spaced(points, gap, count)
    assert taken.tolist() == greedy_reference(points, gap, count)
    chosen = points[taken]
    d = np.hypot(*(chosen[:, None] - chosen[None]).transpose(2, 0, 1))
    assert (d[~np.eye(len(chosen), dtype=bool)] >= gap).all()


def test_sampled_walks_start_apart_on_free_ground_away_from_the_robot():
    layout, boxes = RoomLayout(6.0), np.array([[1.0, 1.0, 0.5, 0.5, 0.0]])
    starts, waypoints = sample_walks(np.random.default_rng(3), layout, 12, boxes,
                                     (0.0, 0.0), 0.2)
    assert starts.shape == (12, 3) and len(waypoints) == 12
    d = np.hypot(*(starts[:, None, :2] - starts[None, :, :2]).transpose(2, 0, 1))
    assert d[~np.eye(12, dtype=bool)].min() >= 2 * RADIUS + 0.1
    assert np.hypot(*starts[:, :2].T).min() >= 1.0 + 0.2
    assert layout.free(starts[:, :2], RADIUS + 0.05).all()
