"""The queued lock (issue 42): the last unlock grants the lock to the first live waiter in
the same script and tells it, on single, sentinel and cluster, sync and asyncio.

What a user relies on: the reentrant lock's contract; waiters served first come first
served; a granted waiter holds a watchdog hold (its grant taken up, renewed); a waiter
killed at the head of the queue costs the next one seconds (the grant TTL), not the
watchdog timeout; a waiter cancelled while its grant is in flight passes the lock on;
a failover during a hand-off leaves one holder and a waiter that gets the lock."""

from __future__ import annotations

import asyncio
import multiprocessing
import time
from collections.abc import Callable
from typing import Any

import pytest
from kind_helpers import (
    assert_reentrant,
    by_slot,
    kill,
    owner_field,
    publish_command,
    raw_master,
    running,
)

import redisson_py
import redisson_py.asyncio as aio
from redisson_py import Config, Redisson
from redisson_py.core import keyspace
from redisson_py.core.routing import naming
from redisson_py.core.scripts import queued_lock as scripts
from redisson_py.testing import Topology, eventually
from redisson_py.testing.owners import Flavor

SLACK = 2.0
"""Allowance for a loaded 2-core box (seconds)."""


@pytest.fixture(params=["single", "sentinel", "cluster"])
def queued_topology(request: pytest.FixtureRequest) -> Topology:
    topology: Topology = request.getfixturevalue(f"{request.param}_topology")
    return topology


@pytest.fixture
def make_queued_client(
    flavor: Flavor, queued_topology: Topology, topology_config: Any
) -> Callable[..., Any]:
    return lambda **settings: flavor.create_client(topology_config(queued_topology, **settings))


def queue_of(topology: Topology, name: str) -> list[str]:
    key = keyspace.queued_queue(name, by_slot=by_slot(topology))
    with raw_master(topology, name) as raw:
        return [str(entry) for entry in raw.lrange(key, 0, -1)]


SPAWNED_WITHIN = 45.0
"""How long a spawned waiter may take to queue: a new interpreter's imports, the YAML and
the topology's connections (with a cluster's discovery) took more than the 10 s allowed
before on the loaded CI box, and the test failed before testing anything."""


def wait_for_queue(topology: Topology, name: str, length: int, timeout: float = 10.0) -> list[str]:
    eventually(
        lambda: len(queue_of(topology, name)) == length,
        timeout=timeout,
        what=f"{length} waiters queued on {name}",
    )
    return queue_of(topology, name)


def pttl(topology: Topology, name: str) -> int:
    with raw_master(topology, name) as raw:
        return int(raw.pttl(name))


def test_the_reentrant_contract_and_keys_of_its_own(
    flavor: Flavor,
    make_queued_client: Callable[..., Any],
    queued_topology: Topology,
    lock_name: str,
) -> None:
    client = make_queued_client()
    lock = client.get_queued_lock(lock_name)
    assert isinstance(lock, redisson_py.QueuedLock if flavor.name == "sync" else aio.QueuedLock)
    alice, bob = flavor.owner("alice"), flavor.owner("bob")
    assert_reentrant(lock, alice, bob)
    alice(lock.lock)
    assert alice(lock.is_locked) is True
    assert bob(lock.try_lock) is False  # no wait: never queues
    assert queue_of(queued_topology, lock_name) == []
    assert alice(lock.force_unlock) is True
    assert bob(lock.try_lock) is True
    bob(lock.unlock)
    assert alice(lock.is_locked) is False


