"""How a distributed run places its envs: `distributed: {shards: 2, on_failure: restart}`.

The same mapping is read wherever a run can be distributed (TrainSettings.distributed, the
CLI's `--shards`, RLlib's `env_config["distributed"]`), so every door checks it alike.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

ON_FAILURE = ("raise", "restart")
INSTALL_HINT = "the distributed env needs Ray: pip install 'arena_gym[distributed]'"


@dataclass(frozen=True)
class DistributedSettings:
    """shards: Ray actors, each an ArenaVectorEnv of a contiguous slice of the envs.
    on_failure: "raise" (close the env and raise ShardDiedError, naming the shard and its
    env ids) or "restart" (re-create the shard's actor and re-seed it deterministically).
    address: the Ray cluster to join when Ray is not initialised yet (None: RAY_ADDRESS or a
    new local cluster; "auto": the running one). actor_options: Ray's `.options(...)` for
    every shard actor (default one CPU each; e.g. {"scheduling_strategy": "SPREAD"})."""

    shards: int = 2
    on_failure: str = "raise"
    address: str | None = None
    actor_options: Mapping[str, Any] = field(default_factory=lambda: {"num_cpus": 1})

    def __post_init__(self) -> None:
        if isinstance(self.shards, bool) or not isinstance(self.shards, int) or self.shards < 1:
            raise ValueError(f"distributed.shards: expected an integer >= 1, got {self.shards!r}")
        if self.on_failure not in ON_FAILURE:
            raise ValueError(f"distributed.on_failure: expected one of {list(ON_FAILURE)}, "
                             f"got {self.on_failure!r}")
        if self.address is not None and not isinstance(self.address, str):
            raise ValueError(f"distributed.address: expected a string, got {self.address!r}")
        if not isinstance(self.actor_options, Mapping):
            raise ValueError("distributed.actor_options: expected a mapping, got "
                             f"{self.actor_options!r}")

    @classmethod
    def parse(cls, value: DistributedSettings | Mapping[str, Any]) -> DistributedSettings:
        """From a mapping (YAML, env_config); an unknown key is an error naming close ones."""
        if isinstance(value, cls):
            return value
        if not isinstance(value, Mapping):
            raise ValueError(f"distributed: expected a mapping like {{'shards': 2}}, got {value!r}")
        names = [f.name for f in fields(cls)]
        for key in value:
            if key not in names:
                close = difflib.get_close_matches(str(key), names, n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                raise ValueError(f"distributed: unknown key {key!r}{hint}; expected {names}")
        return cls(**value)


def import_ray():
    """Ray, imported on first use only: importing arena_gym never does."""
    try:
        import ray
    except ImportError as exc:
        raise ImportError(INSTALL_HINT) from exc
    return ray


def shard_slices(num_envs: int, shards: int) -> list[range]:
    """Contiguous env ids per shard, sizes differing by at most one (larger ones first)."""
    if shards > num_envs:
        raise ValueError(f"distributed.shards: expected at most num_envs ({num_envs}) shards, "
                         f"got {shards}")
    base, extra = divmod(num_envs, shards)
    out, start = [], 0
    for k in range(shards):
        size = base + (k < extra)
        out.append(range(start, start + size))
        start += size
    return out
