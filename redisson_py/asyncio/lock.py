"""The reentrant distributed lock (Redisson's ``RLock``), owned by a task."""

from __future__ import annotations

from types import TracebackType
from typing import Self

from redisson_py.asyncio import _primitives as primitives
from redisson_py.asyncio.driver import run
from redisson_py.core.flows import handoff
from redisson_py.core.flows import lock as lock_flows
from redisson_py.core.handles import LockHandle, acquire_wait, check_lease, check_wait, owner_of

current_owner_id = primitives.current_owner_id


class LockProtocol:
    """`asyncio.Lock`'s protocol for every lock of this package: ``acquire``,
    ``release``, ``locked`` and the context manager, in terms of the lock's own
    ``lock``/``try_lock``/``unlock``/``is_locked``. ``acquire`` takes the arguments of
    `threading.Lock.acquire` in both APIs, and ``locked`` asks Redis: whether a
    distributed lock is held is known only there."""

    def _protocol_name(self) -> str:
        raise NotImplementedError

    async def lock(self, lease_time: float | None = None) -> None:
        raise NotImplementedError

    async def try_lock(self, wait_time: float = 0.0, lease_time: float | None = None) -> bool:
        raise NotImplementedError

    async def unlock(self) -> None:
        raise NotImplementedError

    async def is_locked(self) -> bool:
        raise NotImplementedError

    async def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        """Take the lock, kept by the watchdog: wait for ever (the default), try once
        (``blocking=False``) or wait up to ``timeout`` seconds (-1: for ever); True if
        taken. A non-blocking acquire with a timeout is an
        [`ArgumentError`][redisson_py.errors.ArgumentError], as for `threading.Lock`."""
        wait = acquire_wait(self._protocol_name(), blocking, timeout)
        if wait is None:
            await self.lock()
            return True
        return await self.try_lock(wait)

    async def release(self) -> None:
        """Same as ``unlock()``."""
        await self.unlock()

    async def locked(self) -> bool:
        """Same as ``is_locked()``: held by anyone, asked of Redis."""
        return await self.is_locked()

    async def __aenter__(self) -> Self:
        await self.lock()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.unlock()


