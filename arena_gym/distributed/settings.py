"""How a distributed run places its envs: `distributed: {shards: 2, on_failure: restart}`.

The same mapping is read wherever a run can be distributed (TrainSettings.distributed, the
CLI's `--shards`, RLlib's `env_config["distributed"]`), so every door checks it alike.
"""

from __future__ import annotations

import contextlib
import difflib
import os
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
    new local cluster listening on 127.0.0.1 only; "auto": the running one).
    actor_options: Ray's `.options(...)` for every shard actor (default one CPU each; e.g.
    {"scheduling_strategy": "SPREAD"})."""

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


LOCAL_HOST = "127.0.0.1"  # where a local cluster listens: this machine only


def init_ray(ray, address: str | None = None, **options: Any) -> None:
    """Join the cluster at `address` (or RAY_ADDRESS), else start a local one whose
    processes (GCS, raylet, workers, agents) listen on 127.0.0.1 only: nothing on the
    network can reach it. `options` go to `ray.init`."""
    if address is not None or os.environ.get("RAY_ADDRESS"):
        ray.init(address=address, **options)
        return
    with _single_machine(ray):
        ray.init(_node_ip_address=LOCAL_HOST, **options)
    host = ray.get_runtime_context().gcs_address.rpartition(":")[0]
    if host != LOCAL_HOST:
        ray.shutdown()
        raise RuntimeError(f"distributed: expected the local Ray cluster on {LOCAL_HOST}, got "
                           f"it on {host}; pass an address (--ray-address) to use a cluster")


@contextlib.contextmanager
def _single_machine(ray):
    """Ray's single-machine mode while a local cluster starts: without it, Ray replaces the
    node address 127.0.0.1 by the machine's network address (its processes inherit the
    variable; the driver read it at import, hence its constant too)."""
    from ray._private import ray_constants

    name = ray_constants.ENABLE_RAY_CLUSTERS_ENV_VAR
    saved_env, saved = os.environ.get(name), ray_constants.ENABLE_RAY_CLUSTER
    os.environ[name], ray_constants.ENABLE_RAY_CLUSTER = "0", False
    try:
        yield
    finally:
        ray_constants.ENABLE_RAY_CLUSTER = saved
        if saved_env is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = saved_env


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