def test_the_release_grants_waiters_in_the_order_they_came(
    flavor: Flavor,
    make_queued_client: Callable[..., Any],
    queued_topology: Topology,
    lock_name: str,
) -> None:
    client = make_queued_client()
    lock = client.get_queued_lock(lock_name)
    alice, bob, carol = flavor.owner("alice"), flavor.owner("bob"), flavor.owner("carol")
    fields = [owner_field(flavor, bob, client), owner_field(flavor, carol, client)]
    alice(lock.lock)
    bob_waits = bob.start(lock.lock)
    wait_for_queue(queued_topology, lock_name, 1)
    carol_waits = carol.start_timed(lock.try_lock, 30.0)
    assert wait_for_queue(queued_topology, lock_name, 2) == fields
    alice(lock.unlock)
    bob_waits.result(timeout=10)
    assert bob(lock.hold_count) == 1
    assert not carol_waits.done()
    # the grant is taken up: the key gets the watchdog's TTL, not the grant's
    eventually(
        lambda: pttl(queued_topology, lock_name) > scripts.GRANT_TTL * 1000,
        timeout=5,
        what="bob's grant taken up",
    )
    bob(lock.unlock)
    acquired, _ = carol_waits.result(timeout=10)
    assert acquired is True
    assert queue_of(queued_topology, lock_name) == []
    carol(lock.unlock)


def _queued_waiter(config_yaml: str, name: str) -> None:
    """Wait on queued lock ``name`` with ``lock()`` until killed."""
    client = Redisson.create(Config.from_yaml(config_yaml))
    client.get_queued_lock(name).lock()
    time.sleep(3600)


def test_a_waiter_killed_at_the_head_costs_the_next_the_grant_ttl_not_the_watchdogs(
    flavor: Flavor,
    make_queued_client: Callable[..., Any],
    queued_topology: Topology,
    topology_config: Any,
    lock_name: str,
) -> None:
    client = make_queued_client()
    lock = client.get_queued_lock(lock_name)
    alice, bob = flavor.owner("alice"), flavor.owner("bob")
    alice(lock.lock)
    spawn = multiprocessing.get_context("spawn")
    process = spawn.Process(
        target=_queued_waiter,
        args=(topology_config(queued_topology).to_yaml(), lock_name),
        daemon=True,
    )
    with running(process):
        [dead] = wait_for_queue(queued_topology, lock_name, 1, timeout=SPAWNED_WITHIN)
        bob_waits = bob.start_timed(lock.try_lock, 25.0)
        wait_for_queue(queued_topology, lock_name, 2)
        kill(process)
        # at once: the dead waiter's keepalive is still live, so it is granted the lock
        _, released = alice.start_timed(lock.unlock).result(timeout=10)
        with raw_master(queued_topology, lock_name) as raw:
            holders = [f for f in raw.hkeys(lock_name) if not f.startswith("redisson_py_")]
        acquired, granted = bob_waits.result(timeout=30)
    assert acquired is True
    delay = granted - released
    # the untaken grant expires, and bob's next try passes the lock on to him; the
    # watchdog timeout (30 s) would be the cost without the grant TTL
    assert delay <= scripts.GRANT_TTL + scripts.KEEPALIVE_INTERVAL + SLACK, delay
    if holders == [dead]:
        assert delay >= scripts.GRANT_TTL - 1.0, delay  # it was the dead one's turn first
    bob(lock.unlock)


def test_a_waiter_whose_keepalive_lapsed_is_skipped(
    flavor: Flavor,
    make_queued_client: Callable[..., Any],
    queued_topology: Topology,
    topology_config: Any,
    lock_name: str,
) -> None:
    client = make_queued_client()
    lock = client.get_queued_lock(lock_name)
    alice, bob = flavor.owner("alice"), flavor.owner("bob")
    alice(lock.lock)
    spawn = multiprocessing.get_context("spawn")
    process = spawn.Process(
        target=_queued_waiter,
        args=(topology_config(queued_topology).to_yaml(), lock_name),
        daemon=True,
    )
    with running(process):
        wait_for_queue(queued_topology, lock_name, 1, timeout=SPAWNED_WITHIN)
        bob_waits = bob.start_timed(lock.try_lock, 25.0)
        wait_for_queue(queued_topology, lock_name, 2)
        kill(process)
        time.sleep(scripts.ALIVE_WINDOW + 0.5)
        _, released = alice.start_timed(lock.unlock).result(timeout=10)
        acquired, granted = bob_waits.result(timeout=30)
    assert acquired is True
    assert granted - released <= SLACK, granted - released
    bob(lock.unlock)


