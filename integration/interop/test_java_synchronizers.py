"""The semaphore, the permit-expirable semaphore and the count-down latch shared by the real
Redisson and redisson-py: permits taken and given back on both sides, permit ids of one
side released by the other, waiters woken by the other side's release or count-down
(far sooner than any polling would), and expired permits returned to both.

Sync API only: the wire is the core's, the same for both shells."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator

import pytest
from java_peer import timed_wait, wait_until_blocked
from mixed_fleet import Cell

from redisson_py.testing.owners import Flavor

# Our waiters re-check every 3 s without a message (RECHECK), started 0.4 s before the
# release: a wake-up by polling would come 2.6 s after it at the soonest.
WOKEN_WITHIN = 2.0


@pytest.fixture
def flavor() -> Iterator[Flavor]:
    """The sync API only (see the module doc)."""
    flavor = Flavor("sync")
    yield flavor
    flavor.close()


@pytest.fixture
def name() -> str:
    return f"mixed:sync:{uuid.uuid4().hex[:12]}"


def test_semaphore_permits_shared(cell: Cell, name: str) -> None:
    java = cell.java.get("semaphore", name)
    semaphore = cell.py.get_semaphore(name)
    me = cell.flavor.owner("me")
    assert java.call("setPermits", 2, thread="j") is True
    assert me(semaphore.try_set_permits, 5) is False  # already set, by Java
    assert me(semaphore.available_permits) == 2
    me(semaphore.acquire)
    java.call("acquire", 1, thread="j")
    assert java.call("available", thread="j") == 0
    assert java.call("tryAcquire", 1, 0, thread="j") is False
    assert me(semaphore.try_acquire, 1, 0) is False
    # A Java waiter woken by our release; ours by Java's.
    java_waiting = java.start("acquire", 1, thread="j-waiter")
    wait_until_blocked(java_waiting)
    me(semaphore.release)
    assert timed_wait(java_waiting, time.time()) < WOKEN_WITHIN
    waiting = me.start_timed(semaphore.acquire, 2)
    java.call("release", 1, thread="j")
    time.sleep(0.4)
    assert not waiting.done()  # one permit of the two it needs
    java.call("release", 1, thread="j")
    released = time.monotonic()
    _, granted = waiting.result(timeout=30)
    assert granted - released < WOKEN_WITHIN
    assert java.call("available", thread="j") == 0
    me(semaphore.release, 2)
    assert java.call("available", thread="j") == 2


def test_permit_ids_shared(cell: Cell, name: str) -> None:
    java = cell.java.get("pes", name)
    semaphore = cell.py.get_permit_expirable_semaphore(name)
    me = cell.flavor.owner("me")
    assert me(semaphore.try_set_permits, 2) is True
    assert java.call("setPermits", 3, thread="j") is False
    java_permit = java.call("acquire", -1, thread="j")
    our_permit = me(semaphore.acquire)
    assert isinstance(java_permit, str) and isinstance(our_permit, str)
    assert me(semaphore.available_permits) == 0
    assert java.call("tryAcquire", 0, -1, thread="j") is None
    assert me(semaphore.try_acquire, 0) is None
    # Each side releases the other's permit by its id.
    assert java.call("tryRelease", our_permit, thread="j") is True
    assert me(semaphore.try_release, java_permit) is True
    assert me(semaphore.try_release, java_permit) is False  # gone already
    assert java.call("tryRelease", our_permit, thread="j") is False
    assert java.call("available", thread="j") == 2
    # Waiters woken by the other side's release.
    held = [me(semaphore.acquire), java.call("acquire", -1, thread="j")]
    java_waiting = java.start("acquire", -1, thread="j-waiter")
    wait_until_blocked(java_waiting)
    me(semaphore.release, held[0])
    assert timed_wait(java_waiting, time.time()) < WOKEN_WITHIN
    waiting = me.start_timed(semaphore.acquire)
    time.sleep(0.4)
    assert not waiting.done()
    java.call("release", held[1], thread="j")
    released = time.monotonic()
    permit, granted = waiting.result(timeout=30)
    assert granted - released < WOKEN_WITHIN
    java.call("release", permit, thread="j")
    java.call("release", java_waiting.result().value, thread="j")
    # A leased permit of either side expires for both.
    java.call("acquire", 1000, thread="j")
    me(semaphore.acquire, 1.0)
    assert me(semaphore.available_permits) == 0
    time.sleep(1.3)
    assert java.call("available", thread="j") == 2
    assert me(semaphore.available_permits) == 2


def test_latch_counted_down_from_both(cell: Cell, name: str) -> None:
    java = cell.java.get("latch", name)
    latch = cell.py.get_count_down_latch(name)
    me = cell.flavor.owner("me")
    assert java.call("setCount", 2, thread="j") is True
    assert me(latch.try_set_count, 5) is False
    assert me(latch.get_count) == 2
    java_waiting = java.start("await", 30_000, thread="j-waiter")
    waiting = cell.flavor.owner("waiter").start_timed(latch.wait, 30)
    time.sleep(0.4)
    me(latch.count_down)
    assert java.call("count", thread="j") == 1
    assert not java_waiting.done() and not waiting.done()
    java.call("countDown", thread="j")
    released = time.monotonic()
    released_at = time.time()
    opened, woken = waiting.result(timeout=30)
    assert opened is True and woken - released < WOKEN_WITHIN
    assert java_waiting.result(timeout=30).value is True
    assert timed_wait(java_waiting, released_at) < WOKEN_WITHIN
    assert me(latch.get_count) == 0
    # Set again from our side, opened by Java.
    assert me(latch.try_set_count, 1) is True
    java_waiting = java.start("await", 30_000, thread="j-waiter")
    wait_until_blocked(java_waiting)
    me(latch.count_down)
    assert timed_wait(java_waiting, time.time()) < WOKEN_WITHIN
