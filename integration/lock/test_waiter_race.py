"""A release that lands while a waiter is between its try and its wait is not missed
(locks; the semaphores and the latch wait the same way).

Two paths, two races. A waiter of a client that listens on the lock's channel already
(another waiter, or one that left a moment ago: the channel stays subscribed for a
grace period) joins that subscription before its first try, then sleeps at once when
refused: a release after that try must wake it. A waiter of a client that does not
listen yet subscribes after its first try, then tries again: a release before its
subscription was confirmed (whose message it cannot see) must not leave it asleep
until its wait runs out.

Each race is made by wrapping, once, the call that the waiter's own path makes (its try,
or its subscription), so the release lands exactly there.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from redisson_py.testing import Topology, eventually
from redisson_py.testing.owners import Flavor

LEASE = 60.0


def _channel(lock_name: str) -> str:
    return f"redisson_lock__channel:{{{lock_name}}}"


def _release_after_first_try(
    flavor: Flavor, client: Any, release: Callable[[], Any], channel: str
) -> None:
    """Make ``client``'s next waiter meet the race of the early join: its first try has
    been refused, and before it does anything else ``release()`` (through another
    client) frees what it waits for, and the message has reached ``client``, for the
    waiter that joined the live subscription before that try."""
    manager = client.connection_manager
    real = manager.execute

    def joined_sub() -> Any:
        sub = manager.pubsub._table.get(channel)
        # Joined before its try (the early join), and nothing signalled yet.
        assert sub is not None and sub.waiters == 1 and sub.permits == 0
        return sub

    if flavor.name == "asyncio":

        async def execute_async(*args: Any, **kwargs: Any) -> Any:
            manager.execute = real
            result = await real(*args, **kwargs)
            sub = joined_sub()
            await release()  # publishes the message
            for _ in range(1000):  # 5 s at most
                if sub.permits:
                    break
                await asyncio.sleep(0.005)
            assert sub.permits == 1, "the message did not reach the waiter"
            return result

        manager.execute = execute_async
        return

    def execute(*args: Any, **kwargs: Any) -> Any:
        manager.execute = real
        result = real(*args, **kwargs)
        sub = joined_sub()
        release()
        eventually(lambda: sub.permits == 1, timeout=5, what="the message")
        return result

    manager.execute = execute


def _release_before_subscribing(flavor: Flavor, client: Any, holder: Any, channel: str) -> None:
    """Make ``client``'s next waiter meet the race of the usual path: its first try was
    refused and ``holder`` is released before its subscription is made (the client
    never sees that message)."""
    service = client.connection_manager.pubsub
    real = service.subscribe

    def not_listening() -> None:
        assert service._table.get(channel) is None and not service.listens(channel)

    if flavor.name == "asyncio":

        async def subscribe_async(*args: Any, **kwargs: Any) -> Any:
            service.subscribe = real
            not_listening()
            assert await holder.force_unlock()
            return await real(*args, **kwargs)

        service.subscribe = subscribe_async
        return

    def subscribe(*args: Any, **kwargs: Any) -> Any:
        service.subscribe = real
        not_listening()
        assert holder.force_unlock()
        return real(*args, **kwargs)

    service.subscribe = subscribe


def _two_clients(flavor: Flavor, config: Any) -> tuple[Any, Any, Any, Any]:
    """A holder's client and a waiter's, and their owners alice and bob."""
    holder_client, client = flavor.create_client(config), flavor.create_client(config)
    return holder_client, client, flavor.owner("alice"), flavor.owner("bob")


def test_a_release_after_an_early_joiners_try_wakes_it(
    flavor: Flavor, single_topology: Topology, topology_config: Any, lock_name: str
) -> None:
    holder_client, client, alice, bob = _two_clients(flavor, topology_config(single_topology))
    alice(holder_client.get_lock(lock_name).lock, LEASE)
    lock = client.get_lock(lock_name)
    assert bob(lock.try_lock, 0.2) is False  # subscribes the channel, then leaves it
    channel = _channel(lock_name)
    assert client.connection_manager.pubsub.listens(channel)  # idle, within its grace
    _release_after_first_try(
        flavor, client, holder_client.get_lock(lock_name).force_unlock, channel
    )
    started = time.monotonic()
    assert bob(lock.try_lock, 10.0) is True
    assert time.monotonic() - started < 2.0  # woken, not asleep until the wait ran out
    assert client.connection_manager.execute.__name__ == "execute"  # the race was met
    bob(lock.unlock)


def test_a_release_before_a_waiter_subscribes_is_not_missed(
    flavor: Flavor, single_topology: Topology, topology_config: Any, lock_name: str
) -> None:
    holder_client, client, alice, bob = _two_clients(flavor, topology_config(single_topology))
    alice(holder_client.get_lock(lock_name).lock, LEASE)
    lock = client.get_lock(lock_name)
    _release_before_subscribing(
        flavor, client, holder_client.get_lock(lock_name), _channel(lock_name)
    )
    started = time.monotonic()
    assert bob(lock.try_lock, 10.0) is True  # it tries again after subscribing
    assert time.monotonic() - started < 2.0
    assert client.connection_manager.pubsub.subscribe.__name__ == "subscribe"  # met
    bob(lock.unlock)


def test_a_release_after_an_early_joining_semaphore_waiters_try_wakes_it(
    flavor: Flavor, single_topology: Topology, topology_config: Any, lock_name: str
) -> None:
    holder_client, client, alice, bob = _two_clients(flavor, topology_config(single_topology))
    held = holder_client.get_semaphore(lock_name)
    assert alice(held.try_set_permits, 1) is True
    assert alice(held.try_acquire, 1, 0.0) is True
    semaphore = client.get_semaphore(lock_name)
    assert bob(semaphore.try_acquire, 1, 0.2) is False  # subscribes, then leaves
    channel = f"redisson_sc:{{{lock_name}}}"
    assert client.connection_manager.pubsub.listens(channel)
    _release_after_first_try(flavor, client, held.release, channel)
    started = time.monotonic()
    assert bob(semaphore.try_acquire, 1, 10.0) is True
    assert time.monotonic() - started < 2.0  # woken, not asleep until a recheck
    assert client.connection_manager.execute.__name__ == "execute"  # the race was met
