"""Each lock kind shares its lock with a client acting as Java Redisson on the same keys
and channels: our own Lua, written from the data layouts the scripts' modules document
(fair lock: queue, timeout set, a channel per waiter; read-write lock: ``mode``, the
``:write`` suffix, a timeout key per read hold, messages 0 and 1 on
``redisson_rwlock:{name}``; non-reentrant and spin locks: the plain lock's layout), run
with redis-py on the master of the name's slot. The two exclude each other and wake
each other: a Java-style unlock wakes our waiter by its message (far sooner than a TTL),
and our unlock publishes what a Redisson waiter listens for.

The real Redisson (4.7.0 and 3.52.0) runs beside redisson-py in ``integration/interop``,
for every kind, each way: that is where the behaviour is shared (exclusion, wake-ups,
queue order, readers and writers). What stays here is what the Java program cannot
show, Redis-level states between two calls read with redis-py: the payload each unlock
publishes (0 or 1 on the read-write channel, nothing for the spin lock), the queue and
timeout-set entries of the fair lock at each step and the message on a waiter's own
channel, and the hash a Redisson read unlock leaves when our request-id field is in it."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
import redis
from kind_helpers import by_slot, listening, owner_field, publish_command, raw_master

from redisson_py.core.routing import naming
from redisson_py.testing import Topology, eventually
from redisson_py.testing.owners import Flavor

JAVA = "java-client-uuid:1"
REDISSON_LOCK_CHANNEL = "redisson_lock__channel"
"""Redisson's lock channel prefix, spelled as Redisson spells it (not the library's)."""
JAVA_2 = "java-client-uuid:2"
LEASE_MS = 30_000


def now_ms() -> int:
    return int(time.time() * 1000)


@dataclass
class Java:
    """A Redisson-like client on one lock name: redis-py on the name's master."""

    raw: redis.Redis
    name: str
    slot_safe: bool

    def aux(self, prefix: str) -> str:
        return naming.prefixed_name(prefix, self.name, by_slot=self.slot_safe)

    @property
    def publish(self) -> str:
        return publish_command(self.raw)

    def run(self, script: str, keys: list[str], *args: Any) -> Any:
        return self.raw.eval(script, len(keys), *keys, *args)


@pytest.fixture
def java(family_topology: Topology, lock_name: str) -> Iterator[Java]:
    with raw_master(family_topology, lock_name) as raw:
        yield Java(raw, lock_name, by_slot(family_topology))


def handed_over(flavor: Flavor, waiting: Any, act: Callable[[], Any]) -> float:
    """Run ``act`` (an unlock) once ``waiting`` (a ``start_timed`` acquire) is seen
    waiting; return how long after ``act`` returned the waiter held the lock."""
    time.sleep(0.3)
    assert not waiting.done()
    act()
    released = time.monotonic()
    result, granted = waiting.result(timeout=10)
    assert result in (None, True)
    return float(granted - released)


# --- the plain layout: non-reentrant and spin locks --------------------------------------

PLAIN_LOCK = """
if redis.call('exists', KEYS[1]) == 0 or redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
    redis.call('hincrby', KEYS[1], ARGV[2], 1)
    redis.call('pexpire', KEYS[1], ARGV[1])
    return nil
end
return redis.call('pttl', KEYS[1])
"""

NON_REENTRANT_LOCK = """
if redis.call('exists', KEYS[1]) == 0 then
    redis.call('hset', KEYS[1], ARGV[2], 1)
    redis.call('pexpire', KEYS[1], ARGV[1])
    return nil
end
return redis.call('pttl', KEYS[1])
"""

PLAIN_UNLOCK = """
if redis.call('hexists', KEYS[1], ARGV[2]) == 0 then
    return nil
end
if redis.call('hincrby', KEYS[1], ARGV[2], -1) > 0 then
    return 0
end
redis.call('del', KEYS[1])
if ARGV[3] ~= '' then
    redis.call(ARGV[3], KEYS[2], ARGV[1])
end
return 1
"""
"""Redisson's unlock; its spin lock's publishes nothing (ARGV[3] empty here)."""


