"""MultiLock and RedLock for asyncio tasks (the twins of :mod:`redisson_py.sync.multilock`)."""

from __future__ import annotations

from collections.abc import Iterable
from types import TracebackType
from typing import Any

from redisson_py.asyncio.driver import run
from redisson_py.asyncio.lock import current_owner_id
from redisson_py.core import multi_flows
from redisson_py.core.handles import GroupHandle, RedLockHandle


class MultiLock(GroupHandle):
    """All-or-nothing over locks from any asyncio clients and nodes; see the sync twin."""

    async def lock(self, lease_time: float | None = None) -> None:
        await self.try_lock(None, lease_time)

    async def try_lock(
        self, wait_time: float | None = 0.0, lease_time: float | None = None
    ) -> bool:
        wait, lease = self._check(wait_time, lease_time)
        owner = current_owner_id()
        acquired: bool = await run(
            multi_flows.guarded(
                self._group,
                multi_flows.try_lock(
                    self._group, self._refs(owner), owner, wait, lease,
                    member_timeout=self.member_timeout,
                ),
            )
        )
        if acquired and lease is None:
            for lock in self.locks:
                lock._client._watchdog.ensure_running()
        return acquired

    async def unlock(self) -> None:
        owner = current_owner_id()
        await run(
            multi_flows.guarded(
                self._group, multi_flows.unlock(self._group, self._refs(owner), owner)
            )
        )

    def is_held_by_current_task(self) -> bool:
        return self._group.held_count(current_owner_id()) > 0

    is_held_by_current_thread = is_held_by_current_task

    async def __aenter__(self) -> MultiLock:
        await self.lock()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.unlock()


class RedLock(RedLockHandle, MultiLock):
    """A majority of locks on independent masters, with Redlock's validity check."""

    @classmethod
    def for_name(cls, name: str, clients: Iterable[Any], **kwargs: Any) -> RedLock:
        """A RedLock on lock ``name`` of each client (one client per independent master)."""
        return cls(*(client.get_lock(name) for client in clients), **kwargs)

    async def __aenter__(self) -> RedLock:
        await self.lock()
        return self
