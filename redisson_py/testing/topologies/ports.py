"""Free TCP ports on 127.0.0.1 for the nodes of a topology.

Ports are drawn at random from 11000-21999. The range is chosen so that neither a node's
port nor its cluster bus port (port + 10000, Redis's default offset, which every Redis
version supports) falls in Linux's ephemeral range (32768 and up by default), where the
kernel hands out local ports to outgoing connections and could take one between our check
and the node's bind. Drawing at random keeps concurrent test runs on one machine from
colliding; a collision that still happens is reported by the node's failure to bind and
the harness retries with new ports (see ``bootstrap``).

A port is *free* when a socket with ``SO_REUSEADDR`` (as Redis binds) can bind it on
127.0.0.1. A port handed out is also *claimed* until released: in this process (a set)
and across processes (a file named after the port in ``<tmp>/redisson-py-ports``, holding
the owner's pid and start time). Claims matter between a port's choice and its bind, and
while a node is down on purpose (killed, stopped): another test run must not put a node
of its own there, or the first topology's sentinels and cluster would adopt that node as
one of theirs when they find it at the address they remember. A claim whose owner died is
void and is taken over.
"""

from __future__ import annotations

import contextlib
import errno
import os
import random
import socket
import tempfile
import threading
from collections.abc import Iterable
from pathlib import Path

from redisson_py.testing.backends.procinfo import owner_alive, process_start_time
from redisson_py.testing.errors import TopologyError

__all__ = [
    "BUS_PORT_OFFSET",
    "PORT_RANGE",
    "PortTakenError",
    "allocate_ports",
    "is_port_free",
    "prune_claims",
    "release_ports",
    "reserve_ports",
]

HOST = "127.0.0.1"
BUS_PORT_OFFSET = 10000
PORT_RANGE = range(11000, 22000)

_lock = threading.Lock()
_reserved: set[int] = set()
_random = random.SystemRandom()


class PortTakenError(TopologyError):
    """A port asked for explicitly (``base_port``) is already in use on 127.0.0.1."""

    def __init__(self, message: str, port: int):
        super().__init__(message)
        self.port = port


def is_port_free(port: int) -> bool:
    """Whether a listening socket could bind ``127.0.0.1:port`` right now."""
    if not 0 < port < 65536:
        return False
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((HOST, port))
        except OSError as exc:
            if exc.errno in (errno.EADDRINUSE, errno.EACCES, errno.EADDRNOTAVAIL):
                return False
            raise
    return True


def _claims_dir() -> Path:
    directory = Path(tempfile.gettempdir()) / "redisson-py-ports"
    if not directory.is_dir():
        with contextlib.suppress(FileExistsError):
            directory.mkdir()
            # Shared by every user of the machine, like /tmp: ports are machine-wide.
            directory.chmod(0o1777)
    return directory


def _claim_holder(port: int) -> int | None:
    """The pid of the live process claiming ``port``, or None (a dead one's claim is voided)."""
    path = _claims_dir() / str(port)
    try:
        pid_text, _, start_text = path.read_text().partition(" ")
        pid, start = int(pid_text), int(start_text or 0)
    except (OSError, ValueError):
        return None
    if pid == os.getpid() or owner_alive(pid, start):
        return pid
    with contextlib.suppress(OSError):
        path.unlink()
    return None


def prune_claims() -> int:
    """Remove the claims of dead processes; return how many were removed."""
    removed = 0
    with contextlib.suppress(OSError):
        for path in _claims_dir().iterdir():
            if path.name.isdigit() and _claim_holder(int(path.name)) is None:
                removed += 1
    return removed


