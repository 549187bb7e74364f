"""Pretrained policies that ship with the package, so that a working agent and a learned
baseline row need no training first:

    arena-gym eval pretrained:room                        # the default world
    arena-gym eval pretrained:people                      # configs/pedestrians.yaml
    ARENA_GYM_ASSETS=../shared/assets arena-gym eval pretrained:maps   # configs/maps.yaml
    ARENA_GYM_ASSETS=../shared/assets arena-gym bench maps --policy pretrained:maps

Each is an SB3 model file in `policy_files/`, loaded like any other model file: nothing in it
is unpickled (train/model_files.py); a file trained on a prior (`pretrained:maps`, a residual
on the reactive follower) records it, and the loader adds it. `export_policy` makes one
from a training run's best_model.zip: the optimiser's moments, which inference never reads,
are dropped (a fresh optimiser state is kept, so the file is still a complete SB3 model).
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

PREFIX = "pretrained:"


@dataclass(frozen=True)
class Pretrained:
    """A shipped policy: its model file, the env config it was trained on (its default for
    `arena-gym eval` and `bench`), and the command that made it."""

    file: str
    config: str
    made_by: str


PRETRAINED = {
    "room": Pretrained("room.zip", "default",
                       "arena-gym train --minutes 3 --seed 4 --learning-rate 3e-4 (the "
                       "default recipe before its learning rate rose, planar base, 64 envs; its "
                       "best evaluation, 98 %, at 3.0 min, 1.43M env steps)"),
    "maps": Pretrained("maps.zip", "maps",
                       "arena-gym train --config maps --prior reactive --minutes 10 --seed 0 "
                       "--eval-every 300 --eval-episodes 40 --log-std-init -1 --learning-rate "
                       "3e-4 (a residual on "
                       "the reactive follower, the planar base; 100 % in every evaluation, the "
                       "last kept: 10.1 min, 2.62M env steps)"),
    "people": Pretrained("people.zip", "pedestrians",
                         "arena-gym train --config pedestrians --minutes 10 --seed 1 "
                         "--eval-every 60 --learning-rate 3e-4 (8 walking people per env, the 4 "
                         "nearest observed; "
                         "its best evaluation, 99 % with no collision, at 9.1 min, 3.59M env "
                         "steps)"),
}


def is_pretrained(name: str) -> bool:
    """Whether `name` asks for a shipped policy ("pretrained:NAME")."""
    return name.startswith(PREFIX)


def pretrained(name: str) -> Pretrained:
    """The shipped policy `name` ("pretrained:room" or "room"); ValueError naming the
    known ones otherwise."""
    key = name.removeprefix(PREFIX)
    if key not in PRETRAINED:
        raise ValueError(f"pretrained policy {key!r}: expected one of "
                         f"{', '.join(PREFIX + k for k in PRETRAINED)}")
    return PRETRAINED[key]


def pretrained_file(name: str) -> Path:
    """The model file of the shipped policy `name`."""
    entry = pretrained(name)
    path = Path(str(resources.files("arena_gym.train") / "policy_files" / entry.file))
    if not path.is_file():
        raise ValueError(f"pretrained policy {name!r}: expected its model file {path}, got "
                         "none (an install without the package data?)")
    return path


def export_policy(model_zip: str | Path, out: str | Path, config: str) -> Path:
    """A training run's model file (trained on env config `config`), made small for
    shipping: the same policy and settings, the optimiser state fresh (no moments). Loaded
    without unpickling, like the source."""
    import numpy as np
    from gymnasium import spaces

    from arena_gym.envs.vector_env import ArenaVectorEnv
    from arena_gym.train.model_files import load_sb3
    from arena_gym.wrappers.policy_obs import flat_space, observation_layout

    env = ArenaVectorEnv(1, config=config)
    try:
        obs_space = env.single_observation_space
        actions = spaces.Box(-1.0, 1.0, env.single_action_space.shape, np.float32)
        model: Any = load_sb3(model_zip, flat_space(obs_space), actions,
                              layout=observation_layout(obs_space))
    finally:
        env.close()
    policy = model.policy
    policy.optimizer = policy.optimizer_class(policy.parameters(), lr=0.0,
                                              **policy.optimizer_kwargs)
    out = Path(out)
    model.save(out)
    return out
