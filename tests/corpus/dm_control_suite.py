"""The dm_control suite's MJCF models, as real models nobody here wrote (issue 42 item 6):
the XML files the `dm-control` wheel ships (`suite/*.xml`, `suite/common/`, the dog's
meshes), fetched with `pip download --no-deps` and unpacked into a folder of the test
cache, never into the repository; the package itself is never imported (it pins another
mujoco). Each model runs through `arena_gym.Simulation(model_path=...)` beside MuJoCo
stepping the same file alone:

    folder = suite_folder(cache)                   # .../dm_control-1.0.52/suite
    row = compare_physics(folder / "humanoid.xml")  # qpos, qvel, act, sensors: bit for bit
    shots = compare_cameras(folder / "humanoid.xml")  # body masks' IoU, depth within 1 cm

Used by tests/corpus/test_dm_control.py and benchmarks/corpus.py (the table).
"""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
import zipfile
from dataclasses import dataclass
from pathlib import Path

os.environ.setdefault("MUJOCO_GL", "egl")  # mujoco.Renderer reads it at import: headless

import mujoco  # noqa: E402
import numpy as np  # noqa: E402

VERSION = "1.0.52"
WHEEL = f"dm_control-{VERSION}-py3-none-any.whl"
WHEEL_ENV = "ARENA_GYM_DM_CONTROL_WHEEL"  # a wheel on disk instead of the download
# every model file of the wheel's suite/ (tests/corpus/test_dm_control.py checks the list)
MODELS = ("acrobot", "ball_in_cup", "cartpole", "cheetah", "dog", "finger", "fish", "hopper",
          "humanoid", "humanoid_CMU", "lqr", "manipulator", "pendulum", "point_mass",
          "quadruped", "reacher", "stacker", "swimmer", "walker")
STEPS = (1, 7, 200)  # physics steps after which the envs are compared with MuJoCo
NUM_ENVS = 2
CAMERA_STEPS = 37  # the state the cameras are compared at (between two ticks)
SIZE = (64, 48)  # camera images: small, for software rendering
DEPTH_TOLERANCE = 0.01  # m
_MEMBERS = ("dm_control/suite/",)
_CODE = (".py", ".pyc")  # the suite's Python modules: never unpacked


class SuiteUnavailable(RuntimeError):
    """The wheel could not be downloaded or read; the message says why."""


def suite_folder(cache: Path) -> Path:
    """The suite's folder of MJCF files under `cache`, unpacked from the wheel once (from
    ARENA_GYM_DM_CONTROL_WHEEL if set, else `pip download --no-deps dm-control==VERSION`)."""
    target = cache / f"dm_control-{VERSION}"
    folder = target / "dm_control" / "suite"
    if (folder / "dog_assets" / "dog_skin.skn").is_file() and (
            folder / "common" / "skybox.xml").is_file():
        return folder
    wheel = Path(os.environ[WHEEL_ENV]) if os.environ.get(WHEEL_ENV) else _download(cache)
    try:
        with zipfile.ZipFile(wheel) as archive:
            _unpack(archive, target)
    except (OSError, zipfile.BadZipFile) as exc:
        raise SuiteUnavailable(f"{wheel}: {exc}") from None
    return folder


def _download(cache: Path) -> Path:
    wheel = cache / WHEEL
    if wheel.is_file():
        return wheel
    done = subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "--disable-pip-version-check",
         "-d", str(cache), f"dm-control=={VERSION}"], capture_output=True, text=True,
        timeout=600)
    if done.returncode != 0 or not wheel.is_file():
        raise SuiteUnavailable(f"pip download dm-control=={VERSION} failed: "
                               f"{(done.stderr or done.stdout).strip()[-500:]}")
    return wheel


def _unpack(archive: zipfile.ZipFile, target: Path) -> None:
    """The suite's model files only (XML, meshes, skins, textures: no code), each inside
    `target` once resolved."""
    root = target.resolve()
    for member in archive.namelist():
        if not member.startswith(_MEMBERS) or member.endswith((*_CODE, "/")):
            continue
        path = (root / member).resolve()
        if not path.is_relative_to(root):
            raise SuiteUnavailable(f"{member!r}: a member outside the folder it unpacks to")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(archive.read(member))


