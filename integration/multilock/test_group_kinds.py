"""MultiLock and RedLock over every lock kind, sync and asyncio: a MultiLock of a fair
lock, a read lock, a write lock, a spin lock and a fenced lock (single server and
cluster) takes and releases them all, and a failed try leaves nothing behind (no hold,
no place in the fair lock's queue); a RedLock of read locks on five masters is shared by
readers and excludes a RedLock of write locks; a group with a non-reentrant member its
owner holds already raises LockReentryError at once."""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from redisson_py import LockReentryError
from redisson_py.core.routing import naming
from redisson_py.testing import Topology
from redisson_py.testing.owners import Flavor


@pytest.fixture(params=["single", "cluster"])
def group_topology(request: pytest.FixtureRequest) -> Topology:
    topology: Topology = request.getfixturevalue(f"{request.param}_topology")
    return topology


@contextlib.contextmanager
def shut_down_first(flavor: Flavor, clients: list[Any]) -> Iterator[list[Any]]:
    """Shut ``clients`` down before the flavor joins its owners' threads, so an owner a
    failed test left blocked gets ClientClosedError instead of hanging the run."""
    try:
        yield clients
    finally:
        for client in clients:
            with contextlib.suppress(Exception):  # teardown: the test's result stands
                flavor.run(client.shutdown())


@pytest.fixture
def group_clients(
    flavor: Flavor, group_topology: Topology, topology_config: Any
) -> Iterator[list[Any]]:
    """Two clients on the topology."""
    clients = [flavor.create_client(topology_config(group_topology)) for _ in range(2)]
    with shut_down_first(flavor, clients):
        yield clients


@pytest.fixture
def redlock_readers(
    flavor: Flavor, redlock_topology: Topology, redlock_clients: Callable[..., list[Any]]
) -> Iterator[list[Any]]:
    """One client per master of the redlock topology."""
    with shut_down_first(flavor, redlock_clients(redlock_topology)) as clients:
        yield clients


def every_kind(client: Any, prefix: str) -> list[Any]:
    """A fair lock, a read lock, a write lock (of another name), a spin lock and a
    fenced lock, each on a name of its own."""
    return [
        client.get_fair_lock(f"{prefix}:fair"),
        client.get_read_write_lock(f"{prefix}:rw-1").read_lock(),
        client.get_read_write_lock(f"{prefix}:rw-2").write_lock(),
        client.get_spin_lock(f"{prefix}:spin"),
        client.get_fenced_lock(f"{prefix}:fenced"),
    ]


def test_a_multilock_of_every_kind_takes_and_releases_them_all(
    flavor: Flavor, group_clients: list[Any], group_topology: Topology
) -> None:
    prefix = f"test:kinds:{uuid.uuid4().hex[:8]}"
    first, second = group_clients
    alice, bob, carol = flavor.owner("alice"), flavor.owner("bob"), flavor.owner("carol")
    ours, theirs = every_kind(first, prefix), every_kind(second, prefix)
    reader = second.get_read_write_lock(f"{prefix}:rw-1").read_lock()
    carol(reader.lock)  # another reader: the group's read lock shares with it
    group = flavor.multilock(*ours)
    alice(group.lock)
    assert all(alice(lock.is_held_by_current_thread) for lock in ours)
    assert alice(ours[4].get_token) is not None
    assert alice(group.is_held_by_current_thread) is True
    # Another owner's group: refused after its wait, holding nothing after it.
    started = time.monotonic()
    assert bob(flavor.multilock(*theirs).try_lock, 0.5) is False
    assert time.monotonic() - started >= 0.5
    time.sleep(0.3)  # a refused wait leaves the fair queue in the background
    assert not any(bob(lock.is_held_by_current_thread) for lock in theirs)
    queue = naming.prefixed_name(
        "redisson_lock_queue", f"{prefix}:fair", by_slot=group_topology.layout == "cluster"
    )
    assert flavor.run(first.redis(queue).llen(queue)) == 0
    alice(group.unlock)
    assert not any(alice(lock.is_held_by_current_thread) for lock in ours)
    assert [alice(lock.is_locked) for lock in ours] == [False, True, False, False, False]
    carol(reader.unlock)
    assert alice(ours[1].is_locked) is False
    waiting = bob.start(flavor.multilock(*theirs).try_lock, 5.0)
    assert waiting.result(timeout=10) is True
    assert all(bob(lock.is_held_by_current_thread) for lock in theirs)
    bob(flavor.multilock(*theirs).unlock)
    assert not any(bob(lock.is_locked) for lock in theirs)


