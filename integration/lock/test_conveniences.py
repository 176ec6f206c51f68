"""The lock's conveniences on a real Redis, sync and asyncio: ``client.synchronized``,
``lock.extend`` and ``lock.owned_by`` (handing a hold to another thread or task).

They do not depend on the topology, so they run on the shared single server.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

import redisson_py
import redisson_py.asyncio
from redisson_py import (
    ArgumentError,
    ArgumentTypeError,
    ClientClosedError,
    LockLost,
    LockNotOwnedError,
    LockTimeoutError,
    RedissonError,
)
from redisson_py.testing import Topology, eventually
from redisson_py.testing.owners import Flavor


@pytest.fixture
def make_client(
    flavor: Flavor, single_topology: Topology, topology_config: Any
) -> Callable[..., Any]:
    """``make_client(**settings, on_lock_lost=...)``: a client of the flavor."""

    def make(on_lock_lost: Any = None, **settings: Any) -> Any:
        config = topology_config(single_topology, **settings)
        return flavor.create_client(config, on_lock_lost=on_lock_lost)

    return make


@pytest.fixture
def client(make_client: Callable[..., Any]) -> Any:
    return make_client()


def owner_id_of(flavor: Flavor) -> Callable[[], Any]:
    """The shell's ``current_owner_id`` (run it as an owner to get that owner's id)."""
    if flavor.name == "sync":
        return redisson_py.current_owner_id
    return redisson_py.asyncio.current_owner_id


def synchronized_hold_count(
    flavor: Flavor, client: Any, name: str, **options: Any
) -> Callable[..., Any]:
    """A function of the flavor, decorated with ``client.synchronized(name, **options)``,
    that returns ``(its argument, the hold count it saw inside)``."""
    lock = client.get_lock(name)
    if flavor.name == "sync":

        @client.synchronized(name, **options)
        def inside(value: Any) -> tuple[Any, int]:
            """Reports the hold count it runs under."""
            return value, lock.hold_count()

        return inside

    @client.synchronized(name, **options)
    async def inside_async(value: Any) -> tuple[Any, int]:
        """Reports the hold count it runs under."""
        return value, await lock.hold_count()

    return inside_async


# client.synchronized


def test_synchronized_holds_the_lock_around_each_call(
    flavor: Flavor, client: Any, lock_name: str
) -> None:
    inside = synchronized_hold_count(flavor, client, lock_name)
    assert inside.__name__ in ("inside", "inside_async")  # functools.wraps
    assert inside.__doc__ == "Reports the hold count it runs under."
    alice = flavor.owner("alice")
    assert alice(inside, "x") == ("x", 1)
    assert alice(inside, "y") == ("y", 1)
    assert alice(client.get_lock(lock_name).is_locked) is False  # released after each


def test_synchronized_waits_for_the_holder_by_default(
    flavor: Flavor, client: Any, lock_name: str
) -> None:
    inside = synchronized_hold_count(flavor, client, lock_name)
    lock = client.get_lock(lock_name)
    alice, bob = flavor.owner("alice"), flavor.owner("bob")
    alice(lock.lock)
    call = bob.start(inside, 1)
    time.sleep(0.3)
    assert not call.done()  # excluded while alice holds it
    alice(lock.unlock)
    assert call.result(timeout=10) == (1, 1)
    assert alice(lock.is_locked) is False


def test_synchronized_with_a_wait_time_raises_lock_timeout_without_calling(
    flavor: Flavor, client: Any, lock_name: str
) -> None:
    calls: list[int] = []
    if flavor.name == "sync":

        @client.synchronized(lock_name, wait_time=0.3)
        def work() -> None:
            calls.append(1)
    else:

        @client.synchronized(lock_name, wait_time=0.3)
        async def work() -> None:
            calls.append(1)

    lock = client.get_lock(lock_name)
    alice, bob = flavor.owner("alice"), flavor.owner("bob")
    alice(lock.lock)
    started = time.monotonic()
    with pytest.raises(LockTimeoutError) as raised:
        bob(work)
    assert time.monotonic() - started >= 0.3
    assert isinstance(raised.value, TimeoutError)
    assert isinstance(raised.value, RedissonError)
    assert raised.value.lock_name == lock_name
    assert raised.value.wait_time == 0.3
    assert lock_name in str(raised.value) and "0.3 s" in str(raised.value)
    assert calls == []
    alice(lock.unlock)
    bob(work)
    assert calls == [1]
    assert bob(lock.is_locked) is False


def test_synchronized_is_reentrant(flavor: Flavor, client: Any, lock_name: str) -> None:
    lock = client.get_lock(lock_name)
    if flavor.name == "sync":

        @client.synchronized(lock_name, wait_time=0.5)
        def nested(depth: int) -> int:
            return lock.hold_count() if depth == 0 else nested(depth - 1)
    else:

        @client.synchronized(lock_name, wait_time=0.5)
        async def nested(depth: int) -> int:
            return await lock.hold_count() if depth == 0 else await nested(depth - 1)

    alice = flavor.owner("alice")
    assert alice(nested, 2) == 3
    assert alice(lock.is_locked) is False


def test_synchronized_releases_when_the_function_raises(
    flavor: Flavor, client: Any, lock_name: str
) -> None:
    if flavor.name == "sync":

        @client.synchronized(lock_name)
        def fails() -> None:
            raise KeyError("boom")
    else:

        @client.synchronized(lock_name)
        async def fails() -> None:
            raise KeyError("boom")

    alice = flavor.owner("alice")
    with pytest.raises(KeyError):
        alice(fails)
    assert alice(client.get_lock(lock_name).is_locked) is False


def test_synchronized_with_a_lease_that_runs_out_raises_lock_not_owned(
    flavor: Flavor, client: Any, lock_name: str
) -> None:
    if flavor.name == "sync":

        @client.synchronized(lock_name, lease_time=0.2)
        def slow() -> str:
            time.sleep(0.5)
            return "done"
    else:

        @client.synchronized(lock_name, lease_time=0.2)
        async def slow() -> str:
            await asyncio.sleep(0.5)
            return "done"

    with pytest.raises(LockNotOwnedError, match="expired"):
        flavor.owner("alice")(slow)


def test_synchronized_checks_its_arguments_when_decorating(
    flavor: Flavor, client: Any, lock_name: str
) -> None:
    def plain() -> None:
        pass

    async def coroutine() -> None:
        pass

    def generator() -> Iterator[int]:
        yield 1

    wrong = coroutine if flavor.name == "sync" else plain
    with pytest.raises(ArgumentTypeError, match="client"):
        client.synchronized(lock_name)(wrong)
    with pytest.raises(ArgumentTypeError, match="generator"):
        client.synchronized(lock_name)(generator)
    right = plain if flavor.name == "sync" else coroutine
    with pytest.raises(ArgumentError, match="wait_time"):
        client.synchronized(lock_name, wait_time=-1)(right)
    with pytest.raises(ArgumentError, match="lease_time"):
        client.synchronized(lock_name, lease_time=0)(right)


def test_synchronized_calls_after_shutdown_raise_client_closed(
    flavor: Flavor, client: Any, lock_name: str
) -> None:
    inside = synchronized_hold_count(flavor, client, lock_name)
    flavor.run(client.shutdown())
    with pytest.raises(ClientClosedError):
        flavor.owner("alice")(inside, 1)


# lock.extend


def test_extend_moves_a_leased_holds_expiry_and_the_watchdog_follows(
    flavor: Flavor, make_client: Callable[..., Any], lock_name: str
) -> None:
    lost: list[LockLost] = []
    lock = make_client(on_lock_lost=lost.append).get_lock(lock_name)
    alice, bob = flavor.owner("alice"), flavor.owner("bob")
    alice(lock.lock, 0.5)
    alice(lock.lock, 0.5)  # reentrant: the count is kept
    alice(lock.extend, 5.0)
    assert 4.5 < alice(lock.remain_time_to_live) <= 5.0
    time.sleep(0.8)  # past the old lease's end
    assert bob(lock.try_lock) is False
    assert alice(lock.hold_count) == 2
    assert lost == []  # the watchdog judged the hold by its new end
    alice(lock.unlock)
    alice(lock.unlock)  # neither unlock says it was lost
    assert bob(lock.is_locked) is False


def test_extend_can_shorten_a_lease_and_its_end_is_reported(
    flavor: Flavor, make_client: Callable[..., Any], lock_name: str
) -> None:
    lost: list[LockLost] = []
    lock = make_client(on_lock_lost=lost.append).get_lock(lock_name)
    alice, bob = flavor.owner("alice"), flavor.owner("bob")
    alice(lock.lock, 30.0)
    alice(lock.extend, 0.3)
    started = time.monotonic()
    assert bob(lock.try_lock, 5.0) is True
    assert time.monotonic() - started < 2.0
    eventually(lambda: len(lost) == 1, timeout=3.0, what="the shortened lease reported")
    assert "0.3 s" in lost[0].reason
    bob(lock.unlock)
    with pytest.raises(LockNotOwnedError, match="lost"):
        alice(lock.unlock)


def test_extend_without_a_hold_raises_lock_not_owned(
    flavor: Flavor, client: Any, lock_name: str
) -> None:
    lock = client.get_lock(lock_name)
    alice, bob = flavor.owner("alice"), flavor.owner("bob")
    with pytest.raises(LockNotOwnedError, match="not locked by this owner"):
        alice(lock.extend, 1.0)
    assert alice(lock.is_locked) is False  # nothing was created
    alice(lock.lock, 2.0)
    with pytest.raises(LockNotOwnedError):
        bob(lock.extend, 60.0)  # another owner's hold is left as it is
    assert alice(lock.remain_time_to_live) <= 2.0
    alice(lock.unlock)


def test_extend_after_the_lease_ran_out_raises_lock_not_owned(
    flavor: Flavor, client: Any, lock_name: str
) -> None:
    lock = client.get_lock(lock_name)
    alice = flavor.owner("alice")
    alice(lock.lock, 0.2)
    time.sleep(0.4)
    with pytest.raises(LockNotOwnedError):
        alice(lock.extend, 5.0)
    assert alice(lock.is_locked) is False


def test_extend_refuses_a_watchdog_hold_and_bad_durations(
    flavor: Flavor, client: Any, lock_name: str
) -> None:
    lock = client.get_lock(lock_name)
    alice = flavor.owner("alice")
    alice(lock.lock)
    ttl = alice(lock.remain_time_to_live)
    with pytest.raises(ArgumentError, match="watchdog"):
        alice(lock.extend, 300.0)
    assert alice(lock.remain_time_to_live) <= ttl  # untouched
    alice(lock.unlock)
    alice(lock.lock, 5.0)
    for bad in (0.0005, 0, -1, float("inf"), float("nan")):
        with pytest.raises(ArgumentError):
            alice(lock.extend, bad)
    with pytest.raises(ArgumentTypeError):
        alice(lock.extend, "5")
    alice(lock.unlock)


# lock.owned_by


def test_owned_by_hands_a_hold_to_another_owner(
    flavor: Flavor, client: Any, lock_name: str
) -> None:
    lock = client.get_lock(lock_name)
    alice, bob, carol = flavor.owner("alice"), flavor.owner("bob"), flavor.owner("carol")
    alice(lock.lock)
    alice_id = alice(owner_id_of(flavor))
    assert bob(owner_id_of(flavor)) != alice_id
    as_alice = lock.owned_by(alice_id)
    assert as_alice.owner_id == alice_id and lock.owner_id is None
    assert bob(as_alice.is_held_by_current_thread) is True
    assert bob(lock.is_held_by_current_thread) is False
    assert bob(as_alice.hold_count) == 1
    assert carol(lock.try_lock) is False  # still excludes everyone else
    bob(as_alice.unlock)  # bob releases alice's hold
    assert alice(lock.is_held_by_current_thread) is False
    with pytest.raises(LockNotOwnedError):
        alice(lock.unlock)
    assert carol(lock.try_lock) is True
    carol(lock.unlock)


def test_owned_by_takes_and_extends_for_the_given_owner(
    flavor: Flavor, client: Any, lock_name: str
) -> None:
    lock = client.get_lock(lock_name)
    alice, bob = flavor.owner("alice"), flavor.owner("bob")
    alice_id = alice(owner_id_of(flavor))
    as_alice = lock.owned_by(alice_id)
    assert bob(as_alice.try_lock, 0, 2.0) is True  # taken by bob, for alice
    assert alice(lock.hold_count) == 1
    bob(as_alice.extend, 10.0)
    assert alice(lock.remain_time_to_live) > 9.0
    alice(lock.unlock)
    assert bob(lock.is_locked) is False


def test_owned_by_checks_the_owner_id_type(flavor: Flavor, client: Any, lock_name: str) -> None:
    lock = client.get_lock(lock_name)
    wrong: list[Any] = ["task-1", True, None, 1.5]
    for owner_id in wrong:
        with pytest.raises(ArgumentTypeError, match="owner id"):
            lock.owned_by(owner_id)
