"""A loopback TCP proxy that loses replies on purpose: the "lost reply" fault.

A client talks to the proxy, the proxy to one Redis node, both on 127.0.0.1. Armed with
:meth:`ReplyDropper.drop_reply_of`, it forwards the next command whose bytes contain a
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

_CHUNK = 65536


class ReplyDropper:
    """Forward 127.0.0.1:``port`` to 127.0.0.1:``target_port``; drop chosen replies."""

    def __init__(self, target_port: int, *, host: str = "127.0.0.1"):
        self._target = (host, target_port)
        self._listener = socket.create_server((host, 0))
        self.port: int = self._listener.getsockname()[1]
        self._lock = threading.Lock()
        self._markers: list[bytes] = []
        self._sockets: set[socket.socket] = set()
        self._closed = False
        self.dropped = 0
        """How many replies were dropped so far."""
        self._thread = threading.Thread(target=self._accept, name="reply-dropper", daemon=True)
        self._thread.start()

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
            with self._lock:
                self._sockets |= {client, server}
            drop = threading.Event()
            pumps = ((self._pump_up, client, server), (self._pump_down, server, client))
            for pump, source, sink in pumps:
                threading.Thread(target=pump, args=(source, sink, drop), daemon=True).start()

    def _pump_up(self, client: socket.socket, server: socket.socket, drop: threading.Event) -> None:
        try:
            while chunk := client.recv(_CHUNK):
                if self._take_marker(chunk):
                    drop.set()
                server.sendall(chunk)
        except OSError:
            pass
        self._close_pair(client, server)

    def _pump_down(
        self, server: socket.socket, client: socket.socket, drop: threading.Event
    ) -> None:
        try:
            while chunk := server.recv(_CHUNK):
                if drop.is_set():
                    # The server executed the command; its reply never reaches the client.
                    with self._lock:
                        self.dropped += 1
                    break
                client.sendall(chunk)
        except OSError:
            pass
        self._close_pair(client, server)

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

    def __enter__(self) -> ReplyDropper:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()