def test_a_redlock_of_read_locks_is_shared_and_excludes_writers(
    flavor: Flavor, redlock_topology: Topology, redlock_readers: list[Any]
) -> None:
    name = f"test:redrw:{uuid.uuid4().hex[:8]}"
    alice, bob, carol = flavor.owner("alice"), flavor.owner("bob"), flavor.owner("carol")

    def reads() -> Any:
        return flavor.redlock(*(c.get_read_write_lock(name).read_lock() for c in redlock_readers))

    writes = flavor.redlock(*(c.get_read_write_lock(name).write_lock() for c in redlock_readers))
    read_a, read_b = reads(), reads()
    assert alice(read_a.try_lock, 1.0) is True
    assert bob(read_b.try_lock, 1.0) is True  # readers share
    for node in redlock_topology.data_nodes:
        client = node.client()
        try:
            fields = client.hgetall(name)
        finally:
            client.close()
        assert fields["mode"] == "read"
        assert sorted(v for k, v in fields.items() if v.isdigit()) == ["1", "1"]
    assert carol(writes.try_lock, 0.3) is False
    alice(read_a.unlock)
    assert carol(writes.try_lock, 0.3) is False
    waiting = carol.start(writes.try_lock, 5.0)
    time.sleep(0.2)
    bob(read_b.unlock)
    assert waiting.result(timeout=10) is True
    assert alice(reads().try_lock, 0.3) is False
    carol(writes.unlock)
    assert alice(read_a.try_lock, 1.0) is True
    alice(read_a.unlock)


def non_reentrant(client: Any, kind: str, name: str) -> Any:
    if kind == "non-reentrant":
        return client.get_non_reentrant_lock(name)
    return client.get_non_reentrant_fair_lock(name)


@pytest.mark.parametrize("kind", ["non-reentrant", "non-reentrant fair"])
def test_a_multilock_with_a_non_reentrant_member_held_already_is_refused_at_once(
    flavor: Flavor, group_clients: list[Any], kind: str
) -> None:
    prefix = f"test:reentry:{uuid.uuid4().hex[:8]}"
    client = group_clients[0]
    held = non_reentrant(client, kind, f"{prefix}:held")
    free, other = client.get_lock(f"{prefix}:free"), client.get_lock(f"{prefix}:other")
    group = flavor.multilock(held, free, other)
    alice, bob = flavor.owner("alice"), flavor.owner("bob")
    alice(held.lock)
    for call, args in ((group.try_lock, (5.0,)), (group.try_lock, ()), (group.lock, ())):
        started = time.monotonic()
        with pytest.raises(LockReentryError) as refused:
            alice(call, *args)
        assert time.monotonic() - started < 1.0  # waiting cannot help: not waited out
        assert refused.value.lock_name == held.name
        assert alice(free.is_locked) is False  # what the round took is given back
        assert alice(other.is_locked) is False
        assert alice(held.hold_count) == 1  # the member's own hold is untouched
    alice(held.unlock)
    assert alice(group.try_lock) is True
    assert bob(group.try_lock, 0.2) is False
    alice(group.unlock)
    assert not any(bob(lock.is_locked) for lock in (held, free, other))


@pytest.mark.parametrize("kind", ["non-reentrant", "non-reentrant fair"])
def test_a_redlock_of_non_reentrant_locks_its_owner_holds_is_refused_at_once(
    flavor: Flavor, redlock_topology: Topology, redlock_readers: list[Any], kind: str
) -> None:
    name = f"test:redreentry:{uuid.uuid4().hex[:8]}"
    members = [non_reentrant(c, kind, name) for c in redlock_readers]
    group = flavor.redlock(*members)
    alice, bob = flavor.owner("alice"), flavor.owner("bob")
    assert alice(group.try_lock, 1.0) is True
    for call, args in ((group.try_lock, (5.0,)), (group.try_lock, ()), (group.lock, ())):
        started = time.monotonic()
        with pytest.raises(LockReentryError):
            alice(call, *args)
        assert time.monotonic() - started < 1.0
        assert [alice(m.hold_count) for m in members] == [1] * 5
    assert bob(flavor.redlock(*members).try_lock, 0.2) is False
    alice(group.unlock)
    assert not any(bob(m.is_locked) for m in members)


def test_a_redlock_with_a_non_reentrant_member_held_already_is_refused(
    flavor: Flavor, group_clients: list[Any]
) -> None:
    prefix = f"test:reentry:{uuid.uuid4().hex[:8]}"
    client = group_clients[0]
    held = client.get_non_reentrant_lock(f"{prefix}:held")
    free, other = client.get_lock(f"{prefix}:free"), client.get_lock(f"{prefix}:other")
    group = flavor.redlock(held, free, other)
    alice = flavor.owner("alice")
    alice(held.lock)
    try:
        with pytest.raises(LockReentryError):
            alice(group.try_lock, 1.0)
    finally:
        # Either way, the hold alice took outside the group must survive the group.
        if alice(group.is_held_by_current_thread):
            alice(group.unlock)
        assert alice(held.hold_count) == 1
        assert alice(free.is_locked) is False and alice(other.is_locked) is False
