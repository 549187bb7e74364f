"""The bridge's messages without ROS, frame by frame: what `arena-gym record` writes to MCAP
and `arena-gym view --foxglove` serves over Foxglove's WebSocket. The same roster, frame
writers and CDR encoder as the rclpy node (roster.py, frames.py, messages.py): one path.

    stream = MessageStream(sim, suite, "robot")
    for topic, kind, data, stamp_ns in stream.static(): ...   # /tf_static, once
    for topic, kind, data, stamp_ns in stream.frame(): ...    # after each tick or step

Every robot of every env is in it, the first one `robot`; a robot spawned or deleted
later joins or leaves with the next frame, which then starts with /tf_static again.
Camera images render in the envs whose camera topics `watched(topic)` says someone
watches (every env by default: a recording keeps them all).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from arena_gym.ros import camera
from arena_gym.ros.messages import (
    CAMERA_TOPICS,
    Message,
    frame_messages,
    nanos,
    static_messages,
    topics_of,
)
from arena_gym.ros.roster import Member, Roster
from arena_gym.sensors.readings import OdometryReading
from arena_gym.sensors.specs import OdometrySpec
from arena_gym.sensors.suite import SensorSuite
from arena_gym.sim.simulator import Simulator


def camera_topics(member: Member) -> Iterator[tuple[int, str, str, str]]:
    """(env, topic, type, camera name) of each camera topic of a bridged robot name (none
    without a camera)."""
    for sensor in (s for s in member.meta["sensors"] if s["kind"] == "camera"):
        for r in member.meta["robots"]:
            for name, kind in CAMERA_TOPICS.items():
                if topics_of(r)[sensor["prefix"] + name]:
                    yield r["env"], topics_of(r)[sensor["prefix"] + name], kind, sensor["sensor"]


class MessageStream:
    """Serializes the current readings of every robot in every env of `sim` on demand."""

    def __init__(self, sim: Simulator, suite: SensorSuite, robot: str,
                 watched: Callable[[str], bool] = lambda topic: True) -> None:
        sim.stepping_groups()  # compile first: the description reads the models
        self.suite, self.watched = suite, watched
        self.roster = Roster(sim, suite, robot)
        self.slots: dict[str, dict[str, np.ndarray]] = {}
        self._watching: dict[tuple[str, str], list[int]] = {}  # (robot, camera): envs
        self.sync()

    def sync(self) -> bool:
        """Follow robots spawned or deleted since the last call; whether any joined, left
        or was described again."""
        changed, gone = self.roster.sync()
        for name in gone:
            del self.slots[name]
        for member in changed:
            self.slots[member.robot] = {k: np.zeros(shape, dtype=np.dtype(dt))
                                        for k, (shape, dt) in member.meta["layout"].items()}
        left = {m.robot for m in changed} | set(gone)
        self._watching = {k: v for k, v in self._watching.items() if k[0] not in left}
        self.watch()
        return bool(changed or gone)

    def watch(self) -> None:
        """Render each camera in the envs whose camera topics are watched (on change)."""
        for member in self.roster.members.values():
            for sensor, reading in member.cameras.items():
                envs = sorted({e for e, topic, _, name in camera_topics(member)
                               if name == sensor and self.watched(topic)})
                if self._watching.get((member.robot, sensor)) != envs:
                    camera.watch(self.suite, reading, envs)
                    self._watching[(member.robot, sensor)] = envs

    def static(self) -> Iterator[Message]:
        return static_messages([m.meta for m in self.roster.members.values()])

    def frame(self) -> list[Message]:
        """The messages of the readings as they are now (copied at this call); /tf_static
        first when a robot joined or left since the last frame."""
        out = list(self.static()) if self.sync() else []
        members = self.roster.members.values()
        for member in members:
            member.writer.write(self.slots[member.robot])
        if members:
            out += frame_messages([(m.meta, self.slots[m.robot]) for m in members])
        return out

    @property
    def clock_ns(self) -> int:
        """The sim time of the last frame (ns)."""
        return nanos(self.roster.sim.clock)


def env_odometry(env: Any) -> tuple[Any, OdometryReading]:
    """The core of an ArenaVectorEnv or ArenaEnv and the odometry reading of its robot,
    added to the env's suite (tf and odom need it; the env samples it once per control
    step, last, so its subscribers see every reading of that step)."""
    from arena_gym.envs.core import ROBOT

    core = getattr(env.unwrapped, "core", None)
    if core is None:
        raise ValueError(f"expected an ArenaVectorEnv or ArenaEnv, got "
                         f"{type(env.unwrapped).__name__}")
    return core, core.sensor_suite.add(OdometrySpec(ROBOT))