def test_a_non_reentrant_lock_is_shared_with_redisson(
    flavor: Flavor, make_client: Callable[..., Any], java: Java, lock_name: str
) -> None:
    lock = make_client().get_non_reentrant_lock(lock_name)
    channel = java.aux(REDISSON_LOCK_CHANNEL)
    alice = flavor.owner("alice")
    assert java.run(NON_REENTRANT_LOCK, [lock_name], LEASE_MS, JAVA) is None
    assert java.run(NON_REENTRANT_LOCK, [lock_name], LEASE_MS, JAVA) > 0  # not twice
    assert alice(lock.try_lock) is False
    waiting = alice.start_timed(lock.lock)
    unlock = [lock_name, channel]
    assert (
        handed_over(flavor, waiting, lambda: java.run(PLAIN_UNLOCK, unlock, 0, JAVA, java.publish))
        < 1.0
    )
    assert java.run(NON_REENTRANT_LOCK, [lock_name], LEASE_MS, JAVA) > 0
    with listening(java.raw, channel) as listener:
        alice(lock.unlock)
        assert listener.message(timeout=1.0) == "0"
    assert java.run(NON_REENTRANT_LOCK, [lock_name], LEASE_MS, JAVA) is None
    java.run(PLAIN_UNLOCK, unlock, 0, JAVA, java.publish)


def test_a_spin_lock_is_shared_with_redisson_without_pubsub(
    flavor: Flavor, make_client: Callable[..., Any], java: Java, lock_name: str
) -> None:
    lock = make_client().get_spin_lock(lock_name)
    channel = java.aux(REDISSON_LOCK_CHANNEL)
    alice = flavor.owner("alice")
    assert java.run(PLAIN_LOCK, [lock_name], LEASE_MS, JAVA) is None
    assert alice(lock.try_lock, 0.2) is False
    waiting = alice.start_timed(lock.lock)
    # Redisson's spin unlock publishes nothing: our waiter polls its way in.
    unlock = [lock_name, channel]
    assert handed_over(flavor, waiting, lambda: java.run(PLAIN_UNLOCK, unlock, 0, JAVA, "")) < 1.0
    assert java.run(PLAIN_LOCK, [lock_name], LEASE_MS, JAVA) > 0
    with listening(java.raw, channel) as listener:
        alice(lock.unlock)
        assert listener.message(timeout=0.5) is None  # nothing published, as Redisson's
    assert java.run(PLAIN_LOCK, [lock_name], LEASE_MS, JAVA) is None
    java.run(PLAIN_UNLOCK, unlock, 0, JAVA, "")


# --- the fair lock ------------------------------------------------------------------------

PURGE_STALE_HEADS = """
while true do
    local first = redis.call('lindex', KEYS[2], 0)
    if first == false then
        break
    end
    local timeout = redis.call('zscore', KEYS[3], first)
    if timeout ~= false and tonumber(timeout) <= tonumber(ARGV[4]) then
        redis.call('zrem', KEYS[3], first)
        redis.call('lpop', KEYS[2])
    else
        break
    end
end
"""
"""Where each of Redisson's fair scripts starts (KEYS[2] queue, KEYS[3] timeouts, ARGV[4]
now): waiters whose timeout has passed leave the head of the queue."""

