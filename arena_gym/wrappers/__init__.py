"""Wrappers: fixed-scale policy observations and the Stable-Baselines3 adapter (lazy);
sensor observations (observations.py, vector.py for vector envs)."""

from arena_gym.wrappers.observations import (
    ContactObservation,
    DepthObservation,
    ImageObservation,
    ImuObservation,
    LidarObservation,
    ScanStack,
    SensorObservation,
)

__all__ = [
    "ContactObservation",
    "DepthObservation",
    "ImageObservation",
    "ImuObservation",
    "LidarObservation",
    "ScanStack",
    "SensorObservation",
]
