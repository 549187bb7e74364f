"""The task's compiled step (tasks/step.py) against a numpy reference written here: the
observation, the flags, every built-in term and their sum, the metrics record and the
counts, in every case (reached, collided, diverged, timed out, inactive, path progress),
to a few ulp. The shared definitions compiled against numpy on special values."""

import math

import numpy as np
import pytest

from arena_gym.compiled import kernel
from arena_gym.config import RewardConfig
from arena_gym.geometry.arrays import arctan2, full, hypot, where
from arena_gym.geometry.rotations import quat_mat, wrap_angle, yaw
from arena_gym.registry import REWARD_TERMS
from arena_gym.tasks.observation import clipped_range, polar
from arena_gym.tasks.rewards import BUILTIN, RewardTerm, builtin_terms, total, weights
from arena_gym.tasks.step import FLAGS, StepInputs, StepOutputs, TaskArrays, evaluate, read_poses

N, BEAMS, CAPACITY = 64, 9, 8
ULP = dict(rtol=4 * np.finfo(float).eps, atol=0.0)
ANGLE = dict(rtol=0.0, atol=4 * np.spacing(2 * np.pi))  # a bearing: differences of angles


def _polar_close(actual: np.ndarray, desired: np.ndarray) -> None:
    """(n, 2) distance and bearing: a few ulp of the distance, of a turn for the bearing."""
    np.testing.assert_allclose(actual[:, 0], desired[:, 0], **ULP)
    np.testing.assert_allclose(actual[:, 1], desired[:, 1], **ANGLE)


def _case(rng: np.random.Generator, dims: int, paths: bool) -> tuple:
    """N envs with every kind of step: reached, collided, diverged, timed out, inactive."""
    yaw_ = rng.uniform(-math.pi, math.pi, N)
    pose = np.column_stack([rng.uniform(-5, 5, (N, 3)), yaw_])
    near = np.where(rng.random(N) < 0.25, 0.1, 3.0)[:, None]  # a quarter near their goal
    goal = pose[:, :2] + rng.normal(size=(N, 2)) * near
    high = np.array([1.0, 0.5, 2.0][:dims])
    ranges = rng.uniform(0.1, 3.5, (N, BEAMS)).astype(np.float32)
    ranges[rng.random((N, BEAMS)) < 0.1] = np.inf  # REP 117: nothing within range
    ranges[rng.random((N, BEAMS)) < 0.05] = -np.inf  # closer than the minimum range
    inputs = StepInputs(pose, ranges, rng.random(N) < 0.2, rng.random(N) < 0.1,
                        rng.uniform(-1, 1, (N, dims)) * high, rng.random(N) < 0.9,
                        rng.uniform(0, 8, N), rng.uniform(0, 8, N), rng.normal(size=(N, 2)))
    cfg = RewardConfig(time=-0.01, safe_distance_m=0.5)  # every term nonzero somewhere
    max_steps = rng.integers(285, 300, N) if paths else np.full(N, 300)
    task = TaskArrays(goal, inputs.before.copy(), rng.integers(280, 300, N), max_steps,
                      rng.uniform(-1, 1, (N, dims)) * high, high, weights(cfg), 0.3, 0.2, 3.5,
                      3.5, paths, paths, rng.normal(size=(N, CAPACITY, 3)),
                      np.zeros((N, CAPACITY), bool), rng.integers(0, CAPACITY, N))
    out = StepOutputs(np.zeros((N, 2)), np.zeros((len(FLAGS), N), bool),
                      np.zeros((len(BUILTIN), N)), np.zeros(N), np.zeros(N), np.zeros(N),
                      np.zeros((N, BEAMS), np.float32), np.zeros((N, 2), np.float32),
                      np.zeros((N, dims), np.float32), np.zeros((N, 2), np.float32),
                      np.zeros(len(BUILTIN)))
    return cfg, task, inputs, out