def test_a_waiter_cancelled_while_its_grant_is_in_flight_passes_the_lock_on(
    queued_topology: Topology, topology_config: Any, lock_name: str
) -> None:
    # asyncio: the grant is written and published while the loop is blocked (a raw,
    # blocking call), and the waiter is cancelled before the loop runs again, so the
    # waiter cannot have read the message: the cancellation meets a grant in flight.
    config = topology_config(queued_topology)
    holder = "00000000-0000-0000-0000-000000000000:1"
    slot = by_slot(queued_topology)
    keys = [
        lock_name,
        *(
            waiters(lock_name, by_slot=slot)
            for waiters in (keyspace.queued_queue, keyspace.queued_alive, keyspace.queued_entries)
        ),
        keyspace.queued_channel(lock_name, by_slot=slot),
    ]

    async def scenario() -> tuple[bool, list[str], str]:
        client = await aio.Redisson.create(config)
        try:
            lock = client.get_queued_lock(lock_name)
            with raw_master(queued_topology, lock_name) as raw:
                publish = publish_command(raw)
                raw.hset(lock_name, holder, 1)
                raw.pexpire(lock_name, 60_000)
                # each call made in its own task: a lock method's owner is its caller
                bob = asyncio.create_task(_in_task(lock.lock))
                await _until(lambda: len(queue_of(queued_topology, lock_name)) == 1)
                carol = asyncio.create_task(_in_task(lock.try_lock, 20.0))
                await _until(lambda: len(queue_of(queued_topology, lock_name)) == 2)
                bob_field = queue_of(queued_topology, lock_name)[0]
                # the holder goes: the lock passes to bob, and the message flies
                raw.eval(scripts.FORCE_RELEASE_QUEUED.source, len(keys), *keys, publish)
                granted_to = [f for f in raw.hkeys(lock_name) if not f.startswith("redisson_py_")]
                bob.cancel()
                cancelled = time.monotonic()
            with pytest.raises(asyncio.CancelledError):
                await bob
            acquired = await asyncio.wait_for(carol, 10.0)
            # passed on by bob's undo at once, not when his untaken grant expires
            assert time.monotonic() - cancelled < scripts.GRANT_TTL - 1.5
            with raw_master(queued_topology, lock_name) as raw:
                fields = [f for f in raw.hkeys(lock_name) if not f.startswith("redisson_py_")]
            assert bob_field not in fields  # bob keeps nothing
            await lock.force_unlock()  # carol's hold (her task is done)
            return acquired, granted_to, bob_field
        finally:
            await client.shutdown()

    acquired, granted_to, bob_field = asyncio.run(scenario())
    assert granted_to == [bob_field]  # the grant was bob's when he was cancelled
    assert acquired is True  # ... and bob's undo passed it on to carol


async def _in_task(method: Callable[..., Any], *args: Any) -> Any:
    return await method(*args)


async def _until(condition: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.05)


