"""The client: ``await Redisson.create(config)``."""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Coroutine
from types import TracebackType
from typing import Any, ParamSpec, TypeVar

import redis.asyncio as aioredis

from redisson_py.asyncio import _primitives
from redisson_py.asyncio.count_down_latch import CountDownLatch
from redisson_py.asyncio.driver import run
from redisson_py.asyncio.fenced_lock import FencedLock
from redisson_py.asyncio.fenced_resource import FencedResource
from redisson_py.asyncio.lock import Lock
from redisson_py.asyncio.lock_kinds import (
    FairLock,
    NonReentrantFairLock,
    NonReentrantLock,
    QueuedLock,
    SpinLock,
)
from redisson_py.asyncio.manager import ConnectionManager
from redisson_py.asyncio.permit_semaphore import PermitExpirableSemaphore
from redisson_py.asyncio.read_write_lock import ReadWriteLock
from redisson_py.asyncio.semaphore import Semaphore
from redisson_py.asyncio.watchdog import Watchdog
from redisson_py.config.model import Config
from redisson_py.core.flows import handoff, shutdown
from redisson_py.core.flows.backoff import BackOff
from redisson_py.core.handles import ClientHandle
from redisson_py.core.state.holds import LostCallback

SHUTDOWN_GRACE = 0.1
"""Seconds a shutdown waits for its releases past their deadline (the last reply being
read) before it warns and closes the connections."""

P = ParamSpec("P")
R = TypeVar("R")


