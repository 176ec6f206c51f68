"""The fair lock (and its non-reentrant twin) on single and cluster, sync and asyncio:
waiters are granted in the order they came, across clients; a killed waiter holds the
queue up only until its timeout; a try that gives up leaves the queue at once; a try
without a wait never queues; the holder's unlock wakes the head waiter at once on its
own channel; reentrancy, and the non-reentrant twin's refusal."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable
from typing import Any

import pytest
from kind_helpers import (
    assert_reentrant,
    by_slot,
    fair_waiter,
    kill,
    owner_field,
    raw_master,
    running,
    subscribers,
)

from redisson_py import LockNotOwnedError, LockReentryError
from redisson_py.core.routing import naming
from redisson_py.testing import Topology, eventually
from redisson_py.testing.owners import Flavor

QUEUE = "redisson_lock_queue"
TIMEOUTS = "redisson_lock_timeout"


def queue_names(topology: Topology, name: str) -> tuple[str, str]:
    """The waiter queue (a list) and the waiters' timeouts (a sorted set) of ``name``."""
    slot = by_slot(topology)
    return (
        naming.prefixed_name(QUEUE, name, by_slot=slot),
        naming.prefixed_name(TIMEOUTS, name, by_slot=slot),
    )


def queued(topology: Topology, name: str) -> tuple[list[str], set[str]]:
    """The queue's entries in order, and the members of the timeout set."""
    queue, timeouts = queue_names(topology, name)
    with raw_master(topology, name) as raw:
        return [str(e) for e in raw.lrange(queue, 0, -1)], {
            str(e) for e in raw.zrange(timeouts, 0, -1)
        }


def wait_for_queue_length(topology: Topology, name: str, length: int) -> list[str]:
    """Wait until ``length`` waiters queue (each with a timeout); return the queue."""
    eventually(
        lambda: len(queued(topology, name)[0]) == length == len(queued(topology, name)[1]),
        timeout=10,
        what=f"{length} waiters queued on {name}",
    )
    return queued(topology, name)[0]


def test_waiters_are_granted_in_the_order_they_came(
    flavor: Flavor,
    make_client: Callable[..., Any],
    family_topology: Topology,
    lock_name: str,
) -> None:
    clients = [make_client(), make_client()]
    holder = flavor.owner("holder")
    holder(clients[0].get_fair_lock(lock_name).lock)
    grants: list[int] = []
    finished = []
    for index in range(8):
        waiter = flavor.owner(f"waiter-{index}")
        lock = clients[index % 2].get_fair_lock(lock_name)
        waiter.start(lock.lock)
        waiter.start(grants.append, index)  # runs once lock() returned
        finished.append(waiter.start(lock.unlock))
        # The next one starts waiting 50-100 ms after this one joined the queue.
        wait_for_queue_length(family_topology, lock_name, index + 1)
        time.sleep(random.uniform(0.05, 0.1))
    assert grants == []
    holder(clients[0].get_fair_lock(lock_name).unlock)
    for future in finished:
        future.result(timeout=30)
    assert grants == list(range(8))
    assert queued(family_topology, lock_name) == ([], set())


def test_a_killed_waiter_holds_the_queue_up_only_until_its_timeout(
    flavor: Flavor,
    make_client: Callable[..., Any],
    family_topology: Topology,
    topology_config: Any,
    lock_name: str,
) -> None:
    # A queued waiter's timeout is when the one ahead of it should be done (here the
    # holder's TTL, at most the 3 s watchdog timeout) plus its wait (2 s): a dead
    # waiter keeps its place until then, not for Redisson's default 5 minutes.
    settings = {"fair_lock_wait_timeout": 2.0, "lock_watchdog_timeout": 3.0}
    client = make_client(**settings)
    lock = client.get_fair_lock(lock_name)
    alice, bob = flavor.owner("alice"), flavor.owner("bob")
    alice(lock.lock)
    process = fair_waiter(topology_config(family_topology, **settings), lock_name)
    with running(process):
        [dead] = wait_for_queue_length(family_topology, lock_name, 1)
        waiting = bob.start_timed(lock.lock)
        assert wait_for_queue_length(family_topology, lock_name, 2)[0] == dead
        kill(process)
        time.sleep(1.0)
        _, released = alice.start_timed(lock.unlock).result(timeout=10)
        # Fair: the dead waiter keeps its place for a while (its timeout is at least
        # 4 s after it joined), so bob is not granted at once.
        time.sleep(0.5)
        assert not waiting.done()
        _, granted = waiting.result(timeout=15)
        assert granted - released <= 2.0 + 3.0, granted - released
        assert queued(family_topology, lock_name) == ([], set())  # the dead one dropped
        bob(lock.unlock)


