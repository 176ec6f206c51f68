"""A redisson-py fair-lock waiter keeps its queue entry alive while it waits (issue 26,
item 8), on single and cluster, sync and asyncio: a killed waiter of ours delays the next
one by a few seconds, not by ``fairLockWaitTimeout`` (5 minutes); a Java waiter's entry
keeps Redisson's rule; a frozen server costs a live waiter neither its lock nor its
deadline, and a brief freeze not even its place. A head with neither a timeout entry nor
a keepalive is dropped (issue 38, item 7): it stalled the queue for ever."""

from __future__ import annotations

import concurrent.futures
import time
from collections.abc import Callable
from typing import Any

import pytest
from kind_helpers import by_slot, fair_waiter, kill, raw_master, running
from test_fair_lock import queue_names, queued, wait_for_queue_length

from redisson_py.core.routing import naming
from redisson_py.core.scripts import fair_lock
from redisson_py.testing import Topology, eventually
from redisson_py.testing.owners import Flavor

SLACK = 2.0
"""Allowance for a loaded 2-core box (seconds)."""


def alive_key(topology: Topology, name: str) -> str:
    return naming.prefixed_name("redisson_py_fair_alive", name, by_slot=by_slot(topology))


def alive_entries(topology: Topology, name: str) -> dict[str, float]:
    with raw_master(topology, name) as raw:
        entries = raw.zrange(alive_key(topology, name), 0, -1, withscores=True)
    return {str(member): float(score) for member, score in entries}


def test_a_killed_waiter_of_ours_delays_the_next_by_seconds_not_its_wait(
    flavor: Flavor,
    make_client: Callable[..., Any],
    family_topology: Topology,
    topology_config: Any,
    lock_name: str,
) -> None:
    # The scenario, with Redisson's defaults (fairLockWaitTimeout 5 minutes): the
    # dead waiter's entry times out in 5 minutes, but its keepalive lapses in seconds.
    client = make_client()
    lock = client.get_fair_lock(lock_name)
    alice, bob = flavor.owner("alice"), flavor.owner("bob")
    alice(lock.lock)
    process = fair_waiter(topology_config(family_topology), lock_name, flavor.name)
    with running(process):
        [dead] = wait_for_queue_length(family_topology, lock_name, 1)
        assert dead in alive_entries(family_topology, lock_name)  # marked as ours
        kill(process)
        _, released = alice.start_timed(lock.unlock).result(timeout=10)
        acquired, granted = bob.start_timed(lock.try_lock, 20.0).result(timeout=30)
    assert acquired is True
    delay = granted - released
    assert delay <= fair_lock.ALIVE_WINDOW + fair_lock.KEEPALIVE_INTERVAL + SLACK, delay
    assert queued(family_topology, lock_name) == ([], set())  # the dead one dropped
    assert alive_entries(family_topology, lock_name) == {}
    bob(lock.unlock)


def test_a_java_waiters_entry_keeps_redissons_rule(
    flavor: Flavor,
    make_client: Callable[..., Any],
    family_topology: Topology,
    lock_name: str,
) -> None:
    # A waiter queued by Redisson's own script (no alive entry: a Java waiter) that stops
    # trying keeps its place until its timeout, whatever our keepalive rule says.
    client = make_client()
    lock = client.get_fair_lock(lock_name)
    alice, bob = flavor.owner("alice"), flavor.owner("bob")
    alice(lock.lock)
    java = "0b2c8a51-7c5e-4e0c-9d3e-1f2a3b4c5d6e:77"
    queue, timeouts = (
        naming.prefixed_name(prefix, lock_name, by_slot=by_slot(family_topology))
        for prefix in ("redisson_lock_queue", "redisson_lock_timeout")
    )
    with raw_master(family_topology, lock_name) as raw:
        # as Redisson's tryLockInnerAsync queues a thread: timeout = TTL + 5 minutes + now
        raw.zadd(timeouts, {java: int(time.time() * 1000) + 330_000})
        raw.rpush(queue, java)
    alice(lock.unlock)
    assert bob(lock.try_lock, fair_lock.ALIVE_WINDOW + 2.0) is False  # the Java waiter's turn
    # bob leaves the queue in the background once his wait ends (try_lock's contract);
    # the Java waiter stays, though it never tried again and has no alive entry
    eventually(
        lambda: queued(family_topology, lock_name) == ([java], {java}),
        timeout=5,
        what="bob's entry gone, the Java waiter's kept",
    )
    with raw_master(family_topology, lock_name) as raw:
        raw.delete(queue, timeouts)


