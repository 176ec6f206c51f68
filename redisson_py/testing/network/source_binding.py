"""Make TCP connections to 127.0.0.0/8 leave from a chosen loopback address.

Test-harness code only, never for production clients: it replaces
``socket.socket.connect`` and ``connect_ex`` for the whole process. It exists because a
partition cuts addresses, and a client must leave from its side's address to be on that
side, while redis-py (and so redisson-py) has no source-address option. The wrapper binds
an unbound AF_INET stream socket to ``(source, 0)`` just before it connects to a 127.x
address other than ``source`` itself. asyncio's event loops call ``sock.connect`` on the
socket object, so ``redis.asyncio`` clients are covered too (uvloop is not: it connects
in C).

Two scopes:

- `bind_process` (a client started by ``topology.network.popen``): every thread of
  the process;
- `bind_namespace` (``topology.network.joined``): only sockets made by threads that
  are in the given network namespace (by its inode), so the rest of the test process is
  left alone.

`exempt` lets the harness's own connections (always from 127.0.0.1, which no cut
touches) through untouched.
"""

from __future__ import annotations

import contextlib
import ipaddress
import socket
import threading
from collections.abc import Iterator
from typing import Any

from redisson_py.testing.errors import TopologyError
from redisson_py.testing.network.namespace import thread_namespace_inode

__all__ = ["bind_namespace", "bind_process", "exempt", "source_for_calling_thread"]

_LOOPBACK = ipaddress.IPv4Network("127.0.0.0/8")

_lock = threading.Lock()
_process_source: str | None = None
# namespace inode -> (source address, how many open bind_namespace blocks use it)
_namespace_sources: dict[int, tuple[str, int]] = {}
_local = threading.local()
_installed = False
_original_connect: Any = None
_original_connect_ex: Any = None


def _install() -> None:
    global _installed, _original_connect, _original_connect_ex  # noqa: PLW0603 - once
    with _lock:
        if _installed:
            return
        _original_connect = socket.socket.connect
        _original_connect_ex = socket.socket.connect_ex

        def connect(self: socket.socket, address: Any) -> None:
            _bind_source(self, address)
            _original_connect(self, address)

        def connect_ex(self: socket.socket, address: Any) -> int:
            _bind_source(self, address)
            result: int = _original_connect_ex(self, address)
            return result

        socket.socket.connect = connect  # type: ignore[method-assign,assignment]
        socket.socket.connect_ex = connect_ex  # type: ignore[method-assign,assignment]
        _installed = True


def source_for_calling_thread() -> str | None:
    """The address this thread's new connections to 127.x leave from, or None."""
    if getattr(_local, "exempt", False):
        return None
    if _process_source is not None:
        return _process_source
    if not _namespace_sources:
        return None
    try:
        inode = thread_namespace_inode()
    except OSError:
        return None
    entry = _namespace_sources.get(inode)
    return entry[0] if entry else None


def _bind_source(sock: socket.socket, address: Any) -> None:
    if _process_source is None and not _namespace_sources:
        return
    if sock.family != socket.AF_INET or sock.type != socket.SOCK_STREAM:
        return
    if not isinstance(address, tuple) or not address or not isinstance(address[0], str):
        return
    try:
        target = ipaddress.IPv4Address(address[0])
    except ValueError:
        return  # a name: not one of ours (the harness writes addresses, never names)
    source = source_for_calling_thread()
    if source is None or target not in _LOOPBACK or str(target) == source:
        return
    if sock.getsockname() != ("0.0.0.0", 0):
        return  # bound by its owner: respected
    sock.bind((source, 0))


def bind_process(source: str) -> None:
    """From now on, every thread's TCP connections to 127.x leave from ``source``."""
    global _process_source  # noqa: PLW0603 - process-wide by design
    _install()
    _process_source = source


@contextlib.contextmanager
def bind_namespace(namespace_inode: int, source: str) -> Iterator[None]:
    """For the block, connections made by threads in the namespace ``namespace_inode``
    leave from ``source``.

    Blocks nest for the same source. Raises
    [`TopologyError`][redisson_py.testing.TopologyError] if another source is bound in
    that namespace: a thread started inside a block can only be told apart by its
    namespace, so one process holds one side of a namespace at a time.
    """
    _install()
    with _lock:
        current = _namespace_sources.get(namespace_inode)
        if current is not None and current[0] != source:
            raise TopologyError(
                f"this process is joined to the topology's network as {current[0]} already; "
                f"one process takes one client address at a time (run the other client "
                "with topology.network.popen)."
            )
        _namespace_sources[namespace_inode] = (source, (current[1] if current else 0) + 1)
    try:
        yield
    finally:
        with _lock:
            address, count = _namespace_sources[namespace_inode]
            if count > 1:
                _namespace_sources[namespace_inode] = (address, count - 1)
            else:
                del _namespace_sources[namespace_inode]


@contextlib.contextmanager
def exempt() -> Iterator[None]:
    """Sockets the calling thread connects in the block keep the kernel's source address."""
    before = getattr(_local, "exempt", False)
    _local.exempt = True
    try:
        yield
    finally:
        _local.exempt = before
