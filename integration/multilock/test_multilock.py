"""MultiLock over locks on three cluster masters: all or nothing, reentrant."""

from __future__ import annotations

import time
import uuid
from typing import Any

import pytest

from redisson_py import LockNotOwnedError
from redisson_py.core.routing.naming import key_slot
from redisson_py.testing import Topology
from redisson_py.testing.owners import Flavor


def names_on_three_masters(topology: Topology) -> list[str]:
    """Three lock names whose slots belong to three different masters."""
    chosen: dict[int, str] = {}
    prefix = uuid.uuid4().hex[:8]
    index = 0
    while len(chosen) < 3:
        name = f"test:multi:{prefix}:{index}"
        chosen.setdefault(topology.master_for_slot(key_slot(name)).port, name)
        index += 1
    return list(chosen.values())


@pytest.fixture
def cluster_locks(flavor: Flavor, cluster_topology: Topology, topology_config: Any) -> list[Any]:
    client = flavor.create_client(topology_config(cluster_topology))
    return [client.get_lock(name) for name in names_on_three_masters(cluster_topology)]


def test_of_ten_owners_trying_at_once_exactly_one_wins(
    flavor: Flavor, cluster_locks: list[Any]
) -> None:
    owners = [flavor.owner(f"owner-{i}") for i in range(10)]
    multis = [flavor.multilock(*cluster_locks) for _ in owners]
    attempts = [o.start(m.try_lock, 0.0, 10.0) for o, m in zip(owners, multis, strict=True)]
    results = [a.result(timeout=30) for a in attempts]
    assert results.count(True) == 1
    winner = results.index(True)
    owners[winner](multis[winner].unlock)
    for lock in cluster_locks:
        assert owners[0](lock.is_locked) is False  # the losers released what they got


def test_a_multilock_is_all_or_nothing(flavor: Flavor, cluster_locks: list[Any]) -> None:
    alice, bob = flavor.owner("alice"), flavor.owner("bob")
    alice(cluster_locks[2].lock)  # one member held elsewhere
    multi = flavor.multilock(*cluster_locks)
    started = time.monotonic()
    assert bob(multi.try_lock, 0.5) is False
    assert time.monotonic() - started >= 0.5
    assert bob(cluster_locks[0].is_locked) is False
    assert bob(cluster_locks[1].is_locked) is False
    alice(cluster_locks[2].unlock)
    assert bob(multi.try_lock, 1.0) is True
    assert all(bob(lock.is_held_by_current_thread) for lock in cluster_locks)
    bob(multi.unlock)


def test_multilock_is_reentrant(flavor: Flavor, cluster_locks: list[Any]) -> None:
    multi = flavor.multilock(*cluster_locks)
    alice, bob = flavor.owner("alice"), flavor.owner("bob")
    alice(multi.lock)
    alice(multi.lock)
    assert alice(multi.is_held_by_current_thread) is True
    assert [alice(lock.hold_count) for lock in cluster_locks] == [2, 2, 2]
    alice(multi.unlock)
    assert bob(flavor.multilock(*cluster_locks).try_lock) is False
    alice(multi.unlock)
    assert alice(multi.is_held_by_current_thread) is False
    with pytest.raises(LockNotOwnedError):
        alice(multi.unlock)
    other = flavor.multilock(*cluster_locks)
    assert bob(other.try_lock) is True
    bob(other.unlock)
