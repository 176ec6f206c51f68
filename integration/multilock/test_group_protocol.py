"""MultiLock and RedLock speak the whole lock protocol, sync and asyncio:
``acquire``/``release``/``locked``/``is_locked``/``force_unlock``.

The protocol does not depend on where the members live, so most tests put them on the
shared single server (distinct names); the error cases add a private server that dies.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from typing import Any

import pytest

import redisson_py
import redisson_py.asyncio
from redisson_py import ArgumentError, ArgumentTypeError, LockNotOwnedError, LockUnavailableError
from redisson_py.testing import Topology
from redisson_py.testing.owners import Flavor


@pytest.fixture
def client(flavor: Flavor, single_topology: Topology, topology_config: Any) -> Any:
    return flavor.create_client(topology_config(single_topology))


@pytest.fixture
def members(client: Any) -> list[Any]:
    prefix = uuid.uuid4().hex[:8]
    return [client.get_lock(f"test:group:{prefix}:{i}") for i in range(3)]


@pytest.fixture(params=["multilock", "redlock"])
def group_class(request: pytest.FixtureRequest, flavor: Flavor) -> Any:
    return flavor.multilock if request.param == "multilock" else flavor.redlock


def test_acquire_release_and_locked(flavor: Flavor, members: list[Any], group_class: Any) -> None:
    alice, bob = flavor.owner("alice"), flavor.owner("bob")
    group = group_class(*members)
    assert alice(group.locked) is False
    assert alice(group.acquire) is True  # blocking, no timeout: for ever
    assert alice(group.locked) is True
    assert alice(group.is_locked) is True
    assert all(alice(lock.is_held_by_current_thread) for lock in members)
    assert bob(group.acquire, False) is False
    started = time.monotonic()
    assert bob(group.acquire, True, 0.3) is False
    assert time.monotonic() - started >= 0.3
    alice(group.release)
    assert bob(group.locked) is False
    assert bob(group.acquire, True, 2.0) is True
    bob(group.release)
    with pytest.raises(LockNotOwnedError) as caught:
        bob(group.release)
    # Which case, and whose: the owner named readably, not as a bare owner id.
    assert "held by this owner (" in str(caught.value)
    assert "already released it" in str(caught.value)
    assert not any(alice(lock.is_locked) for lock in members)


def test_a_blocked_acquire_gets_the_group_when_it_is_released(
    flavor: Flavor, members: list[Any], group_class: Any
) -> None:
    alice, bob = flavor.owner("alice"), flavor.owner("bob")
    group = group_class(*members)
    alice(group.acquire)
    waiting = bob.start(group.acquire)
    time.sleep(0.3)
    assert not waiting.done()
    alice(group.release)
    assert waiting.result(timeout=10) is True
    bob(group.release)


def test_a_multilock_is_locked_only_when_every_member_is(
    flavor: Flavor, members: list[Any]
) -> None:
    alice, bob = flavor.owner("alice"), flavor.owner("bob")
    multi = flavor.multilock(*members)
    alice(members[0].lock)
    bob(members[1].lock)
    assert alice(multi.is_locked) is False  # two of three, held by anyone
    bob(members[2].lock)
    assert alice(multi.is_locked) is True  # every member, whoever holds them
    assert alice(multi.locked) is True
    alice(members[0].unlock)
    for lock in members[1:]:
        bob(lock.unlock)


def test_a_redlock_is_locked_when_a_quorum_is(flavor: Flavor, members: list[Any]) -> None:
    alice, bob = flavor.owner("alice"), flavor.owner("bob")
    red = flavor.redlock(*members)
    alice(members[0].lock)
    assert bob(red.is_locked) is False  # one of three
    bob(members[2].lock)
    assert bob(red.is_locked) is True  # two of three: a quorum, by anyone
    alice(members[0].unlock)
    assert bob(red.is_locked) is False
    bob(members[2].unlock)


def test_force_unlock_frees_every_member_and_the_owner_learns_it(
    flavor: Flavor, members: list[Any], group_class: Any
) -> None:
    alice, bob = flavor.owner("alice"), flavor.owner("bob")
    group = group_class(*members)
    alice(group.lock)
    assert bob(group.force_unlock) is True
    assert not any(bob(lock.is_locked) for lock in members)
    assert alice(group.is_held_by_current_thread) is False
    with pytest.raises(LockNotOwnedError):
        alice(group.unlock)
    assert bob(group.force_unlock) is False  # nothing left
    alice(members[1].lock)  # one member, held outside any group
    assert bob(group.force_unlock) is True
    assert alice(members[1].is_locked) is False
    assert bob(group.try_lock) is True
    bob(group.unlock)


def test_a_non_blocking_acquire_refuses_a_timeout(flavor: Flavor, members: list[Any]) -> None:
    # The same arguments and errors in both shells (the asyncio coroutine raises
    # when awaited).
    with pytest.raises(ArgumentError, match="non-blocking"):
        flavor.run(flavor.multilock(*members).acquire(False, 1.0))
    with pytest.raises(ArgumentError, match="timeout"):
        flavor.run(flavor.redlock(*members).acquire(True, -2))


def test_is_locked_and_force_unlock_name_a_member_that_is_down(
    flavor: Flavor,
    client: Any,
    members: list[Any],
    topology_factory: Callable[..., Topology],
    topology_config: Any,
) -> None:
    private = topology_factory("single")
    config = topology_config(private)
    config.server_config.retry_attempts = 0
    other = flavor.create_client(config)
    dead = other.get_lock(members[0].name)
    alice = flavor.owner("alice")
    multi = flavor.multilock(members[1], dead)
    alice(dead.lock)
    private.data_nodes[0].kill()
    # The live member is unlocked: the answer is known without the dead one.
    assert alice(multi.is_locked) is False
    alice(members[1].lock)
    # Now only the dead member could decide it.
    with pytest.raises(LockUnavailableError) as raised:
        alice(multi.is_locked)
    assert any(members[0].name in member for member in raised.value.errors)
    with pytest.raises(LockUnavailableError, match="force unlock failed on 1 of 2"):
        alice(multi.force_unlock)
    assert alice(members[1].is_locked) is False  # the live member was freed all the same


def test_owned_by_hands_a_group_hold_to_another_owner(
    flavor: Flavor, members: list[Any], group_class: Any
) -> None:
    current = (
        redisson_py.current_owner_id
        if flavor.name == "sync"
        else redisson_py.asyncio.current_owner_id
    )
    alice, bob = flavor.owner("alice"), flavor.owner("bob")
    group = group_class(*members)
    alice(group.lock)
    alice_id = alice(current)
    as_alice = group.owned_by(alice_id)
    assert as_alice.owner_id == alice_id and group.owner_id is None
    assert bob(as_alice.is_held_by_current_thread) is True
    assert bob(group.is_held_by_current_thread) is False
    with pytest.raises(LockNotOwnedError):
        bob(group.unlock)  # bob himself holds nothing
    bob(as_alice.unlock)  # released for alice, from bob's thread or task
    assert bob(group.is_locked) is False
    assert alice(group.is_held_by_current_thread) is False
    with pytest.raises(ArgumentTypeError, match="owner id"):
        group.owned_by(str(alice_id))
