"""The reentrant lock on real topologies (single, sentinel, cluster, replicated), sync
and asyncio.

Every test runs once per flavor and topology (see conftest.py). Owners are threads for
the sync API and tasks for the asyncio API (redisson_py.testing.owners).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest

from integration.wake_ups import release_wakes_waiter
from redisson_py import LockLost, LockNotOwnedError
from redisson_py.testing import Topology, eventually
from redisson_py.testing.owners import Flavor


@pytest.fixture(params=["single", "sentinel", "cluster", "replicated"])
def topology(request: pytest.FixtureRequest) -> Topology:
    """conftest.py's topologies plus ``replicated``: these core tests also run in
    replicated mode (the other lock suites do not, to spare CI time)."""
    fixture: Topology = request.getfixturevalue(f"{request.param}_topology")
    return fixture


def test_reentrant_holds_need_as_many_unlocks(
    make_client: Callable[..., Any], flavor: Flavor, lock_name: str
) -> None:
    lock = make_client().get_lock(lock_name)
    alice, bob = flavor.owner("alice"), flavor.owner("bob")
    assert alice(lock.try_lock) is True
    assert alice(lock.try_lock) is True
    assert alice(lock.hold_count) == 2
    assert alice(lock.is_held_by_current_thread) is True
    assert bob(lock.is_held_by_current_thread) is False
    alice(lock.unlock)
    assert bob(lock.try_lock) is False
    alice(lock.unlock)
    assert bob(lock.try_lock) is True
    with pytest.raises(LockNotOwnedError):
        alice(lock.unlock)
    bob(lock.unlock)
    assert alice(lock.is_locked) is False
    assert alice(lock.remain_time_to_live) is None


def test_two_clients_are_two_owners_even_in_one_thread(
    make_client: Callable[..., Any], flavor: Flavor, lock_name: str
) -> None:
    first, second = make_client(), make_client()
    alice = flavor.owner("alice")
    assert alice(first.get_lock(lock_name).try_lock) is True
    assert alice(second.get_lock(lock_name).try_lock) is False
    alice(first.get_lock(lock_name).unlock)


def test_a_lease_expires_on_its_own(
    make_client: Callable[..., Any], flavor: Flavor, lock_name: str
) -> None:
    lock = make_client().get_lock(lock_name)
    alice, bob = flavor.owner("alice"), flavor.owner("bob")
    called = time.monotonic()
    alice(lock.lock, 1.0)
    ttl = alice(lock.remain_time_to_live)
    # The lease runs from the grant. On a topology started at once, lock() returns only
    # once the replicas acknowledge the grant (replica sync), which may take a while
    # as they finish their first sync: what is left is the lease less that wait.
    took = time.monotonic() - called
    assert 1.0 - took - 0.3 < ttl <= 1.0, f"lock() took {took:.3f} s"
    started = time.monotonic()
    assert bob(lock.try_lock, 3.0) is True
    assert time.monotonic() - started <= 1.0 + 0.3
    with pytest.raises(LockNotOwnedError):
        alice(lock.unlock)
    bob(lock.unlock)


def test_try_lock_gives_up_after_its_wait_time(
    make_client: Callable[..., Any], flavor: Flavor, lock_name: str
) -> None:
    lock = make_client().get_lock(lock_name)
    alice, bob = flavor.owner("alice"), flavor.owner("bob")
    alice(lock.lock)
    started = time.monotonic()
    assert bob(lock.try_lock, 1.0) is False
    assert 1.0 <= time.monotonic() - started <= 1.3
    alice(lock.unlock)


def test_release_wakes_a_waiter_at_once(
    make_client: Callable[..., Any], flavor: Flavor, lock_name: str
) -> None:
    lock = make_client().get_lock(lock_name)
    release_wakes_waiter(flavor, lock, lock, within=0.05)


def test_lost_lock_is_reported_and_unlock_raises(
    make_client: Callable[..., Any], flavor: Flavor, lock_name: str, topology: Topology
) -> None:
    events: list[LockLost] = []
    client = make_client(lock_watchdog_timeout=3.0)
    client.on_lock_lost = events.append
    lock = client.get_lock(lock_name)
    alice = flavor.owner("alice")
    alice(lock.lock)
    raw = client.redis(lock_name)
    assert flavor.run(raw.delete(lock_name)) == 1  # behind the holder's back
    eventually(lambda: events, timeout=5, what="the lost-lock callback")
    assert [e.name for e in events] == [lock_name]
    with pytest.raises(LockNotOwnedError, match="lost"):
        alice(lock.unlock)
    assert len(events) == 1


def test_per_lock_callback_wins_over_the_clients(
    make_client: Callable[..., Any], flavor: Flavor, lock_name: str
) -> None:
    client_events: list[LockLost] = []
    lock_events: list[LockLost] = []
    client = make_client(lock_watchdog_timeout=3.0)
    client.on_lock_lost = client_events.append
    lock = client.get_lock(lock_name, on_lock_lost=lock_events.append)
    alice = flavor.owner("alice")
    alice(lock.lock)
    flavor.run(client.redis(lock_name).delete(lock_name))
    eventually(lambda: lock_events, timeout=5, what="the lock's own callback")
    assert client_events == []


def test_force_unlock_frees_a_lock_held_by_another(
    make_client: Callable[..., Any], flavor: Flavor, lock_name: str
) -> None:
    lock = make_client().get_lock(lock_name)
    alice, bob, carol = flavor.owner("alice"), flavor.owner("bob"), flavor.owner("carol")
    alice(lock.lock)
    waiting = bob.start(lock.lock)
    time.sleep(0.2)
    assert carol(lock.force_unlock) is True
    waiting.result(timeout=5)  # the force unlock woke the waiter
    assert bob(lock.is_held_by_current_thread) is True
    bob(lock.unlock)
    assert carol(lock.force_unlock) is False


def test_many_cycles_leave_no_subscription_or_renewal_behind(
    make_client: Callable[..., Any], flavor: Flavor, lock_name: str
) -> None:
    client = make_client()
    lock = client.get_lock(lock_name)

    def cycles(count: int) -> Any:
        if flavor.name == "sync":
            for _ in range(count):
                lock.lock()
                lock.unlock()
            return None

        async def run() -> None:
            for _ in range(count):
                await lock.lock()
                await lock.unlock()

        return run()

    alice, bob = flavor.owner("alice"), flavor.owner("bob")
    first, second = alice.start(cycles, 2500), bob.start(cycles, 2500)
    # 5-13 s each on a quiet box; CI's loaded one (containers, three workers on two
    # cores) with a replicated topology's WAIT on every grant ran far slower: the bounds
    # are for a hang, not for speed.
    first.result(timeout=240)
    second.result(timeout=240)
    assert len(client._state.holds) == 0
    # Channels left idle are unsubscribed after a grace period (1 s), by a sweep that a
    # loaded box may run late; a leaked subscription never goes, whatever the bound.
    eventually(
        lambda: len(client.connection_manager.pubsub) == 0,
        timeout=15,
        what="every subscription gone",
    )
    assert alice(lock.is_locked) is False