def _reference(cfg: RewardConfig, task: TaskArrays, i: StepInputs) -> dict:
    """The step written out in numpy, from the task's description (not its code)."""
    metres = np.clip(i.ranges.astype(float), 0.0, task.max_range)
    dx, dy = task.goal[:, 0] - i.pose[:, 0], task.goal[:, 1] - i.pose[:, 1]
    distance = np.hypot(dx, dy)
    bearing = (np.arctan2(dy, dx) - i.pose[:, 3] + np.pi) % (2 * np.pi) - np.pi
    diverged = i.diverged & i.active
    live = i.active & ~diverged
    reached = (distance < task.goal_radius) & live
    collided = i.collided & live & ~reached
    timed_out = ((task.steps + i.active) >= task.max_steps) & live & ~reached & ~i.collided
    change = np.sqrt((((i.twist - task.last_action) / task.action_high) ** 2).sum(axis=1))
    clearance = metres.min(axis=1) - task.radius
    after = i.after if task.path_progress else distance
    gained = i.before - after
    counted = i.active & ~diverged
    terms = {
        "goal": np.where(reached, cfg.goal, 0.0),
        "collision": np.where(collided, cfg.collision, 0.0),
        "progress": np.where(reached | collided, 0.0, np.where(
            gained >= 0, cfg.progress * gained, cfg.progress_away * gained)),
        "safe_distance": np.where(clearance < cfg.safe_distance_m, cfg.safe_distance, 0.0),
        "reverse": np.where(i.twist[:, 0] < 0, cfg.reverse, 0.0),
        "abrupt_velocity": cfg.abrupt_velocity * change,
        "time": np.full(N, cfg.time)}
    terms = {k: np.where(counted, v, 0.0) for k, v in terms.items()}
    sub = i.subgoal - i.pose[:, :2]
    return dict(scan=metres / task.scan_scale, polar=np.column_stack([distance, bearing]),
                subgoal=np.column_stack([np.hypot(*sub.T), (np.arctan2(sub[:, 1], sub[:, 0])
                                                            - i.pose[:, 3] + np.pi)
                                         % (2 * np.pi) - np.pi]),
                reached=reached, collided=collided, timed_out=timed_out, diverged=diverged,
                terms=terms, reward=sum(terms.values()), change=change, clearance=clearance)


@pytest.mark.parametrize("dims", [2, 3])
@pytest.mark.parametrize("paths", [False, True])
def test_the_compiled_step_is_the_numpy_reference(dims, paths) -> None:
    rng = np.random.default_rng(dims + 10 * paths)
    for _ in range(5):
        cfg, task, inputs, out = _case(rng, dims, paths)
        before = {k: v.copy() for k, v in task._asdict().items() if isinstance(v, np.ndarray)}
        want = _reference(cfg, task, inputs)
        ended, collided, diverged = evaluate(task, inputs, out)
        np.testing.assert_allclose(out.scan, want["scan"].astype(np.float32), **ULP)
        _polar_close(out.polar, want["polar"])
        np.testing.assert_array_equal(out.goal, out.polar.astype(np.float32))
        if paths:
            _polar_close(out.subgoal.astype(float), want["subgoal"].astype(np.float32))
        flags = dict(zip(FLAGS, out.flags, strict=True))
        for name in ("reached", "collided", "timed_out", "diverged"):
            np.testing.assert_array_equal(flags[name], want[name], err_msg=name)
        np.testing.assert_array_equal(flags["terminated"], want["reached"] | want["collided"])
        np.testing.assert_array_equal(flags["truncated"], want["timed_out"] | want["diverged"])
        assert (ended, collided, diverged) == (flags["ended"].sum(), want["collided"].sum(),
                                               want["diverged"].sum())
        for k, (name, _) in enumerate(BUILTIN):
            np.testing.assert_allclose(out.terms[k], want["terms"][name], **ULP, err_msg=name)
        np.testing.assert_allclose(out.reward, want["reward"], rtol=1e-14, atol=1e-15)
        np.testing.assert_allclose(out.change, want["change"], **ULP)
        np.testing.assert_allclose(out.clearance, want["clearance"], **ULP)
        # the step counted, in place: active envs' step count + 1, last action the twist,
        # the metrics record a slot further; every env's distance the goal's now
        act = inputs.active
        np.testing.assert_array_equal(task.steps, before["steps"] + act)
        np.testing.assert_array_equal(task.last_action, np.where(
            act[:, None], inputs.twist, before["last_action"]))
        np.testing.assert_array_equal(out.last_action, task.last_action.astype(np.float32))
        slot = np.minimum(before["recorded"] + 1, CAPACITY - 1)
        np.testing.assert_array_equal(task.recorded, np.where(act, slot, before["recorded"]))
        e = np.flatnonzero(act & ~want["diverged"])
        np.testing.assert_array_equal(task.trajectory[e, slot[e]], inputs.pose[e][:, [0, 1, 3]])
        np.testing.assert_allclose(task.distance, want["polar"][:, 0], **ULP)
        # the cases occur: goals reached, collisions, time limits, divergence, inactive envs
        assert all(want[f].any() for f in ("reached", "collided", "timed_out", "diverged"))
        assert (out.terms[:, ~act] == 0).all() and (~act).any()


