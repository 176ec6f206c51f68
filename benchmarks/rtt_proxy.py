"""A loopback TCP proxy that counts round trips, for the watchdog benchmark.

It forwards 127.0.0.1:``port`` to a redis-server on 127.0.0.1 and parses the RESP
traffic of every connection in both directions, counting commands (client to server)
and complete replies (server to client). A *flight* (a round trip as the client lives
it) starts when the client sends while every command it sent before has had its reply
delivered; everything the client sends until then belongs to the same flight, however
many commands or TCP segments it takes. A pipelined batch is one flight; N commands sent
one after another, each waiting for its reply, are N flights.

When the last reply of a flight has been counted, the flight ends only if nothing the
client sent is waiting in the proxy's socket: bytes already there were sent before the
client could have seen that reply (loopback delivers a send into the receiver's buffer
within the send call), so they continue the flight. Reading from the client and that
check hold the same lock, so no byte is between the socket and the count at the check.

:class:`DelayProxy` is the other use of a loopback proxy here: it adds a fixed round
trip (half on the way to the server, half on the way back), the RedLock benchmark's
stand-in for masters that are not on this machine. :func:`serve_delayed` runs such
proxies in a process of their own, so their threads take no CPU time (and no GIL) from
the client being measured.
"""

from __future__ import annotations

import queue
import select
import socket
import threading
import time
from dataclasses import dataclass, field
from multiprocessing.connection import Connection

from redisson_py.core.effects import Script
from redisson_py.testing.faults.proxy import LoopbackProxy

_CHUNK = 65536
_AGGREGATES = {ord("*"), ord("%"), ord("~"), ord(">"), ord("|")}
_BULKS = {ord("$"), ord("="), ord("!")}


def _skip_value(buffer: bytes | bytearray, pos: int) -> int | None:
    """Position after the RESP2/RESP3 value starting at ``pos``; None if incomplete."""
    pending = 1  # values still to skip (aggregates add their elements)
    while pending:
        end = buffer.find(b"\r\n", pos)
        if end < 0:
            return None
        kind = buffer[pos]
        pending -= 1
        if kind in _BULKS:
            length = int(buffer[pos + 1 : end])
            pos = end + 2
            if length >= 0:
                if len(buffer) < pos + length + 2:
                    return None
                pos += length + 2
        elif kind in _AGGREGATES:
            count = int(buffer[pos + 1 : end])
            pos = end + 2
            if count > 0:
                pending += count * 2 if kind in (ord("%"), ord("|")) else count
            if kind == ord("|"):
                pending += 1  # an attribute precedes the value it describes
        else:
            pos = end + 2
    return pos


def _command_name_and_sha(buffer: bytes | bytearray, start: int, end: int) -> tuple[bytes, bytes]:
    """The first two arguments of the command in ``buffer[start:end]`` (array of bulks)."""
    args: list[bytes] = []
    pos = buffer.find(b"\r\n", start) + 2  # past "*N"
    while pos < end and len(args) < 2:
        line_end = buffer.find(b"\r\n", pos)
        length = int(buffer[pos + 1 : line_end])
        args.append(bytes(buffer[line_end + 2 : line_end + 2 + length]))
        pos = line_end + 2 + length + 2
    name = args[0].upper() if args else b""
    return name, args[1] if len(args) > 1 else b""


def _has_unread(sock: socket.socket) -> bool:
    """True when bytes are waiting in ``sock``'s receive buffer."""
    try:
        return bool(sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT))
    except (BlockingIOError, InterruptedError):
        return False
    except OSError:
        return False


@dataclass
class FlightLog:
    """What one connection did; times are ``time.monotonic()``."""

    commands: int = 0
    replies: int = 0
    flights: list[tuple[float, str]] = field(default_factory=list)
    """(start time, the flight's first command: its name, or "marked" for the marked
    script)."""
    marked_commands: int = 0
    wait_commands: int = 0
    """``WAIT``/``WAITAOF`` commands (replica acknowledgements asked for)."""
    in_flight: bool = False


