"""A loopback TCP proxy that loses replies on purpose: the "lost reply" fault.

A client talks to the proxy, the proxy to one Redis node, both on 127.0.0.1. Armed with
`ReplyDropper.drop_reply_of`, it forwards the next command whose bytes contain a
marker (a script's SHA1, say), lets the server execute it, and then cuts that
connection instead of forwarding the reply: exactly the case where a client cannot
know whether its command was applied, and must retry without applying it twice.

Used by the tests and the chaos suite; also usable for your own. Threads, no asyncio,
so it serves sync and asyncio clients alike.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from types import TracebackType
from typing import Any, Self

_CHUNK = 65536


class LoopbackProxy:
    """Forward 127.0.0.1:``port`` to 127.0.0.1:``target_port``, one thread per direction.

    Subclasses say what happens to the bytes of each direction (`_up`, client to
    server; `_down`, server to client); this class accepts, connects, tracks the
    sockets and closes them. ``TCP_NODELAY`` on both sides: a proxy must not add Nagle's
    delays to what it measures or breaks.
    """

    name = "loopback-proxy"

    def __init__(
        self,
        target_port: int,
        *,
        host: str = "127.0.0.1",
        listen: tuple[str, int] | None = None,
    ):
        self._target = (host, target_port)
        # ``listen``: another (address, port) to accept on than (host, a free port).
        self._listener = socket.create_server(listen or (host, 0))
        self.address: str = self._listener.getsockname()[0]
        self.port: int = self._listener.getsockname()[1]
        self._lock = threading.Lock()
        self._sockets: set[socket.socket] = set()
        self._closed = False
        self._thread = threading.Thread(target=self._accept, name=self.name, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            try:
                server = socket.create_connection(self._target)
            except OSError:
                client.close()
                continue
            for sock in (client, server):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with self._lock:
                self._sockets |= {client, server}
            state = self._connection_state()
            for pump, source, sink in ((self._up, client, server), (self._down, server, client)):
                args = (pump, source, sink, state)
                threading.Thread(target=self._pump, args=args, daemon=True).start()

    @property
    def open_connections(self) -> int:
        """How many client connections the proxy forwards right now."""
        with self._lock:
            return len(self._sockets) // 2

    def _connection_state(self) -> object:
        """Per-connection state shared by its two directions (None by default)."""
        return None

    def _pump(self, pump: Any, source: socket.socket, sink: socket.socket, state: object) -> None:
        with contextlib.suppress(OSError, ValueError):  # the connection ended either way
            pump(source, sink, state)
        self._close_pair(source, sink)

    def _up(self, client: socket.socket, server: socket.socket, state: Any) -> None:
        while chunk := client.recv(_CHUNK):
            server.sendall(chunk)

    def _down(self, server: socket.socket, client: socket.socket, state: Any) -> None:
        while chunk := server.recv(_CHUNK):
            client.sendall(chunk)

    def _close_pair(self, *pair: socket.socket) -> None:
        for sock in pair:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()
            with self._lock:
                self._sockets.discard(sock)

    def close(self) -> None:
        """Stop accepting and close every forwarded connection."""
        self._closed = True
        self._listener.close()
        with self._lock:
            sockets = list(self._sockets)
        self._close_pair(*sockets)
        self._thread.join(timeout=2)

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


class ReplyDropper(LoopbackProxy):
    """Forward 127.0.0.1:``port`` to 127.0.0.1:``target_port``; drop chosen replies."""

    name = "reply-dropper"

    def __init__(self, target_port: int, *, host: str = "127.0.0.1"):
        self._markers: list[bytes] = []
        self.dropped = 0
        """How many replies were dropped so far."""
        super().__init__(target_port, host=host)

    def drop_reply_of(self, marker: bytes | str, times: int = 1) -> None:
        """Lose the reply of the next ``times`` commands whose bytes contain ``marker``."""
        data = marker.encode() if isinstance(marker, str) else marker
        with self._lock:
            self._markers.extend([data] * times)

    def _take_marker(self, chunk: bytes) -> bool:
        with self._lock:
            for index, marker in enumerate(self._markers):
                if marker in chunk:
                    del self._markers[index]
                    return True
        return False

    def _connection_state(self) -> threading.Event:
        return threading.Event()  # set: drop the next reply, and the connection

    def _up(self, client: socket.socket, server: socket.socket, drop: threading.Event) -> None:
        while chunk := client.recv(_CHUNK):
            if self._take_marker(chunk):
                drop.set()
            server.sendall(chunk)

    def _down(self, server: socket.socket, client: socket.socket, drop: threading.Event) -> None:
        while chunk := server.recv(_CHUNK):
            if drop.is_set():
                # The server executed the command; its reply never reaches the client.
                with self._lock:
                    self.dropped += 1
                return
            client.sendall(chunk)
