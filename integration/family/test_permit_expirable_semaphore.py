"""The permit-expirable semaphore on single and cluster, sync and asyncio: permits with
ids and leases; a dead holder's expired permits come back (its waiter wakes when the
lease ends); a release wakes a waiter by its message; a timed wait ends at its deadline;
a lost reply is counted once; and a client acting as Java Redisson on the same keys
(raw 16-byte ids, expiry scores) and channel shares the semaphore, both ways."""

from __future__ import annotations

import math
import multiprocessing
import multiprocessing.connection
import time
from collections.abc import Callable
from typing import Any

import pytest
import redis
from kind_helpers import by_slot, kill, listening, publish_command, running
from object_helpers import client_through, clocked, java_client

from redisson_py import (
    ArgumentError,
    ArgumentTypeError,
    Config,
    PermitNotHeldError,
    Redisson,
    RedissonError,
)
from redisson_py.core.routing import naming
from redisson_py.core.scripts import permit_semaphore as scripts
from redisson_py.testing import Topology
from redisson_py.testing.faults.proxy import ReplyDropper
from redisson_py.testing.owners import Flavor

NO_LEASE = 922337203685477
PAUSE_BOUND = 3.0
"""A waiter re-checks this often without a message: wake-ups well under it came by one."""


def timeout_key(topology: Topology, name: str) -> str:
    return naming.suffixed_name(name, "timeout", by_slot=by_slot(topology))


def test_permits_have_ids_and_leases(
    flavor: Flavor, make_client: Callable[..., Any], family_topology: Topology, lock_name: str
) -> None:
    semaphore = make_client().get_permit_expirable_semaphore(lock_name)
    alice = flavor.owner("alice")
    assert alice(semaphore.try_acquire) is None  # no permits set
    assert alice(semaphore.try_set_permits, 2) is True
    assert alice(semaphore.try_set_permits, 5) is False
    forever = alice(semaphore.acquire)
    assert len(forever) == 32 and forever == forever.lower() and bytes.fromhex(forever)
    leased = alice(semaphore.try_acquire, 0.0, 5.0)
    assert leased is not None and leased != forever
    with java_client(family_topology, lock_name, raw=True) as java:
        scores = dict(java.zrange(timeout_key(family_topology, lock_name), 0, -1, withscores=True))
    assert scores[bytes.fromhex(forever)] == NO_LEASE  # stored raw, as Redisson does
    assert 4000 < scores[bytes.fromhex(leased)] - time.time() * 1000 <= 5000
    assert alice(semaphore.available_permits) == 0
    assert alice(semaphore.acquired_permits) == 2
    assert alice(semaphore.get_permits) == 2
    assert alice(semaphore.try_acquire) is None
    assert alice(semaphore.try_release, forever) is True
    assert alice(semaphore.try_release, forever) is False
    with pytest.raises(PermitNotHeldError, match=forever) as raised:
        alice(semaphore.release, forever)
    assert isinstance(raised.value, ValueError) and isinstance(raised.value, RedissonError)
    assert alice(semaphore.update_lease_time, leased, 0.3) is True
    time.sleep(0.6)
    assert alice(semaphore.acquired_permits) == 0  # its lease ended: it came back
    assert alice(semaphore.available_permits) == 2
    assert alice(semaphore.update_lease_time, leased, 10.0) is False
    alice(semaphore.add_permits, 1)
    assert alice(semaphore.get_permits) == 3
    assert alice(semaphore.delete) is True
    assert alice(semaphore.delete) is False
    assert alice(semaphore.get_permits) == 0


def test_bad_arguments_are_refused_naming_the_semaphore(
    flavor: Flavor, make_client: Callable[..., Any], lock_name: str
) -> None:
    semaphore = make_client().get_permit_expirable_semaphore(lock_name)
    alice = flavor.owner("alice")
    subject = f"permit-expirable semaphore {lock_name!r}"
    for call, error, words in [
        (lambda: semaphore.release("xyz"), ArgumentError, "not a permit id"),
        (lambda: semaphore.try_release(b"0" * 16), ArgumentTypeError, "permit id"),
        (lambda: semaphore.acquire(0), ArgumentError, "lease_time"),
        (lambda: semaphore.try_acquire(math.nan), ArgumentError, "wait_time"),
        (lambda: semaphore.try_acquire(1.0, "5"), ArgumentTypeError, "lease_time"),
        (lambda: semaphore.update_lease_time("ab" * 16, -1), ArgumentError, "lease_time"),
        (lambda: semaphore.try_set_permits(-1), ArgumentError, "permits"),
    ]:
        with pytest.raises(error, match=f"{subject}.*{words}"):
            alice(call)


def _holder(config_yaml: str, name: str, lease: float, out: Any) -> None:
    """Take a permit leased for ``lease`` seconds, say which, and wait to be killed."""
    client = Redisson.create(Config.from_yaml(config_yaml))
    out.send(client.get_permit_expirable_semaphore(name).acquire(lease_time=lease))
    time.sleep(3600)


def test_the_expired_permit_of_a_dead_holder_comes_back(
    flavor: Flavor,
    make_client: Callable[..., Any],
    family_topology: Topology,
    topology_config: Any,
    lock_name: str,
) -> None:
    semaphore = make_client().get_permit_expirable_semaphore(lock_name)
    alice = flavor.owner("alice")
    alice(semaphore.try_set_permits, 1)
    spawn = multiprocessing.get_context("spawn")
    receive, send = spawn.Pipe(duplex=False)
    config = topology_config(family_topology).to_yaml()
    holder = spawn.Process(target=_holder, args=(config, lock_name, 1.5, send), daemon=True)
    with running(holder):
        assert receive.poll(60), "the holder took no permit"
        dead = receive.recv()
        kill(holder)  # dies holding its permit
        acquired_at = time.monotonic()
        permit, took = clocked(lambda: alice(semaphore.try_acquire, 10.0))
    assert permit is not None and permit != dead
    # Woken when the lease ended (at most 1.5 s after the grant), not by a re-check.
    assert took < 1.5 + 1.0, took
    assert time.monotonic() - acquired_at < 2.5 + 1.0
    assert alice(semaphore.try_release, dead) is False  # expired: not its to release


