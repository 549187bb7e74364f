"""`arena-gym view --foxglove`: the bridge's topics served live over Foxglove's WebSocket
protocol (the `foxglove-sdk` package), with no ROS install. The same CDR bytes the rclpy
node publishes and `arena-gym record` writes (stream.py, messages.py), on channels with
encoding "cdr" and the ROS 2 message definitions as "ros2msg" schemas (msgdefs.py): Foxglove
decodes them as it decodes a ROS 2 bridge's. The server's time is the sim clock.

    server = start_foxglove(env, port=8765)   # an ArenaVectorEnv or ArenaEnv
    # or a simulator stepped directly: FoxgloveServer(port=0).attach(sim, suite, "robot")
    #                                  .publish_ticks()
    env.reset(seed=0); env.step(actions)      # each control step is published
    server.close()

Loopback (127.0.0.1) unless a host is given: the server has no authentication. A browser
page connects only when it is served by this machine or its origin is allowed
(`allowed_origins`, `arena-gym view --allow-origin`): origin_guard.py stands in front.
"""

from __future__ import annotations

import threading
from typing import Any

from arena_gym.ros.messages import Message
from arena_gym.ros.msgdefs import definition
from arena_gym.ros.origin_guard import OriginGuard
from arena_gym.ros.stream import MessageStream, camera_topics, env_odometry
from arena_gym.sensors.suite import SensorSuite
from arena_gym.sim.simulator import Simulator

INSTALL_HINT = "arena-gym view --foxglove needs: pip install 'arena_gym[foxglove]'"
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765  # Foxglove's default WebSocket port
STATIC = "/tf_static"


def require_sdk() -> tuple[Any, Any]:
    """foxglove and its Capability enum, or an ImportError naming the extra."""
    try:
        import foxglove
        from foxglove.websocket import Capability
    except ImportError as exc:
        raise ImportError(f"{INSTALL_HINT} ({exc})") from None
    return foxglove, Capability


def _listener(static_wanted: threading.Event) -> Any:
    """Foxglove's ServerListener: notes a subscription to /tf_static, which the next frame
    sends again (WebSocket channels do not latch; a late viewer needs the sensor mounts).
    It only sets an event: the SDK calls it on its own thread."""
    from foxglove.websocket import ServerListener

    class Listener(ServerListener):
        def on_subscribe(self, client: Any, channel: Any) -> None:
            if channel.topic == STATIC:
                static_wanted.set()

    return Listener()


