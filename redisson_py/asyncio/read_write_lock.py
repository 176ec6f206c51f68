"""The read-write lock (Redisson's ``RReadWriteLock``, same keys and channel)."""

from __future__ import annotations

from typing import Any

from redisson_py.asyncio.lock import Lock
from redisson_py.core.flows.lock_kinds import READ, WRITE
from redisson_py.core.handles import check_name
from redisson_py.core.state.holds import LostCallback


class ReadLock(Lock):
    """The shared half of a [`ReadWriteLock`][redisson_py.asyncio.ReadWriteLock]: any
    number of owners hold it at once while nobody holds the write lock (and the write
    lock's holder may take it too).

    Each read hold has its own timeout key, renewed by the watchdog (or leased), so a
    dead reader's hold runs out on its own. ``is_locked()`` is True while anyone holds a
    read hold; ``force_unlock()`` frees the lock only when it is held for reading.
    Everything else is [`Lock`][redisson_py.asyncio.Lock]'s: reentrant, leases, ``extend``, waiting.
    """

    kind = READ


class WriteLock(Lock):
    """The exclusive half of a [`ReadWriteLock`][redisson_py.asyncio.ReadWriteLock]: one
    owner holds it while nobody else holds either half. Its holder may also take the
    read lock; when it then releases its last write hold the lock stays read-held by it,
    and other readers may enter. ``is_locked()`` is True while it is write-held;
    ``force_unlock()`` frees the lock only when it is write-held. Everything else is
    [`Lock`][redisson_py.asyncio.Lock]'s."""

    kind = WRITE


class ReadWriteLock:
    """A pair of locks on one Redis hash:
    [`read_lock`][redisson_py.asyncio.ReadWriteLock.read_lock] (shared) and
    [`write_lock`][redisson_py.asyncio.ReadWriteLock.write_lock] (exclusive). Like
    Redisson's, it does not favour writers: while readers keep coming, a writer waits.
    Get one from the client's ``get_read_write_lock``."""

    def __init__(self, client: Any, name: str):
        self.name = check_name(name)
        self._client = client

    def read_lock(self, *, on_lock_lost: LostCallback | None = None) -> ReadLock:
        """The shared lock (Redisson's ``readLock()``)."""
        return ReadLock(self._client, self.name, on_lock_lost=on_lock_lost)

    def write_lock(self, *, on_lock_lost: LostCallback | None = None) -> WriteLock:
        """The exclusive lock (Redisson's ``writeLock()``)."""
        return WriteLock(self._client, self.name, on_lock_lost=on_lock_lost)

    def __repr__(self) -> str:
        return f"<ReadWriteLock {self.name!r}>"