class Lock(LockHandle, LockProtocol):
    """A reentrant lock on a Redis key, owned by the task that takes it.

    Reentrant: the owning task may take it again and must release it as many times.
    ``lease_time`` (seconds) makes a hold expire on its own, never renewed; without it
    the client's watchdog keeps the key alive (watchdog timeout, renewed every third of
    it) until ``unlock()``. A hold is safe until its safe end: its last confirmed write
    (the grant, a renewal the replicas acknowledged when replica sync is on, an
    extension), counted from when it was sent, plus its TTL, less TTL x 1% + 50 ms. At
    its safe end the holder is told (``on_lock_lost``, a ``lost`` event), and
    ``unlock()`` raises. A waiter subscribes to the lock's channel and wakes on the
    release or after the holder's remaining TTL at the latest. A task interrupted while
    its acquire is in flight undoes that acquire if it was applied.

    Get one from the client's ``get_lock``. Also an async context manager and a stand-in
    for `asyncio.Lock` (see `LockProtocol`).
    """

    def _protocol_name(self) -> str:
        return self.name

    async def lock(self, lease_time: float | None = None) -> None:
        """Wait until this task holds the lock.

        Waits through failovers: connection errors and grants the replicas did not
        acknowledge are retried for as long as it waits, with a WARNING log line at the
        first failure and every tenth after it. Use
        [`try_lock`][redisson_py.asyncio.Lock.try_lock] for a deadline.
        """
        lease = check_lease(self.name, lease_time)
        await run(self._flow(self._owner(), lock_flows.try_lock, None, lease))

    async def try_lock(self, wait_time: float = 0.0, lease_time: float | None = None) -> bool:
        """Take the lock if it can be had within ``wait_time`` seconds; True if taken.

        Raises [`NoSyncedReplicasError`][redisson_py.errors.NoSyncedReplicasError] when
        the master granted it but its replicas did not acknowledge in time until the
        deadline (the grant is undone).
        """
        wait, lease = check_wait(self.name, wait_time), check_lease(self.name, lease_time)
        acquired: bool = await run(self._flow(self._owner(), lock_flows.try_lock, wait, lease))
        return acquired

    def _owner(self) -> int:
        owner = self.owner_id
        return current_owner_id() if owner is None else int(owner)

    async def extend(self, seconds: float) -> None:
        """Make this task's leased hold expire ``seconds`` from now (longer or
        shorter), atomically and only while it holds the lock.

        The client's watchdog then reports a loss only if the new lease runs out while
        held. Raises [`LockNotOwnedError`][redisson_py.errors.LockNotOwnedError] when
        this task holds nothing (or its hold was reported lost),
        [`ArgumentError`][redisson_py.errors.ArgumentError] for ``seconds`` under 0.001
        or for a hold taken without a lease (the watchdog renews that one; it has no
        lease to extend), and, with replica sync on,
        [`NoSyncedReplicasError`][redisson_py.errors.NoSyncedReplicasError] when the
        replicas did not acknowledge the extension (the hold then stays safe only until
        the earlier of its old and new lease end).
        """
        seconds = self._check_extension(self.name, seconds)
        await run(self._flow(self._owner(), lock_flows.extend, seconds))

    def owned_by(self, owner_id: int) -> Lock:
        """This lock acting for owner ``owner_id`` (a task's
        [`current_owner_id`][redisson_py.asyncio.current_owner_id]) instead of the
        current task: Redisson's explicit thread-id overloads, to hand a hold from one
        task to another.

        Task A takes the lock and passes ``current_owner_id()`` to task B, which
        releases with ``lock.owned_by(a_id).unlock()``. Every method of the view acts for
        that owner (``lock``, ``try_lock``, ``unlock``, ``extend``, ``hold_count``...).

        Risks, all the caller's to manage: both tasks now act as one owner, so the
        lock excludes neither from the other (reentrancy counts their holds together);
        a watchdog hold stays renewed until that owner's last ``unlock()``, so a hold
        handed to a task that never releases it is kept until the client shuts down;
        and an ``unlock()`` through the wrong view releases someone else's hold (or
        raises [`LockNotOwnedError`][redisson_py.errors.LockNotOwnedError]). The view copies
        ``on_lock_lost`` as it is now.
        """
        view: Lock = self._view(owner_of(self.name, owner_id))
        return view

    async def export_hold(self) -> str:
        """Hand this task's hold (every reentrant count of it) to another client or
        process: return a token (a string, see ``docs/handoff.md`` for its format; no
        secret in it) for [`adopt_hold`][redisson_py.asyncio.Redisson.adopt_hold].

        One round trip: the hold is renewed (a leased one only checked) and an adoption
        ticket written that expires with it. From then this client no longer renews it,
        never reports it lost and does not release it at shutdown, and this task's
        ``unlock()`` raises [`LockNotOwnedError`][redisson_py.errors.LockNotOwnedError]:
        the adopter must adopt within the token's ``ttl_ms`` (the watchdog timeout; a
        leased hold's remaining lease), else the hold expires. Raises
        [`HandOffError`][redisson_py.errors.HandOffError] (``reason`` ``"not-held"``,
        ``"group"``, ``"readers-inside"``) when the hold cannot be exported; then, as
        after a connection error, the hold is still this task's.
        """
        owner = self._owner()
        token: str = await run(self._flow(owner, handoff.export_hold, str(owner)))
        return token

    async def unlock(self) -> None:
        """Release one hold. Raises [`LockNotOwnedError`][redisson_py.errors.LockNotOwnedError] (a
        ``RuntimeError``) if this task holds none, or its hold was reported lost."""
        await run(self._flow(self._owner(), lock_flows.unlock))

    async def force_unlock(self) -> bool:
        """Delete the lock whoever holds it; True if it was locked."""
        result: bool = await run(self._flow(self._owner(), lock_flows.force_unlock))
        return result

    async def is_locked(self) -> bool:
        """True when any owner holds the lock."""
        result: bool = await run(self._flow(self._owner(), lock_flows.is_locked))
        return result

    async def is_held_by_current_task(self) -> bool:
        """True when this task (or, for an ``owned_by`` view, its owner) holds it; False
        once the client reported this owner's hold lost (until it acquires again),
        whatever a node it still reaches says."""
        result: bool = await run(self._flow(self._owner(), lock_flows.is_held))
        return result

    is_held_by_current_thread = is_held_by_current_task  # async only
    """The threaded API's name, for code written against both."""  # async only

    async def hold_count(self) -> int:
        """How many holds this task has (0 when none, or when its hold was reported
        lost)."""
        result: int = await run(self._flow(self._owner(), lock_flows.hold_count))
        return result

    async def remain_time_to_live(self) -> float | None:
        """Seconds until the lock's key expires; None when it is not locked."""
        owner = self._owner()
        result: float | None = await run(self._flow(owner, lock_flows.remain_time_to_live))
        return result
