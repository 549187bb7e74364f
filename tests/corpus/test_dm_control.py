"""The model as written (issue 42): every dm_control suite model (19 MJCF files nobody here
wrote) through `Simulation(model_path=..., num_envs=2)` is the model MuJoCo compiles from
the file, steps as MuJoCo steps it alone bit for bit, reads its sensors as MuJoCo's
`sensordata` after any number of steps, and its cameras see what `mujoco.Renderer` sees.
The table of all rows: `python benchmarks/corpus.py` (benchmarks/results/corpus_dm_control.txt)."""

from __future__ import annotations

import zipfile
from pathlib import Path

import mujoco
import numpy as np
import pytest

from tests.corpus.dm_control_suite import (
    MODELS,
    STEPS,
    alone,
    compare_cameras,
    compare_physics,
    load,
)

# arrays of a compiled model that hold names (they carry the env's prefix) or where to
# find them; every other array must be MuJoCo's own
_NAMING = ("name_", "names", "paths")


def _arrays(model: mujoco.MjModel) -> dict[str, np.ndarray]:
    return {name: value for name in dir(model) if not name.startswith(("_", *_NAMING))
            and isinstance(value := getattr(model, name), np.ndarray)}


def test_the_corpus_is_every_model_file_of_the_wheels_suite(dm_control_suite: Path):
    shipped = sorted(p.stem for p in dm_control_suite.glob("*.xml"))
    assert shipped == sorted(MODELS)


@pytest.mark.parametrize("name", MODELS)
def test_a_loaded_model_compiles_to_the_model_mujoco_compiles_from_the_file(
        dm_control_suite: Path, name: str):
    path = dm_control_suite / f"{name}.xml"
    theirs = alone(path)
    with load(path) as sim:
        ours = sim.store[1].compiled
        mine, reference = _arrays(ours), _arrays(theirs)
        assert mine.keys() == reference.keys()
        # value for value: a camera's quaternion may hold -0.0 where MuJoCo's holds 0.0
        differ = [k for k in reference if not np.array_equal(
            mine[k], reference[k], equal_nan=np.issubdtype(reference[k].dtype, np.floating))]
        assert differ == []  # nothing added (no plane, no light), nothing dropped
        # the model's global settings, which attaching to another world would drop
        assert (ours.opt.timestep, ours.vis.map.znear, ours.stat.extent) == (
            theirs.opt.timestep, theirs.vis.map.znear, theirs.stat.extent)
        assert ours.body_mass.sum() == theirs.body_mass.sum()  # settotalmass (cheetah: 14)


@pytest.mark.parametrize("name", MODELS)
def test_every_env_steps_and_reads_as_mujoco_runs_the_file_alone(dm_control_suite: Path,
                                                                 name: str):
    row = compare_physics(dm_control_suite / f"{name}.xml")
    assert row.steps == STEPS
    assert row.mismatches == ()
    assert row.max_difference == 0.0


@pytest.mark.parametrize("name", MODELS)
def test_every_camera_sees_what_mujocos_renderer_sees(dm_control_suite: Path, name: str):
    shots = compare_cameras(dm_control_suite / f"{name}.xml")
    assert len(shots) == 2 * alone(dm_control_suite / f"{name}.xml").ncam
    low = [s for s in shots if s.min_iou < 0.99 or s.depth_within < 0.99]
    assert low == []


def test_the_cameras_compared_are_of_every_mode_mujoco_has(dm_control_suite: Path):
    models = [alone(dm_control_suite / f"{name}.xml") for name in MODELS]
    modes = {int(mode) for model in models for mode in model.cam_mode}
    # fixed, track, trackcom, targetbody, targetbodycom
    assert modes == {int(m) for m in mujoco.mjtCamLight.__members__.values()}


def test_the_floor_option_adds_the_navigation_ground_and_sun_and_nothing_else(
        dm_control_suite: Path):
    from arena_gym import Simulation

    path = dm_control_suite / "pendulum.xml"
    theirs = alone(path)
    with Simulation(model_path=path, floor=True) as sim:
        ours = sim.store[0].compiled
        assert (ours.ngeom, ours.nbody, ours.nlight) == (
            theirs.ngeom + 1, theirs.nbody + 1, theirs.nlight + 1)
        ground = ours.geom("ground")
        assert (ground.type[0], ours.geom_pos[ground.id][2]) == (mujoco.mjtGeom.mjGEOM_PLANE, 0.0)
        assert ours.light("sun").id >= 0


def test_the_download_unpacks_only_the_suites_files_inside_its_folder(tmp_path: Path):
    from tests.corpus.dm_control_suite import SuiteUnavailable, _unpack

    wheel = tmp_path / "planted.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr("dm_control/suite/ok.xml", "<mujoco/>")
        archive.writestr("dm_control/suite/run.py", "print('never')")
        archive.writestr("dm_control/other/no.xml", "<mujoco/>")
    with zipfile.ZipFile(wheel) as archive:
        _unpack(archive, tmp_path / "out")
    found = sorted(str(p.relative_to(tmp_path / "out")) for p in (tmp_path / "out").rglob("*")
                   if p.is_file())
    assert found == ["dm_control/suite/ok.xml"]
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr("dm_control/suite/../../../escape.xml", "<mujoco/>")
    with zipfile.ZipFile(wheel) as archive, pytest.raises(SuiteUnavailable, match=(
            "a member outside the folder it unpacks to")):
        _unpack(archive, tmp_path / "out")
