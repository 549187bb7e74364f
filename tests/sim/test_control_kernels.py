"""The controller's compiled common case (arena_gym.sim.control_kernels) is the numpy it
replaces, bit for bit: `write` is `twists @ matrix.T` scattered into ctrl's columns (and
the twists into a planar base's), `stage` the checked copy into the staged twists."""

from __future__ import annotations

import numpy as np

from arena_gym.scene import SceneStore
from arena_gym.sim import Simulator, control_kernels
from tests.conftest import spawn


def _twists(rng: np.random.Generator, n: int) -> np.ndarray:
    twists = rng.normal(size=(n, 3)) * 10.0 ** rng.uniform(-3, 3, (n, 3))
    twists[0] = (0.0, -0.0, 1.0)  # signed zeros as numpy's product sums them
    return twists


def test_write_is_numpys_product_and_scatter():
    rng = np.random.default_rng(0)
    for n in (2, 3, 16):
        for nwheel in (2, 4):
            for bases in (np.zeros(0, int), np.array([7, 8, 9])):
                matrix = rng.normal(size=(nwheel, 3))
                matrix[0, 1] = 0.0  # a differential drive's row has no vy term
                twists = _twists(rng, n)
                actuators = rng.permutation(7)[:nwheel]
                # the batch's ctrl is a view whose rows are apart in memory
                held = rng.normal(size=(n, 2, 10))
                ctrl, expected = held[:, 0], held[:, 0].copy()
                expected[:, actuators] = twists @ matrix.T
                expected[:, bases] = twists[:, : len(bases)]
                control_kernels.write(twists, matrix, actuators, bases, ctrl)
                assert ctrl.tobytes() == expected.tobytes()


def test_the_simulator_writes_numpys_controls(assets):
    store = SceneStore(3)
    for env in range(3):
        spawn(store, env, assets, "burger")
    sim = Simulator(store)
    twists = np.array([[0.2, 0.5], [-0.1, -1.0], [1e-3, 3.0]])
    sim.controller.set_twists("burger", twists)
    sim.step(1)
    sim.controller.set_twists("burger", twists[::-1])  # staged over staged: the kernel's
    sim.step(1)
    drive = sim.controller.drive(0, "burger")
    full = np.column_stack([twists[::-1, 0], np.zeros(3), twists[::-1, 1]])
    ctrl = np.array([sim.ctrl(e)[drive.actuator_ids] for e in range(3)])
    assert ctrl.tobytes() == (full @ drive.matrix.T).tobytes()


def test_stage_copies_good_twists_only():
    rng = np.random.default_rng(1)
    for k in (2, 3):
        twists = _twists(rng, 5)
        if k == 3:
            twists[:, 1] = 0.0
        source = twists if k == 3 else twists[:, [0, 2]]
        values, dirty = np.full((5, 3), 9.0), np.zeros(5, bool)
        assert control_kernels.stage(source, values, dirty) == control_kernels.STAGED
        assert values.tobytes() == np.column_stack(
            [twists[:, 0], np.zeros(5), twists[:, 2]]).tobytes()
        assert dirty.all()
    for bad, outcome in ((np.nan, control_kernels.NOT_FINITE),
                         (np.inf, control_kernels.NOT_FINITE),
                         (0.5, control_kernels.SIDEWAYS)):
        twists = np.zeros((4, 3))
        twists[2, 1] = bad
        values, dirty = np.full((4, 3), 9.0), np.zeros(4, bool)
        assert control_kernels.stage(twists, values, dirty) == outcome
        assert (values == 9.0).all() and not dirty.any()  # nothing staged
    twists = np.zeros((4, 3))
    twists[1, 1], twists[3, 2] = 0.5, np.nan  # a bad value is named before a sideways one
    assert control_kernels.stage(twists, np.zeros((4, 3)), np.zeros(4, bool)) == (
        control_kernels.NOT_FINITE)
