"""The reentrant lock (``getLock``) shared by the real Redisson and redisson-py: they exclude
each other both ways, wake each other's waiters through the channel, count reentrant
holds per owner, read each other's state, keep their holds alive past the watchdog
timeout while the other side watches, and see a forced unlock from the other side."""

from __future__ import annotations

import threading
import time
import uuid

import pytest
from java_peer import JavaError, timed_wait, wait_until_blocked
from mixed_fleet import WATCHDOG_MS, Cell

from redisson_py.config import Config
from redisson_py.errors import LockNotOwnedError

LEASE_MS = 20_000
# A waiter woken by the channel is granted far sooner than the holder's lease (20 s), or
# its own re-check when no message comes (the lease too).
WOKEN_WITHIN = 5.0  # a quarter of the lease: generous for a loaded machine


def clock_offset() -> float:
    """time.time() minus time.monotonic(): turns an owner's finishing time into epoch."""
    return time.time() - time.monotonic()


@pytest.fixture
def name() -> str:
    return f"mixed:lock:{uuid.uuid4().hex[:12]}"


def test_mutual_exclusion_both_ways(cell: Cell, name: str) -> None:
    java = cell.java.get("lock", name)
    lock = cell.py.get_lock(name)
    me = cell.flavor.owner("me")
    java.call("lock", thread=f"{name}:a")
    assert me(lock.try_lock, 0) is False
    assert me(lock.is_locked) is True
    java.call("unlock", thread=f"{name}:a")
    assert me(lock.try_lock, 0) is True
    assert java.call("tryLock", 0, thread=f"{name}:b") is False
    assert java.call("isLocked", thread=f"{name}:b") is True
    me(lock.unlock)
    assert java.call("tryLock", 0, thread=f"{name}:b") is True
    assert me(lock.try_lock, 0) is False
    java.call("unlock", thread=f"{name}:b")
    assert me(lock.is_locked) is False


def test_waiters_woken_by_the_other_sides_release(cell: Cell, name: str) -> None:
    java = cell.java.get("lock", name)
    lock = cell.py.get_lock(name)
    me = cell.flavor.owner("me")
    # Java holds, Python waits: Java's unlock message wakes Python.
    java.call("lock", LEASE_MS, thread=f"{name}:a")
    waiting = me.start_timed(lock.lock)
    time.sleep(0.4)
    assert not waiting.done()
    java.call("unlock", thread=f"{name}:a")
    released = time.time()
    _, granted = waiting.result(timeout=30)
    assert granted + clock_offset() - released < WOKEN_WITHIN
    # Python holds (leased), Java waits: Python's unlock message wakes Java.
    me(lock.unlock)
    me(lock.lock, LEASE_MS / 1000)
    java_waiting = java.start("lock", thread=f"{name}:b")
    wait_until_blocked(java_waiting)
    # Redisson listens where we publish: the same channel, sharded on a Redis 7 cluster
    # (and only there). Our waiter's may linger a moment, so the count is not exact: the
    # wake-up below shows Redisson's subscription is on the channel we publish to.
    plain, sharded = cell.subscribers(cell.aux("redisson_lock__channel", name))
    if cell.by_slot:
        assert plain == 0 and sharded >= 1
    else:
        assert sharded == 0 and plain >= 1
    me(lock.unlock)
    assert timed_wait(java_waiting, time.time()) < WOKEN_WITHIN
    java.call("unlock", thread=f"{name}:b")


def test_reentrant_holds_are_counted_per_owner(cell: Cell, name: str) -> None:
    java = cell.java.get("lock", name)
    lock = cell.py.get_lock(name)
    me = cell.flavor.owner("me")
    a = f"{name}:a"
    java.call("lock", thread=a)
    java.call("lock", thread=a)
    assert java.call("holdCount", thread=a) == 2
    assert me(lock.hold_count) == 0
    java.call("unlock", thread=a)
    assert me(lock.try_lock, 0) is False  # one Java hold left
    java.call("unlock", thread=a)
    assert me(lock.try_lock, 0) is True
    me(lock.lock)
    assert me(lock.hold_count) == 2
    assert java.call("holdCount", thread=a) == 0
    assert java.call("held", thread=a) is False
    me(lock.unlock)
    assert java.call("tryLock", 0, thread=a) is False  # one Python hold left
    me(lock.unlock)
    assert java.call("tryLock", 0, thread=a) is True
    java.call("unlock", thread=a)


