"""Property tests: random scene requests (valid and invalid, mixed) at a SceneStore, and random
configs at the config loader."""

from __future__ import annotations

import math
import warnings

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena_gym.config import ConfigError, load_config
from arena_gym.scene import Prim, PrimEdit, SceneError, SceneStore, Wall
from arena_gym.worlds import builtin_robot_urdf

NAMES = ["a", "b", "c/d", "a/geom", "robot", "robot/base_link", "robot/wheel_left_link/", ""]
NUMBER = st.one_of(st.floats(-3, 3), st.sampled_from([float("nan"), float("inf"), 1e30, -1.0, 0.0]))
SIZE = st.one_of(st.floats(0.05, 2.0), st.sampled_from([0.0, -0.5, 1e30, float("nan"), 2000.0]))


requests = st.one_of(
    st.tuples(st.just("spawn"), st.lists(st.tuples(st.sampled_from(NAMES),
                                                   st.tuples(NUMBER, NUMBER),
                                                   st.tuples(SIZE, SIZE, SIZE)),
                                         min_size=1, max_size=3)),
    st.tuples(st.just("wall"), st.lists(st.tuples(st.sampled_from(NAMES),
                                                  st.tuples(NUMBER, NUMBER),
                                                  st.tuples(NUMBER, NUMBER)),
                                        min_size=1, max_size=2)),
    st.tuples(st.just("edit"), st.lists(st.tuples(st.sampled_from(NAMES),
                                                  st.one_of(st.none(), st.tuples(NUMBER, NUMBER)),
                                                  st.one_of(st.none(),
                                                            st.tuples(SIZE, SIZE, SIZE))),
                                        min_size=1, max_size=2)),
    st.tuples(st.just("delete"), st.lists(st.sampled_from(NAMES + ["a/", "c/"]),
                                          min_size=1, max_size=2)),
)


def _state(store: SceneStore, env: int) -> dict:
    scene = store.scenes[env]
    model = store[env].model
    return {
        "xml": scene.spec.to_xml(),
        "names": list(scene.entities),
        "sizes": (model.nbody, model.ngeom, model.nq, model.nmocap),
        "records": {n: e.record for n, e in scene.entities.items() if e.kind != "robot"},
    }


def _build(kind: str, items: list) -> list:
    if kind == "spawn":
        return [Prim(n, pose=(x, y, 0.3, 0.0), scale=s) for n, (x, y), s in items]
    if kind == "wall":
        return [Wall(n, start=p, end=q) for n, p, q in items]
    return [PrimEdit(n, pose=None if p is None else (p[0], p[1], 0.3, 0.0), scale=s)
            for n, p, s in items]


