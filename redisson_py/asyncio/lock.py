"""The reentrant distributed lock for asyncio tasks (Redisson's ``RLock``)."""

from __future__ import annotations

import asyncio
import itertools
import weakref
from types import TracebackType

from redisson_py.asyncio.driver import run
from redisson_py.core import lock_flows
from redisson_py.core.handles import LockHandle, check_lease, check_wait
from redisson_py.errors import ArgumentTypeError, UsageError

_task_ids: weakref.WeakKeyDictionary[asyncio.Task[object], int] = weakref.WeakKeyDictionary()
_next_id = itertools.count(1)


def current_owner_id() -> str:
    """The current task's owner id, unique within the process and never reused (a task's
    ``id()`` can be), so a new task never inherits a finished one's holds."""
    task = asyncio.current_task()
    if task is None:
        raise UsageError("an asyncio lock is owned by a task: call it from inside one")
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
        await run(self._flow(self._owner(), lock_flows.try_lock, None, lease))
        self._started(lease)

    async def try_lock(self, wait_time: float = 0.0, lease_time: float | None = None) -> bool:
        """Take the lock if it can be had within ``wait_time`` seconds; True if taken.

        Raises :class:`~redisson_py.NoSyncedReplicasError` as the sync twin does.
        """
        wait, lease = check_wait(self.name, wait_time), check_lease(self.name, lease_time)
        owner = self._owner()
        acquired: bool = await run(self._flow(owner, lock_flows.try_lock, wait, lease))
        if acquired:
            self._started(lease)
        return acquired

    def _started(self, lease: float | None) -> None:
        if lease is None:
            self._client._watchdog.ensure_running()

    def _owner(self) -> str:
        owner = self.owner_id
        return current_owner_id() if owner is None else str(owner)

    async def extend(self, seconds: float) -> None:
        """Make this task's leased hold expire ``seconds`` from now, atomically and only
        while it holds the lock; raises as the sync twin (``LockNotOwnedError`` when it
        holds nothing, ``ArgumentError`` for ``seconds`` under 0.001 or a watchdog hold)."""
        seconds = self._check_extension(self.name, seconds)
        await run(self._flow(self._owner(), lock_flows.extend, seconds))

    def owned_by(self, owner_id: str) -> Lock:
        """This lock acting for owner ``owner_id`` (a task's :func:`current_owner_id`,
        a string) instead of the current task, to hand a hold from one task to another:
        ``await lock.owned_by(first_task_id).unlock()``.

        The same risks as the sync twin: both tasks act as one owner (the lock no longer
        excludes one from the other), a watchdog hold stays renewed until that owner's
        last unlock, and an unlock through the wrong view releases someone else's hold.
        """
        if not isinstance(owner_id, str) or not owner_id:
            raise ArgumentTypeError(
                f"lock {self.name!r}: a task's owner id is a non-empty string (from"
                f" current_owner_id()), not {owner_id!r}"
            )
        view: Lock = self._view(owner_id)
        return view

    async def unlock(self) -> None:
        """Release one hold; :class:`~redisson_py.LockNotOwnedError` if this task holds
        none, or its hold was reported lost."""
        await run(self._flow(self._owner(), lock_flows.unlock))

    async def force_unlock(self) -> bool:
        """Delete the lock whoever holds it; True if it was locked."""
        result: bool = await run(self._flow(self._owner(), lock_flows.force_unlock))
        return result

    async def is_locked(self) -> bool:
        result: bool = await run(self._flow(self._owner(), lock_flows.is_locked))
        return result

    async def is_held_by_current_task(self) -> bool:
        result: bool = await run(self._flow(self._owner(), lock_flows.is_held))
        return result

    is_held_by_current_thread = is_held_by_current_task
    """The sync API's name, for code written against both."""

    async def hold_count(self) -> int:
        result: int = await run(self._flow(self._owner(), lock_flows.hold_count))
        return result

    async def remain_time_to_live(self) -> float | None:
        owner = self._owner()
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
