"""A front door for the Foxglove server that turns away WebSocket handshakes from web pages
it was not told to trust: any page a user opens could otherwise connect to a server on
localhost and read the live topics (browsers send the page's Origin; they do not stop it).

    guard = OriginGuard("127.0.0.1", 8765, upstream=sdk_port,
                        allowed=["https://app.foxglove.dev"])
    guard.port                      # where clients connect
    guard.close()

A handshake without an Origin header (a native app, a script) or from a page served by this
machine (http(s)://localhost, 127.0.0.1, [::1], any port) passes, as do the origins in
`allowed`; any other gets HTTP 403 naming its origin and how to allow it. A passed
connection is piped to the upstream server byte for byte.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterable
from urllib.parse import urlsplit

LOCAL_HOSTS = ("localhost", "127.0.0.1", "::1")
MAX_HEADER = 16384  # bytes of a handshake request
HINT = "--allow-origin"


def local_origin(origin: str) -> bool:
    parts = urlsplit(origin)
    return parts.scheme in ("http", "https") and parts.hostname in LOCAL_HOSTS


def origin_of(request: bytes) -> str | None:
    """The Origin header of an HTTP request head (None: none)."""
    for line in request.split(b"\r\n")[1:]:
        name, sep, value = line.partition(b":")
        if sep and name.strip().lower() == b"origin":
            return value.strip().decode("latin-1")
    return None


class OriginGuard:
    """Listens on (host, port) and pipes allowed handshakes to 127.0.0.1:upstream."""

    def __init__(self, host: str, port: int, upstream: int,
                 allowed: Iterable[str] = ()) -> None:
        self.upstream = upstream
        self.allowed = {a.rstrip("/") for a in allowed}
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self._server = socket.socket(family, socket.SOCK_STREAM)
        self._server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            self._server.bind((host, port))
        except OSError:
            self._server.close()
            raise
        self._server.listen(16)
        self.port: int = self._server.getsockname()[1]
        self._closed = False
        threading.Thread(target=self._accept, name="foxglove-origin", daemon=True).start()

    def allows(self, origin: str | None) -> bool:
        return origin is None or local_origin(origin) or origin.rstrip("/") in self.allowed

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        head = b""
        try:
            while b"\r\n\r\n" not in head and len(head) < MAX_HEADER:
                chunk = client.recv(4096)
                if not chunk:
                    client.close()
                    return
                head += chunk
            origin = origin_of(head)
            if not self.allows(origin):
                body = (f"origin {origin!r} is not allowed: this server serves pages of this "
                        f"machine only (start it with {HINT} {origin} to allow that page)\n"
                        ).encode()
                client.sendall(b"HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\n"
                               b"Content-Length: " + str(len(body)).encode() +
                               b"\r\nConnection: close\r\n\r\n" + body)
                client.close()
                return
            upstream = socket.create_connection(("127.0.0.1", self.upstream))
        except OSError:
            client.close()
            return
        upstream.sendall(head)
        threading.Thread(target=_pipe, args=(upstream, client), daemon=True).start()
        _pipe(client, upstream)

    def close(self) -> None:
        self._closed = True
        with contextlib.suppress(OSError):
            self._server.shutdown(socket.SHUT_RDWR)
        self._server.close()


def _pipe(source: socket.socket, sink: socket.socket) -> None:
    """Copy until either side closes, then close both."""
    try:
        while True:
            data = source.recv(65536)
            if not data:
                break
            sink.sendall(data)
    except OSError:
        pass
    finally:
        for s in (source, sink):
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
            s.close()