@pytest.mark.parametrize(
    ("kind", "when"),
    [
        ("sentinel", "before-the-unlock"),
        ("sentinel", "after-the-unlock"),
        ("cluster", "after-the-unlock"),
    ],
)
def test_a_failover_during_a_hand_off_leaves_one_holder(
    flavor: Flavor,
    topology_factory: Callable[..., Topology],
    topology_config: Any,
    lock_name: str,
    kind: str,
    when: str,
) -> None:
    topology = topology_factory(kind)
    master = topology.master_for_slot(naming.key_slot(lock_name)) if kind == "cluster" else None
    # A 10 s watchdog, not the default 30 s: alice's unlock, sent right after a
    # sentinel failover, can reach the old master before its demotion and be lost with
    # it (releases are not synced: docs/failover.md), so no grant is made and bob takes
    # the lock when alice's key runs out (28.7 s of the test's 31 s with 30, 10 s with
    # 10). The bounds below (his 40 s wait, 60 s) stay well past it.
    client = flavor.create_client(topology_config(topology, lock_watchdog_timeout=10.0))
    lock = client.get_queued_lock(lock_name)
    alice, bob = flavor.owner("alice"), flavor.owner("bob")
    bob_field = owner_field(flavor, bob, client)
    alice(lock.lock)
    bob_waits = bob.start_timed(lock.try_lock, 40.0)
    wait_for_queue(topology, lock_name, 1)
    if when == "before-the-unlock":
        topology.failover(master)
    try:
        alice(lock.unlock)
        alice_released = True
    except redisson_py.RedissonError:
        alice_released = False  # its hold may be gone with the old master: reported lost
    if when == "after-the-unlock":
        # the grant to bob is on its way (his confirming try and WAIT may meet either
        # master): whichever master has it, bob ends up the one holder
        topology.failover(master)
    acquired, _ = bob_waits.result(timeout=60)
    assert acquired is True
    assert bob(lock.hold_count) == 1
    # bob is the only holder: alice holds nothing, whatever her unlock met
    assert alice(lock.hold_count) == 0
    with raw_master(topology, lock_name) as raw:
        fields = [f for f in raw.hkeys(lock_name) if not f.startswith("redisson_py_")]
    assert fields == [bob_field], (fields, alice_released)
    bob(lock.unlock)


def test_a_group_refuses_a_queued_member(
    flavor: Flavor, single_topology: Topology, topology_config: Any, lock_name: str
) -> None:
    client = flavor.create_client(topology_config(single_topology))
    queued = client.get_queued_lock(f"{lock_name}:q")
    with pytest.raises(redisson_py.ArgumentError, match="queued lock"):
        flavor.multilock(queued, client.get_lock(f"{lock_name}:r"))
    with pytest.raises(redisson_py.ArgumentError, match="queued lock"):
        flavor.redlock(client.get_lock(f"{lock_name}:r"), queued)


def test_an_exported_hold_is_adopted_and_its_release_hands_the_lock_on(
    flavor: Flavor, single_topology: Topology, topology_config: Any, lock_name: str
) -> None:
    config = topology_config(single_topology)
    exporter, adopter = flavor.create_client(config), flavor.create_client(config)
    lock = exporter.get_queued_lock(lock_name)
    alice, bob, carol = flavor.owner("alice"), flavor.owner("bob"), flavor.owner("carol")
    alice(lock.lock)
    token = alice(lock.export_hold)
    adopted = bob(adopter.adopt_hold, token)
    carol_waits = carol.start_timed(lock.try_lock, 20.0)
    wait_for_queue(single_topology, lock_name, 1)
    bob(adopted.unlock)
    acquired, _ = carol_waits.result(timeout=10)
    assert acquired is True
    carol(lock.unlock)


def test_a_grant_the_replicas_did_not_acknowledge_is_no_hold(
    flavor: Flavor,
    topology_factory: Callable[..., Topology],
    topology_config: Any,
    lock_name: str,
) -> None:
    # Replica sync on (the default): the grant passed on to bob must be acknowledged by
    # the replicas before his lock() returns; with every replica paused it never is.
    topology = topology_factory("sentinel")
    client = flavor.create_client(topology_config(topology, slaves_sync_timeout=0.3))
    lock = client.get_queued_lock(lock_name)
    alice, bob = flavor.owner("alice"), flavor.owner("bob")
    alice(lock.lock)
    bob_waits = bob.start_timed(lock.try_lock, 30.0)
    wait_for_queue(topology, lock_name, 1)
    replicas = topology.replicas()
    for replica in replicas:
        replica.pause()
    try:
        alice(lock.unlock)
        time.sleep(2.0)
        assert not bob_waits.done()  # granted on the master, not acknowledged: no hold
    finally:
        for replica in replicas:
            replica.resume()
    acquired, _ = bob_waits.result(timeout=30)
    assert acquired is True
    assert bob(lock.hold_count) == 1
    bob(lock.unlock)
