"""The asyncio client: ``await Redisson.create(config)``."""

from __future__ import annotations

from types import TracebackType

import redis.asyncio as aioredis

from redisson_py.asyncio.lock import Lock
from redisson_py.asyncio.manager import ConnectionManager
from redisson_py.asyncio.watchdog import Watchdog
from redisson_py.config.model import Config
from redisson_py.core.client_state import ClientState
from redisson_py.core.holds import LostCallback
from redisson_py.core.options import lock_settings


class Redisson:
    """A client for one Redis deployment, for asyncio tasks (see :class:`redisson_py.Redisson`).

    Bound to the event loop it was created on. ``on_lock_lost`` callbacks run on that
    loop; a callback may be a plain function or return an awaitable, which is scheduled.
    """

    def __init__(
        self, config: Config, manager: ConnectionManager, on_lock_lost: LostCallback | None
    ):
        self.config = config
        self._manager = manager
        self._state = ClientState(lock_settings(config, manager.mode.section), on_lock_lost)
        self._watchdog = Watchdog(self._state)

    @classmethod
    async def create(
        cls, config: Config, *, on_lock_lost: LostCallback | None = None
    ) -> Redisson:
        """Validate ``config``, connect, read the topology (raises as the sync twin)."""
        config.validate()
        return cls(config, await ConnectionManager.create(config), on_lock_lost)

    @property
    def id(self) -> str:
        return self._state.client_id

    @property
    def on_lock_lost(self) -> LostCallback | None:
        return self._state.on_lock_lost

    @on_lock_lost.setter
    def on_lock_lost(self, callback: LostCallback | None) -> None:
        self._state.on_lock_lost = callback

    @property
    def connection_manager(self) -> ConnectionManager:
        return self._manager

    def get_lock(self, name: str, *, on_lock_lost: LostCallback | None = None) -> Lock:
        """The reentrant lock ``name``."""
        return Lock(self, name, on_lock_lost=on_lock_lost)

    def redis(self, name: str = "") -> aioredis.Redis:
        """A redis-py asyncio client on the master that owns ``name``'s slot."""
        return self._manager.master_client(name)

    async def shutdown(self) -> None:
        """Stop renewals and close connections; held locks expire by themselves."""
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

    def __repr__(self) -> str:
        return f"<redisson_py.asyncio.Redisson {self._manager.mode.kind} {self.id}>"