def test_poses_are_the_free_joints_position_and_yaw() -> None:
    rng = np.random.default_rng(3)
    q = np.column_stack([rng.normal(size=(100, 3)), rng.normal(size=(100, 4))])
    q[:, 3:] /= np.linalg.norm(q[:, 3:], axis=1)[:, None]
    qpos = np.column_stack([rng.normal(size=(100, 2)), q])  # the joint at address 2
    pose = np.empty((100, 4))
    read_poses(qpos, np.arange(100), 2, 7, np.nan, pose)
    np.testing.assert_array_equal(pose[:, :3], q[:, :3])
    w, x, y, z = q[:, 3:].T
    np.testing.assert_allclose(pose[:, 3], np.arctan2(2 * (w * z + x * y),
                                                      1 - 2 * (y * y + z * z)), **ANGLE)


def test_poses_of_a_planar_base_are_its_joints_at_its_height() -> None:
    qpos = np.random.default_rng(4).normal(size=(50, 6))  # x, y, yaw at address 1
    pose = np.empty((50, 4))
    read_poses(qpos, np.arange(50)[::-1].copy(), 1, 3, 0.07, pose)
    want = np.column_stack([qpos[::-1, 1:3], np.full(50, 0.07), qpos[::-1, 3]])
    np.testing.assert_array_equal(pose, want)


@kernel
def _run_shared(a, b, out):  # pragma: no cover - compiled
    for i in range(a.size):
        out[0, i] = arctan2(a[i], b[i])
        out[1, i] = hypot(a[i], b[i])
        out[2, i] = where(a[i] < b[i], a[i], b[i])
        out[3, i] = full(a[i], b[i])
        out[4, i] = wrap_angle(a[i])
        out[5, i] = yaw(a[i], b[i], b[i], a[i])
        out[6, i], out[7, i] = polar(a[i], b[i], a[i] - b[i])
        out[8, i] = clipped_range(a[i], 3.5)
        out[9, i] = quat_mat(a[i], b[i], a[i], b[i])[1]


def test_shared_definitions_compiled_are_numpy_on_special_values() -> None:
    special = np.array([0.0, -0.0, 1.0, -1.0, np.pi, -np.pi, 2 * np.pi, 1e-300, 1e300,
                        np.inf, -np.inf, np.nan])
    a, b = np.repeat(special, len(special)), np.tile(special, len(special))
    out = np.empty((10, a.size))
    _run_shared(a, b, out)
    with np.errstate(all="ignore"):  # infinities and NaN are the point here
        want = [np.arctan2(a, b), np.hypot(a, b), np.where(a < b, a, b), np.full(a.shape, b),
                wrap_angle(a), yaw(a, b, b, a), *polar(a, b, a - b), clipped_range(a, 3.5),
                quat_mat(a, b, a, b)[1]]
    for k, (row, expected) in enumerate(zip(out, want, strict=True)):
        tolerance = ANGLE if k in (0, 4, 5, 7) else ULP  # angles: a few ulp of a turn
        np.testing.assert_allclose(row, expected, **tolerance)  # NaN where numpy's NaN


def test_the_compiled_terms_are_the_registrys_builtins_in_order() -> None:
    assert builtin_terms.functions == tuple(fn for _, fn in BUILTIN)
    assert [name for name, _ in BUILTIN] == REWARD_TERMS.names()[:len(BUILTIN)]


def test_a_replaced_builtin_changes_that_term_only_and_plugin_terms_are_summed() -> None:
    from arena_gym.envs.vector_env import ArenaVectorEnv

    env = ArenaVectorEnv(2)
    env.reset(seed=0)
    actions = np.array([[0.3, 0.1], [-0.2, 0.4]])
    _, plain, *_, info = env.step(actions)
    assert list(info["reward_terms"]) == [name for name, _ in BUILTIN]
    np.testing.assert_allclose(plain, total(info["reward_terms"]), rtol=0, atol=1e-15)
    original = REWARD_TERMS["time"]
    REWARD_TERMS.register("bonus", RewardTerm(lambda cfg, out: out.distance_after * 0.0 + 0.5,
                                              weight=1.0))
    REWARD_TERMS.register("time", RewardTerm(lambda cfg, out: out.distance_after * 0.0 - 2.0),
                          replace=True)
    try:
        _, reward, *_, info = env.step(actions)
    finally:
        REWARD_TERMS.register("time", original, replace=True)
        REWARD_TERMS.unregister("bonus")
        env.close()
    terms = info["reward_terms"]
    assert list(terms) == [name for name, _ in BUILTIN] + ["bonus"]
    np.testing.assert_array_equal(terms["time"], [-2.0, -2.0])
    np.testing.assert_array_equal(terms["bonus"], [0.5, 0.5])
    np.testing.assert_array_equal(reward, total(terms))
    assert (terms["progress"] != 0).all()  # the other built-ins still computed
