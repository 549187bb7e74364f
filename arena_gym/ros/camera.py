"""The bridge's cameras: each declared camera of a robot as one reading of the sensor suite
(rgb, depth and points from one render), rendered only in the envs someone watches.

The node counts the subscribers of each env's camera topics and tells the simulator side
which envs have any, per camera ({"op": "watchers", "robot": ..., "sensor": ..., "envs":
[...]}); `SensorSuite.enable` leaves the others out, so with nobody watching nothing
renders. While watched, the reading samples at
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


def add_cameras(suite: SensorSuite, robot: str) -> dict[str, CameraReading]:
    """Add the bridge's reading of each of `robot`'s declared cameras, watched by nobody
    yet: {camera name: reading} (empty when the robot declares none)."""
    info = next((s.entities[robot].record for s in suite.store.scenes
                 if robot in s.entities), None)
    out: dict[str, CameraReading] = {}
    for mount in getattr(info, "sensor_mounts", ()):
        if mount.kind == "camera":
            key = camera_key(robot, mount.name)
            out[mount.name] = suite.add(CameraSpec(robot, sensor=mount.name, outputs=OUTPUTS,
                                                   key=key))  # type: ignore[assignment]
            suite.enable(key, [])
    return out


def watch(suite: SensorSuite, reading: CameraReading | None, envs: list[int]) -> None:
    """Render `reading` in these envs only (the node's "watchers" message)."""
    if reading is not None:
        suite.enable(reading.key, envs)