def _claim(port: int) -> bool:
    """Claim ``port`` for this process across processes; False if another live one has it."""
    me = os.getpid()
    owner = f"{me} {process_start_time(me) or 0}"
    for _ in range(2):
        try:
            fd = os.open(_claims_dir() / str(port), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            holder = _claim_holder(port)
            if holder is not None:
                return holder == me
            continue  # a dead owner's claim was removed: try again
        except OSError:
            return True  # claims are a courtesy; an unwritable directory must not block tests
        with os.fdopen(fd, "w") as handle:
            handle.write(owner)
        return True
    return False


def _unclaim(port: int) -> None:
    if _claim_holder(port) == os.getpid():
        with contextlib.suppress(OSError):
            (_claims_dir() / str(port)).unlink()


def _take(port: int, with_bus: bool) -> bool:
    """Reserve and claim ``port`` (and its bus port) if all of it is free; all or nothing."""
    wanted = [port, port + BUS_PORT_OFFSET] if with_bus else [port]
    if any(p in _reserved or not is_port_free(p) for p in wanted):
        return False
    claimed: list[int] = []
    for p in wanted:
        if not _claim(p):
            for q in claimed:
                _unclaim(q)
            return False
        claimed.append(p)
    _reserved.update(wanted)
    return True


def allocate_ports(count: int, *, with_bus: bool = False) -> list[int]:
    """Reserve ``count`` distinct free ports (and their bus ports when ``with_bus``).

    Raises [`TopologyError`][redisson_py.testing.TopologyError] if the range has no room
    left, which means something else holds thousands of ports on this machine.
    """
    chosen: list[int] = []
    with _lock:
        candidates = list(PORT_RANGE)
        _random.shuffle(candidates)
        for port in candidates:
            if len(chosen) == count:
                break
            if _take(port, with_bus):
                chosen.append(port)
        if len(chosen) < count:
            _release_locked(chosen, with_bus)
            raise TopologyError(
                f"found only {len(chosen)} of {count} free ports in "
                f"{PORT_RANGE.start}-{PORT_RANGE.stop - 1} on {HOST}; "
                "stop the programs holding them or pass base_port."
            )
    return chosen


def reserve_ports(ports: Iterable[int], *, with_bus: bool = False) -> list[int]:
    """Reserve exactly ``ports`` (given by the caller, e.g. from ``base_port``).

    Raises `PortTakenError` naming the first port (or bus port) that is taken;
    nothing stays reserved then.
    """
    wanted = list(ports)
    taken: list[int] = []
    with _lock:
        for port in wanted:
            bus = port + BUS_PORT_OFFSET
            if not 0 < port < 65536 or (with_bus and bus >= 65536):
                _release_locked(taken, with_bus)
                raise PortTakenError(
                    f"port {port} cannot be used (the cluster bus needs port + "
                    f"{BUS_PORT_OFFSET} below 65536); choose a base_port below "
                    f"{65536 - BUS_PORT_OFFSET - len(wanted)}.",
                    port,
                )
            if _take(port, with_bus):
                taken.append(port)
                continue
            _release_locked(taken, with_bus)
            for candidate in [port, bus] if with_bus else [port]:
                what = "cluster bus port" if candidate != port else "port"
                holder = _claim_holder(candidate)
                if candidate in _reserved or (holder is not None and holder == os.getpid()):
                    raise PortTakenError(
                        f"{what} {candidate} on {HOST} is already used by another topology of "
                        "this process; choose another base_port or leave it unset.",
                        candidate,
                    )
                if not is_port_free(candidate):
                    raise PortTakenError(
                        f"{what} {candidate} on {HOST} is already in use; free it, choose "
                        "another base_port, or leave base_port unset so the harness picks "
                        "free ports.",
                        candidate,
                    )
                if holder is not None:
                    raise PortTakenError(
                        f"{what} {candidate} on {HOST} is claimed by another test run (pid "
                        f"{holder}) for a node it has stopped; choose another base_port or "
                        "leave it unset.",
                        candidate,
                    )
            raise PortTakenError(f"port {port} on {HOST} could not be reserved; try again.", port)
    return taken


def release_ports(ports: Iterable[int], *, with_bus: bool = False) -> None:
    """Give ports back to the pool (the node using them has stopped for good)."""
    with _lock:
        _release_locked(list(ports), with_bus)


def _release_locked(ports: list[int], with_bus: bool) -> None:
    for port in ports:
        for p in [port, port + BUS_PORT_OFFSET] if with_bus else [port]:
            _reserved.discard(p)
            _unclaim(p)
