"""Errors of the sensors layer. Each names what was expected and what came."""

from __future__ import annotations


class SensorError(ValueError):
    """A sensor request that cannot be met (unknown robot or sensor, bad option, mismatch)."""