@pytest.mark.parametrize(
    ("kind", "freeze"),
    [("single", 2.0), ("single", 7.0), ("cluster", 1.0)],
    ids=["single-brief", "single-past-the-window", "cluster-brief"],
)
def test_a_frozen_server_costs_a_live_waiter_neither_its_lock_nor_its_deadline(
    flavor: Flavor,
    topology_factory: Callable[..., Topology],
    topology_config: Any,
    lock_name: str,
    kind: str,
    freeze: float,
) -> None:
    # A cluster master frozen past cluster-node-timeout (1.5 s) fails over, which the
    # failover suites cover: the cluster freezes for 1 s only.
    topology = topology_factory(kind)
    if kind == "cluster":
        node = topology.master_for_slot(naming.key_slot(lock_name))
    else:
        node = topology.master()
    client = flavor.create_client(topology_config(topology))
    lock = client.get_fair_lock(lock_name)
    alice, bob, carol = flavor.owner("alice"), flavor.owner("bob"), flavor.owner("carol")
    alice(lock.lock)
    wait = 20.0
    started = time.monotonic()
    bob_waits = bob.start_timed(lock.try_lock, wait)
    wait_for_queue_length(topology, lock_name, 1)
    carol_waits = carol.start_timed(lock.try_lock, wait)
    first, second = wait_for_queue_length(topology, lock_name, 2)
    node.pause()
    try:
        time.sleep(freeze)
    finally:
        node.resume()
    # both waiters come back to the queue (a waiter whose keepalive lapsed rejoins)
    eventually(
        lambda: len(queued(topology, lock_name)[0]) == 2,
        timeout=10,
        what="both waiters queued again",
    )
    if freeze < fair_lock.ALIVE_WINDOW - fair_lock.KEEPALIVE_INTERVAL:
        # a freeze shorter than the window costs nobody their place
        assert queued(topology, lock_name)[0] == [first, second]
    alice(lock.unlock)
    # each gets the lock within its wait, in the queue's order (which a freeze past the
    # window may have changed)
    pending = {"bob": (bob, bob_waits), "carol": (carol, carol_waits)}
    while pending:
        done, _ = concurrent.futures.wait(
            [future for _, future in pending.values()],
            timeout=wait + 10,
            return_when=concurrent.futures.FIRST_COMPLETED,
        )
        assert done, f"{sorted(pending)} still waiting"
        for who, (owner, future) in list(pending.items()):
            if future in done:
                acquired, at = future.result()
                assert acquired is True, who
                assert at - started <= wait + SLACK, (who, at - started)
                owner(lock.unlock)
                del pending[who]
    assert queued(topology, lock_name) == ([], set())
    assert alive_entries(topology, lock_name) == {}


@pytest.mark.parametrize("damage", ["timeout entry lost", "bogus entry"])
def test_a_head_with_neither_timeout_nor_keepalive_stalls_nobody(
    flavor: Flavor,
    make_client: Callable[..., Any],
    family_topology: Topology,
    lock_name: str,
    damage: str,
) -> None:
    # A queue head no rule would ever drop: a Java waiter (timeout entry, no keepalive)
    # whose timeout entry is lost, or an entry pushed with none. The queue key has no
    # TTL, so before the fix every later waiter waited behind it for ever.
    client = make_client()
    lock = client.get_fair_lock(lock_name)
    alice, bob = flavor.owner("alice"), flavor.owner("bob")
    alice(lock.lock)
    queue, timeouts = queue_names(family_topology, lock_name)
    stuck = "00000000-0000-0000-0000-00000000dead:1"
    with raw_master(family_topology, lock_name) as raw:
        raw.rpush(queue, stuck)
        if damage == "timeout entry lost":
            raw.zadd(timeouts, {stuck: time.time() * 1000 + 300_000})  # as Redisson's
            raw.zrem(timeouts, stuck)
        assert raw.pttl(queue) == -1  # no TTL bounds it
    waiting = bob.start_timed(lock.try_lock, 10.0)
    time.sleep(0.3)
    _, released = alice.start_timed(lock.unlock).result(timeout=10)
    acquired, granted = waiting.result(timeout=20)
    assert acquired is True
    assert granted - released <= fair_lock.KEEPALIVE_INTERVAL + SLACK, granted - released
    assert queued(family_topology, lock_name) == ([], set())  # the stuck head dropped
    bob(lock.unlock)