def test_a_try_that_gives_up_leaves_the_queue_and_delays_nobody(
    flavor: Flavor,
    make_client: Callable[..., Any],
    family_topology: Topology,
    lock_name: str,
) -> None:
    lock = make_client().get_fair_lock(lock_name)
    alice, bob, carol = flavor.owner("alice"), flavor.owner("bob"), flavor.owner("carol")
    alice(lock.lock)  # watchdog: a 30 s TTL, so only a wake-up hands the lock on quickly
    gives_up = bob.start(lock.try_lock, 1.5)
    [bob_field] = wait_for_queue_length(family_topology, lock_name, 1)
    waiting = carol.start_timed(lock.lock)
    _, carol_field = wait_for_queue_length(family_topology, lock_name, 2)
    assert gives_up.result(timeout=10) is False
    eventually(
        lambda: queued(family_topology, lock_name) == ([carol_field], {carol_field}),
        timeout=5,
        what="bob's queue entry and timeout removed",
    )
    assert bob_field != carol_field
    _, released = alice.start_timed(lock.unlock).result(timeout=10)
    _, granted = waiting.result(timeout=10)
    assert granted - released < 1.0
    carol(lock.unlock)


def test_a_try_without_wait_never_queues_nor_jumps_the_queue(
    flavor: Flavor,
    make_client: Callable[..., Any],
    family_topology: Topology,
    lock_name: str,
) -> None:
    lock = make_client().get_fair_lock(lock_name)
    alice, bob = flavor.owner("alice"), flavor.owner("bob")
    alice(lock.lock)
    assert bob(lock.try_lock) is False
    assert queued(family_topology, lock_name) == ([], set())
    alice(lock.unlock)
    # A waiter queued (a Java client's, far from timing out): the lock is free, but a
    # try without wait does not take it from the head of the queue.
    queue, timeouts = queue_names(family_topology, lock_name)
    with raw_master(family_topology, lock_name) as raw:
        raw.rpush(queue, "java-client-uuid:7")
        raw.zadd(timeouts, {"java-client-uuid:7": int(time.time() * 1000) + 60_000})
        try:
            assert bob(lock.try_lock) is False
            assert queued(family_topology, lock_name) == (
                ["java-client-uuid:7"],
                {"java-client-uuid:7"},
            )
        finally:
            raw.delete(queue, timeouts)
    assert bob(lock.try_lock) is True
    bob(lock.unlock)


def test_the_fair_lock_is_reentrant(
    flavor: Flavor, make_client: Callable[..., Any], lock_name: str
) -> None:
    lock = make_client().get_fair_lock(lock_name)
    alice, bob = flavor.owner("alice"), flavor.owner("bob")
    assert_reentrant(lock, alice, bob)


def test_force_unlock_frees_it_and_wakes_the_head_waiter(
    flavor: Flavor, make_client: Callable[..., Any], lock_name: str
) -> None:
    lock = make_client().get_fair_lock(lock_name)
    alice, bob, carol = flavor.owner("alice"), flavor.owner("bob"), flavor.owner("carol")
    alice(lock.lock)  # watchdog: a 30 s TTL
    waiting = bob.start_timed(lock.lock)
    time.sleep(0.3)
    assert not waiting.done()
    forced = time.monotonic()
    assert carol(lock.force_unlock) is True
    _, granted = waiting.result(timeout=10)
    assert granted - forced < 1.0
    with pytest.raises(LockNotOwnedError):
        alice(lock.unlock)
    bob(lock.unlock)
    assert carol(lock.force_unlock) is False


