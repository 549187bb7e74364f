"""A real WebSocket client of Foxglove's protocol for the tests (the `websockets` package):
reads the server's advertisements, subscribes to topics, and decodes the CDR messages it
receives with mcap_ros2's decoder and the ros2msg schema each channel advertised.

foxglove-sdk 0.30 speaks the protocol under the subprotocol name "foxglove.sdk.v1" (it
no longer accepts "foxglove.websocket.v1"; the messages are the same): server text frames
are JSON ops, binary frames start with an opcode (1: message data, 2: time).
"""

from __future__ import annotations

import json
import struct
import time
from typing import Any

from tests.waiting import within

SUBPROTOCOL = "foxglove.sdk.v1"
MESSAGE_DATA, TIME = 1, 2


class FoxgloveClient:
    def __init__(self, port: int, host: str = "127.0.0.1", timeout: float = 20.0,
                 origin: str | None = None) -> None:
        from websockets.sync.client import connect

        def connected() -> Any:  # the server may still be starting (a CLI in another thread)
            try:
                return connect(f"ws://{host}:{port}", subprotocols=[SUBPROTOCOL],
                               open_timeout=5, legacy=True, origin=origin)
            except OSError:
                return None

        self.ws = within(connected, timeout) or connect(
            f"ws://{host}:{port}", subprotocols=[SUBPROTOCOL], open_timeout=5, legacy=True,
            origin=origin)  # the last try raises what refuses it
        self.channels: dict[str, dict] = {}  # topic: the advertised channel
        self.server_info: dict = {}
        self.times: list[int] = []
        self._subscriptions: dict[int, str] = {}  # subscription id: topic
        self._decoders: dict[str, Any] = {}
        self._subscribed: dict[str, int] = {}  # topic: the channel id subscribed to
        self.received: dict[str, list[tuple[int, Any]]] = {}  # topic: [(log time, message)]

    def _handle(self, frame: str | bytes) -> None:
        if isinstance(frame, str):
            op = json.loads(frame)
            if op["op"] == "serverInfo":
                self.server_info = op
            elif op["op"] == "advertise":
                for channel in op["channels"]:
                    self.channels[channel["topic"]] = channel
                    subscribed = self._subscribed.get(channel["topic"])
                    if subscribed is not None and subscribed != channel["id"]:
                        self._subscribe(channel["topic"])  # re-made (the robots changed)
            elif op["op"] == "unadvertise":  # closed channels
                gone = set(op["channelIds"])
                self.channels = {t: c for t, c in self.channels.items() if c["id"] not in gone}
            return
        if frame[0] == TIME:
            self.times.append(struct.unpack_from("<Q", frame, 1)[0])
        elif frame[0] == MESSAGE_DATA:
            sub, log_time = struct.unpack_from("<IQ", frame, 1)
            topic = self._subscriptions[sub]
            message = self._decoders[topic](frame[13:])
            self.received.setdefault(topic, []).append((log_time, message))

    def pump(self, until, timeout: float = 10.0) -> bool:
        """Read frames until `until()` holds (True) or `timeout` seconds pass (False)."""
        deadline = time.monotonic() + timeout
        while not until():
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            try:
                self._handle(self.ws.recv(timeout=left))
            except TimeoutError:
                return False
        return True

    def subscribe(self, topics: list[str]) -> None:

        if not self.pump(lambda: all(t in self.channels for t in topics)):
            raise AssertionError(f"not advertised: {sorted(set(topics) - set(self.channels))}"
                                 f" (advertised: {sorted(self.channels)})")
        for topic in topics:
            self._subscribe(topic)

    def _subscribe(self, topic: str) -> None:
        """Subscribe to `topic`'s channel as advertised now (again when it is re-made: a
        subscription to a channel the server just closed would receive nothing)."""
        from mcap.records import Schema
        from mcap_ros2.decoder import DecoderFactory

        channel = self.channels[topic]
        sub = len(self._subscriptions) + 1
        self._subscriptions[sub] = topic
        schema = Schema(id=channel["id"], name=channel["schemaName"],
                        encoding=channel["schemaEncoding"], data=channel["schema"].encode())
        self._decoders[topic] = DecoderFactory().decoder_for(channel["encoding"], schema)
        self._subscribed[topic] = channel["id"]
        self.ws.send(json.dumps({"op": "subscribe",
                                 "subscriptions": [{"id": sub, "channelId": channel["id"]}]}))

    def close(self) -> None:
        self.ws.close()