def _apply(store: SceneStore, env: int, kind: str, items: list):
    records = items if kind == "delete" else _build(kind, items)
    if kind == "spawn":
        store[env].spawn_prims(records)
    elif kind == "wall":
        store[env].spawn_walls(records)
    elif kind == "edit":
        store[env].edit_prims(records)
    else:
        return store[env].delete(records)
    return records


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(requests, min_size=1, max_size=8))
def test_random_scene_requests_are_all_or_nothing(batch):
    store = SceneStore(2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for env in range(2):
            store[env].spawn_urdf("robot", builtin_robot_urdf())
    for kind, items in batch:
        before, other = _state(store, 0), _state(store, 1)
        try:
            done = _apply(store, 0, kind, items)
        except SceneError:  # includes SpawnError and unknown names (KeyError subclass)
            after = _state(store, 0)
            assert after == before, (kind, items)
        else:
            after = _state(store, 0)
            if kind in ("spawn", "wall"):
                assert after["names"] == before["names"] + [r.name for r in done]
                for r in done:
                    assert after["records"][r.name] == r
                    if kind == "wall":  # a wall is a geom of the world body
                        assert store[0].model.geom(f"env_0/{r.name}/geom").bodyid == 0
                    else:
                        assert store[0].model.body(f"env_0/{r.name}") is not None
                if kind == "spawn":
                    for r in done:
                        pos, _ = store[0].get_pose(r.name)
                        assert pos[:2].tolist() == list(r.pose[:2])
            elif kind == "edit":
                assert after["names"] == before["names"]
                for e in done:
                    rec = after["records"][e.name]
                    if e.pose is not None:
                        assert rec.pose == e.pose
                        pos, _ = store[0].get_pose(e.name)
                        assert pos.tolist() == list(e.pose[:3])
                    if e.scale is not None:
                        assert rec.scale == e.scale
                        geom = store[0].model.body(f"env_0/{e.name}").geomadr[0]
                        assert store[0].model.geom_size[geom].tolist() == [
                            max(s / 2, 0.0005) for s in e.scale]
            else:
                assert after["names"] == [n for n in before["names"] if n not in done]
                for n in done:
                    assert n not in after["records"]
        assert _state(store, 1) == other  # the sibling env never changes


VALID = {
    "room_size": st.floats(4.0, 12.0),
    "obstacle_pool": st.integers(1, 8),
    "physics_dt": st.sampled_from([0.002, 0.005, 0.01]),
    "max_episode_steps": st.integers(1, 50),
    "goal_radius": st.floats(0.1, 2.0),
    "min_start_goal_distance": st.floats(0.0, 2.0),
    "start_clearance": st.floats(0.0, 0.3),
    "action": st.sampled_from(["continuous", "discrete"]),
}
INVALID = {
    "room_size": st.one_of(st.floats(-10, 0.99), st.just(float("nan")), st.floats(1000.5, 1e9)),
    "obstacle_pool": st.one_of(st.integers(-5, 0), st.just(1.5), st.just("many")),
    # (0 is the base's own step: valid)
    "physics_dt": st.one_of(st.floats(-1, 0, exclude_max=True), st.just(float("inf"))),
    "max_episode_steps": st.integers(-10, 0),
    "goal_radius": st.floats(-5, 0),
    "start_clearance": st.one_of(st.floats(-5, -0.01), st.floats(10.01, 100)),
    "scan": st.fixed_dictionaries({"num_beams": st.integers(-100, -1)}),
    "action": st.sampled_from(["fast", ""]),
    "nosuchkey": st.just(1),
}


@st.composite
def configs(draw):
    keys = draw(st.lists(st.sampled_from(sorted(VALID)), unique=True, max_size=4))
    out = {k: draw(VALID[k]) for k in keys}
    bad = draw(st.one_of(st.none(), st.sampled_from(sorted(INVALID))))
    if bad is not None:
        out[bad] = draw(INVALID[bad])
    pool = out.get("obstacle_pool", 12)
    curriculum_max = min(pool, 10) if isinstance(pool, int) and pool >= 1 else 1
    out["curriculum"] = {"stages": [[0, curriculum_max]]}
    return out, bad


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(configs())
def test_random_configs_build_a_stepping_env_or_raise_config_error(case):
    from arena_gym.envs.vector_env import ArenaVectorEnv

    overrides, bad = case
    if bad is not None:
        try:
            load_config(**overrides)
        except ConfigError as exc:
            key = str(exc).split(":")[0].split(".")[0].split("[")[0]
            assert key in (bad, "unknown config key 'nosuchkey'"), str(exc)
            return
        raise AssertionError(f"accepted {overrides}")
    env = ArenaVectorEnv(2, **overrides)
    obs, _ = env.reset(seed=0)
    for _ in range(3):
        obs, reward, *_ = env.step(env.action_space.sample())
    assert np.isfinite(reward).all() and all(np.isfinite(v).all() for v in obs.values())
    assert math.isclose(env.cfg.room_size, overrides.get("room_size", 6.0))
    env.close()


PED_NAMES = ["a", "env_0/a", "env_1/b", "env_2/c", "env_0/", "b", "env_x/d", ""]
ped_requests = st.lists(st.tuples(
    st.sampled_from(["spawn", "move", "update", "delete"]),
    st.lists(st.tuples(st.sampled_from(PED_NAMES), st.tuples(NUMBER, NUMBER, NUMBER)),
             min_size=1, max_size=3),
    st.sampled_from([None, 0, 1, 5])), min_size=1, max_size=6)


def _ped_state(store: SceneStore) -> list:
    out = []
    for scene in store.scenes:
        data = store[scene.env_id].data
        out.append((dict(scene.pedestrians.slots), scene.compile_count,
                    data.mocap_pos.tobytes(), data.mocap_quat.tobytes()))
    return out


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ped_requests)
def test_random_pedestrian_requests_apply_whole_or_raise_and_change_nothing(requests):
    from arena_gym.scene import Pedestrian

    store = SceneStore(2)
    store.spawn_pedestrians([Pedestrian("env_0/first", (0.0, 0.0, 0.0))])  # the pools exist
    store.spawn_pedestrians([Pedestrian("env_1/first", (0.0, 0.0, 0.0))])
    compiles = [store[e].compile_count for e in range(2)]
    for kind, items, env_id in requests:
        before = _ped_state(store)
        try:
            peds = [Pedestrian(n, pose=p) for n, p in items]
            if kind == "spawn":
                store.spawn_pedestrians(peds, env_id=env_id)
            elif kind == "move":
                store.move_pedestrians(peds, env_id=env_id)
            elif kind == "update":
                store.update_pedestrians(peds, env_id=env_id)
            else:
                store.delete_pedestrians([p.name for p in peds], env_id=env_id)
        except SceneError:
            assert _ped_state(store) == before  # refused: nothing changed
        for e in range(2):  # every pose in state is finite, every pedestrian has a slot
            assert np.isfinite(store[e].data.mocap_pos).all()
            slots = list(store.scenes[e].pedestrians.slots.values())
            assert len(set(slots)) == len(slots)
    assert [store[e].compile_count for e in range(2)] == compiles  # never a compile
