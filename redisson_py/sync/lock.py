# GENERATED from redisson_py/asyncio/lock.py by scripts/generate_sync.py: do not edit.
# Edit the asyncio source, then run `python3 scripts/generate_sync.py`.
"""The reentrant distributed lock (Redisson's ``RLock``), owned by a thread."""

from __future__ import annotations

from types import TracebackType
from typing import Generic, Self, TypeVar

from redisson_py.core.flows import handoff, lock
from redisson_py.core.handles import (
    LockHandle,
    acquire_wait,
    check_lease,
    check_max_hold,
    check_wait,
    owner_of,
    release_failed_note,
)
from redisson_py.errors import ArgumentError, LockTimeoutError
from redisson_py.sync import _primitives
from redisson_py.sync.driver import run

current_owner_id = _primitives.current_owner_id


class LockProtocol:
    """`threading.Lock`'s protocol for every lock of this package: ``acquire``,
    ``release``, ``locked`` and the context manager, in terms of the lock's own
    ``lock``/``try_lock``/``unlock``/``is_locked``. ``acquire`` takes the arguments of
    `threading.Lock.acquire` in both APIs, and ``locked`` asks Redis: whether a
    distributed lock is held is known only there."""

    def _protocol_name(self) -> str:
        raise NotImplementedError

    caps_holds = False
    """True when ``try_lock`` takes ``max_hold_time`` (a single lock, not a group)."""

    def lock(self, lease_time: float | None = None) -> None:
        raise NotImplementedError

    def try_lock(self, wait_time: float = 0.0, lease_time: float | None = None) -> bool:
        raise NotImplementedError

    def _node(self) -> str:
        """Where the lock lives, for error messages ("" when it is several nodes)."""
        return ""

    def _label(self) -> str:
        """How messages name the lock."""
        return self._protocol_name()

    def unlock(self) -> None:
        raise NotImplementedError

    def is_locked(self) -> bool:
        raise NotImplementedError

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        """Take the lock, kept by the watchdog: wait for ever (the default), try once
        (``blocking=False``) or wait up to ``timeout`` seconds (-1: for ever); True if
        taken. Its arguments are refused as `threading.Lock.acquire` refuses them, with
        the same exception types: a non-blocking acquire with a timeout, or a negative
        timeout but -1, is an [`ArgumentError`][redisson_py.errors.ArgumentError] (a
        ``ValueError``); a timeout above ``threading.TIMEOUT_MAX`` an
        [`ArgumentOverflowError`][redisson_py.errors.ArgumentOverflowError] (an
        ``OverflowError``)."""
        wait = acquire_wait(self._protocol_name(), blocking, timeout, _primitives.TIMEOUT_MAX)
        if wait is None:
            self.lock()
            return True
        return self.try_lock(wait)

    def release(self) -> None:
        """Same as ``unlock()``."""
        self.unlock()

    def locked(self) -> bool:
        """Same as ``is_locked()``: held by anyone, asked of Redis."""
        return self.is_locked()

    def acquired(
        self,
        wait_time: float | None,
        lease_time: float | None = None,
        *,
        max_hold_time: float | None = None,
    ) -> Acquired[Self]:
        """A context manager that holds the lock for its block, taken within
        ``wait_time`` seconds (None: for ever):

        ```python
        with lock.acquired(5):
            ...
        ```

        Raises [`LockTimeoutError`][redisson_py.errors.LockTimeoutError] (a
        ``TimeoutError`` naming the lock and its node) when the lock cannot be had in
        time; the block does not run then. ``lease_time`` and ``max_hold_time`` as for
        ``try_lock`` (a MultiLock or RedLock takes no ``max_hold_time``). The arguments
        are checked here, before anything is sent. At the block's end the lock is
        released; an exception from the block is never replaced by a release error
        (see ``__exit__``)."""
        name = self._protocol_name()
        wait, lease = check_wait(name, wait_time), check_lease(name, lease_time)
        cap = check_max_hold(name, max_hold_time, lease)
        if cap is not None and not self.caps_holds:
            raise ArgumentError(f"{self._label()}: max_hold_time is for a single lock, not a group")
        return Acquired(self, wait, lease, cap)

    def _try_within(self, wait: float | None, lease: float | None, max_hold: float | None) -> bool:
        """``try_lock`` (``lock`` when ``wait`` is None) for `Acquired`; a lock that
        takes ``max_hold_time`` (`caps_holds`) passes it on."""
        if wait is None:
            self.lock(lease)
            return True
        return self.try_lock(wait, lease)

    def _release_after(self, exc: BaseException | None) -> None:
        """Release at the end of a ``with`` block. Without an exception from the block, a
        release error is raised as ``unlock()`` raises it; with one, the block's exception
        stays the one raised, and the release error is attached to it as a note (a lost
        lock must not hide the ``KeyError`` that ended the block)."""
        if exc is None:
            self.unlock()
            return
        try:
            self.unlock()
        except Exception as error:
            exc.add_note(release_failed_note(self._label(), error))

    def __enter__(self) -> Self:
        self.lock()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        """Release the lock. An exception from the block is never replaced by a release
        error ([`LockNotOwnedError`][redisson_py.errors.LockNotOwnedError] after the
        lock was lost, a connection error): it propagates, with the release error in a
        note (``add_note``)."""
        self._release_after(exc)


