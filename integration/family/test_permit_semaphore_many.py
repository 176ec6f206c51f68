"""Several permits in one call on the permit-expirable semaphore (issue 26, item 7):
``acquire(permits=n)`` and ``try_acquire(permits=n)`` take n permits all or none in one
script, ``release`` and ``try_release`` take a list, all or none (Redisson since 3.41);
on single and cluster, sync and asyncio, against a client running Redisson's
``acquire(int permits)`` layout."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest
from kind_helpers import by_slot, publish_command
from object_helpers import client_through, java_client
from test_permit_expirable_semaphore import NO_LEASE, PAUSE_BOUND, timeout_key

from redisson_py import ArgumentError, ArgumentTypeError, PermitNotHeldError
from redisson_py.core.routing import naming
from redisson_py.core.scripts import permit_semaphore as scripts
from redisson_py.testing import Topology
from redisson_py.testing.faults.proxy import ReplyDropper
from redisson_py.testing.owners import Flavor


def test_several_permits_are_taken_all_or_none(
    flavor: Flavor, make_client: Callable[..., Any], family_topology: Topology, lock_name: str
) -> None:
    semaphore = make_client().get_permit_expirable_semaphore(lock_name)
    alice = flavor.owner("alice")
    assert alice(semaphore.try_acquire, permits=2) == []  # no permits set
    alice(semaphore.try_set_permits, 5)
    three = alice(semaphore.acquire, 5.0, permits=3)
    assert len(three) == 3 == len(set(three))
    assert all(len(i) == 32 and bytes.fromhex(i) for i in three)
    with java_client(family_topology, lock_name, raw=True) as java:
        scores = dict(java.zrange(timeout_key(family_topology, lock_name), 0, -1, withscores=True))
    # Redisson's data: one member per permit, raw ids, all scored by one expiry.
    assert set(scores) == {bytes.fromhex(i) for i in three}
    assert len(set(scores.values())) == 1
    assert 4000 < next(iter(scores.values())) - time.time() * 1000 <= 5000
    assert alice(semaphore.available_permits) == 2
    # Three more cannot be had: none are taken, not even the two available.
    assert alice(semaphore.try_acquire, 0.3, permits=3) == []
    assert alice(semaphore.available_permits) == 2
    assert alice(semaphore.acquired_permits) == 3
    two = alice(semaphore.try_acquire, 0.0, None, permits=2)
    assert len(two) == 2 and not set(two) & set(three)
    assert alice(semaphore.available_permits) == 0
    # A list is released in one call; a single id as before.
    alice(semaphore.release, three)
    assert alice(semaphore.available_permits) == 3
    assert alice(semaphore.try_release, [two[0]]) == 1
    # All or nothing (Redisson since 3.41): two[0] was released already, so the list
    # releases none, and two[1] stays acquired.
    assert alice(semaphore.try_release, two) == 0
    assert alice(semaphore.available_permits) == 4
    assert alice(semaphore.try_release, two[1]) is True
    assert alice(semaphore.available_permits) == 5
    # A list with an id not acquired: none is released, the error says so.
    one = alice(semaphore.acquire, permits=1)
    assert len(one) == 1
    with pytest.raises(PermitNotHeldError, match="none was released: not every one") as raised:
        alice(semaphore.release, [*one, three[0]])
    assert three[0] in str(raised.value) and lock_name in str(raised.value)
    assert alice(semaphore.available_permits) == 4  # one is still acquired
    with pytest.raises(ArgumentError, match="given twice"):
        alice(semaphore.release, [one[0], one[0]])
    alice(semaphore.release, one)
    assert alice(semaphore.available_permits) == 5
    for bad in (0, -1, 5_000_000_000):
        with pytest.raises(ArgumentError, match="permits"):
            alice(semaphore.try_acquire, permits=bad)
    with pytest.raises(ArgumentTypeError):
        alice(semaphore.acquire, permits="2")
    with pytest.raises(ArgumentError, match="non-empty"):
        alice(semaphore.release, [])
    with pytest.raises(ArgumentError):
        alice(semaphore.release, ["not a permit"])


def test_leased_permits_taken_together_come_back_together(
    flavor: Flavor, make_client: Callable[..., Any], lock_name: str
) -> None:
    semaphore = make_client().get_permit_expirable_semaphore(lock_name)
    alice = flavor.owner("alice")
    alice(semaphore.try_set_permits, 3)
    ids = alice(semaphore.acquire, 0.5, permits=3)
    assert alice(semaphore.try_acquire) is None
    time.sleep(1.0)
    assert alice(semaphore.available_permits) == 3
    with pytest.raises(PermitNotHeldError, match="reported lost"):
        alice(semaphore.release, ids)
    assert alice(semaphore.available_permits) == 3  # nothing released twice
    # A list with one permit reported lost: none of it is released, all or nothing.
    [short] = alice(semaphore.acquire, 0.5, permits=1)
    kept = alice(semaphore.acquire)
    time.sleep(1.0)
    assert alice(semaphore.try_release, [short, kept]) == 0
    with pytest.raises(PermitNotHeldError, match="none was released: reported lost"):
        alice(semaphore.release, [kept, short])
    assert alice(semaphore.acquired_permits) == 1  # kept is still acquired
    assert alice(semaphore.try_release, [kept]) == 1
    assert alice(semaphore.available_permits) == 3


def test_a_waiter_for_n_permits_gets_them_once_n_are_free(
    flavor: Flavor, make_client: Callable[..., Any], lock_name: str
) -> None:
    first, second = make_client(), make_client()
    ours = first.get_permit_expirable_semaphore(lock_name)
    alice, carol, bob = flavor.owner("alice"), flavor.owner("carol"), flavor.owner("bob")
    alice(ours.try_set_permits, 3)
    held = [alice(ours.acquire), alice(ours.acquire)]
    waiting = bob.start_timed(second.get_permit_expirable_semaphore(lock_name).acquire, permits=3)
    # Takers of one permit come and go while only one is free: the waiter for three
    # cannot have them yet, and the single-permit takers are not blocked by it.
    for _ in range(5):
        single = carol(ours.try_acquire, 1.0)
        assert single is not None
        time.sleep(0.05)
        carol(ours.release, single)
    assert not waiting.done()
    alice(ours.release, held[0])
    time.sleep(0.3)
    assert not waiting.done()  # two free, three wanted
    released_at = time.monotonic()
    alice(ours.release, held[1])
    ids, finished = waiting.result(timeout=10)
    assert len(ids) == 3
    assert finished - released_at < 1.0 < PAUSE_BOUND  # woken by the release's message
    assert alice(ours.available_permits) == 0
    bob(ours.release, ids)
    assert alice(ours.available_permits) == 3


def test_a_lost_reply_takes_the_permits_once(
    flavor: Flavor, proxy: ReplyDropper, lock_name: str
) -> None:
    semaphore = client_through(flavor, proxy).get_permit_expirable_semaphore(lock_name)
    alice = flavor.owner("alice")
    alice(semaphore.try_set_permits, 4)
    alice(semaphore.release, alice(semaphore.acquire, permits=2))  # the scripts, loaded once
    proxy.drop_reply_of(scripts.ACQUIRE.sha)
    ids = alice(semaphore.acquire, permits=3)  # reply lost, retried with its request id
    assert proxy.dropped == 1 and len(ids) == 3
    assert alice(semaphore.acquired_permits) == 3 and alice(semaphore.available_permits) == 1
    proxy.drop_reply_of(scripts.TRY_RELEASE.sha)
    assert alice(semaphore.try_release, ids) == 3  # the first run's answer
    assert proxy.dropped == 2
    assert alice(semaphore.available_permits) == 4


# --- Redisson's acquire(int permits) and release(List<String>), as a Java client runs them

JAVA_RECLAIM = """
local expired = redis.call('zrangebyscore', KEYS[2], 0, ARGV[3])
if #expired > 0 then
    redis.call('zrem', KEYS[2], unpack(expired))
    local value = redis.call('incrby', KEYS[1], #expired)
    if value > 0 then
        redis.call(ARGV[4], KEYS[3], value)
    end
end
"""
# ARGV[1] the count of ids, ARGV[2] their expiry, ARGV[3] now, ARGV[4] publish, ARGV[5..] ids
JAVA_ACQUIRE_MANY = (
    JAVA_RECLAIM
    + """
local value = redis.call('get', KEYS[1])
if value ~= false and tonumber(value) >= tonumber(ARGV[1]) then
    redis.call('decrby', KEYS[1], ARGV[1])
    for i = 5, #ARGV do
        redis.call('zadd', KEYS[2], ARGV[2], ARGV[i])
    end
    return 1
end
return 0
"""
)
JAVA_RELEASE_MANY = (
    JAVA_RECLAIM
    + """
local ids = {}
for i = 5, #ARGV do
    table.insert(ids, ARGV[i])
end
local removed = redis.call('zrem', KEYS[2], unpack(ids))
if removed == 0 then
    return 0
end
redis.call('incrby', KEYS[1], removed)
redis.call(ARGV[4], KEYS[3], removed)
return removed
"""
)


def test_redisson_and_redisson_py_share_permits_taken_together(
    flavor: Flavor, make_client: Callable[..., Any], family_topology: Topology, lock_name: str
) -> None:
    semaphore = make_client().get_permit_expirable_semaphore(lock_name)
    ours = flavor.owner("ours")
    channel = naming.prefixed_name("redisson_sc", lock_name, by_slot=by_slot(family_topology))
    keys = (lock_name, timeout_key(family_topology, lock_name), channel)
    java_ids = [bytes([i]) * 16 for i in range(1, 4)]
    with java_client(family_topology, lock_name, raw=True) as java:
        publish = publish_command(java)

        def java_run(script: str, ids: list[bytes], expiry: int = NO_LEASE) -> int:
            now = int(time.time() * 1000)
            return int(java.eval(script, 3, *keys, len(ids), expiry, now, publish, *ids))

        ours(semaphore.try_set_permits, 5)
        assert java_run(JAVA_ACQUIRE_MANY, java_ids) == 1  # Java takes three at once
        assert ours(semaphore.acquired_permits) == 3
        assert ours(semaphore.try_acquire, permits=3) == []
        # Ours releases Java's three in one call (ids as hex), and takes four at once.
        ours(semaphore.release, [i.hex() for i in java_ids])
        mine = ours(semaphore.acquire, permits=4)
        assert java_run(JAVA_ACQUIRE_MANY, java_ids[:2]) == 0  # one left: none taken
        assert ours(semaphore.available_permits) == 1
        # Java releases ours, as Redisson's release(List<String>) does.
        assert java_run(JAVA_RELEASE_MANY, [bytes.fromhex(i) for i in mine]) == 4
        assert ours(semaphore.available_permits) == 5
        assert ours(semaphore.try_release, mine) == 0