def test_state_read_across(cell: Cell, name: str) -> None:
    java = cell.java.get("lock", name)
    lock = cell.py.get_lock(name)
    me = cell.flavor.owner("me")
    assert java.call("ttl", thread="reader") == -2  # Redisson: no key
    assert me(lock.remain_time_to_live) is None
    java.call("lock", 10_000, thread=f"{name}:a")
    assert me(lock.is_locked) is True
    assert me(lock.is_held_by_current_thread) is False
    assert 8.0 < me(lock.remain_time_to_live) <= 10.0
    java.call("unlock", thread=f"{name}:a")
    me(lock.lock, 10.0)
    assert java.call("isLocked", thread="reader") is True
    assert java.call("held", thread="reader") is False
    assert 8_000 < java.call("ttl", thread="reader") <= 10_000
    me(lock.unlock)
    assert java.call("isLocked", thread="reader") is False


def test_each_sides_watchdog_keeps_its_hold(cell: Cell, name: str) -> None:
    # Both sides hold at once, a lock each, and each is watched by the other side for
    # 1.2 watchdog timeouts (one watch instead of one per side, in turn: 4 s less).
    held_by_java, held_by_us = f"{name}:java", f"{name}:py"
    java = cell.java.get("lock", held_by_java)
    java_contender = cell.java.get("lock", held_by_us)
    lock, contender = cell.py.get_lock(held_by_us), cell.py.get_lock(held_by_java)
    me = cell.flavor.owner("me")
    java.call("lock", thread=f"{name}:a")  # no lease: Redisson's watchdog renews it
    me(lock.lock)  # our watchdog
    watch_until = time.monotonic() + 1.2 * WATCHDOG_MS / 1000
    while time.monotonic() < watch_until:
        assert me(contender.try_lock, 0) is False
        assert java_contender.call("tryLock", 0, thread=f"{name}:b") is False
        assert java_contender.call("ttl", thread=f"{name}:b") > 0
        time.sleep(0.5)
    java.call("unlock", thread=f"{name}:a")
    me(lock.unlock)
    assert me(contender.try_lock, 0) is True
    me(contender.unlock)
    assert java_contender.call("tryLock", 0, thread=f"{name}:b") is True
    java_contender.call("unlock", thread=f"{name}:b")


def test_forced_unlock_is_seen_by_the_holder_on_the_other_side(cell: Cell, name: str) -> None:
    java = cell.java.get("lock", name)
    lost = threading.Event()
    lock = cell.py.get_lock(name, on_lock_lost=lambda _: lost.set())
    me = cell.flavor.owner("me")
    # Python forces Java's hold: Java no longer holds it, and its unlock says so.
    java.call("lock", thread=f"{name}:a")
    assert me(lock.force_unlock) is True
    assert java.call("held", thread=f"{name}:a") is False
    with pytest.raises(JavaError, match="IllegalMonitorStateException"):
        java.call("unlock", thread=f"{name}:a")
    # Java forces Python's hold: our watchdog finds it gone and reports it.
    me(lock.lock)
    assert java.call("forceUnlock", thread=f"{name}:b") is True
    assert lost.wait(2 * WATCHDOG_MS / 1000)
    with pytest.raises(LockNotOwnedError):
        me(lock.unlock)
    assert java.call("isLocked", thread=f"{name}:b") is False


def test_redisson_reads_the_yaml_redisson_py_writes(cell: Cell, name: str) -> None:
    """``Config.to_yaml()`` is Redisson's YAML: the real Redisson loads what redisson-py
    wrote (its own extension keys at their defaults are left out; Redisson's loader
    refuses a key it does not know) and locks what the Python client sees locked."""
    written = Config.from_yaml(cell.yaml_path, env=cell.topology.environment()).to_yaml()
    java_client = cell.java.peer.fresh_client(written)
    try:
        java = java_client.get("lock", name)
        java.call("lock", thread=f"{name}:a")
        assert cell.flavor.owner("me")(cell.py.get_lock(name).is_locked) is True
        java.call("unlock", thread=f"{name}:a")
    finally:
        java_client.shutdown()
