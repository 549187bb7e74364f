"""The env's compiled step (envs/step.py) is the general path's work in fewer calls: an env
driven the compiled way and one driven the general way (Simulator.step, SensorSuite.update,
NavigationTask.evaluate) give the same episodes, step for step, through collisions,
autoresets, divergences and masked resets; both run the same compiled functions."""

from __future__ import annotations

import numpy as np
import pytest

from arena_gym.envs.vector_env import ArenaVectorEnv
from arena_gym.sensors.fused import FusedTick

N = 4


def _general(env: ArenaVectorEnv) -> ArenaVectorEnv:
    """The env, made to go the general way at every step."""
    env.core._suite.fusable = lambda interval: False
    return env


@pytest.mark.parametrize("overrides", [{}, {"num_pedestrians": 3},
                                       {"paths": {"subgoal": True}}],
                         ids=["default", "pedestrians", "paths"])
def test_the_compiled_step_equals_the_general_path(overrides, monkeypatch):
    ticks = []  # the compiled steps taken (each finishes its sensors' tick)
    finish = FusedTick.finish
    monkeypatch.setattr(FusedTick, "finish", lambda self, touched: ticks.append(1) or finish(
        self, touched))
    overrides = {"max_episode_steps": 40, **overrides}  # timeouts and autoresets within 120
    fused, general = ArenaVectorEnv(N, **overrides), _general(ArenaVectorEnv(N, **overrides))
    rng = np.random.default_rng(0)
    ends = {"goal": 0, "collision": 0, "timeout": 0, "diverged": 0}
    for env in (fused, general):
        env.reset(seed=3)
    for t in range(120):
        if t == 2:  # its kernels compile in the background from the second step: wait
            assert fused.core.compiled_step(timeout=300)
        actions = rng.uniform(fused.action_space.low, fused.action_space.high)
        actions[:, 0] = abs(actions[:, 0])  # forward: into boxes and walls
        if t in (30, 70):  # a blow-up in env 2, at once and some steps into an episode
            for env in (fused, general):
                env.core.sim.state(2, "qvel")[:] = np.nan
        if t == 50:  # a masked reset of two envs
            for env in (fused, general):
                env.reset(options={"reset_mask": np.array([True, False, True, False])})
        a, b = fused.step(actions), general.step(actions)
        for key in a[0]:
            np.testing.assert_array_equal(a[0][key], b[0][key], err_msg=f"{key} at {t}")
        for x, y in zip(a[1:4], b[1:4], strict=True):
            np.testing.assert_array_equal(x, y, err_msg=f"step {t}")
        for name in a[4]["reward_terms"]:
            np.testing.assert_array_equal(a[4]["reward_terms"][name],
                                          b[4]["reward_terms"][name])
        assert sorted(a[4]) == sorted(b[4])
        if "episode_result" in a[4]:
            results = a[4]["episode_result"]["result"][a[4]["_episode_result"]]
            for result in results:
                ends[result] += 1
            np.testing.assert_array_equal(results, b[4]["episode_result"]["result"][
                b[4]["_episode_result"]])
    assert len(ticks) >= 100  # from the third step on: the compiled step, bar a reset's
    assert not general.core.compiled_step(timeout=0)
    assert ends["diverged"] == 2 and ends["collision"] + ends["timeout"] + ends["goal"] > 0
    for env in (fused, general):
        env.close()
