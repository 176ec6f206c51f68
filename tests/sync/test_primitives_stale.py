"""The threaded shell's check of an idle connection before a call is sent on it."""

from __future__ import annotations

import socket

from redisson_py.sync._primitives import stale


class _Connection:
    """What ``stale`` reads of a redis-py connection: its socket and ``can_read``."""

    def __init__(self, sock: socket.socket | None):
        self._sock = sock

    def can_read(self, timeout: float = 0) -> bool:
        return True  # bytes waiting on an idle connection: EOF, a reset, or out of step


def test_an_idle_connection_is_stale_once_its_socket_has_something_to_read() -> None:
    ours, server = socket.socketpair()
    connection = _Connection(ours)
    try:
        assert not stale(connection)
        assert not stale(connection)  # the kept poller asks again
        server.close()  # the server went away: EOF to read
        assert stale(connection)
        # A reconnect brings a new socket: it is polled, not the old one.
        fresh, peer = socket.socketpair()
        connection._sock = fresh
        assert not stale(connection)
        peer.sendall(b"+stray\r\n")
        assert stale(connection)
        fresh.close()
        peer.close()
    finally:
        ours.close()
    assert not stale(_Connection(None))  # never connected: it connects on send
