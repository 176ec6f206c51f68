"""The non-reentrant lock on single and cluster, sync and asyncio: its holder's second
acquire (``lock()``, ``try_lock()`` with or without a wait) raises LockReentryError at
once and leaves the hold as it was; other owners contend as for any lock; it works as a
context manager."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest

from redisson_py import LockNotOwnedError, LockReentryError
from redisson_py.testing.owners import Flavor


def test_the_holders_second_acquire_is_refused_at_once(
    flavor: Flavor, make_client: Callable[..., Any], lock_name: str
) -> None:
    lock = make_client().get_non_reentrant_lock(lock_name)
    alice = flavor.owner("alice")
    assert alice(lock.try_lock) is True
    for call, args in ((lock.lock, ()), (lock.try_lock, ()), (lock.try_lock, (5.0,))):
        started = time.monotonic()
        with pytest.raises(LockReentryError) as refused:
            alice(call, *args)
        assert time.monotonic() - started < 1.0  # refused, not waited out
        assert refused.value.lock_name == lock_name
    with pytest.raises(LockReentryError):
        alice(lock.lock, 10.0)  # with a lease: refused too, the hold's lease untouched
    assert alice(lock.hold_count) == 1
    assert alice(lock.remain_time_to_live) > 10.0  # not the refused lease
    alice(lock.unlock)
    assert alice(lock.is_locked) is False  # one unlock frees it
    with pytest.raises(LockNotOwnedError):
        alice(lock.unlock)


def test_other_owners_contend_as_usual(
    flavor: Flavor, make_client: Callable[..., Any], lock_name: str
) -> None:
    first, second = make_client(), make_client()
    alice, bob, carol = flavor.owner("alice"), flavor.owner("bob"), flavor.owner("carol")
    lock_a, lock_b = (
        first.get_non_reentrant_lock(lock_name),
        second.get_non_reentrant_lock(lock_name),
    )
    alice(lock_a.lock)
    assert bob(lock_b.try_lock) is False
    assert bob(lock_b.try_lock, 0.3) is False
    assert carol(lock_a.try_lock) is False  # another owner of the same client
    waiting = bob.start_timed(lock_b.lock)
    time.sleep(0.3)
    assert not waiting.done()
    _, released = alice.start_timed(lock_a.unlock).result(timeout=10)
    _, granted = waiting.result(timeout=10)
    assert granted - released < 1.0  # woken by the unlock message
    with pytest.raises(LockReentryError):
        bob(lock_b.try_lock, 1.0)
    assert alice(lock_a.try_lock) is False
    bob(lock_b.unlock)
    assert alice(lock_a.try_lock) is True
    alice(lock_a.unlock)


def test_it_works_as_a_context_manager(
    flavor: Flavor, make_client: Callable[..., Any], lock_name: str
) -> None:
    lock = make_client().get_non_reentrant_lock(lock_name)
    alice, bob = flavor.owner("alice"), flavor.owner("bob")
    seen: dict[str, Any] = {}

    if flavor.name == "sync":

        def body() -> None:
            with lock:
                seen["held"] = lock.is_held_by_current_thread()
                seen["other"] = bob(lock.try_lock)
                try:
                    lock.try_lock()
                except LockReentryError as error:
                    seen["refused"] = error
            seen["after"] = lock.is_locked()

    else:

        async def body() -> None:  # type: ignore[misc]
            async with lock:
                seen["held"] = await lock.is_held_by_current_task()
                seen["other"] = await flavor.loop.run_in_executor(None, bob, lock.try_lock)
                try:
                    await lock.try_lock()
                except LockReentryError as error:
                    seen["refused"] = error
            seen["after"] = await lock.is_locked()

    alice(body)
    assert seen["held"] is True
    assert seen["other"] is False
    assert isinstance(seen["refused"], LockReentryError)
    assert seen["after"] is False
    assert bob(lock.try_lock) is True
    bob(lock.unlock)
