"""Divergence is found from the state after each step call, whatever MuJoCo's flags say; a
control MuJoCo would zero as huge is reported the same way. The other envs step on."""

from __future__ import annotations

import re

import numpy as np
import pytest

from arena_gym.scene import SceneStore
from arena_gym.sim import Simulator
from tests.conftest import spawn


@pytest.fixture(params=[3, 1], ids=["batch", "pool"])
def sim(assets, request):
    """Three envs in one Batch group, or (one env) on the pool path."""
    store = SceneStore(request.param)
    for env in range(request.param):
        spawn(store, env, assets, "burger")
    sim = Simulator(store)
    for env in range(request.param):
        sim.set_cmd_vel(env, "burger", 0.2, 0.0)
    sim.step(20)
    yield sim
    sim.close()


def _qpos(sim):
    return np.stack([sim.state(e, "qpos").copy() for e in range(sim.store.num_envs)])


@pytest.mark.parametrize("autoreset", [True, False], ids=["autoreset", "no-autoreset"])
def test_nan_velocity_is_reported_and_reset(sim, autoreset):
    sim.apply_runtime_options({"autoreset_disabled": not autoreset})
    sim.step(10)
    bad = sim.store.num_envs - 1
    sim.state(bad, "qvel")[:] = np.nan
    sim.step(10)
    assert sim.diverged == [bad]
    assert np.isfinite(_qpos(sim)).all()
    dt = sim.timestep
    assert sim.store[bad].data.time <= 10 * dt + 1e-12  # restarted within this call (was 40 dt)
    if sim.store.num_envs > 1:
        assert sim.store[0].data.time == pytest.approx(40 * dt, abs=1e-12)
    sim.step(10)
    assert sim.diverged == []


def test_a_huge_control_is_reported_like_a_divergence(sim):
    sim.apply_runtime_options({"autoreset_disabled": True})
    bad = 0
    others = [e for e in range(sim.store.num_envs) if e != bad]
    before = {e: sim.state(e, "qpos").copy() for e in others}
    sim.set_cmd_vel(bad, "burger", 1e12, 0.0)  # MuJoCo would zero it with only a warning
    sim.step(10)
    assert sim.diverged == [bad]
    for e in others:  # the others stepped on: the robots drove forward
        assert sim.state(e, "qpos")[0] > before[e][0]


def test_runtime_options_name_the_field(sim):
    for patch, message in [({"o_margin": float("nan")},
                            "o_margin: expected a finite number, got nan"),
                           ({"iterations": float("inf")},
                            "iterations: expected an integer in [0, 100000], got inf"),
                           ({"iterations": 10**9},
                            "iterations: expected an integer in [0, 100000], got 1000000000"),
                           ({"timestep": "fast"}, "timestep: expected a number, got 'fast'"),
                           ({"o_margin": 0.01, "tolerance": float("-inf")},
                            "tolerance: expected a number >= 0, got -inf")]:
        before = [s.spec.to_xml() for s in sim.store.scenes]
        with pytest.raises(ValueError, match=re.escape(message)):
            sim.apply_runtime_options(patch)
        assert [s.spec.to_xml() for s in sim.store.scenes] == before


def test_nan_written_at_time_zero_is_reported_with_mujoco_autoreset(sim):
    """MuJoCo's auto-reset would restart the env and step on, leaving its clock where it
    would have been; the state written before the step still counts."""
    bad = sim.store.num_envs - 1
    sim.reset_envs([bad])
    sim.state(bad, "qvel")[:] = np.nan
    sim.step(10)
    assert sim.diverged == [bad]