class Redisson(ClientHandle[Lock, ConnectionManager]):
    """A client for one Redis deployment (any topology), for use from tasks.

    Create it with [`create`][redisson_py.asyncio.Redisson.create]; it is meant to be
    shared by the tasks of its event loop. Each client has its own id (a UUID): locks
    taken through two clients are owned by different owners even within one task.
    [`shutdown`][redisson_py.asyncio.Redisson.shutdown] (or leaving an ``async with``
    block) releases what it holds, stops its background loops and closes its
    connections. ``on_lock_lost`` callbacks run in the watchdog's
    background loop and must not block.
    """

    def __init__(
        self,
        config: Config,
        manager: ConnectionManager,
        on_lock_lost: LostCallback | None,
        watchdog_thread: bool = True,  # async only
    ):
        super().__init__(config, manager, on_lock_lost, _primitives.RUNTIME)
        self._watchdog = Watchdog(self._state)
        if watchdog_thread:  # async only
            self._watchdog.renew_on_thread()  # async only

    @classmethod
    async def create(
        cls,
        config: Config,
        *,
        on_lock_lost: LostCallback | None = None,
        watchdog_thread: bool = True,  # async only
    ) -> Redisson:
        """Validate ``config``, connect, and read the topology.

        ``watchdog_thread`` (default True) renews this client's holds on daemon threads,
        so that an event loop blocked for longer than the watchdog timeout keeps them
        (see ``docs/asyncio.md``); False keeps the watchdog on the loop.

        Raises [`ConfigError`][redisson_py.errors.ConfigError] for a bad config,
        [`ConnectError`][redisson_py.errors.ConnectError] listing every address tried
        and why when no server can be reached,
        [`AuthError`][redisson_py.errors.AuthError] when credentials are refused.
        """
        config.validate()
        return cls(
            config,
            await ConnectionManager.create(config),
            on_lock_lost,
            watchdog_thread=watchdog_thread,  # async only
        )

    def synchronized(
        self,
        name: str,
        wait_time: float | None = None,
        lease_time: float | None = None,
        *,
        max_hold_time: float | None = None,
    ) -> Callable[[Callable[P, Awaitable[R]]], Callable[P, Coroutine[Any, Any, R]]]:
        """A decorator that runs each call of an ``async def`` function holding lock
        ``name``:

        ```python
        @client.synchronized("report:nightly", wait_time=5)
        async def build_report() -> None: ...
        ```

        ``wait_time`` None waits for ever; otherwise a call that cannot have the lock in
        time raises [`LockTimeoutError`][redisson_py.errors.LockTimeoutError] (a
        ``TimeoutError``) without running. ``lease_time`` None keeps the lock with the
        watchdog for the whole call; a lease makes it expire by itself, and then a call
        that outlives it raises
        [`LockNotOwnedError`][redisson_py.errors.LockNotOwnedError] when it returns (an
        exception of the function's own is never replaced by it: it propagates with the
        release error as a note). ``max_hold_time`` caps the watchdog's renewals, as for
        [`Lock.lock`][redisson_py.asyncio.Lock.lock]. The lock is reentrant, so a
        decorated function may call itself or another one on the same lock. The
        arguments and the function are checked when decorating
        ([`ArgumentError`][redisson_py.errors.ArgumentError] for a coroutine function on
        the threaded client, a plain one on the asyncio client); after
        [`shutdown`][redisson_py.asyncio.Redisson.shutdown] calls raise
        [`ClientClosedError`][redisson_py.errors.ClientClosedError]. The lock is
        released when the call ends, by return, exception or interruption.
        """

        def decorate(func: Callable[P, Awaitable[R]]) -> Callable[P, Coroutine[Any, Any, R]]:
            lock, wait, lease, cap = self._synchronized_lock(
                name, wait_time, lease_time, max_hold_time, func, coroutine=_primitives.IS_ASYNC
            )

            @functools.wraps(func)
            async def synchronized_call(*args: P.args, **kwargs: P.kwargs) -> R:
                if wait is None:
                    await lock.lock(lease, max_hold_time=cap)
                elif not await lock.try_lock(wait, lease, max_hold_time=cap):
                    raise self._timed_out(name, wait)
                try:
                    result = await func(*args, **kwargs)
                except BaseException as error:
                    await lock._release_after(error)
                    raise
                await lock.unlock()
                return result

            return synchronized_call

        return decorate

    @property
    def connection_manager(self) -> ConnectionManager:
        """The client's connection manager: its current view of the topology
        (``view``), the mode, and the pools. For diagnostics; not a stable API."""
        return self._manager

    def get_lock(self, name: str, *, on_lock_lost: LostCallback | None = None) -> Lock:
        """The reentrant lock ``name`` (a Redis key of that name); raises
        [`ClientClosedError`][redisson_py.errors.ClientClosedError] after the client's
        [`shutdown`][redisson_py.asyncio.Redisson.shutdown]."""
        self._check_open()
        return Lock(self, name, on_lock_lost=on_lock_lost)

    # --- lock kinds: fair, non-reentrant, spin ---
    # Each get_* raises ClientClosedError after shutdown(), as get_lock does.

    def get_fair_lock(self, name: str, *, on_lock_lost: LostCallback | None = None) -> FairLock:
        """The fair lock ``name`` (Redisson's ``getFairLock``): waiters are granted in
        the order they came."""
        self._check_open()
        return FairLock(self, name, on_lock_lost=on_lock_lost)

    def get_queued_lock(self, name: str, *, on_lock_lost: LostCallback | None = None) -> QueuedLock:
        """The queued lock ``name`` (redisson-py's own): the last unlock grants it to the
        next waiter, first come first served, with no round trip of the waiter's own."""
        self._check_open()
        return QueuedLock(self, name, on_lock_lost=on_lock_lost)

    def get_non_reentrant_lock(
        self, name: str, *, on_lock_lost: LostCallback | None = None
    ) -> NonReentrantLock:
        """The non-reentrant lock ``name`` (Redisson's ``getNonReentrantLock``): its
        holder's second acquire raises [`LockReentryError`][redisson_py.errors.LockReentryError]."""
        self._check_open()
        return NonReentrantLock(self, name, on_lock_lost=on_lock_lost)

    def get_non_reentrant_fair_lock(
        self, name: str, *, on_lock_lost: LostCallback | None = None
    ) -> NonReentrantFairLock:
        """The non-reentrant fair lock ``name`` (Redisson's ``getNonReentrantFairLock``)."""
        self._check_open()
        return NonReentrantFairLock(self, name, on_lock_lost=on_lock_lost)

    def get_spin_lock(
        self,
        name: str,
        *,
        backoff: BackOff | None = None,
        on_lock_lost: LostCallback | None = None,
    ) -> SpinLock:
        """The spin lock ``name`` (Redisson's ``getSpinLock``): waiters poll with
        ``backoff`` ([`ExponentialBackOff`][redisson_py.ExponentialBackOff] by default) instead of
        listening for unlock messages."""
        self._check_open()
        return SpinLock(self, name, backoff=backoff, on_lock_lost=on_lock_lost)

    # --- lock kinds: fenced ---

    def get_fenced_lock(self, name: str, *, on_lock_lost: LostCallback | None = None) -> FencedLock:
        """The fenced lock ``name`` (Redisson's ``getFencedLock``): a reentrant lock whose
        acquires return a token that grows with every new holder."""
        self._check_open()
        return FencedLock(self, name, on_lock_lost=on_lock_lost)

    def get_fenced_resource(self, name: str) -> FencedResource:
        """The fenced resource ``name``: a Redis key (string or hash) that accepts a
        write only with a fencing token at least as large as every token it accepted,
        an equal one only from the owner that first wrote with it (see
        [`FencedResource`][redisson_py.asyncio.FencedResource]). Keep it where the lock's failover
        cannot roll it back, such as another deployment's client."""
        self._check_open()
        return FencedResource(self, name)

    # --- lock kinds: read-write ---

    def get_read_write_lock(self, name: str) -> ReadWriteLock:
        """The read-write lock ``name`` (Redisson's ``getReadWriteLock``): its
        ``read_lock()`` is shared, its ``write_lock()`` exclusive."""
        self._check_open()
        return ReadWriteLock(self, name)

    # --- lock kinds: semaphores, count-down latch ---

    def get_semaphore(self, name: str) -> Semaphore:
        """The semaphore ``name`` (Redisson's ``getSemaphore``): permits counted at the
        key ``name``, shared with every client; raises
        [`ClientClosedError`][redisson_py.errors.ClientClosedError] after
        [`shutdown`][redisson_py.asyncio.Redisson.shutdown]."""
        self._check_open()
        return Semaphore(self, name)

    def get_permit_expirable_semaphore(self, name: str) -> PermitExpirableSemaphore:
        """The permit-expirable semaphore ``name`` (Redisson's
        ``getPermitExpirableSemaphore``): each acquire returns a permit id, and a leased
        permit comes back by itself when its lease ends."""
        self._check_open()
        return PermitExpirableSemaphore(self, name)

    def get_count_down_latch(self, name: str) -> CountDownLatch:
        """The count-down latch ``name`` (Redisson's ``getCountDownLatch``): waiters go
        on when its count reaches zero."""
        self._check_open()
        return CountDownLatch(self, name)

    async def adopt_hold(self, token: str, *, on_lock_lost: LostCallback | None = None) -> Lock:
        """Take over the hold a [`export_hold`][redisson_py.asyncio.Lock.export_hold]
        token names (made by this client, another one, or another process): return a
        lock of the token's kind acting for the exported owner's field, whose
        ``unlock()`` (from any task) releases the hold and which this client's watchdog
        renews from now on.

        The hash field stays the exporter's ``<client id>:<owner id>``, as Redisson
        writes it. The view may re-enter its hold (``lock()`` while held) and
        ``extend()`` a leased one; once its last hold is released it takes nothing anew
        ([`HandOffError`][redisson_py.errors.HandOffError] ``"adopted-released"``).
        Raises [`HandOffError`][redisson_py.errors.HandOffError] ``"gone"`` when the
        token was adopted already or the hold is gone (released, expired: adopt within
        the token's ``ttl_ms``), [`ArgumentError`][redisson_py.errors.ArgumentError] for
        a string that is no token. Connection errors are retried until the token's
        window ends at most; after one, the hold is no one's and expires by itself.
        """
        lock, parsed = self._adoptable(token, on_lock_lost)
        if parsed.client_id == self._state.client_id:  # async only
            _primitives.share_owner(parsed.owner_id)  # async only
        await run(lock._flow(lock._owner(), handoff.adopt_hold, parsed))
        return lock

    def redis(self, name: str = "") -> aioredis.Redis:
        """A redis-py client on the master that owns ``name``'s slot (any key in the
        single, master/slave and sentinel modes), with the config's timeouts."""
        self._check_open()
        return self._manager.master_client(name)

    async def shutdown(self, *, release_locks: bool = True) -> None:
        """Release what this client holds, stop renewals and close connections.
        Idempotent. Every later call on this client or its locks raises
        [`ClientClosedError`][redisson_py.errors.ClientClosedError].

        With ``release_locks`` (the default) every hold of this client is released,
        all at once: each lock of every kind (as many times as it was entered), the
        members of its MultiLock and RedLock holds, and the semaphore permits taken
        through it (a permit-expirable semaphore's permits; a semaphore's acquires less
        the releases made through this client). The next holder gets them at once
        instead of after the watchdog timeout. Releasing takes at most one command
        timeout plus the retry delays (``timeout`` + the ``retryDelay`` of each of
        ``retryAttempts``), whatever the servers do; a release that fails or does not
        answer in that time is left to expire by itself, with a WARNING log line naming
        it and its node. ``release_locks=False`` leaves every hold to expire, as a crash
        would (locks after the watchdog timeout or their lease)."""
        if self._state.closed:
            return
        self._state.closed = True
        # Not waited for yet: a renewal round (or a topology scan) in flight on a frozen
        # node would hold up the releases by a command timeout; they end meanwhile. A
        # renewal that meets a released lock is no loss (the holds are marked as being
        # released).
        self._watchdog.halt()
        self._manager.halt()
        if release_locks:
            await self._release_everything()
        await self._watchdog.stop()
        await self._manager.close()
        self._state.holds.clear()
        self._state.taken.drain()

    async def _release_everything(self) -> None:
        """`shutdown`'s releases, in the background, waited for until their deadline."""
        releases = shutdown.plan(self._state)
        if not releases:
            return
        timeout = self._state.settings.release_timeout
        deadline = self._state.clock() + timeout
        finished = _primitives.Event()

        async def release() -> None:
            try:
                await run(shutdown.release_all(self._state, releases, deadline))
            finally:
                finished.set()

        _primitives.spawn("redisson-py-shutdown", release)
        await finished.wait(timeout + SHUTDOWN_GRACE)
        shutdown.warn_unreleased(releases)

    async def __aenter__(self) -> Redisson:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.shutdown()