class CountingProxy(LoopbackProxy):
    """Forward 127.0.0.1:``port`` to 127.0.0.1:``target_port``, counting flights.

    ``marker`` is a script: ``EVALSHA <its sha1>`` and ``EVAL <its source>`` commands are
    counted apart and flights that start with one are labelled ``"marked"``. Threads, no asyncio.
    """

    name = "counting-proxy"

    def __init__(self, target_port: int, marker: Script):
        self._marked = {(b"EVALSHA", marker.sha.encode()), (b"EVAL", marker.source.encode())}
        self._logs: list[FlightLog] = []
        super().__init__(target_port)

    def logs(self) -> list[FlightLog]:
        with self._lock:
            return [
                FlightLog(
                    log.commands,
                    log.replies,
                    list(log.flights),
                    log.marked_commands,
                    log.wait_commands,
                )
                for log in self._logs
            ]

    def _connection_state(self) -> FlightLog:
        log = FlightLog()
        with self._lock:
            self._logs.append(log)
        return log

    def _up(self, client: socket.socket, server: socket.socket, log: FlightLog) -> None:
        pending = bytearray()
        first_at: float | None = None  # a flight has started; its first command is pending
        while True:
            select.select([client], [], [])
            with self._lock:
                try:
                    chunk = client.recv(_CHUNK, socket.MSG_DONTWAIT)
                except BlockingIOError:
                    continue
                if not chunk:
                    return
                if not log.in_flight and log.commands == log.replies:
                    log.in_flight = True
                    first_at = time.monotonic()
                pending += chunk
                pos = 0
                while (end := _skip_value(pending, pos)) is not None:
                    name, sha = _command_name_and_sha(pending, pos, end)
                    marked = (name, sha) in self._marked
                    if first_at is not None:
                        label = "marked" if marked else name.decode(errors="replace")
                        log.flights.append((first_at, label))
                        first_at = None
                    log.marked_commands += marked
                    log.wait_commands += name.upper() in (b"WAIT", b"WAITAOF")
                    log.commands += 1
                    pos = end
                del pending[:pos]
            server.sendall(chunk)

    def _down(self, server: socket.socket, client: socket.socket, log: FlightLog) -> None:
        pending = bytearray()
        while chunk := server.recv(_CHUNK):
            # Counted before the client can see it, so a command the client sends
            # after reading its last reply always finds the flight over.
            with self._lock:
                pending += chunk
                pos = 0
                while (end := _skip_value(pending, pos)) is not None:
                    log.replies += 1
                    pos = end
                del pending[:pos]
                if log.replies == log.commands and not _has_unread(client):
                    log.in_flight = False
            client.sendall(chunk)


class DelayProxy(LoopbackProxy):
    """Forward 127.0.0.1:``port`` to 127.0.0.1:``target_port`` with ``delay`` seconds added
    to every round trip: each chunk is passed on ``delay / 2`` after it arrived, in both
    directions. A delay line per direction (a receiving thread stamps chunks, a sending
    thread waits for each one's time), so a pipelined burst is delayed once, not once per
    chunk, and pub/sub messages come late by the same half delay as replies."""

    name = "delay-proxy"

    def __init__(self, target_port: int, delay: float):
        self.delay = delay
        super().__init__(target_port)

    def _up(self, client: socket.socket, server: socket.socket, state: object) -> None:
        self._delayed(client, server)

    def _down(self, server: socket.socket, client: socket.socket, state: object) -> None:
        self._delayed(server, client)

    def _delayed(self, source: socket.socket, sink: socket.socket) -> None:
        line: queue.SimpleQueue[tuple[float, bytes] | None] = queue.SimpleQueue()
        half = self.delay / 2

        def send() -> None:
            while (item := line.get()) is not None:
                due, chunk = item
                pause = due - time.monotonic()
                if pause > 0:
                    time.sleep(pause)
                try:
                    sink.sendall(chunk)
                except OSError:
                    return

        sender = threading.Thread(target=send, name=f"{self.name}-send", daemon=True)
        sender.start()
        try:
            while chunk := source.recv(_CHUNK):
                line.put((time.monotonic() + half, chunk))
        finally:
            line.put(None)
            sender.join(timeout=2)


def serve_delayed(conn: Connection, ports: list[int], delay: float) -> None:
    """A process's body: a :class:`DelayProxy` in front of each of ``ports``; sends the
    proxies' ports on ``conn``, then serves until anything arrives on it."""
    proxies = [DelayProxy(port, delay) for port in ports]
    try:
        conn.send([proxy.port for proxy in proxies])
        conn.recv()
    finally:
        for proxy in proxies:
            proxy.close()
