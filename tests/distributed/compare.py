"""Bit-for-bit comparison of what vector envs return (observations, arrays, masked infos)."""

from __future__ import annotations

from typing import Any

import numpy as np


def assert_identical(a: Any, b: Any, where: str = "") -> None:
    """Same keys, dtypes, shapes and bytes; object arrays element by element."""
    if isinstance(a, dict):
        assert isinstance(b, dict) and a.keys() == b.keys(), (where, set(a) ^ set(b))
        for key in a:
            assert_identical(a[key], b[key], f"{where}.{key}")
        return
    if isinstance(a, (tuple, list)):
        assert type(a) is type(b) and len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            assert_identical(x, y, f"{where}[{i}]")
        return
    if isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray), where
        assert (a.dtype, a.shape) == (b.dtype, b.shape), (where, a.dtype, b.dtype, a.shape)
        if a.dtype == object:
            for x, y in zip(a.flat, b.flat, strict=True):
                assert_identical(x, y, where)
        else:
            assert a.tobytes() == b.tobytes(), where
        return
    assert type(a) is type(b) and a == b, (where, a, b)
