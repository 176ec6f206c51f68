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

    async def is_locked(self) -> bool:
        """True when the group is held by anyone (every member of a MultiLock, a quorum
        of a RedLock); see the sync twin."""
        result: bool = await run(
            multi_flows.guarded(
                self._group,
                multi_flows.is_locked(self._group, self._refs(current_owner_id())),
            )
        )
        return result

    async def force_unlock(self) -> bool:
        """Unlock every member whoever holds it; True if any was locked (see the sync twin)."""
        result: bool = await run(
            multi_flows.guarded(
                self._group,
                multi_flows.force_unlock(self._group, self._refs(current_owner_id())),
            )
        )
        return result

    # asyncio.Lock's protocol, as the asyncio Lock of this package has it

    async def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        """Like :meth:`redisson_py.asyncio.Lock.acquire`: waits for ever by default."""
        if not blocking:
            return await self.try_lock(0.0)
        if timeout is None or timeout < 0:
            return await self.try_lock(None)
        return await self.try_lock(timeout)

    async def release(self) -> None:
        await self.unlock()

    async def locked(self) -> bool:
        """Same as :meth:`is_locked`: a coroutine that asks Redis, unlike
        :meth:`asyncio.Lock.locked` (sync, local), because whether a distributed lock is
        held is only known there; as :meth:`redisson_py.asyncio.Lock.locked`."""
        return await self.is_locked()

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
