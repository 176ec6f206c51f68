"""A release that lands between a waiter's first try and its joining the channel's
subscription is not missed.

The channel is subscribed but nobody of the client waits on it (a waiter left a moment
ago; it stays subscribed for a grace period), so the release's message wakes nobody and
its wake-up is dropped when the next waiter joins. That waiter must still take the lock
at once, not sleep until its wait runs out: it tries again right after subscribing, as
Redisson's waiters do. A change that saves that try (it costs a round trip per waiter
under contention) must keep this test green.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from redisson_py.testing import Topology, eventually
from redisson_py.testing.owners import Flavor

LEASE = 60.0


def _release_before_joining(flavor: Flavor, client: Any, holder: Any, channel: str) -> None:
    """Make the next waiter of ``client`` meet the race: after its first try failed and
    before it joins the channel's subscription, ``holder`` (another client's lock) is
    released and ``client``'s pub/sub reader has taken the unlock message. Done by
    wrapping the client's pub/sub ``subscribe`` once (the waiter's own path)."""
    service = client.connection_manager.pubsub
    real = service.subscribe

    def idle_sub() -> Any:
        sub = service._table.get(channel)
        assert sub is not None and sub.waiters == 0 and sub.permits == 0
        return sub

    if flavor.name == "asyncio":

        async def subscribe_async(*args: Any, **kwargs: Any) -> Any:
            service.subscribe = real
            sub = idle_sub()
            assert await holder.force_unlock()  # publishes the unlock message
            for _ in range(1000):  # 5 s at most
                if sub.permits:
                    break
                await asyncio.sleep(0.005)
            assert sub.permits == 1, "the unlock message did not reach the client"
            return await real(*args, **kwargs)

        service.subscribe = subscribe_async
        return

    def subscribe(*args: Any, **kwargs: Any) -> Any:
        service.subscribe = real
        sub = idle_sub()
        assert holder.force_unlock()
        eventually(lambda: sub.permits == 1, timeout=5, what="the unlock message")
        return real(*args, **kwargs)

    service.subscribe = subscribe


def test_a_release_between_the_first_try_and_joining_is_not_missed(
    flavor: Flavor, single_topology: Topology, topology_config: Any, lock_name: str
) -> None:
    config = topology_config(single_topology)
    holder_client, client = flavor.create_client(config), flavor.create_client(config)
    held = holder_client.get_lock(lock_name)
    lock = client.get_lock(lock_name)
    alice, bob = flavor.owner("alice"), flavor.owner("bob")
    alice(held.lock, LEASE)
    assert bob(lock.try_lock, 0.2) is False  # subscribes the channel, then leaves it
    channel = f"redisson_lock__channel:{{{lock_name}}}"
    _release_before_joining(flavor, client, holder_client.get_lock(lock_name), channel)
    started = time.monotonic()
    assert bob(lock.try_lock, 10.0) is True
    assert time.monotonic() - started < 2.0  # not asleep until the wait ran out
    bob(lock.unlock)
