"""Every other lock kind shared by the real Redisson and redisson-py: the fair lock, the spin
lock, the fenced lock, the read-write lock and the MultiLock. Each way: exclusion and
reentrancy counted per owner, waiters woken by the other side's release, each side's
watchdog keeping every kind held past its timeout, a forced unlock seen by the holder on
the other side; readers and writers on both sides; a fair queue of waiters of both
languages, granted in order, and a dead waiter of either language; fenced tokens
increasing across both.

Sync API only: the wire is the core's, the same for both shells, and the reentrant
lock's module (``test_java_lock.py``) runs both shells' pub/sub and watchdog against
Java."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from java_peer import JavaError, JavaPeer, build, timed_wait, wait_until_blocked
from mixed_fleet import FAIR_WAIT_MS, WATCHDOG_MS, Cell, cells

from redisson_py import MultiLock
from redisson_py.errors import LockNotOwnedError, LockReentryError
from redisson_py.testing import eventually
from redisson_py.testing.owners import Flavor

LEASE_MS = 20_000
WOKEN_WITHIN = 5.0  # a quarter of the lease: generous for a loaded machine

PY_KINDS: dict[str, Callable[[Any, str], Any]] = {
    "fair": lambda client, name: client.get_fair_lock(name),
    "spin": lambda client, name: client.get_spin_lock(name),
    "fenced": lambda client, name: client.get_fenced_lock(name),
    "read": lambda client, name: client.get_read_write_lock(name).read_lock(),
    "write": lambda client, name: client.get_read_write_lock(name).write_lock(),
}
EXCLUSIVE = ["fair", "spin", "fenced", "write"]
# Who is kept out by a hold of the kind: a read hold keeps writers out, not readers.
CONTENDER = {"fair": "fair", "spin": "spin", "fenced": "fenced", "read": "write", "write": "write"}


@pytest.fixture
def flavor() -> Iterator[Flavor]:
    """The sync API only (see the module doc)."""
    flavor = Flavor("sync")
    yield flavor
    flavor.close()


@pytest.fixture
def name() -> str:
    return f"mixed:kind:{uuid.uuid4().hex[:12]}"


@pytest.mark.parametrize("kind", EXCLUSIVE)
def test_exclusion_and_reentrancy_each_way(cell: Cell, name: str, kind: str) -> None:
    java = cell.java.get(kind, name)
    lock = PY_KINDS[kind](cell.py, name)
    me = cell.flavor.owner("me")
    a = f"{name}:a"
    java.call("lock", thread=a)
    java.call("lock", thread=a)
    assert java.call("holdCount", thread=a) == 2
    assert me(lock.try_lock, 0) is False
    assert me(lock.is_locked) is True
    java.call("unlock", thread=a)
    assert me(lock.try_lock, 0) is False  # one Java hold left
    java.call("unlock", thread=a)
    assert me(lock.try_lock, 0) is True
    me(lock.lock)
    assert java.call("tryLock", 0, thread=a) is False
    assert java.call("isLocked", thread=a) is True
    assert java.call("holdCount", thread=a) == 0
    me(lock.unlock)
    assert java.call("tryLock", 0, thread=a) is False  # one Python hold left
    me(lock.unlock)
    assert java.call("tryLock", 0, thread=a) is True
    java.call("unlock", thread=a)
    assert me(lock.is_locked) is False


@pytest.mark.parametrize("kind", EXCLUSIVE)
def test_waiters_woken_by_the_other_sides_release(cell: Cell, name: str, kind: str) -> None:
    java = cell.java.get(kind, name)
    lock = PY_KINDS[kind](cell.py, name)
    me = cell.flavor.owner("me")
    java.call("lock", LEASE_MS, thread=f"{name}:a")
    waiting = me.start_timed(lock.lock)
    time.sleep(0.4)
    assert not waiting.done()
    java.call("unlock", thread=f"{name}:a")
    released = time.monotonic()
    _, granted = waiting.result(timeout=30)
    assert granted - released < WOKEN_WITHIN
    me(lock.unlock)
    me(lock.lock, LEASE_MS / 1000)
    java_waiting = java.start("lock", thread=f"{name}:b")
    wait_until_blocked(java_waiting)
    me(lock.unlock)
    assert timed_wait(java_waiting, time.time()) < WOKEN_WITHIN
    java.call("unlock", thread=f"{name}:b")


def test_each_sides_watchdog_keeps_every_kind_held(cell: Cell, name: str) -> None:
    # Both sides hold at once, every kind each on names of their own, each watched by
    # the other side for 1.2 watchdog timeouts (one watch instead of one per side).
    by_java = {kind: f"{name}:java:{kind}" for kind in PY_KINDS}
    by_us = {kind: f"{name}:py:{kind}" for kind in PY_KINDS}
    me = cell.flavor.owner("me")
    for kind, lock_name in by_java.items():  # no lease: Redisson's watchdog renews them
        cell.java.get(kind, lock_name).call("lock", thread=f"{name}:a")
    locks = {kind: PY_KINDS[kind](cell.py, n) for kind, n in by_us.items()}
    for lock in locks.values():
        me(lock.lock)  # our watchdog
    contenders = {kind: PY_KINDS[CONTENDER[kind]](cell.py, n) for kind, n in by_java.items()}
    watch_until = time.monotonic() + 1.2 * WATCHDOG_MS / 1000
    while time.monotonic() < watch_until:
        for kind, contender in contenders.items():
            assert me(contender.try_lock, 0) is False, kind
        for kind, lock_name in by_us.items():
            java = cell.java.get(CONTENDER[kind], lock_name)
            assert java.call("tryLock", 0, thread=f"{name}:b") is False, kind
        time.sleep(0.5)
    for kind, lock_name in by_java.items():
        cell.java.get(kind, lock_name).call("unlock", thread=f"{name}:a")
    for lock in locks.values():
        me(lock.unlock)
    for kind, contender in contenders.items():
        assert me(contender.try_lock, 0) is True, kind
        me(contender.unlock)
    for kind, lock_name in by_us.items():
        java = cell.java.get(CONTENDER[kind], lock_name)
        assert java.call("tryLock", 0, thread=f"{name}:b") is True, kind
        java.call("unlock", thread=f"{name}:b")


def test_forced_unlock_is_seen_by_the_holder_on_the_other_side(cell: Cell, name: str) -> None:
    names = {kind: f"{name}:{kind}" for kind in PY_KINDS}
    me = cell.flavor.owner("me")
    for kind, lock_name in names.items():
        java = cell.java.get(kind, lock_name)
        java.call("lock", thread=f"{name}:a")
        assert me(PY_KINDS[kind](cell.py, lock_name).force_unlock) is True, kind
        assert java.call("held", thread=f"{name}:a") is False, kind
        if kind == "fair":
            # Redisson's fair unlock of a lock that no longer exists returns quietly (its
            # script answers 1 when the key is gone): a known difference, ours raises.
            assert java.call("unlock", thread=f"{name}:a") is None
            continue
        with pytest.raises(JavaError, match="IllegalMonitorStateException"):
            java.call("unlock", thread=f"{name}:a")
    lost: set[str] = set()
    everything_lost = threading.Event()

    def on_lost(kind: str) -> Callable[[Any], None]:
        def report(_: Any) -> None:
            lost.add(kind)
            if len(lost) == len(names):
                everything_lost.set()

        return report

    locks = {}
    for kind, lock_name in names.items():
        if kind in ("read", "write"):
            rw = cell.py.get_read_write_lock(lock_name)
            locks[kind] = getattr(rw, f"{kind}_lock")(on_lock_lost=on_lost(kind))
        else:
            getter = getattr(cell.py, f"get_{kind}_lock")
            locks[kind] = getter(lock_name, on_lock_lost=on_lost(kind))
        me(locks[kind].lock)
        assert cell.java.get(kind, lock_name).call("forceUnlock", thread=f"{name}:b"), kind
    assert everything_lost.wait(2 * WATCHDOG_MS / 1000), f"lost: {lost}"
    for kind, lock in locks.items():
        with pytest.raises(LockNotOwnedError):
            me(lock.unlock)
        assert cell.java.get(kind, names[kind]).call("isLocked", thread=f"{name}:b") is False


def test_readers_and_writers_on_both_sides(cell: Cell, name: str) -> None:
    rw = cell.py.get_read_write_lock(name)
    reader, writer = cell.flavor.owner("reader"), cell.flavor.owner("writer")
    java_read, java_write = cell.java.get("read", name), cell.java.get("write", name)
    # Readers of both languages share it; a writer of either waits.
    java_read.call("lock", thread=f"{name}:r")
    assert reader(rw.read_lock().try_lock, 0) is True
    assert java_write.call("tryLock", 0, thread=f"{name}:w") is False
    assert writer(rw.write_lock().try_lock, 0) is False
    # Our writer waits for both readers; the Java reader's release, the last, wakes it.
    waiting = writer.start_timed(rw.write_lock().lock)
    reader(rw.read_lock().unlock)
    time.sleep(0.4)
    assert not waiting.done()
    java_read.call("unlock", thread=f"{name}:r")
    released = time.monotonic()
    _, granted = waiting.result(timeout=30)
    assert granted - released < WOKEN_WITHIN
    # Our writer holds: readers of both languages wait; its release wakes the Java one.
    # Redisson's isLocked() of the read lock means "held for reading": false here.
    assert java_read.call("isLocked", thread=f"{name}:r") is False
    assert java_write.call("isLocked", thread=f"{name}:r") is True
    assert java_read.call("tryLock", 0, thread=f"{name}:r") is False
    assert reader(rw.read_lock().try_lock, 0) is False
    java_waiting = java_read.start("lock", thread=f"{name}:r")
    wait_until_blocked(java_waiting)
    writer(rw.write_lock().unlock)
    assert timed_wait(java_waiting, time.time()) < WOKEN_WITHIN
    # A Java writer waits for our reader and is woken by its release.
    assert reader(rw.read_lock().try_lock, 0) is True
    java_read.call("unlock", thread=f"{name}:r")
    assert java_read.call("isLocked", thread=f"{name}:r") is True  # our read hold
    assert java_write.call("isLocked", thread=f"{name}:r") is False
    java_waiting = java_write.start("lock", thread=f"{name}:w")
    wait_until_blocked(java_waiting)
    reader(rw.read_lock().unlock)
    assert timed_wait(java_waiting, time.time()) < WOKEN_WITHIN
    assert reader(rw.read_lock().is_locked) is False  # a Java writer holds it
    assert reader(rw.write_lock().is_locked) is True
    # A Java writer may read too (Redisson's rule); our reader still waits.
    java_read.call("lock", thread=f"{name}:w")
    assert reader(rw.read_lock().try_lock, 0) is False
    java_read.call("unlock", thread=f"{name}:w")
    java_write.call("unlock", thread=f"{name}:w")
    assert reader(rw.read_lock().try_lock, 0) is True
    reader(rw.read_lock().unlock)


def queue_length(cell: Cell, name: str) -> int:
    with cell.raw(name) as raw:
        return int(raw.llen(cell.aux("redisson_lock_queue", name)))


def test_fair_queue_of_both_languages_is_granted_in_order(cell: Cell, name: str) -> None:
    holder = cell.flavor.owner("holder")
    holder(cell.py.get_fair_lock(name).lock)
    java = cell.java.get("fair", name)
    grants: dict[str, float] = {}
    java_grants: dict[str, Any] = {}
    for index in range(6):
        who = f"w{index}"
        if index % 2:
            thread = f"{name}:{who}"
            java_grants[who] = java.start("lock", thread=thread)
            java.start("sleep", 100, thread=thread)  # hold it a while, then hand it on
            java.start("unlock", thread=thread)
        else:
            owner = cell.flavor.owner(who)
            lock = cell.py.get_fair_lock(name)
            owner.start(lock.lock)
            owner.start(lambda who=who: grants.__setitem__(who, time.time()))
            owner.start(time.sleep, 0.1)
            owner.start(lock.unlock)
        eventually(lambda n=index + 1: queue_length(cell, name) == n, timeout=10, what="queued")
        time.sleep(0.05)
    holder(cell.py.get_fair_lock(name).unlock)
    for who, future in java_grants.items():
        grants[who] = future.result(timeout=60).at
    eventually(lambda: len(grants) == 6, timeout=30, what="every waiter granted")
    assert sorted(grants, key=grants.__getitem__) == [f"w{i}" for i in range(6)]
    eventually(lambda: queue_length(cell, name) == 0, timeout=10, what="queue empty")


DEAD_PYTHON_WAITER = """
import sys, time
from redisson_py import Config, Redisson
client = Redisson.create(Config.from_yaml(sys.argv[1]))
client.get_fair_lock(sys.argv[2]).lock()
time.sleep(3600)
"""


# The queue's clock arithmetic is the same on every topology (the other fair tests cover
# its routing); a dead waiter costs ~15 s a cell: the single server, both versions.
@cells(lambda kind, version: kind == "single")
def test_a_dead_waiter_of_either_language_holds_the_queue_only_until_its_timeout(
    cell: Cell, name: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    java = cell.java.get("fair", name)
    lock = cell.py.get_fair_lock(name)
    me = cell.flavor.owner("me")
    yaml_text = cell.yaml_path.read_text()
    # A Java waiter whose JVM is killed, ahead of a Python waiter.
    java.call("lock", thread=f"{name}:holder")
    doomed = JavaPeer(cell.version, build(cell.version), tmp_path_factory.mktemp("doomed"))
    try:
        doomed.fresh_client(yaml_text).get("fair", name).start("lock", thread="dead")
        eventually(lambda: queue_length(cell, name) == 1, timeout=20, what="Java queued")
        waiting = me.start_timed(lock.lock)
        eventually(lambda: queue_length(cell, name) == 2, timeout=10, what="we queued")
    finally:
        doomed.kill()
    java.call("unlock", thread=f"{name}:holder")
    released = time.monotonic()
    time.sleep(0.5)
    assert not waiting.done()  # fair: the dead one keeps its place a while
    _, granted = waiting.result(timeout=30)
    assert granted - released <= (FAIR_WAIT_MS + WATCHDOG_MS) / 1000 + 1.0
    # A Python waiter whose process is killed, ahead of a Java waiter.
    process = subprocess.Popen(
        [sys.executable, "-c", DEAD_PYTHON_WAITER, str(cell.yaml_path), name]
    )
    try:
        eventually(lambda: queue_length(cell, name) == 1, timeout=20, what="Python queued")
        java_waiting = java.start("lock", thread=f"{name}:late")
        eventually(lambda: queue_length(cell, name) == 2, timeout=10, what="Java queued")
    finally:
        process.kill()
        process.wait()
    me(lock.unlock)
    released_at = time.time()
    time.sleep(0.5)
    assert not java_waiting.done()
    assert timed_wait(java_waiting, released_at) <= (FAIR_WAIT_MS + WATCHDOG_MS) / 1000 + 1.0
    java.call("unlock", thread=f"{name}:late")
    eventually(lambda: queue_length(cell, name) == 0, timeout=10, what="queue empty")


def test_fenced_tokens_increase_across_both(cell: Cell, name: str) -> None:
    java = cell.java.get("fenced", name)
    lock = cell.py.get_fenced_lock(name)
    me = cell.flavor.owner("me")
    tokens = []
    for _ in range(3):
        tokens.append(java.call("lockToken", thread=f"{name}:a"))
        assert me(lock.get_token) == tokens[-1]
        assert me(lock.try_lock_and_get_token, 0) is None
        java.call("unlock", thread=f"{name}:a")
        tokens.append(me(lock.lock_and_get_token))
        assert java.call("token", thread=f"{name}:a") == tokens[-1]
        assert java.call("tryLockToken", 0, -1, thread=f"{name}:a") is None
        me(lock.unlock)
    assert tokens == sorted(set(tokens)), tokens
    assert all(isinstance(t, int) for t in tokens)


def test_multilock_members_shared(cell: Cell, name: str) -> None:
    members = [f"{name}:m{i}" for i in range(3)]
    java = cell.java.get("multi", ",".join(members))
    me = cell.flavor.owner("me")
    multi = MultiLock(*(cell.py.get_lock(m) for m in members))
    java.call("lock", thread=f"{name}:a")
    assert me(multi.try_lock, 0) is False
    assert me(cell.py.get_lock(members[1]).try_lock, 0) is False
    java.call("unlock", thread=f"{name}:a")
    assert me(multi.try_lock, 0) is True
    assert java.call("tryLock", 0, -1, thread=f"{name}:b") is False
    assert cell.java.get("lock", members[2]).call("isLocked", thread=f"{name}:b") is True
    me(multi.unlock)
    assert java.call("tryLock", 0, -1, thread=f"{name}:b") is True
    java.call("unlock", thread=f"{name}:b")
    for member in members:
        assert me(cell.py.get_lock(member).is_locked) is False


NON_REENTRANT: dict[str, Callable[[Any, str], Any]] = {
    "nonreentrant": lambda client, name: client.get_non_reentrant_lock(name),
    "nonreentrantfair": lambda client, name: client.get_non_reentrant_fair_lock(name),
}


@cells(lambda kind, version: version.startswith("4."))  # Redisson 3 has neither kind
@pytest.mark.parametrize("kind", NON_REENTRANT)
def test_non_reentrant_kinds_each_way(cell: Cell, name: str, kind: str) -> None:
    java = cell.java.get(kind, name)
    lock = NON_REENTRANT[kind](cell.py, name)
    me = cell.flavor.owner("me")
    java.call("lock", LEASE_MS, thread=f"{name}:a")
    assert me(lock.try_lock, 0) is False
    # The holder's second acquire is refused at once on both sides.
    with pytest.raises(JavaError, match="non-reentrant"):
        java.call("tryLock", 0, -1, thread=f"{name}:a")
    waiting = me.start_timed(lock.lock)
    time.sleep(0.4)
    assert not waiting.done()
    java.call("unlock", thread=f"{name}:a")
    released = time.monotonic()
    _, granted = waiting.result(timeout=30)
    assert granted - released < WOKEN_WITHIN
    assert java.call("tryLock", 0, -1, thread=f"{name}:b") is False
    java_waiting = java.start("lock", thread=f"{name}:b")
    wait_until_blocked(java_waiting)
    with pytest.raises(LockReentryError):
        me(lock.try_lock, 0)
    me(lock.unlock)
    assert timed_wait(java_waiting, time.time()) < WOKEN_WITHIN
    assert me(lock.try_lock, 0) is False
    java.call("unlock", thread=f"{name}:b")
    assert me(lock.is_locked) is False
