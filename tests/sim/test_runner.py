"""The Runner beside the lockstep Simulator: two small classes, snapshots of the ticks a step
ends on, and a closed Runner that publishes no more."""

from __future__ import annotations

import re

import pytest

from arena_gym.sim import Runner, Simulator
from arena_gym.worlds import builtin_robot_urdf
from tests.sim.driving import driving

MAX_PUBLIC = 25  # methods and properties: a class past this is two classes


def _public(cls: type) -> list[str]:
    return sorted(name for name, value in vars(cls).items()
                  if not name.startswith("_") and (callable(value) or isinstance(value, property)))


@pytest.mark.parametrize("cls", [Simulator, Runner])
def test_the_simulator_and_its_runner_stay_small(cls):
    assert len(_public(cls)) <= MAX_PUBLIC, _public(cls)


def test_a_runner_publishes_the_ticks_of_one_step_call():
    """The snapshots are an observer: `step(n)` stays one call per group, and the tick it
    ends on is published with the state it left."""
    sim = driving(2)[1]
    sim.step(10)
    runner = Runner(sim)
    snapshots = runner.snapshots
    sim.step(10)
    with snapshots.take() as snap:
        assert (snap.step_count, snap.seq) == (20, 2)
        for env in range(2):
            assert snap.field("qpos", env).tobytes() == sim.state(env, "qpos").tobytes()
    assert sim.clock == pytest.approx(0.04)


def test_a_closed_runner_publishes_no_more_and_its_simulator_steps_on():
    sim = driving(1)[1]
    runner = Runner(sim)
    snapshots = runner.snapshots
    sim.step(20)
    assert snapshots.published == 2
    runner.close()
    runner.close()  # again: nothing happens
    assert sim.hooks.observers == []
    sim.step(20)
    sim.reset_envs([0])
    assert snapshots.published == 2 and sim.step_count == 40
    with snapshots.take() as snap:
        assert snap.step_count == 20


def test_a_restored_state_must_fit_the_model_and_runs_the_reset_hooks():
    sim = driving(1)[1]
    sim.step(30)
    saved = sim.saved_state(0)
    qpos = sim.state(0, "qpos").copy()
    seen = []
    sim.hooks.reset.append(lambda s, envs, fill: seen.append((list(envs), s.step_count, fill)))
    sim.step(30)
    sim.restore({0: saved})
    assert sim.state(0, "qpos").tobytes() == qpos.tobytes()
    assert seen == [([0], 60, False)]
    sim.store[0].spawn_urdf("other", builtin_robot_urdf(), pose=(1.0, 0.0, 0.0))
    sim.step(10)
    with pytest.raises(ValueError, match=re.escape(
            "saved state of env 0: expected the model it was captured with (compile 2), got "
            "compile 3 (something was spawned or deleted since); capture it again")):
        sim.restore({0: saved})
    assert seen == [([0], 60, False)]
