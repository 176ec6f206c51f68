"""The asyncio client: ``await Redisson.create(config)``."""

from __future__ import annotations

from types import TracebackType

import redis.asyncio as aioredis

from redisson_py.asyncio.lock import Lock
from redisson_py.asyncio.manager import ConnectionManager
from redisson_py.asyncio.watchdog import Watchdog
from redisson_py.config.model import Config
from redisson_py.core.handles import ClientHandle
from redisson_py.core.holds import LostCallback


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
