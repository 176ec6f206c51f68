"""The reentrant lock's siblings (Redisson's ``RFairLock``, ``RSpinLock`` and their
non-reentrant twins, and redisson-py's own queued lock): the
[`Lock`][redisson_py.asyncio.Lock] API on other data layouts. What each kind does
differently lives in `redisson_py.core.flows.lock_kinds` (the queued lock's in
`redisson_py.core.flows.queued_lock`)."""

from __future__ import annotations

from typing import Any

from redisson_py.asyncio.lock import Lock
from redisson_py.core.flows.backoff import BackOff, ConstantBackOff, ExponentialBackOff
from redisson_py.core.flows.lock_kinds import FAIR, NON_REENTRANT, NON_REENTRANT_FAIR, SpinKind
from redisson_py.core.flows.queued_lock import QUEUED
from redisson_py.core.state.holds import LostCallback
from redisson_py.errors import ArgumentTypeError


class FairLock(Lock):
    """A reentrant lock that grants waiters in the order they came (Redisson's
    ``RFairLock``, same keys).

    Waiters queue in ``redisson_lock_queue:{name}``; an unlock wakes only the head,
    on its own channel. A waiter of this library tries again at least every second while
    it waits, which keeps its place alive (``redisson_py_fair_alive:{name}``): once it
    stops (its process died) it is dropped about 5 seconds after its last try. A waiter
    that keeps no such place (a Java client's) keeps it, as in Redisson, until the time
    the waiter ahead of it would time out (or the holder's TTL when it joined) plus
    ``fairLockWaitTimeout`` (5 minutes by default) or its ``try_lock`` wait time; a
    ``try_lock`` that gives up leaves the queue at once. A holder that keeps the lock
    longer than a waiter's place lasts lets that waiter drop out and join again at the
    tail.
    Owners that call without waiting (``try_lock()``) never queue: they get the lock
    only when it is free and nobody waits. Everything else is [`Lock`][redisson_py.asyncio.Lock]'s.
    """

    kind = FAIR


class QueuedLock(Lock):
    """A reentrant lock whose release grants it to the next waiter itself (redisson-py's
    own kind; Java's Redisson has none like it, and its keys are its own).

    Waiters queue in the server (``redisson_py_queued_lock_queue:{name}``, first come
    first served); the last ``unlock()`` hands the lock to the first waiter whose
    keepalive is live, in the same script, and tells that waiter on its own channel,
    whose ``lock()`` then returns with no round trip of its own: half the hand-off time
    of a lock whose woken waiter must ask again. A waiter tries again at least every
    second while it waits, which keeps its place; a release skips a waiter silent for
    3 seconds, and a grant its waiter never takes up (it died) expires within 5 seconds
    and passes on. With replica sync on and replicas to wait for, a woken waiter
    confirms its grant with one try (and ``WAIT``) before it returns. Owners that call
    without waiting (``try_lock()``) never queue: they get the lock only when it is free
    and nobody waits. Everything else is [`Lock`][redisson_py.asyncio.Lock]'s.
    """

    kind = QUEUED


class NonReentrantLock(Lock):
    """A lock its holder cannot take twice (Redisson's ``getNonReentrantLock``, the
    reentrant lock's keys): a second ``lock()`` or ``try_lock()`` by the holder raises
    [`LockReentryError`][redisson_py.errors.LockReentryError] at once, as Redisson raises
    ``IllegalMonitorStateException``. Everything else is [`Lock`][redisson_py.asyncio.Lock]'s."""

    kind = NON_REENTRANT


class NonReentrantFairLock(FairLock):
    """A [`FairLock`][redisson_py.asyncio.FairLock] its holder cannot take twice (Redisson's
    ``getNonReentrantFairLock``): the holder's second acquire raises
    [`LockReentryError`][redisson_py.errors.LockReentryError] at once."""

    kind = NON_REENTRANT_FAIR


class SpinLock(Lock):
    """A reentrant lock whose waiters poll instead of listening (Redisson's
    ``RSpinLock``, the reentrant lock's keys, no pub/sub at all): a waiter retries after
    each of the back-off's delays (by default 1 ms doubling to 128 ms, with jitter). For
    deployments where unlock messages are the bottleneck (very large clusters), at the
    price of hand-off latency and polling traffic. ``backoff`` is an
    [`ExponentialBackOff`][redisson_py.ExponentialBackOff] or
    [`ConstantBackOff`][redisson_py.ConstantBackOff]."""

    def __init__(
        self,
        client: Any,
        name: str,
        *,
        backoff: BackOff | None = None,
        on_lock_lost: LostCallback | None = None,
    ):
        if backoff is not None and not isinstance(backoff, ExponentialBackOff | ConstantBackOff):
            raise ArgumentTypeError(
                f"spin lock {name!r}: backoff must be an ExponentialBackOff or a"
                f" ConstantBackOff, not {backoff!r}"
            )
        self.kind = SpinKind(backoff)
        super().__init__(client, name, on_lock_lost=on_lock_lost)