def load(path: Path):
    """`Simulation(model_path=path, num_envs=NUM_ENVS)`, MuJoCo's own warnings (a
    deprecated attribute the file uses) silenced as when the file is loaded alone below."""
    from arena_gym import Simulation

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return Simulation(model_path=path, num_envs=NUM_ENVS)


def alone(path: Path) -> mujoco.MjModel:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return mujoco.MjModel.from_xml_path(str(path))


def controls(model: mujoco.MjModel, env: int) -> np.ndarray:
    """Env `env`'s constant controls: uniform in each actuator's ctrlrange ([-1, 1] where
    unlimited), seeded by the env."""
    low, high = model.actuator_ctrlrange.T
    limited = model.actuator_ctrllimited.astype(bool)
    rng = np.random.default_rng(1000 + env)
    return rng.uniform(np.where(limited, low, -1.0), np.where(limited, high, 1.0))


@dataclass(frozen=True)
class Row:
    """One model against MuJoCo: the steps compared, the largest absolute difference of
    qpos, qvel, act and every sensor reading over them (0: bit for bit), the sensors read."""

    model: str
    steps: tuple[int, ...]
    max_difference: float
    sensors: int
    mismatches: tuple[str, ...]  # "qvel after 7 steps, env 1", ...


def compare_physics(path: Path) -> Row:
    """The model through the façade (NUM_ENVS envs, each its own controls) and the file in
    MuJoCo alone with the same controls, compared after each of STEPS physics steps:
    state (qpos, qvel, act) of every env and every sensor reading (`sensor_suite
    ["model/mujoco"]`, by name) against MuJoCo's `sensordata`, bit for bit."""
    model = alone(path)
    datas = [mujoco.MjData(model) for _ in range(NUM_ENVS)]
    worst, mismatches, done = 0.0, [], 0
    with load(path) as sim:
        for env, data in enumerate(datas):
            data.ctrl[:] = controls(model, env)
            sim.simulator.ctrl(env)[:] = data.ctrl
        for total in STEPS:
            sim.step(total - done)
            for data in datas:
                mujoco.mj_step(model, data, total - done)
            done = total
            for env, data in enumerate(datas):
                ours = sim.store[env].data
                pairs = [(f, getattr(ours, f), getattr(data, f)) for f in ("qpos", "qvel", "act")]
                if model.nsensor:
                    reading = sim.sensor_suite["model/mujoco"]
                    pairs += [(f"sensor {name}", reading[name][env], data.sensor(i).data)
                              for i, name in enumerate(_sensor_names(model))]
                for what, a, b in pairs:
                    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
                    if a.shape != b.shape or a.tobytes() != b.tobytes():
                        mismatches.append(f"{what} after {total} steps, env {env}")
                        worst = max(worst, float(np.max(np.abs(a - b), initial=0))
                                    if a.shape == b.shape else np.inf)
    return Row(path.stem, STEPS, worst, model.nsensor, tuple(mismatches))


def _sensor_names(model: mujoco.MjModel) -> list[str]:
    """The model's sensors as the suite names them (unnamed ones `sensor_<k>`)."""
    return [model.sensor(i).name or f"sensor_{i}" for i in range(model.nsensor)]


@dataclass(frozen=True)
class Shot:
    """One camera of one env against mujoco.Renderer: the smallest IoU of a body's mask
    (over the bodies either image shows) and the share of pixels whose depth is within
    DEPTH_TOLERANCE (nothing drawn in both counts as within)."""

    model: str
    camera: str
    env: int
    mode: str
    min_iou: float
    depth_within: float


