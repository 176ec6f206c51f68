"""The reentrant distributed lock for asyncio tasks (Redisson's ``RLock``)."""

from __future__ import annotations

import asyncio
import itertools
import weakref
from types import TracebackType

from redisson_py.asyncio.driver import run
from redisson_py.core import lock_flows
from redisson_py.core.handles import LockHandle, check_lease, check_wait

_task_ids: weakref.WeakKeyDictionary[asyncio.Task[object], int] = weakref.WeakKeyDictionary()
_next_id = itertools.count(1)


def current_owner_id() -> str:
    """The current task's owner id, unique within the process and never reused (a task's
    ``id()`` can be), so a new task never inherits a finished one's holds."""
    task = asyncio.current_task()
    if task is None:
        raise RuntimeError("an asyncio lock is owned by a task: call it from inside one")
    owner = _task_ids.get(task)
    if owner is None:
        owner = _task_ids[task] = next(_next_id)
    return f"task-{owner}"


class Lock(LockHandle):
    """A reentrant lock on a Redis key, owned by the asyncio task that takes it.

    The same semantics as :class:`redisson_py.Lock` (reentrancy, lease or watchdog,
    pub/sub wake-up, lost-lock reporting), with ``await`` and ``async with``. A task
    cancelled while its acquire is in flight undoes that acquire if it was applied.
    """

    async def lock(self, lease_time: float | None = None) -> None:
        """Wait until this task holds the lock, through failovers (as the sync twin)."""
        lease = check_lease(self.name, lease_time)
        await run(self._flow(current_owner_id(), lock_flows.try_lock, None, lease))
        self._started(lease)

    async def try_lock(self, wait_time: float = 0.0, lease_time: float | None = None) -> bool:
        """Take the lock if it can be had within ``wait_time`` seconds; True if taken.

        Raises :class:`~redisson_py.NoSyncedReplicasError` as the sync twin does.
        """
        wait, lease = check_wait(self.name, wait_time), check_lease(self.name, lease_time)
        owner = current_owner_id()
        acquired: bool = await run(self._flow(owner, lock_flows.try_lock, wait, lease))
        if acquired:
            self._started(lease)
        return acquired

    def _started(self, lease: float | None) -> None:
        if lease is None:
            self._client._watchdog.ensure_running()

    async def unlock(self) -> None:
        """Release one hold; :class:`~redisson_py.LockNotOwnedError` if this task holds
        none, or its hold was reported lost."""
        await run(self._flow(current_owner_id(), lock_flows.unlock))

    async def force_unlock(self) -> bool:
        """Delete the lock whoever holds it; True if it was locked."""
        result: bool = await run(self._flow(current_owner_id(), lock_flows.force_unlock))
        return result

    async def is_locked(self) -> bool:
        result: bool = await run(self._flow(current_owner_id(), lock_flows.is_locked))
        return result

    async def is_held_by_current_task(self) -> bool:
        result: bool = await run(self._flow(current_owner_id(), lock_flows.is_held))
        return result

    is_held_by_current_thread = is_held_by_current_task
    """The sync API's name, for code written against both."""

    async def hold_count(self) -> int:
        result: int = await run(self._flow(current_owner_id(), lock_flows.hold_count))
        return result

    async def remain_time_to_live(self) -> float | None:
        owner = current_owner_id()
        result: float | None = await run(self._flow(owner, lock_flows.remain_time_to_live))
        return result

    # asyncio.Lock's protocol

    async def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        """Like the sync ``acquire``: blocking for ever by default."""
        if not blocking:
            return await self.try_lock(0.0)
        if timeout is None or timeout < 0:
            await self.lock()
            return True
        return await self.try_lock(timeout)

    async def release(self) -> None:
        await self.unlock()

    async def locked(self) -> bool:
        return await self.is_locked()

    async def __aenter__(self) -> Lock:
        await self.lock()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.unlock()
