"""Gathering the shards' batches into one: observations and Gymnasium's masked infos.

Shards hold contiguous env ids in order, so a batch is the shards' batches concatenated.
An info key that only some shards report (an episode ended there, a collision) gets the
blank slots ArenaVectorEnv writes itself for envs without it: zeros, "" in string columns,
0 in other object columns, and False masks; so a distributed step's info equals a local
one's, masks and blanks included.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def concat_obs(parts: list[Any]) -> Any:
    """Dict (nested) or array observations of the shards, in env order."""
    first = parts[0]
    if isinstance(first, dict):
        return {key: concat_obs([p[key] for p in parts]) for key in first}
    if isinstance(first, tuple):
        return tuple(concat_obs([p[i] for p in parts]) for i in range(len(first)))
    return np.concatenate(parts, axis=0)


def merge_infos(parts: list[dict[str, Any]], sizes: list[int]) -> dict[str, Any]:
    """The shards' vector infos as one, for sum(sizes) envs."""
    keys: list[str] = []
    for part in parts:
        keys += [k for k in part if k not in keys]
    out: dict[str, Any] = {}
    for key in keys:
        present = [p[key] for p in parts if key in p]
        if isinstance(present[0], dict):
            out[key] = merge_infos([p.get(key, {}) for p in parts], sizes)
            continue
        example = np.asarray(present[0])
        out[key] = np.concatenate([np.asarray(p[key]) if key in p else _blank(example, n)
                                   for p, n in zip(parts, sizes, strict=True)], axis=0)
    return out


def _blank(example: np.ndarray, n: int) -> np.ndarray:
    """n unmasked slots of a column like `example` (ArenaVectorEnv's own blanks)."""
    shape = (n, *example.shape[1:])
    if example.dtype != object:
        return np.zeros(shape, dtype=example.dtype)
    strings = any(isinstance(v, str) for v in example.flat)
    return np.full(shape, "" if strings else 0, dtype=object)
