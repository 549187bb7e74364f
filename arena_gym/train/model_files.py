"""Loading a Stable-Baselines3 model file without unpickling anything in it.

An SB3 zip holds its weights as torch tensors (`*.pth`, loaded with `weights_only=True`) and
its settings as JSON in `data`, where objects JSON cannot hold are base64 pickles
(`":serialized:"`). Unpickling those runs whatever a crafted file says, so each one is rebuilt
from what the env and the JSON know instead (the spaces, the policy class by module name,
constant schedules), given to SB3 as `custom_objects`. A file with a pickled entry this
cannot rebuild is refused unless the user trusts it (`--trust-model`).

Nothing is unpacked before the sizes its zip declares (and those of the zips inside it: the
`.pth` weights) add up to at most MAX_UNPACKED_BYTES: a small file that expands to
gigabytes is refused. Reading a member stops at its declared size (Python's zipfile and
torch's reader alike), so the declared sizes bound what is read.
"""

from __future__ import annotations

import json
import pickle
import zipfile
from pathlib import Path
from typing import Any

from gymnasium import spaces


class ModelFileError(ValueError):
    """A model file that cannot be loaded safely; the message names the file."""


# unpacked bytes a model file may hold: a 64x64 policy takes ~0.2 MB, a 1024x1024x3 one with
# its optimizer state ~50 MB
MAX_UNPACKED_BYTES = 100_000_000


# policy_class "__module__" -> the SB3 algorithm that saved it
_ALGOS = {"stable_baselines3.common.policies": "PPO", "stable_baselines3.sac.policies": "SAC"}
# serialized entries inference does not read (training state): replaced by SB3's defaults
_UNUSED = ("rollout_buffer_class", "replay_buffer_class", "lr_schedule", "clip_range",
           "clip_range_vf", "learning_rate", "train_freq", "_last_obs", "_last_episode_starts",
           "_last_original_obs", "ep_info_buffer", "ep_success_buffer", "action_noise")


