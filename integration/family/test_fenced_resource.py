"""The fenced resource, against real servers: a write is accepted with a token larger than
every one accepted before, or equal to the highest from the owner that first wrote it;
anything else raises StaleTokenError and writes nothing. Includes the token tie that a
failover of the lock's deployment makes (the old master's token increment lost, so the
new master hands the same token to a second holder), and a write whose reply is lost.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from kind_helpers import by_slot, raw_master

import redisson_py
from redisson_py import Config, Fence, LockNotOwnedError, RedissonError, StaleTokenError
from redisson_py import asyncio as aio
from redisson_py.config import ConstantDelay
from redisson_py.core.routing import naming
from redisson_py.core.scripts.fenced_resource import FENCED_WRITE
from redisson_py.testing import Topology
from redisson_py.testing.faults.proxy import ReplyDropper
from redisson_py.testing.owners import Flavor


def guarded_pair(client: Any, lock_name: str) -> tuple[Any, Any]:
    """The fenced lock ``lock_name`` and the resource it guards (a key of its own: the
    lock is a hash under its own name)."""
    return client.get_fenced_lock(lock_name), client.get_fenced_resource(f"{lock_name}:data")


def test_a_stale_token_is_refused_and_writes_nothing(
    flavor: Flavor, make_client: Callable[..., Any], lock_name: str
) -> None:
    client = make_client()
    lock, resource = guarded_pair(client, lock_name)
    alice, bob = flavor.owner("alice"), flavor.owner("bob")
    assert alice(resource.highest_token) is None and alice(resource.get) is None
    old = alice(lock.lock_and_get_token)
    alice(resource.set, "alice", old)
    alice(resource.set, "alice again", old)  # the holder writes as often as it likes
    alice(lock.unlock)  # ... then pauses past its lease, say
    new = bob(lock.lock_and_get_token)
    bob(resource.set, "bob", bob(lock.fence))
    with pytest.raises(StaleTokenError, match=f"token {old} is stale") as refused:
        alice(resource.set, "alice, stale", old)
    error = refused.value
    assert (error.token, error.highest, error.tie) == (old, new, False)
    assert error.resource == resource.name
    assert error.address is not None and error.address in str(error)
    assert alice(resource.get) == b"bob" and alice(resource.highest_token) == new
    bob(lock.unlock)


def test_a_fence_carries_the_holders_right_to_another_owner(
    flavor: Flavor, make_client: Callable[..., Any], lock_name: str
) -> None:
    client = make_client()
    lock, resource = guarded_pair(client, lock_name)
    holder, worker, stranger = flavor.owner("holder"), flavor.owner("worker"), flavor.owner("x")
    with pytest.raises(LockNotOwnedError, match="does not hold the lock"):
        holder(lock.fence)
    token = holder(lock.lock_and_get_token)
    fence = holder(lock.fence)
    api = redisson_py if flavor.name == "sync" else aio
    assert fence == Fence(token, f"{client.id}:{holder(api.current_owner_id)}")
    holder(resource.hset, {"balance": 100, "owner": "holder"}, token)  # as the lock's owner
    worker(resource.hset, {"balance": 150}, fence)  # another thread or task, same holder
    with pytest.raises(StaleTokenError, match="first written by another owner"):
        stranger(resource.hset, {"balance": 999}, token)  # the token alone is not enough
    assert worker(resource.hgetall) == {b"balance": b"150", b"owner": b"holder"}
    worker(resource.delete, fence)
    assert worker(resource.hgetall) == {} and worker(resource.highest_token) == token
    holder(lock.unlock)


def _lose_the_grant(topology: Topology, lock_name: str) -> None:
    """What a failover with replica sync off does to a fenced lock whose grant the old
    master never replicated: the new master has no lock key and the token counter
    without the grant's increment."""
    counter = naming.prefixed_name("redisson_lock_token", lock_name, by_slot=by_slot(topology))
    with raw_master(topology, lock_name) as node:
        node.delete(lock_name)
        node.decr(counter)


