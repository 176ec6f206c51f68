"""The asyncio shell's `Waker`: how a pub/sub message wakes the task that waits for it
(a queued lock's waiter, whose lock() returns on the grant message)."""

from __future__ import annotations

import asyncio
import contextlib

import pytest

from redisson_py.asyncio._primitives import ThreadLock, Waker, spawn


def test_a_notify_resumes_the_waiting_task_in_one_step_of_the_loop() -> None:
    async def main() -> list[str]:
        waker = Waker(ThreadLock())
        order: list[str] = []

        async def waiter() -> None:
            await waker.wait(10.0)
            order.append("waiter")

        task = asyncio.create_task(waiter())
        await asyncio.sleep(0)  # the waiter waits now
        waker.notify()
        await asyncio.sleep(0)  # one step: the waiter's resumption is queued before ours
        order.append("notifier")
        await task
        return order

    assert asyncio.run(main()) == ["waiter", "notifier"]


def test_a_wait_ends_at_its_timeout_and_a_later_notify_wakes_the_next_waiter() -> None:
    async def main() -> tuple[float, bool]:
        waker = Waker(ThreadLock())
        loop = asyncio.get_running_loop()
        started = loop.time()
        await waker.wait(0.05)
        waited = loop.time() - started
        second = asyncio.create_task(waker.wait(10.0))
        await asyncio.sleep(0)
        waker.notify()  # the timed-out wait is not woken again: this one is
        await asyncio.wait_for(second, 5)
        return waited, second.done()

    waited, woken = asyncio.run(main())
    assert 0.04 <= waited < 5
    assert woken


def test_a_cancelled_wait_leaves_no_waiter_behind() -> None:
    async def main() -> bool:
        waker = Waker(ThreadLock())
        task = asyncio.create_task(waker.wait(10.0))
        await asyncio.sleep(0)
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        other = asyncio.create_task(waker.wait(10.0))
        await asyncio.sleep(0)
        waker.notify()  # reaches the live waiter, not the cancelled one
        await asyncio.wait_for(other, 5)
        return other.done()

    assert asyncio.run(main())


def test_an_error_that_escapes_background_work_is_logged_not_dropped(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def broken() -> None:
        raise RuntimeError("a broken promise")

    async def main() -> None:
        spawn("redisson-py-take-up", broken)
        for _ in range(10):
            await asyncio.sleep(0)

    with caplog.at_level("ERROR", logger="redisson_py"):
        asyncio.run(main())
    [record] = caplog.records
    assert "background work redisson-py-take-up failed" in record.getMessage()
    assert record.exc_info is not None and "a broken promise" in str(record.exc_info[1])