def test_a_release_wakes_a_waiter_at_once_and_a_timed_wait_ends_at_its_deadline(
    flavor: Flavor, make_client: Callable[..., Any], lock_name: str
) -> None:
    first, second = make_client(), make_client()
    ours = first.get_permit_expirable_semaphore(lock_name)
    alice, bob = flavor.owner("alice"), flavor.owner("bob")
    alice(ours.try_set_permits, 1)
    permit = alice(ours.acquire)
    permit_id, took = clocked(lambda: bob(ours.try_acquire, 1.0))
    assert permit_id is None and 0.9 <= took < 2.5
    waiting = bob.start_timed(second.get_permit_expirable_semaphore(lock_name).acquire)
    time.sleep(0.3)
    assert not waiting.done()
    released_at = time.monotonic()
    alice(ours.release, permit)
    other, finished = waiting.result(timeout=10)
    assert finished - released_at < 1.0 < PAUSE_BOUND and other != permit


def test_a_lost_reply_is_counted_once(flavor: Flavor, proxy: ReplyDropper, lock_name: str) -> None:
    semaphore = client_through(flavor, proxy).get_permit_expirable_semaphore(lock_name)
    alice = flavor.owner("alice")
    alice(semaphore.try_set_permits, 3)
    alice(semaphore.release, alice(semaphore.acquire))  # the scripts, loaded once
    proxy.drop_reply_of(scripts.ACQUIRE.sha)
    permit = alice(semaphore.acquire)  # reply lost, retried with its request id
    assert proxy.dropped == 1
    assert alice(semaphore.acquired_permits) == 1 and alice(semaphore.available_permits) == 2
    proxy.drop_reply_of(scripts.TRY_RELEASE.sha)
    assert alice(semaphore.try_release, permit) is True  # the first run's answer
    assert proxy.dropped == 2
    assert alice(semaphore.available_permits) == 3


# --- a Redisson-like client on the same keys and channel --------------------------------

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
JAVA_TRY_ACQUIRE = (
    JAVA_RECLAIM
    + """
local value = redis.call('get', KEYS[1])
if value ~= false and tonumber(value) >= 1 then
    redis.call('decrby', KEYS[1], 1)
    redis.call('zadd', KEYS[2], ARGV[2], ARGV[1])
    return 1
end
return 0
"""
)
JAVA_TRY_RELEASE = (
    JAVA_RECLAIM
    + """
if redis.call('zrem', KEYS[2], ARGV[1]) == 0 then
    return 0
end
local value = redis.call('incrby', KEYS[1], 1)
redis.call(ARGV[4], KEYS[3], value)
return 1
"""
)


class JavaSemaphore:
    """RPermitExpirableSemaphore as Java Redisson runs it (our own Lua, from its layout:
    raw 16-byte ids scored by their expiry in ``{name}:timeout``)."""

    def __init__(self, java: redis.Redis, topology: Topology, name: str):
        self.java = java
        channel = naming.prefixed_name("redisson_sc", name, by_slot=by_slot(topology))
        self.keys = (name, timeout_key(topology, name), channel)
        self.publish = publish_command(java)

    def _run(self, script: str, permit: bytes, expiry: int) -> bool:
        now = int(time.time() * 1000)
        return bool(self.java.eval(script, 3, *self.keys, permit, expiry, now, self.publish))

    def try_acquire(self, permit: bytes, lease: float | None = None) -> bool:
        expiry = NO_LEASE if lease is None else int((time.time() + lease) * 1000)
        return self._run(JAVA_TRY_ACQUIRE, permit, expiry)

    def try_release(self, permit: bytes) -> bool:
        return self._run(JAVA_TRY_RELEASE, permit, 0)


def test_a_redisson_client_and_redisson_py_share_the_semaphore(
    flavor: Flavor, make_client: Callable[..., Any], family_topology: Topology, lock_name: str
) -> None:
    semaphore = make_client().get_permit_expirable_semaphore(lock_name)
    ours, waiter = flavor.owner("ours"), flavor.owner("waiter")
    java_permit = bytes(range(16))
    with java_client(family_topology, lock_name, raw=True) as raw:
        java = JavaSemaphore(raw, family_topology, lock_name)
        assert ours(semaphore.try_set_permits, 1)
        assert java.try_acquire(java_permit)  # Java takes the only permit
        assert ours(semaphore.acquired_permits) == 1
        assert ours(semaphore.try_acquire, 0.2) is None
        waiting = waiter.start_timed(semaphore.acquire)
        time.sleep(0.3)
        assert not waiting.done()
        released_at = time.monotonic()
        assert java.try_release(java_permit)  # publishes the new count: wakes ours
        permit, finished = waiting.result(timeout=10)
        assert finished - released_at < 1.0 < PAUSE_BOUND
        assert not java.try_acquire(java_permit)  # ours now
        assert not java.try_release(java_permit)
        with (
            java_client(family_topology, lock_name) as text,
            listening(text, java.keys[2]) as subscriber,  # as a Java waiter listens
        ):
            ours(semaphore.release, permit)
            assert subscriber.message(timeout=5) == "1"  # the new count
        assert java.try_acquire(java_permit, lease=0.3)  # a Java holder that dies
        time.sleep(0.5)
        assert ours(semaphore.try_acquire) is not None  # its permit came back
        assert not java.try_release(java_permit)