FAIR_TRY = (
    PURGE_STALE_HEADS
    + """
if (redis.call('exists', KEYS[1]) == 0)
        and ((redis.call('exists', KEYS[2]) == 0)
            or (redis.call('lindex', KEYS[2], 0) == ARGV[2])) then
    redis.call('lpop', KEYS[2])
    redis.call('zrem', KEYS[3], ARGV[2])
    local keys = redis.call('zrange', KEYS[3], 0, -1)
    for i = 1, #keys, 1 do
        redis.call('zincrby', KEYS[3], -tonumber(ARGV[3]), keys[i])
    end
    redis.call('hset', KEYS[1], ARGV[2], 1)
    redis.call('pexpire', KEYS[1], ARGV[1])
    return nil
end
if redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
    redis.call('hincrby', KEYS[1], ARGV[2], 1)
    redis.call('pexpire', KEYS[1], ARGV[1])
    return nil
end
local timeout = redis.call('zscore', KEYS[3], ARGV[2])
if timeout ~= false then
    return timeout - tonumber(ARGV[3]) - tonumber(ARGV[4])
end
local last = redis.call('lindex', KEYS[2], -1)
local ttl
if last ~= false and last ~= ARGV[2] then
    ttl = tonumber(redis.call('zscore', KEYS[3], last)) - tonumber(ARGV[4])
else
    ttl = redis.call('pttl', KEYS[1])
end
local timeout = ttl + tonumber(ARGV[3]) + tonumber(ARGV[4])
if redis.call('zadd', KEYS[3], timeout, ARGV[2]) == 1 then
    redis.call('rpush', KEYS[2], ARGV[2])
end
return ttl
"""
)
"""Redisson's fair tryLock (KEYS lock, queue, timeouts; ARGV lease, field, wait, now):
nil when held, else how long to wait."""

FAIR_UNLOCK = (
    PURGE_STALE_HEADS
    + """
if redis.call('exists', KEYS[1]) == 0 then
    local next = redis.call('lindex', KEYS[2], 0)
    if next ~= false then
        redis.call(ARGV[5], KEYS[4] .. ':' .. next, ARGV[1])
    end
    return 1
end
if redis.call('hexists', KEYS[1], ARGV[3]) == 0 then
    return nil
end
if redis.call('hincrby', KEYS[1], ARGV[3], -1) > 0 then
    redis.call('pexpire', KEYS[1], ARGV[2])
    return 0
end
redis.call('del', KEYS[1])
local next = redis.call('lindex', KEYS[2], 0)
if next ~= false then
    redis.call(ARGV[5], KEYS[4] .. ':' .. next, ARGV[1])
end
return 1
"""
)
"""Redisson's fair unlock (KEYS lock, queue, timeouts, channel; ARGV message, lease,
field, now, publish command): wakes the head waiter on its own channel."""


@dataclass
class JavaFair:
    java: Java
    wait_ms: int = 300_000

    @property
    def keys(self) -> list[str]:
        java = self.java
        return [java.name, java.aux("redisson_lock_queue"), java.aux("redisson_lock_timeout")]

    @property
    def channel(self) -> str:
        return self.java.aux(REDISSON_LOCK_CHANNEL)

    def try_lock(self, field: str) -> Any:
        return self.java.run(FAIR_TRY, self.keys, LEASE_MS, field, self.wait_ms, now_ms())

    def unlock(self, field: str) -> Any:
        keys = [*self.keys, self.channel]
        return self.java.run(FAIR_UNLOCK, keys, 0, LEASE_MS, field, now_ms(), self.java.publish)

    def queue(self) -> list[str]:
        return [str(e) for e in self.java.raw.lrange(self.keys[1], 0, -1)]


