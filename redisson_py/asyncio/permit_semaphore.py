"""The permit-expirable semaphore (Redisson's ``RPermitExpirableSemaphore``, same keys
and channel)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import overload

from redisson_py.asyncio.driver import run
from redisson_py.core.flows import permit_semaphore, semaphore, synchronizers
from redisson_py.core.handles import check_lease, check_wait
from redisson_py.core.synchronizer_handles import (
    MAX_PERMITS,
    ObjectHandle,
    check_int,
    check_permit_id,
)
from redisson_py.errors import ArgumentError


class PermitExpirableSemaphore(ObjectHandle):
    """A semaphore whose permits have ids and, optionally, leases: a permit that is not
    released before its lease ends comes back by itself, so a holder that dies gives
    its permits back. Redisson's ``RPermitExpirableSemaphore`` layout: available permits
    at the key ``name``, acquired ones in the sorted set ``{name}:timeout`` (each id
    scored by its expiry), announcements on ``redisson_sc:{name}``.

    Set the number of permits once, with
    [`try_set_permits`][redisson_py.asyncio.PermitExpirableSemaphore.try_set_permits]
    (or [`add_permits`][redisson_py.asyncio.PermitExpirableSemaphore.add_permits]). Each
    acquire takes one permit (``permits=n``: n at once, all or none) and returns its id,
    32 hex digits, which any task may later release. Expiries are wall-clock times of
    the clients, as in Redisson: keep the clients' clocks in step (NTP) to well within a
    lease.

    Get one from the client's ``get_permit_expirable_semaphore``.
    """

    layout = permit_semaphore.LAYOUT

    def _lease(self, lease_time: float | None) -> float | None:
        return check_lease(self.name, lease_time, what=self.layout.label, none="no lease")

    def _count(self, permits: int) -> int:
        return check_int(self._subject, "permits", permits, low=1)

    @overload
    async def acquire(self, lease_time: float | None = None) -> str: ...

    @overload
    async def acquire(self, lease_time: float | None = None, *, permits: int) -> list[str]: ...

    async def acquire(
        self, lease_time: float | None = None, *, permits: int | None = None
    ) -> str | list[str]:
        """Wait until a permit is taken; its id. With ``lease_time`` (seconds) the
        permit comes back by itself that long after it was taken, unless released.

        With ``permits=n``, wait until ``n`` permits are taken at once, all or none (one
        script; Redisson's ``acquire(int permits)``, same data): the list of their ``n``
        ids, which share the lease. The waiter takes them as soon as ``n`` are
        available together at one of its attempts (it retries at each release and when
        the first lease ends); it is not queued, so takers of fewer permits may pass it
        while fewer are free.

        A leased permit is watched as a leased lock is: at its lease's safe end (the
        lease counted from the acquire's send, less the safety margin) the client's
        ``on_lock_lost`` callback gets a [`LockLost`][redisson_py.LockLost] naming the
        semaphore and the permit id, a ``lost`` event goes to the listeners, and
        [`release`][redisson_py.asyncio.PermitExpirableSemaphore.release] raises: before
        any other client can take the permit back.

        Waits through failovers, as the semaphore's ``acquire``; use
        [`try_acquire`][redisson_py.asyncio.PermitExpirableSemaphore.try_acquire] for a deadline.
        """
        lease = self._lease(lease_time)
        if permits is not None:
            count = self._count(permits)
            ids: list[str] = await run(
                self._flow(permit_semaphore.try_acquire_many, None, lease, count)
            )
            return ids
        permit: str | None = await run(self._flow(permit_semaphore.try_acquire, None, lease))
        assert permit is not None  # a wait without deadline returns only with a permit
        return permit

    @overload
    async def try_acquire(
        self, wait_time: float = 0.0, lease_time: float | None = None
    ) -> str | None: ...

    @overload
    async def try_acquire(
        self, wait_time: float = 0.0, lease_time: float | None = None, *, permits: int
    ) -> list[str]: ...

    async def try_acquire(
        self,
        wait_time: float = 0.0,
        lease_time: float | None = None,
        *,
        permits: int | None = None,
    ) -> str | list[str] | None:
        """Take a permit if one can be had within ``wait_time`` seconds; its id, or
        None. ``lease_time`` as for
        [`acquire`][redisson_py.asyncio.PermitExpirableSemaphore.acquire]. With
        ``permits=n``: ``n`` permits at once, all or none, as ``acquire``'s; the list
        of their ids, or an empty list (none taken) when ``n`` were not available
        together in time.

        Returns within ``wait_time`` plus one command timeout whatever the servers do; a
        waiter wakes when a permit is announced, when the first lease ends, or every few
        seconds. Raises
        [`NoSyncedReplicasError`][redisson_py.errors.NoSyncedReplicasError] as the
        semaphore's ``try_acquire``; a wait that ends without the permits leaves none
        taken.
        """
        wait = check_wait(self.name, wait_time, what=self.layout.label)
        lease = self._lease(lease_time)
        if permits is not None:
            count = self._count(permits)
            ids: list[str] = await run(
                self._flow(permit_semaphore.try_acquire_many, wait, lease, count)
            )
            return ids
        permit: str | None = await run(self._flow(permit_semaphore.try_acquire, wait, lease))
        return permit

    def _ids(self, permit_ids: str | Sequence[str]) -> list[bytes]:
        if isinstance(permit_ids, str):
            return [check_permit_id(self._subject, permit_ids)]
        if not isinstance(permit_ids, Sequence) or not permit_ids:
            raise ArgumentError(
                f"{self._subject}: give a permit id or a non-empty list of them, not {permit_ids!r}"
            )
        permits = [check_permit_id(self._subject, permit_id) for permit_id in permit_ids]
        if len(set(permits)) != len(permits):
            # All or nothing counts each id once: a repeated one could never be released.
            raise ArgumentError(f"{self._subject}: a permit id is given twice in {permit_ids!r}")
        return permits

    @overload
    async def try_release(self, permit_id: str) -> bool: ...

    @overload
    async def try_release(self, permit_id: Sequence[str]) -> int: ...

    async def try_release(self, permit_id: str | Sequence[str]) -> bool | int:
        """Release permit ``permit_id`` and wake a waiter; True when it was acquired and
        its lease had not ended, False otherwise (nothing changes). False also when this
        client reported the permit lost at its lease's safe end (see
        [`acquire`][redisson_py.asyncio.PermitExpirableSemaphore.acquire]); a permit the
        server still counted as acquired is released then.

        Given a list of ids (as ``acquire(permits=n)`` returns), release them in one
        script, all or nothing (Redisson's ``tryRelease`` of a list, since 3.41): when
        every one is acquired and its lease had not ended, all are released and their
        number returned; else none is and 0 is returned (also, without a call, when
        this client reported any of them lost).
        """
        if isinstance(permit_id, str):
            permit = check_permit_id(self._subject, permit_id)
            released: bool = await run(self._flow(permit_semaphore.try_release, permit))
            return released
        permits = self._ids(permit_id)
        count: int = await run(self._flow(permit_semaphore.try_release_many, permits))
        return count

    async def release(self, permit_id: str | Sequence[str]) -> None:
        """[`try_release`][redisson_py.asyncio.PermitExpirableSemaphore.try_release],
        raising [`PermitNotHeldError`][redisson_py.errors.PermitNotHeldError] (a
        ``ValueError``) when the permit is unknown, already released or expired, as
        Redisson raises ``IllegalArgumentException``, or was reported lost; the message
        says which. A list of ids is released in one script, all or nothing: it raises
        when any of them is not a safe hold, and then none is released (Redisson's
        ``release`` of a list, since 3.41)."""
        permits = self._ids(permit_id)
        await run(self._flow(permit_semaphore.release_many, permits))

    async def update_lease_time(self, permit_id: str, lease_time: float | None) -> bool:
        """Make permit ``permit_id`` come back ``lease_time`` seconds from now (None:
        never); True when it is acquired, False when unknown or already expired."""
        permit = check_permit_id(self._subject, permit_id)
        lease = self._lease(lease_time)
        updated: bool = await run(self._flow(permit_semaphore.update_lease_time, permit, lease))
        return updated

    async def available_permits(self) -> int:
        """How many permits can be acquired now (expired ones come back first)."""
        available, _ = await run(self._flow(permit_semaphore.permits))
        return int(available)

    async def acquired_permits(self) -> int:
        """How many permits are acquired now (expired ones come back first)."""
        _, acquired = await run(self._flow(permit_semaphore.permits))
        return int(acquired)

    async def get_permits(self) -> int:
        """All permits: available plus acquired (expired ones come back first)."""
        available, acquired = await run(self._flow(permit_semaphore.permits))
        return int(available) + int(acquired)

    async def try_set_permits(self, permits: int) -> bool:
        """Set the number of available permits to ``permits`` unless it is set already;
        True when set (then waiters are told)."""
        checked = check_int(self._subject, "permits", permits)
        done: bool = await run(self._flow(semaphore.try_set_permits, checked))
        return done

    async def add_permits(self, permits: int) -> None:
        """Add ``permits`` to the available permits (negative: take some away); permits
        added are announced."""
        checked = check_int(self._subject, "permits", permits, low=-MAX_PERMITS)
        await run(self._flow(semaphore.add_permits, checked, "added"))

    async def delete(self) -> bool:
        """Delete the semaphore (its count and its acquired permits); True if it
        existed."""
        deleted: bool = await run(self._flow(synchronizers.delete))
        return deleted
