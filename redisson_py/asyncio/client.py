"""The asyncio client: ``await Redisson.create(config)``."""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Coroutine
from types import TracebackType
from typing import Any, ParamSpec, TypeVar

import redis.asyncio as aioredis

from redisson_py.asyncio.lock import Lock
from redisson_py.asyncio.manager import ConnectionManager
from redisson_py.asyncio.watchdog import Watchdog
from redisson_py.config.model import Config
from redisson_py.core.handles import ClientHandle
from redisson_py.core.holds import LostCallback

P = ParamSpec("P")
R = TypeVar("R")


class Redisson(ClientHandle[Lock, ConnectionManager]):
    """A client for one Redis deployment, for asyncio tasks (see :class:`redisson_py.Redisson`).

    Bound to the event loop it was created on. ``on_lock_lost`` callbacks run on that
    loop, from the watchdog task.
    """

    lock_class = Lock

    def __init__(
        self, config: Config, manager: ConnectionManager, on_lock_lost: LostCallback | None
    ):
        super().__init__(config, manager, on_lock_lost)
        self._watchdog = Watchdog(self._state)

    @classmethod
    async def create(
        cls, config: Config, *, on_lock_lost: LostCallback | None = None
    ) -> Redisson:
        """Validate ``config``, connect, read the topology (raises as the sync twin)."""
        config.validate()
        return cls(config, await ConnectionManager.create(config), on_lock_lost)

    def synchronized(
        self, name: str, wait_time: float | None = None, lease_time: float | None = None
    ) -> Callable[[Callable[P, Awaitable[R]]], Callable[P, Coroutine[Any, Any, R]]]:
        """A decorator that runs each call of an ``async def`` function holding lock
        ``name``, owned by the awaiting task (see the sync twin for the contract)::

            @client.synchronized("report:nightly", wait_time=5)
            async def build_report() -> None: ...

        ``wait_time`` None waits for ever, else :class:`~redisson_py.LockTimeoutError`;
        plain functions belong to the sync client (:class:`~redisson_py.ArgumentError`).
        A task cancelled while it waits holds nothing; the lock is released when the
        call ends, by return, exception or cancellation.
        """

        def decorate(
            func: Callable[P, Awaitable[R]],
        ) -> Callable[P, Coroutine[Any, Any, R]]:
            lock, wait, lease = self._synchronized_lock(
                name, wait_time, lease_time, func, coroutine=True
            )

            @functools.wraps(func)
            async def synchronized_call(*args: P.args, **kwargs: P.kwargs) -> R:
                if wait is None:
                    await lock.lock(lease)
                elif not await lock.try_lock(wait, lease):
                    raise self._timed_out(name, wait)
                try:
                    return await func(*args, **kwargs)
                finally:
                    await lock.unlock()

            return synchronized_call

        return decorate

    def redis(self, name: str = "") -> aioredis.Redis:
        """A redis-py asyncio client on the master that owns ``name``'s slot."""
        self._check_open()
        return self._manager.master_client(name)

    async def shutdown(self) -> None:
        """Stop renewals and close connections; held locks expire by themselves.
        Idempotent. Every later call on this client or its locks raises
        :class:`~redisson_py.ClientClosedError`."""
        self._state.closed = True
        await self._watchdog.stop()
        await self._manager.close()
        self._state.holds.clear()

    async def __aenter__(self) -> Redisson:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.shutdown()