def test_a_fair_lock_queue_is_shared_with_redisson(
    flavor: Flavor, make_client: Callable[..., Any], java: Java, lock_name: str
) -> None:
    client = make_client()
    lock = client.get_fair_lock(lock_name)
    fair = JavaFair(java)
    alice = flavor.owner("alice")
    ours = owner_field(flavor, alice, client)
    assert fair.try_lock(JAVA) is None
    assert alice(lock.try_lock) is False  # no wait: not queued
    assert fair.queue() == []
    waiting = alice.start_timed(lock.lock)
    eventually(lambda: fair.queue() == [ours], timeout=5, what="our waiter queued")
    assert fair.try_lock(JAVA_2) > 0  # a Java waiter queues behind ours
    assert fair.queue() == [ours, JAVA_2]
    # Java's unlock tells the head (ours) on its own channel.
    assert handed_over(flavor, waiting, lambda: fair.unlock(JAVA)) < 1.0
    assert fair.try_lock(JAVA_2) > 0  # still queued, not granted
    assert fair.queue() == [JAVA_2]
    with listening(java.raw, f"{fair.channel}:{JAVA_2}") as listener:
        alice(lock.unlock)  # ours tells the Java head on its channel
        assert listener.message(timeout=1.0) == "0"
    assert fair.try_lock(JAVA_2) is None
    assert fair.queue() == []
    assert alice(lock.try_lock, 0.2) is False
    assert fair.unlock(JAVA_2) == 1
    assert alice(lock.try_lock) is True
    alice(lock.unlock)


def test_a_java_waiter_ahead_of_ours_goes_first(
    flavor: Flavor, make_client: Callable[..., Any], java: Java, lock_name: str
) -> None:
    client = make_client()
    lock = client.get_fair_lock(lock_name)
    fair = JavaFair(java)
    alice, bob = flavor.owner("alice"), flavor.owner("bob")
    ours = owner_field(flavor, bob, client)
    alice(lock.lock)
    assert fair.try_lock(JAVA) > 0
    waiting = bob.start_timed(lock.lock)
    eventually(lambda: fair.queue() == [JAVA, ours], timeout=5, what="ours queued second")
    with listening(java.raw, f"{fair.channel}:{JAVA}") as listener:
        alice(lock.unlock)
        assert listener.message(timeout=1.0) == "0"
    time.sleep(0.5)
    assert not waiting.done()  # the lock is free, but the Java waiter is ahead
    assert fair.try_lock(JAVA) is None
    assert handed_over(flavor, waiting, lambda: fair.unlock(JAVA)) < 1.0
    bob(lock.unlock)


# --- the read-write lock ------------------------------------------------------------------

READ_LOCK = """
local mode = redis.call('hget', KEYS[1], 'mode')
if mode == false then
    redis.call('hset', KEYS[1], 'mode', 'read')
    redis.call('hset', KEYS[1], ARGV[2], 1)
    redis.call('set', KEYS[2] .. ':1', 1)
    redis.call('pexpire', KEYS[2] .. ':1', ARGV[1])
    redis.call('pexpire', KEYS[1], ARGV[1])
    return nil
end
if (mode == 'read') or (mode == 'write' and redis.call('hexists', KEYS[1], ARGV[3]) == 1) then
    local ind = redis.call('hincrby', KEYS[1], ARGV[2], 1)
    local key = KEYS[2] .. ':' .. ind
    redis.call('set', key, 1)
    redis.call('pexpire', key, ARGV[1])
    local remain = redis.call('pttl', KEYS[1])
    redis.call('pexpire', KEYS[1], math.max(remain, ARGV[1]))
    return nil
end
return redis.call('pttl', KEYS[1])
"""
"""Redisson's read lock (KEYS lock, this reader's timeout prefix; ARGV lease, field,
write field)."""

READ_UNLOCK = """
local mode = redis.call('hget', KEYS[1], 'mode')
if mode == false then
    redis.call(ARGV[3], KEYS[2], ARGV[1])
    return 1
end
if redis.call('hexists', KEYS[1], ARGV[2]) == 0 then
    return nil
end
local counter = redis.call('hincrby', KEYS[1], ARGV[2], -1)
if counter == 0 then
    redis.call('hdel', KEYS[1], ARGV[2])
end
redis.call('del', KEYS[3] .. ':' .. (counter + 1))
if redis.call('hlen', KEYS[1]) > 1 then
    local longest = -3
    for _, key in ipairs(redis.call('hkeys', KEYS[1])) do
        counter = tonumber(redis.call('hget', KEYS[1], key))
        if type(counter) == 'number' then
            for i = counter, 1, -1 do
                local remain = redis.call('pttl', KEYS[4] .. ':' .. key .. ':rwlock_timeout:' .. i)
                longest = math.max(remain, longest)
            end
        end
    end
    if longest > 0 then
        redis.call('pexpire', KEYS[1], longest)
        return 0
    end
    if mode == 'write' then
        return 0
    end
end
redis.call('del', KEYS[1])
redis.call(ARGV[3], KEYS[2], ARGV[1])
return 1
"""
"""Redisson's read unlock (KEYS lock, channel, this reader's timeout prefix, every
reader's prefix ``{name}``; ARGV message 0, field, publish command): it reads every
hash field with ``tonumber``."""