class FoxgloveServer:
    """A Foxglove WebSocket server (bound when constructed: a bad host or a busy port fails
    before anything else changes) that serves the readings of every robot of a simulator
    once `attach`ed (robots spawned later too; a deleted robot's channels close);
    `publish()` sends the current frame (after a tick or a control step). Camera images
    render only while a client subscribes to one of their channels. `port=0` picks a free
    port (see `.port`). `allowed_origins`: web pages (origins such as
    "https://app.foxglove.dev") allowed besides this machine's (origin_guard.py)."""

    def __init__(self, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT,
                 allowed_origins: tuple[str, ...] = ()) -> None:
        if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
            raise ValueError(f"port: expected an integer in 0..65535 (0: any free port), "
                             f"got {port!r}")
        self._fox, capability = require_sdk()
        self.context = self._fox.Context()
        self._static_wanted = threading.Event()
        try:
            self.guard = OriginGuard(host, port, upstream=0, allowed=allowed_origins)
        except (OSError, OverflowError) as exc:  # a bad host, a port in use
            raise OSError(f"foxglove: cannot serve on {host}:{port} ({exc}); expected a "
                          "free port (--port) on a local address (--host)") from None
        try:  # the SDK's server on loopback only: clients come through the guard
            self.server = self._fox.start_server(
                name="arena_gym", host="127.0.0.1", port=0, context=self.context,
                capabilities=[capability.Time], server_listener=_listener(self._static_wanted))
        except RuntimeError as exc:  # the SDK's FoxgloveError
            self.guard.close()
            raise OSError(f"foxglove: cannot start the server ({exc})") from None
        self.guard.upstream = self.server.port
        self.host = host
        self.port: int = self.guard.port
        self.stream: MessageStream | None = None
        self.sim: Simulator | None = None
        self._channels: dict[str, Any] = {}
        self.counts: dict[str, int] = {}
        self._static: list[Message] = []
        self._hooked = False
        self._closed = False

    def attach(self, sim: Simulator, suite: SensorSuite, robot: str) -> FoxgloveServer:
        """Serve every robot of every env of `sim` (their readings in `suite`), `robot`
        first, from now on."""
        if self.stream is not None:
            raise ValueError("attach: this server already serves a simulator; expected one "
                             "attach per server")
        self.stream, self.sim = MessageStream(sim, suite, robot, watched=self._watched), sim
        self._static = list(self.stream.static())
        self._static_wanted.clear()
        self._send(self._static)
        self._follow()
        return self

    def _watched(self, topic: str) -> bool:
        """Whether a client subscribes to this channel (a camera renders only then)."""
        channel = self._channels.get(topic)
        return channel is not None and channel.has_sinks()

    def _follow(self) -> None:
        """After the robots changed: advertise every camera channel (a client can only
        subscribe to an advertised channel, and images render only once someone does) and
        close the channels of robots that left."""
        members = list(self.stream.roster.members.values())  # type: ignore[union-attr]
        for member in members:
            for _, topic, kind, _ in camera_topics(member):
                self._channel(topic, kind)
        spaces = tuple(f"/{r['ns']}/" for m in members for r in m.meta["robots"])
        for topic in [t for t in self._channels if t.count("/") > 1
                      and not t.startswith(spaces)]:
            self._channels.pop(topic).close()

    @property
    def url(self) -> str:
        return f"ws://{self.host}:{self.port}"

    def _channel(self, topic: str, kind: str) -> Any:
        channel = self._channels.get(topic)
        if channel is None:  # advertised to connected clients as it is created
            schema = self._fox.Schema(name=kind, encoding="ros2msg",
                                      data=definition(kind).encode())
            channel = self._channels[topic] = self._fox.Channel(
                topic, schema=schema, message_encoding="cdr", context=self.context)
        return channel

    def _send(self, messages: list[Message]) -> None:
        for topic, kind, data, stamp_ns in messages:
            self._channel(topic, kind).log(data, log_time=stamp_ns)
            self.counts[topic] = self.counts.get(topic, 0) + 1

    def publish(self) -> None:
        """Send the readings as they are now, and the sim clock as the server's time."""
        if self._closed or self.stream is None:
            return
        if self._static_wanted.is_set():
            self._static_wanted.clear()
            self._send(self._static)
        messages = self.stream.frame()
        if messages and messages[0][0] == STATIC:  # the robots changed: their mounts
            self._static = [messages[0]]
            self._follow()
        self._send(messages)
        self.server.broadcast_time(self.stream.clock_ns)

    def _on_tick(self, sim: Simulator) -> None:
        self.publish()

    def publish_ticks(self) -> FoxgloveServer:
        """Publish after every simulator tick (a simulator stepped directly, not by an env)."""
        if self.sim is None:
            raise ValueError("publish_ticks: expected an attached simulator (attach first)")
        if not self._hooked:
            self.sim.hooks.tick.append(self._on_tick)  # after the suite's hook: readings current
            self._hooked = True
        return self

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._hooked:
            self.sim.hooks.tick.remove(self._on_tick)
            self._hooked = False
        self.guard.close()
        self.server.stop()


def start_foxglove(env: Any, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT,
                   allowed_origins: tuple[str, ...] = ()) -> FoxgloveServer:
    """Serve an ArenaVectorEnv or ArenaEnv: each control step is published after the env
    has sampled its sensors (env 0 under /robot, env i under /env_i/robot)."""
    # a busy port fails before the env is touched
    server = FoxgloveServer(host, port, allowed_origins)
    try:
        core, odom = env_odometry(env)
        server.attach(core.sim, core.sensor_suite, odom.robot)
    except BaseException:
        server.close()
        raise
    core.sensor_suite.subscribe(odom.key, lambda reading, envs: server.publish())
    return server
