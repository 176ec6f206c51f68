"""The count-down latch (Redisson's ``RCountDownLatch``, same key and channel)."""

from __future__ import annotations

from redisson_py.asyncio.driver import run
from redisson_py.core import keyspace
from redisson_py.core.flows import count_down_latch, synchronizers
from redisson_py.core.handles import check_wait
from redisson_py.core.synchronizer_handles import MAX_COUNT, ObjectHandle, check_int


class CountDownLatch(ObjectHandle):
    """A latch shared by every client: set a count once
    ([`try_set_count`][redisson_py.asyncio.CountDownLatch.try_set_count]), count it down
    from anywhere ([`count_down`][redisson_py.asyncio.CountDownLatch.count_down]), and
    every waiter ([`wait`][redisson_py.asyncio.CountDownLatch.wait]) goes on when it
    reaches zero. Redisson's ``RCountDownLatch`` layout: the count at the key ``name``
    (no key: zero), ``0`` announced on ``redisson_countdownlatch__channel__{name}`` when
    the count reaches zero.

    Get one from the client's ``get_count_down_latch``.
    """

    layout = count_down_latch.LAYOUT

    async def wait(self, timeout: float | None = None) -> bool:
        """Wait until the count is zero: True, or False when ``timeout`` seconds
        passed first (None: wait for ever).

        This is Redisson's ``await``, renamed in the asyncio client and the threaded one
        alike because Python reserves the word.

        Returns within ``timeout`` plus one command timeout whatever the servers do. A
        waiter wakes when zero is announced, and checks the count every few seconds
        besides, so a lost message, or a latch deleted while waited for, delays it that
        long at most. Connection errors are waited through while the wait lasts.
        """
        wait = check_wait(self.name, timeout, what=self.layout.label, argument="timeout")
        done: bool = await run(self._flow(count_down_latch.wait, wait))
        return done

    async def count_down(self) -> None:
        """Decrement the count; at zero the latch opens and every waiter goes on. A
        count already at zero stays there. Counted once however often a lost reply
        makes it retry."""
        await run(self._flow(count_down_latch.count_down))

    async def try_set_count(self, count: int) -> bool:
        """Set the count to ``count`` unless one is set (the latch is not open); True
        when set."""
        checked = check_int(self._subject, "count", count, high=MAX_COUNT)
        done: bool = await run(self._flow(count_down_latch.try_set_count, checked))
        return done

    async def get_count(self) -> int:
        """The count now (0 when open)."""
        count: int = await run(self._flow(count_down_latch.get_count))
        return count

    async def delete(self) -> bool:
        """Delete the latch (it is open then; its waiters see it at their next check);
        True if it existed."""
        deleted: bool = await run(
            self._flow(synchronizers.delete, keyspace.LATCH_NEW_COUNT_MESSAGE)
        )
        return deleted
