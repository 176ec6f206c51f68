"""The fenced lock: every new holder's token is larger than all earlier ones, across
owners and clients; a reentrant acquire keeps the token; leases are honoured; and a
client acting as Java Redisson on the same keys and channel shares the lock."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import redis
from kind_helpers import by_slot, publish_command, raw_master

from redisson_py.core.routing import naming
from redisson_py.testing import Topology
from redisson_py.testing.owners import Flavor


def test_tokens_strictly_increase_across_owners_and_clients(
    flavor: Flavor, make_client: Callable[..., Any], lock_name: str
) -> None:
    first, second = make_client(), make_client()
    alice, bob = flavor.owner("alice"), flavor.owner("bob")
    lock_a, lock_b = first.get_fenced_lock(lock_name), second.get_fenced_lock(lock_name)
    assert alice(lock_a.get_token) is None  # never acquired
    tokens = []
    for _ in range(3):
        token = alice(lock_a.lock_and_get_token)
        assert alice(lock_a.try_lock_and_get_token) == token  # reentrant: same token
        assert alice(lock_a.hold_count) == 2
        assert bob(lock_b.try_lock_and_get_token, 0.1) is None  # held by alice
        alice(lock_a.unlock)
        alice(lock_a.unlock)
        tokens.append(token)
        token = bob(lock_b.try_lock_and_get_token, 1.0)
        assert token is not None
        assert bob(lock_b.get_token) == token
        bob(lock_b.unlock)
        tokens.append(token)
    assert tokens == sorted(tokens) and len(set(tokens)) == len(tokens), tokens


def test_the_lease_is_honoured_and_the_plain_lock_api_works(
    flavor: Flavor, make_client: Callable[..., Any], lock_name: str
) -> None:
    lock = make_client().get_fenced_lock(lock_name)
    alice, bob = flavor.owner("alice"), flavor.owner("bob")
    token = alice(lock.lock_and_get_token, 0.5)  # Redisson ignores this lease; we do not
    assert 0 < alice(lock.remain_time_to_live) <= 0.5
    time.sleep(0.7)
    assert bob(lock.is_locked) is False  # expired by itself
    assert bob(lock.try_lock, 1.0) is True  # the reentrant lock's API, token incremented
    assert bob(lock.get_token) == token + 1
    bob(lock.unlock)


def _redisson_fenced_acquire(
    client: redis.Redis, name: str, token_key: str, field: str, lease_ms: int
) -> int | None:
    """What Java Redisson's fenced lock does on the same keys (our own Lua, written from
    its data layout): a first acquire sets the owner field and increments the token."""
    script = """
if redis.call('exists', KEYS[1]) == 0 then
    redis.call('hincrby', KEYS[1], ARGV[2], 1)
    redis.call('pexpire', KEYS[1], ARGV[1])
    return {-1, redis.call('incr', KEYS[2])}
end
if redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
    redis.call('hincrby', KEYS[1], ARGV[2], 1)
    redis.call('pexpire', KEYS[1], ARGV[1])
    return {-1, tonumber(redis.call('get', KEYS[2]))}
end
return {redis.call('pttl', KEYS[1]), -1}
"""
    ttl, token = client.eval(script, 2, name, token_key, lease_ms, field)
    return int(token) if int(ttl) == -1 else None


def _redisson_unlock(client: redis.Redis, name: str, channel: str, field: str) -> None:
    script = """
if redis.call('hexists', KEYS[1], ARGV[1]) == 0 then return nil end
if redis.call('hincrby', KEYS[1], ARGV[1], -1) > 0 then return 0 end
redis.call('del', KEYS[1])
redis.call(ARGV[3], KEYS[2], ARGV[2])
return 1
"""
    # Redisson publishes in the channel's shard on a Redis 7 cluster, as redisson-py does.
    publish = publish_command(client)
    client.eval(script, 2, name, channel, field, "0", publish)


def test_a_redisson_client_and_redisson_py_share_the_fenced_lock(
    flavor: Flavor,
    make_client: Callable[..., Any],
    family_topology: Topology,
    lock_name: str,
) -> None:
    client = make_client()
    lock = client.get_fenced_lock(lock_name)
    slot_safe = by_slot(family_topology)
    token_key = naming.prefixed_name("redisson_lock_token", lock_name, by_slot=slot_safe)
    channel = naming.prefixed_name("redisson_lock__channel", lock_name, by_slot=slot_safe)
    field = "java-client-uuid:1"

    ours = flavor.owner("alice")
    with raw_master(family_topology, lock_name) as java:
        first = ours(lock.lock_and_get_token)
        assert _redisson_fenced_acquire(java, lock_name, token_key, field, 30_000) is None
        ours(lock.unlock)
        java_token = _redisson_fenced_acquire(java, lock_name, token_key, field, 30_000)
        assert java_token == first + 1
        waiting = ours.start(lock.lock_and_get_token)  # blocks: Java holds it
        time.sleep(0.3)
        assert not waiting.done()
        started = time.monotonic()
        _redisson_unlock(java, lock_name, channel, field)  # Java's release wakes our waiter
        assert waiting.result(timeout=10) == java_token + 1
        assert time.monotonic() - started < 1.0  # woken by the message, not by a TTL
        ours(lock.unlock)
