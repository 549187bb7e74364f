"""The usual tick of the navigation env's suite (sensors/steady.py) shows what the suite's
general path shows, bit for bit, tick by tick, collisions and resets included; and hands
the tick to the general path where its conditions stop holding."""

from __future__ import annotations

import numpy as np

from arena_gym.config import EnvConfig
from arena_gym.envs.core import NavigationCore
from arena_gym.sensors import steady


def _readings(core: NavigationCore) -> dict[str, np.ndarray]:
    suite = core.sensor_suite
    out = {}
    for key in ("scan", "collision"):
        reading = suite[key]
        for name, values in reading.data.items():
            out[f"{key}.{name}"] = values.copy()
        out[f"{key}.stamp"], out[f"{key}.count"] = reading.stamp.copy(), reading.count.copy()
    return out


def test_the_usual_tick_shows_what_the_general_path_shows(monkeypatch):
    ticks = {"taken": 0}
    run = steady.SteadyTick.run

    def counted(self, frames, clock):
        taken = run(self, frames, clock)
        ticks["taken"] += taken
        return taken

    monkeypatch.setattr(steady.SteadyTick, "run", counted)
    fast, general = NavigationCore(4, EnvConfig()), NavigationCore(4, EnvConfig())
    general.sensor_suite.subscribe("scan", lambda reading, envs: None)  # the general path
    rng = np.random.default_rng(3)
    for core in (fast, general):
        for env in range(4):
            core.seed(env, env)
        core.reset_envs(list(range(4)))
    collided = 0
    for step in range(300):
        actions = rng.uniform([0.15, -1.0], [0.22, 1.0], (4, 2))  # ahead: into things
        results = [core.step(actions, np.ones(4, bool)) for core in (fast, general)]
        a, b = _readings(fast), _readings(general)
        assert a.keys() == b.keys()
        for key in a:
            np.testing.assert_array_equal(a[key], b[key], err_msg=f"{key} at step {step}")
        np.testing.assert_array_equal(results[0].obs["scan"], results[1].obs["scan"])
        ended = np.flatnonzero(results[0].terminated | results[0].truncated).tolist()
        collided += int(results[0].termination.collided.sum())
        for core in (fast, general):
            if ended:
                core.reset_envs(ended)
    assert collided >= 3  # the collision rule was exercised, its contact lists too
    # every tick of `fast` went the usual way but the first: the batch's outputs (contact
    # history) fill from the first step after they are bound, snapshots read that one
    assert ticks["taken"] == 299
    assert general.sensor_suite._tick is None
    fast.close()
    general.close()