WRITE_LOCK = """
local mode = redis.call('hget', KEYS[1], 'mode')
if mode == false then
    redis.call('hset', KEYS[1], 'mode', 'write')
    redis.call('hset', KEYS[1], ARGV[2], 1)
    redis.call('pexpire', KEYS[1], ARGV[1])
    return nil
end
if mode == 'write' and redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
    redis.call('hincrby', KEYS[1], ARGV[2], 1)
    redis.call('pexpire', KEYS[1], redis.call('pttl', KEYS[1]) + ARGV[1])
    return nil
end
return redis.call('pttl', KEYS[1])
"""
"""Redisson's write lock (KEYS lock; ARGV lease, write field)."""

WRITE_UNLOCK = """
local mode = redis.call('hget', KEYS[1], 'mode')
if mode == false then
    redis.call(ARGV[4], KEYS[2], ARGV[1])
    return 1
end
if mode == 'write' then
    if redis.call('hexists', KEYS[1], ARGV[3]) == 0 then
        return nil
    end
    if redis.call('hincrby', KEYS[1], ARGV[3], -1) > 0 then
        redis.call('pexpire', KEYS[1], ARGV[2])
        return 0
    end
    redis.call('hdel', KEYS[1], ARGV[3])
    if redis.call('hlen', KEYS[1]) == 1 then
        redis.call('del', KEYS[1])
        redis.call(ARGV[4], KEYS[2], ARGV[1])
    else
        redis.call('hset', KEYS[1], 'mode', 'read')
    end
    return 1
end
return nil
"""
"""Redisson's write unlock (KEYS lock, channel; ARGV message 1, lease, write field,
publish command)."""


@dataclass
class JavaReadWrite:
    java: Java

    @property
    def channel(self) -> str:
        return self.java.aux("redisson_rwlock")

    @property
    def key_prefix(self) -> str:
        return naming.key_prefix(self.java.name, by_slot=self.java.slot_safe)

    def timeout_prefix(self, field: str) -> str:
        return f"{self.key_prefix}:{field}:rwlock_timeout"

    def read_lock(self, field: str) -> Any:
        keys = [self.java.name, self.timeout_prefix(field)]
        return self.java.run(READ_LOCK, keys, LEASE_MS, field, f"{field}:write")

    def read_unlock(self, field: str) -> Any:
        keys = [self.java.name, self.channel, self.timeout_prefix(field), self.key_prefix]
        return self.java.run(READ_UNLOCK, keys, 0, field, self.java.publish)

    def write_lock(self, field: str) -> Any:
        return self.java.run(WRITE_LOCK, [self.java.name], LEASE_MS, f"{field}:write")

    def write_unlock(self, field: str) -> Any:
        keys = [self.java.name, self.channel]
        return self.java.run(WRITE_UNLOCK, keys, 1, LEASE_MS, f"{field}:write", self.java.publish)