def compare_cameras(path: Path) -> list[Shot]:
    """Every camera of the model, every env, CAMERA_STEPS steps in (constant controls):
    our camera reading (CameraSpec at SIZE, depth and segmentation by body) against
    `mujoco.Renderer` of MuJoCo's own run of the file to the same step, after mj_forward.
    The reference renders without multisampling (`offsamples = 0`): MuJoCo's multisampled
    depth is resolved off the pixel centres (FACTS.md), which our cameras do not do."""
    from arena_gym.sensors import CameraSpec

    model = alone(path)
    names = [model.camera(i).name or f"camera_{i}" for i in range(model.ncam)]
    width, height = SIZE
    reference = alone(path)
    reference.vis.quality.offsamples = 0
    shots = []
    with load(path) as sim:
        for name in names:
            sim.cameras.add(CameraSpec("model", name, key=name, resolution=SIZE,
                                       outputs=("depth", "segmentation"), segment_by="body"))
        for env in range(NUM_ENVS):
            sim.simulator.ctrl(env)[:] = controls(model, env)
        sim.step(CAMERA_STEPS)
        renderer = mujoco.Renderer(reference, height, width)
        try:
            for env in range(NUM_ENVS):
                data = mujoco.MjData(reference)
                data.ctrl[:] = controls(model, env)
                mujoco.mj_step(reference, data, CAMERA_STEPS)
                mujoco.mj_forward(reference, data)
                for i, name in enumerate(names):
                    sim.cameras.capture(name, env)
                    reading = sim.sensor_suite[name]
                    bodies, depth, empty = _reference(renderer, reference, data, i)
                    segments = reading.segmentation[env]
                    ours = np.where(segments[..., 1] == mujoco.mjtObj.mjOBJ_BODY,
                                    segments[..., 0], -1)
                    mode = mujoco.mjtCamLight(int(model.cam_mode[i])).name
                    shots.append(Shot(path.stem, name, env,
                                      mode.removeprefix("mjCAMLIGHT_").lower(),
                                      _min_iou(ours, bodies),
                                      _within(reading.depth[env], depth,
                                              segments[..., 0] < 0, empty)))
        finally:
            renderer.close()
    return shots


def _reference(renderer: mujoco.Renderer, model: mujoco.MjModel, data: mujoco.MjData,
               camera: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """mujoco.Renderer's body of each pixel (-1: none or not a geom), its depth, and
    where nothing is drawn."""
    renderer.enable_segmentation_rendering()
    renderer.update_scene(data, camera=camera)
    segments = renderer.render().copy()
    renderer.disable_segmentation_rendering()
    renderer.enable_depth_rendering()
    renderer.update_scene(data, camera=camera)
    depth = renderer.render().copy()
    renderer.disable_depth_rendering()
    bodies = np.full(segments.shape[:2], -1)
    geoms = segments[..., 1] == mujoco.mjtObj.mjOBJ_GEOM
    bodies[geoms] = model.geom_bodyid[segments[..., 0][geoms]]
    return bodies, depth, segments[..., 0] < 0


def _min_iou(ours: np.ndarray, theirs: np.ndarray) -> float:
    """The smallest intersection over union of one body's pixels in both images, over the
    bodies either shows (1 when neither shows any)."""
    shown = np.union1d(ours[ours >= 0], theirs[theirs >= 0])
    ious = [((ours == b) & (theirs == b)).sum() / ((ours == b) | (theirs == b)).sum()
            for b in shown]
    return float(min(ious, default=1.0))


def _within(ours: np.ndarray, theirs: np.ndarray, nothing_ours: np.ndarray,
            nothing_theirs: np.ndarray) -> float:
    """The share of pixels whose depths agree within DEPTH_TOLERANCE, where nothing is
    drawn (by the segmentation: ours reads +inf there, MuJoCo's the far plane) counting as
    agreeing when neither image draws anything there."""
    both = ~nothing_ours & ~nothing_theirs
    agree = np.abs(np.where(both, ours, 0.0) - np.where(both, theirs, 0.0)) <= DEPTH_TOLERANCE
    return float(np.where(both, agree, nothing_ours & nothing_theirs).mean())
