"""`arena-gym record`: the bridge's messages written to an MCAP file (ROS 2 encoding),
with no ROS install: the same CDR bytes the node publishes (messages.py), in channels whose
schemas are the message definitions of msgdefs.py ("ros2msg", as rosbag2 writes them).
Openable in Foxglove; `ros2 bag` and `mcap-ros2-support`'s decoder read it.

    arena-gym record --seconds 5 --envs 2 --cmd-vel 0.2 0.3 --out run.mcap
"""

from __future__ import annotations

from pathlib import Path

from arena_gym.ros.msgdefs import TYPES, definition
from arena_gym.ros.stream import MessageStream
from arena_gym.sensors.suite import SensorSuite
from arena_gym.sim.simulator import Simulator

INSTALL_HINT = "arena-gym record needs: pip install 'arena_gym[record]'"


def _writer_class():
    try:
        from mcap.writer import Writer
    except ImportError as exc:
        raise ImportError(f"{INSTALL_HINT} ({exc})") from None
    return Writer


class Recorder:
    """Writes every tick of `sim` (a tick hook) to an MCAP file until `close()`."""

    def __init__(self, sim: Simulator, suite: SensorSuite, robot: str, path: str | Path) -> None:
        writer_class = _writer_class()
        self.sim = sim
        self.stream = MessageStream(sim, suite, robot)
        self._file = open(path, "wb")  # noqa: SIM115 - closed in close()
        self._mcap = writer_class(self._file)
        self._mcap.start(profile="ros2", library="arena_gym")
        self._schemas = {name: self._mcap.register_schema(name, "ros2msg",
                                                          definition(name).encode())
                         for name in TYPES}
        self._channels: dict[str, int] = {}
        self.counts: dict[str, int] = {}
        for message in self.stream.static():
            self._write(*message)
        sim.hooks.tick.append(self._on_tick)

    def _write(self, topic: str, kind: str, data: bytes, stamp_ns: int) -> None:
        channel = self._channels.get(topic)
        if channel is None:
            channel = self._channels[topic] = self._mcap.register_channel(
                topic, "cdr", self._schemas[kind])
        self._mcap.add_message(channel, log_time=stamp_ns, data=data, publish_time=stamp_ns,
                               sequence=self.counts.get(topic, 0))
        self.counts[topic] = self.counts.get(topic, 0) + 1

    def _on_tick(self, sim: Simulator) -> None:
        for message in self.stream.frame():
            self._write(*message)

    def close(self) -> None:
        self.sim.hooks.tick.remove(self._on_tick)
        self._mcap.finish()
        self._file.close()


def record(path: str | Path, world: str, robot: str, num_envs: int, seconds: float,
           cmd_vel: tuple[float, float], seed: int, overwrite: bool = False) -> dict[str, int]:
    """Step `seconds` of sim time with every robot driving `cmd_vel` (v, omega); returns
    the message count per topic. An existing `path` is refused unless `overwrite`."""
    from arena_gym.ros.run import build_envs

    _writer_class()  # the install hint before any work
    if Path(path).exists() and not overwrite:
        raise ValueError(f"--out: {str(path)!r} exists; expected a new file (or --overwrite "
                         "to replace it)")
    store, name = build_envs(world, robot, num_envs, seed)
    sim = Simulator(store)
    suite = SensorSuite(sim, seed=seed)
    recorder = Recorder(sim, suite, name, path)
    try:
        for env in range(num_envs):
            sim.set_cmd_vel(env, name, *cmd_vel)
        sim.step(max(1, round(seconds / sim.timestep / sim.tick_steps)) * sim.tick_steps)
    finally:
        recorder.close()
        suite.close()
        sim.close()
    return recorder.counts
