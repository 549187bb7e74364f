"""The numpy env's step evaluation (tasks/step.py) runs the task's shared definitions
compiled: bit for bit what numpy gives running the same definitions, in every case."""

import numpy as np
import pytest

from arena_gym.config import RewardConfig
from arena_gym.kernel_modules import kernels
from arena_gym.registry import REWARD_TERMS
from arena_gym.scene.rotations import quat_yaw, wrap_angle, yaw
from arena_gym.tasks import step
from arena_gym.tasks.arrays import arctan2, full, hypot, where
from arena_gym.tasks.observation import goal_polar, polar
from arena_gym.tasks.rewards import BUILTIN, RewardTerm, StepOutcome, reward_terms, total
from arena_gym.tasks.termination import classify

N = 64


def _case(rng: np.random.Generator, dims: int) -> dict:
    """N envs with every kind of step: reached, collided, diverged, timed out, inactive."""
    quat = rng.normal(size=(N, 4))
    qpos = np.column_stack([rng.uniform(-5, 5, (N, 3)),
                            quat / np.linalg.norm(quat, axis=1)[:, None]])
    pose = np.column_stack([qpos[:, :3], quat_yaw(qpos[:, 3:])])  # what numpy reads from it
    near = np.where(rng.random(N) < 0.25, 0.1, 3.0)[:, None]  # a quarter near their goal
    goal = pose[:, :2] + rng.normal(size=(N, 2)) * near
    high = np.array([1.0, 0.5, 2.0][:dims])
    return dict(qpos=qpos, pose=pose, goal=goal, before=rng.uniform(0, 8, N), goal_radius=0.3,
                collided=rng.random(N) < 0.2, diverged=rng.random(N) < 0.1,
                steps=rng.integers(296, 300, N), max_steps=300, active=rng.random(N) < 0.9,
                twist=rng.uniform(-1, 1, (N, dims)) * high,
                last_action=rng.uniform(-1, 1, (N, dims)) * high, action_high=high,
                nearest=rng.uniform(0, 3, N), radius=0.2)


def _numpy(cfg: RewardConfig, c: dict, after: np.ndarray | None):
    """The same definitions run by numpy, as the env ran them before the kernel (the action
    change's squares summed in column order: numpy's einsum sums 3 columns as 0, 2, 1)."""
    polar_ = goal_polar(c["goal"], c["pose"])
    end = classify(polar_[:, 0], c["goal_radius"], c["collided"], c["diverged"],
                   c["steps"] + c["active"], c["max_steps"], c["active"])
    change = (c["twist"] - c["last_action"]) / c["action_high"]
    change = np.sqrt(sum(change[:, j] * change[:, j] for j in range(change.shape[1])))
    out = StepOutcome(c["before"], polar_[:, 0] if after is None else after, end.reached,
                      end.collided, c["nearest"] - c["radius"], c["twist"][:, 0], change)
    counted = c["active"] & ~end.diverged
    terms = {k: np.where(counted, v, 0.0) for k, v in reward_terms(cfg, out).items()}
    return polar_, end, terms, total(terms), change


@pytest.mark.parametrize("dims", [2, 3])
@pytest.mark.parametrize("paths", [False, True])
def test_compiled_evaluation_equals_numpy_running_the_definitions(dims, paths) -> None:
    rng = np.random.default_rng(dims + 10 * paths)
    cfg = RewardConfig(time=-0.01, safe_distance_m=0.5)  # every term nonzero somewhere
    for _ in range(5):
        c = _case(rng, dims)
        after = rng.uniform(0, 8, N) if paths else None
        if paths:
            c["max_steps"] = rng.integers(285, 300, N)  # per env, as with global paths
        counted = {**c, "steps": c["steps"].copy(), "last_action": c["last_action"].copy(),
                   "pose": np.zeros((N, 4))}
        ev = step.evaluate(cfg, after=after, **counted)
        np.testing.assert_array_equal(counted["pose"], c["pose"])  # read from qpos
        polar_, end, terms, reward, change = _numpy(cfg, c, after)
        # the step counted, in place: active envs' step count + 1 and last action the twist
        np.testing.assert_array_equal(counted["steps"], c["steps"] + c["active"])
        np.testing.assert_array_equal(counted["last_action"], np.where(
            c["active"][:, None], c["twist"], c["last_action"]))
        assert (ev.num_ended, ev.num_collided) == (end.ended.sum(), end.collided.sum())
        np.testing.assert_array_equal(ev.polar, polar_)
        for name in ("reached", "collided", "timed_out", "diverged", "terminated",
                     "truncated", "ended"):
            np.testing.assert_array_equal(getattr(ev.termination, name), getattr(end, name))
        assert list(ev.terms()) == list(terms)
        for name, values in ev.terms().items():
            np.testing.assert_array_equal(values, terms[name], err_msg=name)
        np.testing.assert_array_equal(ev.reward, reward)
        np.testing.assert_array_equal(ev.change, change)
        # the cases occur: goals reached, collisions, time limits, divergence, inactive envs
        assert all(getattr(end, f).any() for f in ("reached", "collided", "timed_out",
                                                   "diverged"))
        assert (ev.builtin[:, ~c["active"]] == 0).all() and (~c["active"]).any()


