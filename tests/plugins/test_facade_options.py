"""The façade's runtime options cover every mjOption field (issue 34 item 4): a patch shows
in each env's model.opt exactly as MuJoCo's own XML parser reads the same values, arrays
come as sequences or "a b c" strings, the snapshot reads back as a patch, and bad input of
any field is refused whole with one line naming the field."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import mujoco
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena_gym import Simulation
from arena_gym.scene.requests import Prim
from arena_gym.sim.options import FIELDS
from arena_gym.simulation import RuntimeOptions

MJCF = Path(__file__).resolve().parents[1] / "scene" / "mjcf"

# one value per field, none of them MuJoCo's default, given as the XML attribute would be
PATCH = {
    "timestep": 0.003, "impratio": 2.0, "tolerance": 1e-7, "ls_tolerance": 0.02,
    "noslip_tolerance": 1e-5, "ccd_tolerance": 1e-5, "sleep_tolerance": 0.002,
    "gravity": "0 0 -5", "wind": "1 0 0", "magnetic": "0 0.3 -0.4",
    "density": 1.2, "viscosity": 0.001, "o_margin": 0.001, "o_solref": "0.03 0.8",
    "o_solimp": "0.8 0.9 0.002 0.4 3", "o_friction": "0.7 0.7 0.01 0.001 0.001",
    "integrator": "implicitfast", "cone": "elliptic", "jacobian": "sparse", "solver": "cg",
    "iterations": 20, "ls_iterations": 10, "noslip_iterations": 3, "ccd_iterations": 20,
    "sdf_initpoints": 20, "sdf_iterations": 5,
}
XML = ('<mujoco><option timestep="0.003" impratio="2" tolerance="1e-7" ls_tolerance="0.02" '
       'noslip_tolerance="1e-5" ccd_tolerance="1e-5" sleep_tolerance="0.002" '
       'gravity="0 0 -5" wind="1 0 0" magnetic="0 0.3 -0.4" density="1.2" '
       'viscosity="0.001" o_margin="0.001" o_solref="0.03 0.8" '
       'o_solimp="0.8 0.9 0.002 0.4 3" o_friction="0.7 0.7 0.01 0.001 0.001" '
       'integrator="implicitfast" cone="elliptic" jacobian="sparse" solver="CG" '
       'iterations="20" ls_iterations="10" noslip_iterations="3" ccd_iterations="20" '
       'sdf_initpoints="20" sdf_iterations="5" actuatorgroupdisable="1 3">'
       '<flag contact="disable" warmstart="disable" override="enable" energy="enable"/>'
       '</option></mujoco>')


@pytest.fixture
def sim():
    with Simulation(model_path=MJCF / "arm.xml", num_envs=2) as sim:
        yield sim


def _opt(model: mujoco.MjModel) -> dict:
    return {name: np.array(getattr(model.opt, name)).tolist() for name in FIELDS}


def test_every_option_field_of_the_bindings_is_a_patch_field_and_a_snapshot_field():
    bindings = {n for n in dir(mujoco.MjOption()) if not n.startswith("_")}
    assert set(FIELDS) == bindings  # a new MuJoCo field shows up here
    assert {f.name for f in dataclasses.fields(RuntimeOptions)} == set(FIELDS) | {"epoch"}


def test_a_full_patch_sets_every_env_as_mujocos_parser_sets_the_same_values(sim):
    options = sim.apply_runtime_options({
        **PATCH, "disableactuator": "1 3", "disableflags": "contact warmstart",
        "enableflags": ["override", "energy"]})
    mujocos = _opt(mujoco.MjModel.from_xml_string(XML))
    for scene in sim.store.scenes:
        assert _opt(scene.model) == mujocos
    assert options.epoch == 1
    assert options.o_solimp == (0.8, 0.9, 0.002, 0.4, 3.0)
    assert (options.integrator, options.jacobian, options.solver) == ("implicitfast", "sparse",
                                                                     "cg")
    assert options.disableflags == ("contact", "warmstart")
    assert options.enableflags == ("override", "energy")
    assert options.disableactuator == (1, 3)
    # held in the spec too: a recompile (a spawn) keeps them
    sim.store[1].spawn_prims([Prim("late", pose=(1.0, 1.0, 0.2, 0.0))])
    assert _opt(sim.store[1].model) == mujocos


def test_the_snapshot_reads_back_as_a_patch_that_changes_nothing(sim):
    first = sim.apply_runtime_options({**PATCH, "disableflags": ["gravity"]})
    fields = {k: v for k, v in dataclasses.asdict(first).items() if k != "epoch"}
    again = sim.apply_runtime_options(fields)
    assert dataclasses.replace(again, epoch=first.epoch) == first and again.epoch == 2
    # a bit mask is a flag set too
    mask = int(mujoco.mjtDisableBit.mjDSBL_GRAVITY | mujoco.mjtDisableBit.mjDSBL_CONTACT)
    assert sim.apply_runtime_options({"disableflags": mask}).disableflags == ("contact",
                                                                             "gravity")


def _alone(steps: int, disabled: int) -> float:
    """The elbow after `steps` steps of the arm alone in MuJoCo, zero gravity, elbow ctrl 1,
    with actuator group mask `disabled`."""
    model = mujoco.MjModel.from_xml_path(str(MJCF / "arm.xml"))
    model.opt.gravity[:] = 0.0
    model.opt.disableactuator = disabled
    data = mujoco.MjData(model)
    data.ctrl[model.actuator("elbow").id] = 1.0
    for _ in range(steps):
        mujoco.mj_step(model, data)
    return float(data.sensor("elbow_pos").data[0])


def test_disabling_an_actuator_group_stops_its_actuators_as_in_mujoco(sim):
    # the arm's actuators are in group 0: disabled, the elbow servo pushes no more
    sim.apply_runtime_options({"disableactuator": [0], "gravity": "0 0 0"})
    for env in range(2):
        sim.simulator.set_ctrl(env, "model/elbow", 1.0)
    sim.step(50)
    elbow = sim.sensor_suite["model/mujoco"]["elbow_pos"][:, 0]
    assert elbow == pytest.approx([_alone(50, 1)] * 2, abs=1e-9)
    assert abs(elbow[0]) < 1e-3
    sim.apply_runtime_options({"disableactuator": ""})
    sim.step(50)
    assert (sim.sensor_suite["model/mujoco"]["elbow_pos"][:, 0] > 0.1).all()


@pytest.mark.parametrize("patch, message", [
    ({"o_solref": "0.02"}, "o_solref: expected 2 finite numbers (timeconst dampratio, or "
                           "-stiffness -damping), got '0.02'"),
    ({"o_solimp": [0.9, 0.95, 0.001, 0.5, 0.5]},
     "o_solimp: expected dmin, dmax, midpoint in [0, 1], width >= 0 and power >= 1, got "
     "[0.9, 0.95, 0.001, 0.5, 0.5]"),
    ({"o_friction": "1 1 0.005 0.0001 -1"}, "o_friction: expected 5 numbers >= 0, got "
                                            "'1 1 0.005 0.0001 -1'"),
    ({"wind": "0 0 x"}, "wind: expected 3 finite numbers, got '0 0 x'"),
    ({"magnetic": [0, True, 0]}, "magnetic: expected 3 finite numbers, got [0, True, 0]"),
    ({"jacobian": "fast"}, "jacobian: expected one of ['auto', 'dense', 'sparse'], got 'fast'"),
    ({"disableflags": ["contat"]}, "disableflags: expected flag names of ['actuation', "),
    ({"enableflags": 1 << 20}, "enableflags: expected flag names of ['diagexact', "),
    ({"disableactuator": "0 31"}, "disableactuator: expected actuator group numbers in "
                                  "[0, 30], got '0 31'"),
    ({"ccd_tolerance": -1.0}, "ccd_tolerance: expected a number >= 0, got -1.0"),
    ({"sdf_iterations": 2.5}, "sdf_iterations: expected an integer in [0, 100000], got 2.5"),
])
def test_a_bad_field_is_named_and_nothing_of_the_patch_applies(sim, patch, message):
    before, opt = sim.runtime_options, _opt(sim.store[0].model)
    with pytest.raises(ValueError, match=re.escape(message)):
        sim.apply_runtime_options({"timestep": 0.001, **patch})  # a good field first
    assert sim.runtime_options == before and _opt(sim.store[0].model) == opt


ARRAYS = {"gravity": 3, "wind": 3, "magnetic": 3, "o_solref": 2, "o_solimp": 5,
          "o_friction": 5}


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(field=st.sampled_from(sorted(ARRAYS)),
       value=st.one_of(
           st.lists(st.floats(allow_nan=True, allow_infinity=True), max_size=7),
           st.text(max_size=20), st.none(), st.integers(), st.booleans(),
           st.lists(st.text(max_size=3), min_size=1, max_size=6)))
def test_random_array_values_apply_or_are_refused_whole(sim, field, value):
    before, opt = sim.runtime_options, _opt(sim.store[0].model)
    try:
        after = sim.apply_runtime_options({field: value})
    except ValueError as exc:
        assert str(exc).startswith(f"{field}: expected ") and "\n" not in str(exc)
        assert sim.runtime_options == before and _opt(sim.store[0].model) == opt
        return
    # accepted: exactly the right count of finite numbers, and that is what MuJoCo holds
    got = np.asarray(value.split() if isinstance(value, str) else value, dtype=float)
    assert got.shape == (ARRAYS[field],) and np.isfinite(got).all()
    assert np.array_equal(getattr(sim.store[0].model.opt, field), got)
    assert getattr(after, field) == tuple(got.tolist())
    sim.apply_runtime_options({field: getattr(before, field)})  # back, for the next example
