"""The bridge's messages without ROS, frame by frame: what `arena-gym record` writes to MCAP
and `arena-gym view --foxglove` serves over Foxglove's WebSocket. The same description,
frame writer and CDR encoder as the rclpy node (frames.py, messages.py): one path.

    stream = MessageStream(sim, suite, "robot")
    for topic, kind, data, stamp_ns in stream.static(): ...   # /tf_static, once
    for topic, kind, data, stamp_ns in stream.frame(): ...    # after each tick or step
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from arena_gym.ros.frames import FrameWriter, describe
from arena_gym.ros.messages import Message, frame_messages, nanos, static_messages
from arena_gym.sensors.readings import OdometryReading
from arena_gym.sensors.specs import OdometrySpec
from arena_gym.sensors.suite import SensorSuite
from arena_gym.sim.simulator import Simulator


class MessageStream:
    """Serializes the current readings of `robot` in every env of `sim` on demand."""

    def __init__(self, sim: Simulator, suite: SensorSuite, robot: str) -> None:
        sim.stepping_groups()  # compile first: the description reads the models
        self.meta = describe(sim, suite, robot)
        self.slot = {k: np.zeros(shape, dtype=np.dtype(dt))
                     for k, (shape, dt) in self.meta["layout"].items()}
        self.writer = FrameWriter(sim, suite, robot)

    def static(self) -> Iterator[Message]:
        return static_messages([self.meta])

    def frame(self) -> Iterator[Message]:
        """The messages of the readings as they are now (copied at this call)."""
        self.writer.write(self.slot)
        return frame_messages([(self.meta, self.slot)])

    @property
    def clock_ns(self) -> int:
        """The sim time of the last frame (ns)."""
        return nanos(float(self.slot["clock"][0]))


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
