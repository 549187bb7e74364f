"""The bridge's camera: the robot's first declared camera as one reading of the sensor
suite (rgb, depth and points from one render), rendered only in the envs someone watches.

The node counts the subscribers of each env's camera topics and tells the simulator side
which envs have any ({"op": "watchers", "envs": [...]}); `SensorSuite.enable` leaves the
others out, so with nobody watching nothing renders. While watched, the reading samples at
the camera's own rate on sim time (its declared update_rate), as every reading does.
"""

from __future__ import annotations

from arena_gym.sensors.readings import CameraReading
from arena_gym.sensors.specs import CameraSpec
from arena_gym.sensors.suite import SensorSuite

OUTPUTS = ("rgb", "depth", "points")


def camera_key(robot: str, sensor: str) -> str:
    """The bridge's own reading key (the suite's own camera readings stay as they are)."""
    return f"{robot}/{sensor}@ros"


def add_camera(suite: SensorSuite, robot: str) -> CameraReading | None:
    """Add the bridge's reading of `robot`'s first camera, watched by nobody yet; None when
    the robot declares no camera."""
    info = next((s.entities[robot].record for s in suite.store.scenes
                 if robot in s.entities), None)
    mount = next((m for m in getattr(info, "sensor_mounts", ()) if m.kind == "camera"), None)
    if mount is None:
        return None
    key = camera_key(robot, mount.name)
    reading = suite.add(CameraSpec(robot, sensor=mount.name, outputs=OUTPUTS, key=key))
    suite.enable(key, [])
    return reading  # type: ignore[return-value]


def watch(suite: SensorSuite, reading: CameraReading | None, envs: list[int]) -> None:
    """Render `reading` in these envs only (the node's "watchers" message)."""
    if reading is not None:
        suite.enable(reading.key, envs)