def check_model_file(path: str | Path) -> tuple[Path, dict[str, Any]]:
    """The file and its JSON `data`, or ModelFileError: a readable SB3 zip, nothing run."""
    path = Path(path)
    if not path.is_file():
        raise ModelFileError(
            f"model file {str(path)!r}: expected an existing .zip file, got no such file")
    try:
        with zipfile.ZipFile(path) as archive:
            names = set(archive.namelist())
            if not {"data", "policy.pth"} <= names:
                raise ModelFileError(f"model file {str(path)!r}: expected a Stable-Baselines3 "
                                     f"zip (data, policy.pth), got members {sorted(names)}")
            total = _unpacked_size(archive)
            if total > MAX_UNPACKED_BYTES:
                raise ModelFileError(
                    f"model file {str(path)!r}: expected at most {MAX_UNPACKED_BYTES / 1e6:g} "
                    f"MB unpacked (arena_gym.train.model_files.MAX_UNPACKED_BYTES), got "
                    f"{total / 1e6:.1f} MB")
            data = json.loads(archive.read("data").decode("utf-8"))
    except (zipfile.BadZipFile, OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ModelFileError(f"model file {str(path)!r}: expected a Stable-Baselines3 zip, "
                             f"got {type(exc).__name__}: {exc}") from None
    if not isinstance(data, dict):
        raise ModelFileError(f"model file {str(path)!r}: expected a JSON object in 'data'")
    return path, data


def _unpacked_size(archive: zipfile.ZipFile) -> int:
    """The bytes `archive` declares unpacked, a zip inside it (torch's `.pth` files) counted
    as what it declares unpacked when that is more; reads nothing but directories (a
    nested one only while the count is within the limit)."""
    total = 0
    for info in archive.infolist():
        size = info.file_size
        if info.filename.endswith(".pth") and total + size <= MAX_UNPACKED_BYTES:
            with archive.open(info) as member:
                if zipfile.is_zipfile(member):
                    member.seek(0)
                    with zipfile.ZipFile(member) as inner:
                        size = max(size, sum(i.file_size for i in inner.infolist()))
        total += size
    return total


def _serialized(data: dict[str, Any]) -> list[str]:
    return [k for k, v in data.items() if isinstance(v, dict) and ":serialized:" in v]


def _shape(entry: Any) -> tuple[int, ...] | None:
    try:
        return tuple(int(n) for n in entry["_shape"])
    except (KeyError, TypeError, ValueError):
        return None


OBSERVATION_KEY = "arena_observation"  # the model's entry: its observation's keys and shapes
# the model's entry naming the registered policy its actions are residuals on (absent: none)
PRIOR_KEY = "arena_prior"


def model_prior(path: str | Path) -> str | None:
    """The registered policy whose actions the model in `path` adds to (trained with
    `arena-gym train --prior NAME`), or None for a model that acts alone."""
    path, data = check_model_file(path)
    prior = data.get(PRIOR_KEY)
    if prior is not None and not isinstance(prior, str):
        raise ModelFileError(f"model file {str(path)!r}: expected {PRIOR_KEY!r} to name a "
                             f"policy, got {prior!r}")
    return prior


def check_observation(path: str | Path, data: dict[str, Any],
                      layout: dict[str, list[int]]) -> None:
    """ModelFileError unless the model in `path` (its JSON `data`) was trained on the
    observation `layout` (policy_obs.observation_layout); a file that records none (saved
    before models recorded it) is checked by its width alone, in load_sb3."""
    from arena_gym.wrappers.policy_obs import describe

    saved = data.get(OBSERVATION_KEY)
    if saved is None:
        return
    if not isinstance(saved, dict) or saved != layout:
        got = describe(saved) if isinstance(saved, dict) else repr(saved)
        raise ModelFileError(f"model file {str(path)!r}: expected a policy for the env's "
                             f"observation {describe(layout)}, got one trained on {got}")


def load_sb3(path: str | Path, obs_space: spaces.Box, action_space: spaces.Box,
             trust: bool = False, layout: dict[str, list[int]] | None = None) -> Any:
    """The SB3 model in `path` for these (flat) spaces, on the CPU, nothing unpickled
    unless `trust`; with `layout` (the env's observation keys and shapes), a model trained
    on another observation is refused, naming both."""
    path, data = check_model_file(path)
    if layout is not None:
        check_observation(path, data, layout)
    algo = _algo(path, data)
    if trust:
        return algo.load(path, device="cpu")
    custom = _custom_objects(path, data, algo, obs_space, action_space)
    return _load(algo, path, device="cpu", custom_objects=custom)


def resume_sb3(path: str | Path, env: Any, training: dict[str, Any],
               layout: dict[str, list[int]]) -> Any:
    """The SB3 model in `path` (a run's own final_model.zip) to train on with `env` (an SB3
    VecEnv of the flat observation `layout`), nothing unpickled: weights, optimiser state
    and step count from the file, the training-time entries pickles would hold (learning
    rate, clip range) from `training`, the rest SB3's defaults (SAC's replay buffer starts
    empty)."""
    path, data = check_model_file(path)
    check_observation(path, data, layout)
    algo = _algo(path, data)
    custom = {**_custom_objects(path, data, algo, env.observation_space, env.action_space),
              **training}
    return _load(algo, path, env=env, device="cpu", custom_objects=custom)


def _algo(path: Path, data: dict[str, Any]) -> Any:
    import stable_baselines3 as sb3

    module = data.get("policy_class", {}).get("__module__") if isinstance(
        data.get("policy_class"), dict) else None
    if module not in _ALGOS:
        raise ModelFileError(f"model file {str(path)!r}: expected a PPO or SAC policy, got "
                             f"policy class module {module!r}")
    return getattr(sb3, _ALGOS[module])


def _custom_objects(path: Path, data: dict[str, Any], algo: Any, obs_space: spaces.Box,
                    action_space: spaces.Box) -> dict[str, Any]:
    """What replaces the file's pickled entries: the env's spaces, the policy class, and
    SB3's defaults for training state; ModelFileError for any other pickled entry."""
    custom: dict[str, Any] = {"observation_space": obs_space, "action_space": action_space,
                              "policy_class": algo.policy_aliases["MlpPolicy"]}
    for key, space in (("observation_space", obs_space), ("action_space", action_space)):
        saved = _shape(data.get(key))
        if saved != space.shape:
            raise ModelFileError(f"model file {str(path)!r}: expected a policy for the env's "
                                 f"{key} of shape {space.shape}, got {saved}")
    for key in _serialized(data):
        if key in custom:
            continue
        if key not in _UNUSED:
            raise ModelFileError(
                f"model file {str(path)!r}: entry {key!r} is pickled Python, which could run "
                "code; pass --trust-model (trust=True) only for a file you made or trust")
        custom[key] = _replacement(key)
    return custom


def _load(algo: Any, path: Path, **kwargs: Any) -> Any:
    try:
        return algo.load(path, **kwargs)
    except (pickle.UnpicklingError, RuntimeError, ValueError, KeyError, TypeError,
            AttributeError, zipfile.BadZipFile) as exc:  # torch refuses non-tensor pickles
        if "weights_only" in str(exc) or "Unpickl" in type(exc).__name__:
            raise ModelFileError(
                f"model file {str(path)!r}: its weights hold pickled Python, which could run "
                "code; pass --trust-model (trust=True) only for a file you made or trust"
            ) from None
        raise ModelFileError(f"model file {str(path)!r}: cannot load its weights: "
                             f"{type(exc).__name__}: {exc}") from None


def _replacement(key: str) -> Any:
    if key == "train_freq":
        from stable_baselines3.common.type_aliases import TrainFreq, TrainFrequencyUnit

        return TrainFreq(1, TrainFrequencyUnit.STEP)
    if key in ("lr_schedule", "clip_range", "learning_rate"):
        from stable_baselines3.common.utils import ConstantSchedule

        return ConstantSchedule(0.0)  # inference never reads it
    return None