def test_compiled_pose_equals_quat_yaw() -> None:
    rng = np.random.default_rng(3)
    q = np.column_stack([rng.normal(size=(1000, 3)), rng.normal(size=(1000, 4))])
    q[:, 3:] /= np.linalg.norm(q[:, 3:], axis=1)[:, None]
    pose = np.empty((1000, 4))
    kernels("tasks.step_kernels").pose_into(q, pose)
    np.testing.assert_array_equal(pose[:, :3], q[:, :3])
    np.testing.assert_array_equal(pose[:, 3], quat_yaw(q[:, 3:]))


def test_shared_definitions_compiled_equal_numpy_on_special_values() -> None:
    from arena_gym.jit import numba

    kernels("tasks.array_kernels")  # the compiled implementations registered

    @numba.njit
    def run(a, b, out):
        for i in range(a.size):
            out[0, i] = arctan2(a[i], b[i])
            out[1, i] = hypot(a[i], b[i])
            out[2, i] = where(a[i] < b[i], a[i], b[i])
            out[3, i] = full(a[i], b[i])
            out[4, i] = wrap_angle(a[i])
            out[5, i] = yaw(a[i], b[i], b[i], a[i])
            out[6, i], out[7, i] = polar(a[i], b[i], a[i] - b[i])

    special = np.array([0.0, -0.0, 1.0, -1.0, np.pi, -np.pi, 2 * np.pi, 1e-300, 1e300,
                        np.inf, -np.inf, np.nan])
    a, b = np.repeat(special, len(special)), np.tile(special, len(special))
    out = np.empty((8, a.size))
    run(a, b, out)
    with np.errstate(all="ignore"):  # infinities and NaN are the point here
        want = [np.arctan2(a, b), np.hypot(a, b), np.where(a < b, a, b), np.full(a.shape, b),
                wrap_angle(a), yaw(a, b, b, a), *polar(a, b, a - b)]
    for row, expected in zip(out, want, strict=True):
        np.testing.assert_array_equal(row, expected)  # NaN where numpy's NaN, -0.0 == 0.0
        np.testing.assert_array_equal(np.signbit(row), np.signbit(expected))


def test_the_kernels_terms_are_the_registrys_builtins_in_order() -> None:
    assert kernels("tasks.step_kernels").TERMS == tuple(fn for _, fn in BUILTIN)
    assert [name for name, _ in BUILTIN] == REWARD_TERMS.names()[:len(BUILTIN)]


def test_a_replaced_builtin_term_runs_as_registered() -> None:
    cfg = RewardConfig()
    assert step.remaining_terms(cfg, False) == (True, [])
    original = REWARD_TERMS["time"]
    REWARD_TERMS.register("time", RewardTerm(lambda cfg, out: out.distance_after * 0.0 - 1.0),
                          replace=True)
    try:
        intact, others = step.remaining_terms(cfg, False)
        assert not intact and [name for name, _ in others] == [name for name, _ in BUILTIN]
    finally:
        REWARD_TERMS.register("time", original, replace=True)
    assert step.remaining_terms(cfg, False) == (True, [])


def test_the_env_sums_plugin_terms_and_a_replaced_builtin_with_the_compiled_ones() -> None:
    from arena_gym.envs.vector_env import ArenaVectorEnv

    env = ArenaVectorEnv(2)
    env.reset(seed=0)
    actions = np.array([[0.3, 0.1], [-0.2, 0.4]])
    _, plain, *_, info = env.step(actions)
    assert list(info["reward_terms"]) == [name for name, _ in BUILTIN]
    np.testing.assert_array_equal(plain, total(info["reward_terms"]))
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
    assert (terms["progress"] != 0).all()  # the built-ins still computed