def test_the_non_reentrant_fair_lock_refuses_its_holder_at_once(
    flavor: Flavor, make_client: Callable[..., Any], lock_name: str
) -> None:
    lock = make_client().get_non_reentrant_fair_lock(lock_name)
    alice, bob = flavor.owner("alice"), flavor.owner("bob")
    alice(lock.lock)
    started = time.monotonic()
    with pytest.raises(LockReentryError) as refused:
        alice(lock.try_lock)
    assert refused.value.lock_name == lock_name
    with pytest.raises(LockReentryError):
        alice(lock.try_lock, 5.0)
    with pytest.raises(LockReentryError):
        alice(lock.lock)
    assert time.monotonic() - started < 1.0  # refused, not waited out
    assert alice(lock.hold_count) == 1
    waiting = bob.start_timed(lock.lock)  # others wait as usual
    time.sleep(0.3)
    assert not waiting.done()
    _, released = alice.start_timed(lock.unlock).result(timeout=10)
    _, granted = waiting.result(timeout=10)
    assert granted - released < 1.0
    assert bob(lock.hold_count) == 1
    assert alice(lock.is_locked) is True
    bob(lock.unlock)
    assert alice(lock.is_locked) is False


def test_unlock_wakes_the_head_waiter_on_its_own_channel(
    flavor: Flavor,
    make_client: Callable[..., Any],
    family_topology: Topology,
    lock_name: str,
) -> None:
    first, second = make_client(), make_client()
    alice, bob = flavor.owner("alice"), flavor.owner("bob")
    holding, waiting_lock = first.get_fair_lock(lock_name), second.get_fair_lock(lock_name)
    bob_field = owner_field(flavor, bob, second)
    alice(holding.lock)  # watchdog: a 30 s TTL
    waiting = bob.start_timed(waiting_lock.lock)
    [field] = wait_for_queue_length(family_topology, lock_name, 1)
    assert field == bob_field
    shared = naming.prefixed_name(
        "redisson_lock__channel", lock_name, by_slot=by_slot(family_topology)
    )
    own = f"{shared}:{field}"
    eventually(
        lambda: subscribers(family_topology, own) == 1,
        timeout=5,
        what=f"bob subscribed to {own}",
    )
    assert subscribers(family_topology, shared) == 0  # only the head's channel is used
    _, released = alice.start_timed(holding.unlock).result(timeout=10)
    _, granted = waiting.result(timeout=10)
    assert granted - released < 1.0  # woken by the message, far under the 30 s TTL
    bob(waiting_lock.unlock)
    eventually(
        lambda: subscribers(family_topology, own) == 0,
        timeout=5,
        what="bob's subscription dropped",
    )


def test_a_cancelled_waiter_leaves_the_queue(
    flavor: Flavor,
    make_client: Callable[..., Any],
    family_topology: Topology,
    lock_name: str,
) -> None:
    if flavor.name == "sync":
        pytest.skip("a thread's lock() cannot be cancelled")
    lock = make_client().get_fair_lock(lock_name)
    alice, bob, carol = flavor.owner("alice"), flavor.owner("bob"), flavor.owner("carol")
    alice(lock.lock)  # watchdog: a 30 s TTL

    async def gives_up() -> bool:
        try:
            await asyncio.wait_for(lock.lock(), 0.5)
        except TimeoutError:
            return False
        return True

    cancelled = bob.start(gives_up)
    wait_for_queue_length(family_topology, lock_name, 1)
    waiting = carol.start_timed(lock.lock)
    _, carol_field = wait_for_queue_length(family_topology, lock_name, 2)
    assert cancelled.result(timeout=10) is False
    eventually(
        lambda: queued(family_topology, lock_name) == ([carol_field], {carol_field}),
        timeout=5,
        what="the cancelled waiter's queue entry removed",
    )
    _, released = alice.start_timed(lock.unlock).result(timeout=10)
    _, granted = waiting.result(timeout=10)
    assert granted - released < 1.0
    assert bob(lock.hold_count) == 0
    carol(lock.unlock)