def test_java_and_our_readers_share_and_keep_each_other_alive(
    flavor: Flavor, make_client: Callable[..., Any], java: Java, lock_name: str
) -> None:
    client = make_client()
    rw = client.get_read_write_lock(lock_name)
    jrw = JavaReadWrite(java)
    alice, bob = flavor.owner("alice"), flavor.owner("bob")
    ours = owner_field(flavor, alice, client)
    alice(rw.read_lock().lock)  # our latch field is in the hash now
    assert jrw.read_lock(JAVA) is None  # readers share
    assert alice(rw.read_lock().try_lock) is True
    assert jrw.write_lock(JAVA_2) > 0  # a Java writer is excluded
    assert bob(rw.write_lock().try_lock, 0.2) is False  # so is ours
    # The last Java reader leaves: Redisson's unlock reads every field with tonumber;
    # ours (and our request-id field) must leave the hash alive for our reader.
    assert jrw.read_unlock(JAVA) == 0
    assert java.raw.hget(lock_name, "mode") == "read"
    assert java.raw.pttl(lock_name) > 0
    assert alice(rw.read_lock().hold_count) == 2
    assert java.raw.exists(f"{jrw.timeout_prefix(ours)}:2") == 1
    assert jrw.write_lock(JAVA_2) > 0
    # And ours leave while a Java reader holds: the hash lives on for it.
    assert jrw.read_lock(JAVA) is None
    alice(rw.read_lock().unlock)
    alice(rw.read_lock().unlock)
    assert java.raw.hget(lock_name, JAVA) == "1"
    assert java.raw.pttl(lock_name) > 0
    assert bob(rw.write_lock().try_lock) is False
    waiting = bob.start_timed(rw.write_lock().lock)
    # Java's last read unlock frees the lock and publishes 0: our writer is woken.
    assert handed_over(flavor, waiting, lambda: jrw.read_unlock(JAVA)) < 1.0
    assert jrw.read_lock(JAVA) > 0
    bob(rw.write_lock().unlock)


def test_our_unlocks_wake_java_waiters(
    flavor: Flavor, make_client: Callable[..., Any], java: Java, lock_name: str
) -> None:
    rw = make_client().get_read_write_lock(lock_name)
    jrw = JavaReadWrite(java)
    alice = flavor.owner("alice")
    alice(rw.write_lock().lock)
    assert jrw.read_lock(JAVA) > 0
    assert jrw.write_lock(JAVA_2) > 0
    with listening(java.raw, jrw.channel) as listener:
        alice(rw.write_lock().unlock)
        assert listener.message(timeout=1.0) == "1"  # wakes every Java waiter
        assert jrw.read_lock(JAVA) is None
        alice(rw.read_lock().lock)  # shares with the Java reader
        assert jrw.read_unlock(JAVA) == 0
        assert listener.message(timeout=0.3) is None  # ours still holds: nobody told
        alice(rw.read_lock().unlock)
        assert listener.message(timeout=1.0) == "0"  # the last read unlock
    assert jrw.write_lock(JAVA_2) is None
    assert jrw.write_unlock(JAVA_2) == 1


def test_a_java_write_unlock_that_frees_the_lock_wakes_our_readers_at_once(
    flavor: Flavor, make_client: Callable[..., Any], java: Java, lock_name: str
) -> None:
    first, second = make_client(), make_client()
    jrw = JavaReadWrite(java)
    assert jrw.write_lock(JAVA) is None
    readers = [flavor.owner(f"reader-{i}") for i in range(3)]
    reads = [(first, second)[i % 2].get_read_write_lock(lock_name).read_lock() for i in range(3)]
    entering = [o.start_timed(r.lock) for o, r in zip(readers, reads, strict=True)]
    time.sleep(0.5)
    assert not any(e.done() for e in entering)
    assert jrw.write_unlock(JAVA) == 1  # publishes 1: every waiter wakes
    released = time.monotonic()
    for future in entering:
        _, granted = future.result(timeout=10)
        assert granted - released < 1.0
    assert jrw.write_lock(JAVA) > 0
    for owner, read in zip(readers, reads, strict=True):
        owner(read.unlock)
    assert jrw.write_lock(JAVA) is None
    assert jrw.write_unlock(JAVA) == 1
