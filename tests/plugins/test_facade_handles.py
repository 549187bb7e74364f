"""What a Simulation refuses (issue 43): a model holding NaN loads nowhere (and a good model
stays), and a handle taken before a reload, load_from_* or close (its simulator, its runner)
refuses to step or start, naming why; the Simulation itself after close() too."""

from __future__ import annotations

import re

import pytest

from arena_gym import Simulation
from arena_gym.errors import SpawnError
from arena_gym.sim.simulator import SimulatorClosed

GOOD = """<mujoco><worldbody><body name="ball" pos="0 0 1"><freejoint/>
  <geom size="0.1" mass="1"/></body></worldbody></mujoco>"""
NAN = GOOD.replace('pos="0 0 1"', 'pos="nan 0 1"')
CLOSED = ("simulator: closed (by close(), or replaced by a Simulation's reload() or "
          "load_from_*); expected the open one (Simulation.simulator)")


def test_a_model_holding_nan_loads_nowhere_and_the_good_one_stays():
    with pytest.raises(SpawnError, match=re.escape(
            "env 0: model 'model' (MJCF text) rejected: expected finite numbers, got body_pos "
            "of body 'ball' = (nan, 0.0, 1.0)")):
        Simulation(model_path=NAN)
    with Simulation(model_path=GOOD) as sim:
        sim.step(100)
        with pytest.raises(SpawnError, match=re.escape("expected finite numbers, got body_pos "
                                                       "of body 'ball' = (nan, 0.0, 1.0)")):
            sim.load_from_string(NAN)
        sim.step(100)  # the good model, still running: it falls
        data = sim.store[0].data
        assert data.time == pytest.approx(sim.sim_info.clock) and data.time > 0
        assert data.qpos[2] < 1.0


@pytest.mark.parametrize("replace", ["reload", "load_from_string"])
def test_handles_kept_past_a_reload_refuse_to_step_or_start(replace):
    with Simulation(model_path=GOOD) as sim:
        old_sim, old_runner = sim.simulator, sim.runner
        if replace == "reload":
            sim.reload()
        else:
            sim.load_from_string(GOOD)
        with pytest.raises(SimulatorClosed, match=re.escape(CLOSED)):
            old_sim.step(1)
        with pytest.raises(SimulatorClosed, match=re.escape(
                "runner: its simulator is closed (by close(), or replaced by a Simulation's "
                "reload() or load_from_*); expected the open one's runner (Simulation.runner)")):
            old_runner.start()
        sim.step(10)  # the new world steps
        assert sim.simulator is not old_sim and sim.sim_info.clock > 0


def test_a_closed_simulation_refuses_to_step():
    sim = Simulation(model_path=GOOD)
    sim.close()
    with pytest.raises(SimulatorClosed, match=re.escape(CLOSED)):
        sim.step()
    sim.close()  # twice: nothing more