@pytest.mark.parametrize("first", ["new holder", "stale holder"])
def test_a_token_tie_goes_to_its_first_writer(
    flavor: Flavor,
    make_client: Callable[..., Any],
    family_topology: Topology,
    lock_name: str,
    first: str,
) -> None:
    client_a, client_b = make_client(), make_client()
    alice, bob = flavor.owner("alice"), flavor.owner("bob")
    lock_a, resource_a = guarded_pair(client_a, lock_name)
    lock_b, resource_b = guarded_pair(client_b, lock_name)
    alice(lock_a.lock_and_get_token)
    stale = alice(lock_a.fence)
    _lose_the_grant(family_topology, lock_name)
    fresh = bob(lock_b.try_lock_and_get_token)
    assert fresh == stale.token  # two holders, one token: a rule "token >= highest" fails
    winner, loser = (bob, alice) if first == "new holder" else (alice, bob)
    winner_writes = (
        (resource_b.set, "bob", bob(lock_b.fence))
        if winner is bob
        else (resource_a.set, "alice", stale.token)  # a bare int: alice is its writer
    )
    winner(*winner_writes)
    winner(*winner_writes)  # and again: the first writer keeps the token
    loser_write = (
        (resource_a.set, "alice", stale) if loser is alice else (resource_b.set, "bob", fresh)
    )
    with pytest.raises(StaleTokenError, match="first written by another owner") as refused:
        loser(*loser_write)
    assert refused.value.tie and refused.value.highest == fresh
    expected = b"bob" if winner is bob else b"alice"
    assert bob(resource_b.get) == expected and bob(resource_b.highest_token) == fresh
    bob(lock_b.unlock)


def test_the_record_lives_in_the_resources_slot(
    flavor: Flavor, make_client: Callable[..., Any], family_topology: Topology, lock_name: str
) -> None:
    resource = make_client().get_fenced_resource(lock_name)
    owner = flavor.owner("alice")
    owner(resource.set, "v", Fence(41, "lock-client:7"))
    record = naming.prefixed_name("redisson_py_fence", lock_name, by_slot=by_slot(family_topology))
    with raw_master(family_topology, lock_name) as node:
        assert node.get(lock_name) == "v"  # the resource is an ordinary key
        assert node.hgetall(record) == {"token": "41", "owner": "lock-client:7"}
        assert node.ttl(record) == -1  # the record never expires
    with pytest.raises(RedissonError, match=f"fenced resource '{lock_name}': redis://"):
        owner(make_client().get_fenced_resource(lock_name).hset, {"f": "v"}, 42)  # a string
    assert owner(resource.highest_token) == 41  # the refused write left the record alone


# --- a lost reply (single server, through a proxy that drops replies) --------------------


@pytest.fixture
def proxy(single_topology: Topology) -> Iterator[ReplyDropper]:
    with ReplyDropper(single_topology.master().port) as dropper:
        yield dropper


RETRY_DELAY = 2.0
"""Seconds before the write is retried: time for a newer write to come in between."""


def test_a_write_whose_reply_is_lost_is_applied_once_and_reported_accepted(
    flavor: Flavor,
    proxy: ReplyDropper,
    single_topology: Topology,
    topology_config: Any,
    lock_name: str,
) -> None:
    config = Config()
    section = config.use_single_server(address=f"redis://127.0.0.1:{proxy.port}")
    section.retry_delay = ConstantDelay(RETRY_DELAY)
    through_proxy = flavor.create_client(config).get_fenced_resource(lock_name)
    direct = flavor.create_client(topology_config(single_topology)).get_fenced_resource(lock_name)
    alice, bob = flavor.owner("alice"), flavor.owner("bob")
    proxy.drop_reply_of(FENCED_WRITE.sha)
    write = alice.start(through_proxy.set, "alice", 5)
    deadline = time.monotonic() + RETRY_DELAY
    while proxy.dropped == 0:  # applied, its reply lost: the retry waits RETRY_DELAY
        assert time.monotonic() < deadline, "the write's reply was never dropped"
        time.sleep(0.01)
    bob(direct.set, "bob", 6)  # a newer holder writes before alice's retry
    assert write.result(timeout=30) is None  # found its latch: accepted, not "stale"
    assert bob(direct.get) == b"bob" and bob(direct.highest_token) == 6  # not re-applied
    assert proxy.dropped == 1