P = TypeVar("P", bound=LockProtocol)


class Acquired(Generic[P]):
    """What [`acquired`][redisson_py.Lock.acquired] returns: a context
    manager that takes the lock within its wait time (else raises
    [`LockTimeoutError`][redisson_py.errors.LockTimeoutError]), gives the lock to the
    block, and releases it at the block's end. Use it once."""

    __slots__ = ("_lease", "_lock", "_max_hold", "_wait")

    def __init__(self, lock: P, wait: float | None, lease: float | None, max_hold: float | None):
        self._lock = lock
        self._wait, self._lease, self._max_hold = wait, lease, max_hold

    def __enter__(self) -> P:
        lock = self._lock
        if not lock._try_within(self._wait, self._lease, self._max_hold):
            name, node = lock._label(), lock._node()
            where = f" on {node}" if node else ""
            raise LockTimeoutError(
                f"{name}{where} was not acquired within wait_time={self._wait:g} s: another"
                " owner held it; the block did not run",
                lock_name=lock._protocol_name(),
                wait_time=self._wait or 0.0,
            )
        return lock

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._lock._release_after(exc)


class Lock(LockHandle, LockProtocol):
    """A reentrant lock on a Redis key, owned by the thread that takes it.

    Reentrant: the owning thread may take it again and must release it as many times.
    ``lease_time`` (seconds) makes a hold expire on its own, never renewed; without it
    the client's watchdog keeps the key alive (watchdog timeout, renewed every third of
    it) until ``unlock()``. A hold is safe until its safe end: its last confirmed write
    (the grant, a renewal the replicas acknowledged when replica sync is on, an
    extension), counted from when it was sent, plus its TTL, less TTL x 1% + 50 ms. At
    its safe end the holder is told (``on_lock_lost``, a ``lost`` event), and
    ``unlock()`` raises. A waiter subscribes to the lock's channel and wakes on the
    release or after the holder's remaining TTL at the latest. A thread interrupted while
    its acquire is in flight undoes that acquire if it was applied.

    Get one from the client's ``get_lock``. Also a context manager and a stand-in
    for `threading.Lock` (see `LockProtocol`).
    """

    caps_holds = True

    def _protocol_name(self) -> str:
        return self.name

    def _label(self) -> str:
        return f"lock {self.name!r}"

    def _try_within(self, wait: float | None, lease: float | None, max_hold: float | None) -> bool:
        if wait is None:
            self.lock(lease, max_hold_time=max_hold)
            return True
        return self.try_lock(wait, lease, max_hold_time=max_hold)

    def _node(self) -> str:
        return str(self._client._manager.describe(self.name))

    def lock(self, lease_time: float | None = None, *, max_hold_time: float | None = None) -> None:
        """Block until this thread holds the lock.

        ``max_hold_time`` (seconds; None: the config's ``lockMaxHoldTime``, by default
        no cap; ``math.inf``: no cap) caps a hold taken without a lease: the watchdog
        stops renewing it that long after this acquire (its last renewal makes the key
        expire then), and its loss is reported as any loss ("held past max_hold_time";
        ``on_lock_lost``, a ``lost`` event, ``unlock()`` raising). With
        ``lease_time`` it is an [`ArgumentError`][redisson_py.errors.ArgumentError].

        Waits through failovers: connection errors and grants the replicas did not
        acknowledge are retried for as long as it waits, with a WARNING log line at the
        first failure and every tenth after it. Use
        [`try_lock`][redisson_py.Lock.try_lock] for a deadline.
        """
        lease = check_lease(self.name, lease_time)
        cap = check_max_hold(self.name, max_hold_time, lease)
        run(self._flow(self._owner(), lock.try_lock, None, lease, cap))

    def try_lock(
        self,
        wait_time: float = 0.0,
        lease_time: float | None = None,
        *,
        max_hold_time: float | None = None,
    ) -> bool:
        """Take the lock if it can be had within ``wait_time`` seconds; True if taken.
        ``max_hold_time`` as for [`lock`][redisson_py.Lock.lock].

        Raises [`NoSyncedReplicasError`][redisson_py.errors.NoSyncedReplicasError] when
        the master granted it but its replicas did not acknowledge in time until the
        deadline (the grant is undone).
        """
        wait, lease = check_wait(self.name, wait_time), check_lease(self.name, lease_time)
        cap = check_max_hold(self.name, max_hold_time, lease)
        flow = self._flow(self._owner(), lock.try_lock, wait, lease, cap)
        acquired: bool = run(flow)
        return acquired

    def _owner(self) -> int:
        owner = self.owner_id
        return current_owner_id() if owner is None else int(owner)

    def extend(self, seconds: float) -> None:
        """Make this thread's leased hold expire ``seconds`` from now (longer or
        shorter), atomically and only while it holds the lock.

        The client's watchdog then reports a loss only if the new lease runs out while
        held. Raises [`LockNotOwnedError`][redisson_py.errors.LockNotOwnedError] when
        this thread holds nothing (or its hold was reported lost),
        [`ArgumentError`][redisson_py.errors.ArgumentError] for ``seconds`` under 0.001
        or for a hold taken without a lease (the watchdog renews that one; it has no
        lease to extend), and, with replica sync on,
        [`NoSyncedReplicasError`][redisson_py.errors.NoSyncedReplicasError] when the
        replicas did not acknowledge the extension (the hold then stays safe only until
        the earlier of its old and new lease end).
        """
        seconds = self._check_extension(self.name, seconds)
        run(self._flow(self._owner(), lock.extend, seconds))

    def owned_by(self, owner_id: int) -> Lock:
        """This lock acting for owner ``owner_id`` (a thread's
        [`current_owner_id`][redisson_py.current_owner_id]) instead of the
        current thread: Redisson's explicit thread-id overloads, to hand a hold from one
        thread to another.

        Thread A takes the lock and passes ``current_owner_id()`` to thread B, which
        releases with ``lock.owned_by(a_id).unlock()``. Every method of the view acts for
        that owner (``lock``, ``try_lock``, ``unlock``, ``extend``, ``hold_count``...).

        Risks, all the caller's to manage: both threads now act as one owner, so the
        lock excludes neither from the other (reentrancy counts their holds together);
        a watchdog hold stays renewed until that owner's last ``unlock()``, so a hold
        handed to a thread that never releases it is kept until the client shuts down;
        and an ``unlock()`` through the wrong view releases someone else's hold (or
        raises [`LockNotOwnedError`][redisson_py.errors.LockNotOwnedError]). The view copies
        ``on_lock_lost`` as it is now.
        """
        view: Lock = self._view(owner_of(self.name, owner_id))
        return view

    def export_hold(self) -> str:
        """Hand this thread's hold (every reentrant count of it) to another client or
        process: return a token (a string, see ``docs/handoff.md`` for its format; no
        secret in it) for [`adopt_hold`][redisson_py.Redisson.adopt_hold].

        One round trip: the hold is renewed (a leased one only checked) and an adoption
        ticket written that expires with it. From then this client no longer renews it,
        never reports it lost and does not release it at shutdown, and this thread's
        ``unlock()`` raises [`LockNotOwnedError`][redisson_py.errors.LockNotOwnedError]:
        the adopter must adopt within the token's ``ttl_ms`` (the watchdog timeout; a
        leased hold's remaining lease), else the hold expires. Raises
        [`HandOffError`][redisson_py.errors.HandOffError] (``reason`` ``"not-held"``,
        ``"group"``, ``"readers-inside"``) when the hold cannot be exported; then, as
        after a connection error, the hold is still this thread's.
        """
        owner = self._owner()
        token: str = run(self._flow(owner, handoff.export_hold, str(owner)))
        return token

    def unlock(self) -> None:
        """Release one hold. Raises [`LockNotOwnedError`][redisson_py.errors.LockNotOwnedError] (a
        ``RuntimeError``) if this thread holds none, or its hold was reported lost."""
        run(self._flow(self._owner(), lock.unlock))

    def force_unlock(self) -> bool:
        """Delete the lock whoever holds it; True if it was locked."""
        result: bool = run(self._flow(self._owner(), lock.force_unlock))
        return result

    def is_locked(self) -> bool:
        """True when any owner holds the lock."""
        result: bool = run(self._flow(self._owner(), lock.is_locked))
        return result

    def is_held_by_current_thread(self) -> bool:
        """True when this thread (or, for an ``owned_by`` view, its owner) holds it; False
        once the client reported this owner's hold lost (until it acquires again),
        whatever a node it still reaches says."""
        result: bool = run(self._flow(self._owner(), lock.is_held))
        return result

    def hold_count(self) -> int:
        """How many holds this thread has (0 when none, or when its hold was reported
        lost)."""
        result: int = run(self._flow(self._owner(), lock.hold_count))
        return result

    def remain_time_to_live(self) -> float | None:
        """Seconds until the lock's key expires; None when it is not locked."""
        owner = self._owner()
        result: float | None = run(self._flow(owner, lock.remain_time_to_live))
        return result
