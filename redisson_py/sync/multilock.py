# GENERATED from redisson_py/asyncio/multilock.py by scripts/generate_sync.py: do not edit.
# Edit the asyncio source, then run `python3 scripts/generate_sync.py`.
"""MultiLock (all of its locks) and RedLock (a majority), owned by a thread."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Self

from redisson_py.core.flows import multilock
from redisson_py.core.handles import GroupHandle, RedLockHandle, owner_of
from redisson_py.sync.driver import run
from redisson_py.sync.lock import LockProtocol, current_owner_id


class MultiLock(GroupHandle, LockProtocol):
    """All-or-nothing over locks from any clients and nodes.

    One round sends the acquires to every node at once (no thread or thread per call); a
    round that misses any member releases what it got and is retried until
    ``wait_time`` is spent. Reentrant like its members; the owner is the current thread.
    Without a lease each member's client's watchdog renews it, and losing any member
    reports the MultiLock lost (``on_lock_lost``, one ERROR line, ``unlock()`` raising).
    Also a context manager and a stand-in for `threading.Lock` (see
    `LockProtocol`).
    """

    def _protocol_name(self) -> str:
        return self._group.label

    def _owner(self) -> int:
        return current_owner_id() if self.owner_id is None else self.owner_id

    def owned_by(self, owner_id: int) -> Self:
        """This group acting for owner ``owner_id`` (a thread's
        [`current_owner_id`][redisson_py.current_owner_id]) instead of the
        current thread, to hand a group hold from one thread to another (Redisson's
        thread-id overloads of ``RedissonMultiLock``), with the risks of
        [`owned_by`][redisson_py.Lock.owned_by]: the two threads are one owner to
        every member, and an unlock through the wrong view releases someone else's
        hold."""
        view: Self = self._view(owner_of(self._group.label, owner_id))
        return view

    def lock(self, lease_time: float | None = None) -> None:
        """Block until every member is held."""
        self.try_lock(None, lease_time)

    def try_lock(self, wait_time: float | None = 0.0, lease_time: float | None = None) -> bool:
        """Take every member within ``wait_time`` seconds (None: for ever); True if held.

        Raises [`LockUnavailableError`][redisson_py.errors.LockUnavailableError] when
        members failed (down, paused past the member timeout, refusing) rather than
        being held by others.
        """
        wait, lease = self._check(wait_time, lease_time)
        owner = self._owner()
        refs = self._refs(owner)
        flow = multilock.try_lock(
            self._group, refs, str(owner), wait, lease, member_timeout=self.member_timeout
        )
        acquired: bool = run(multilock.guarded(self._group, flow))
        return acquired

    def unlock(self) -> None:
        """Release one hold on every member;
        [`LockNotOwnedError`][redisson_py.errors.LockNotOwnedError] when this thread did
        not hold the group or it was lost."""
        owner = self._owner()
        flow = multilock.unlock(self._group, self._refs(owner), str(owner))
        run(multilock.guarded(self._group, flow))

    def extend(self, seconds: float) -> None:
        """Make this thread's leased group hold expire ``seconds`` from now (longer or
        shorter) on its members, with the acquire's rule: every member of a MultiLock, a
        majority of a RedLock (redsync's ``Extend``, node-redlock's ``extend``). Each
        member is extended by one script that sets its TTL only while its field is this
        owner's. On success ``remaining_validity()`` counts from this round.

        Raises [`GroupExtendError`][redisson_py.errors.GroupExtendError] naming the
        members (locks and nodes) not extended when too few were: the members extended
        keep the new lease and stay this owner's until ``unlock()``, and the group keeps
        its former validity (or the new one, when that is shorter).
        [`LockNotOwnedError`][redisson_py.errors.LockNotOwnedError] when this thread holds
        no group hold (or it was reported lost),
        [`ArgumentError`][redisson_py.errors.ArgumentError] for ``seconds`` under 0.001,
        for a lease no round can outlast, or for a hold taken without a lease (the
        members' watchdogs renew that one).
        """
        seconds = self._check_extension(seconds)
        owner = self._owner()
        flow = multilock.extend(
            self._group, self._refs(owner), str(owner), seconds, member_timeout=self.member_timeout
        )
        run(multilock.guarded(self._group, flow))

    def remaining_validity(self) -> float:
        """Seconds this thread's group hold can still be relied on (redsync's ``Until``
        as a duration); 0.0 when it holds none or the hold was reported lost. Asks no
        server.

        For a leased hold it is Redlock's arithmetic: the lease, minus the time since
        the acquire or ``extend()`` round that set it started, minus clock drift (lease
        x 1% + 2 ms). For a hold the members' watchdogs renew, it runs to the safe end of
        the member that keeps the group held (the latest of the quorum for a RedLock,
        the earliest member for a MultiLock) and moves on with each confirmed renewal.
        """
        owner = self._owner()
        return multilock.remaining_validity(self._group, self._refs(owner), str(owner))

    def is_held_by_current_thread(self) -> bool:
        """True while this thread holds the group (as far as this process knows)."""
        return self._group.held_count(str(self._owner())) > 0

    def is_locked(self) -> bool:
        """True when the group is held by anyone: every member locked (a MultiLock), a
        quorum of members locked (a RedLock); asked of every member at once. Raises
        [`LockUnavailableError`][redisson_py.errors.LockUnavailableError] when members
        that did not answer could have decided it."""
        flow = multilock.is_locked(self._group, self._refs(self._owner()))
        result: bool = run(multilock.guarded(self._group, flow))
        return result

    def force_unlock(self) -> bool:
        """Unlock every member whoever holds it; True if any member was locked. Owners
        that held the group find it gone at their ``unlock()``
        ([`LockNotOwnedError`][redisson_py.errors.LockNotOwnedError]); a member that
        fails is named in a
        [`LockUnavailableError`][redisson_py.errors.LockUnavailableError], the others
        are unlocked all the same."""
        flow = multilock.force_unlock(self._group, self._refs(self._owner()))
        result: bool = run(multilock.guarded(self._group, flow))
        return result


class RedLock(RedLockHandle, MultiLock):
    """A majority (n // 2 + 1) of locks on independent masters, with Redlock's validity
    check: a round counts only if the lease left after it, minus clock drift
    (lease x 1% + 2 ms), is positive. Release goes to every member."""

    @classmethod
    def for_name(cls, name: str, clients: Iterable[Any], **kwargs: Any) -> RedLock:
        """A RedLock on lock ``name`` of each client (one client per independent master)."""
        return cls(*(client.get_lock(name) for client in clients), **kwargs)
