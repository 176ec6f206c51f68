"""How often a waiter tries the lock, counted on the server, and that the try it saves
is never one it needed.

A waiter tries again right after subscribing (a release may have come before its
subscription), unless its client's subscription to the channel was confirmed before its
first try and nothing has happened to it since: then a release after that try is
announced to it anyway, and a second try would only cost a round trip (a quarter of the
scripts of a contended acquisition). A message, a wake-all, a new node or a new
subscription in between means the second try is made, as Redisson's waiters make it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from redisson_py.testing import Topology, eventually
from redisson_py.testing.owners import Flavor

LEASE = 60.0
"""The holder's lease: no watchdog renewal runs while the scripts are counted."""


def _scripts_run(topology: Topology) -> Callable[[], int]:
    """How many scripts (EVALSHA) the single server has run since the call."""
    node = topology.master()

    def calls() -> int:
        stats = node.info("commandstats").get("cmdstat_evalsha", "calls=0")
        return int(stats.split(",")[0].removeprefix("calls="))

    node.command("CONFIG", "RESETSTAT")
    return calls


def test_a_waiter_joining_a_quiet_subscription_tries_once_before_it_sleeps(
    flavor: Flavor, single_topology: Topology, topology_config: Any, lock_name: str
) -> None:
    client = flavor.create_client(topology_config(single_topology))
    lock, other = client.get_lock(lock_name), client.get_lock(f"{lock_name}:other")
    alice, bob, carol = flavor.owner("alice"), flavor.owner("bob"), flavor.owner("carol")
    alice(lock.lock, LEASE)
    alice(other.lock, LEASE)
    calls = _scripts_run(single_topology)
    waiting = bob.start(lock.lock)  # the client's first waiter: it subscribes the channel
    eventually(lambda: calls() == 2, timeout=10, what="bob's try, subscribe, try again")
    calls = _scripts_run(single_topology)
    # Carol joins bob's confirmed, quiet subscription: a try, then she sleeps until her
    # deadline and tries at it; no try in between.
    assert carol(lock.try_lock, 0.5) is False
    assert calls() == 2
    # On a channel nobody of this client listens to, the waiter tries after subscribing.
    calls = _scripts_run(single_topology)
    assert carol(other.try_lock, 0.5) is False
    assert calls() == 3
    alice(lock.unlock)
    waiting.result(timeout=10)  # bob is woken by the release at once
    bob(lock.unlock)
    alice(other.unlock)


def _release_before_joining(flavor: Flavor, client: Any, holder: Any, channel: str) -> None:
    """Make the next waiter of ``client`` meet the race the second try is for: after its
    first try failed and before it joins the channel's subscription, ``holder`` (another
    client's lock) is released, and ``client``'s pub/sub reader has taken the unlock
    message. Done by wrapping the client's pub/sub ``subscribe`` once."""
    service = client.connection_manager.pubsub
    real = service.subscribe

    def before() -> float:
        sub = service._table.get(channel)
        assert sub is not None and sub.waiters == 0  # subscribed, idle: nobody to wake
        return float(sub.stirred)

    if flavor.name == "asyncio":

        async def subscribe_async(*args: Any, **kwargs: Any) -> Any:
            service.subscribe = real
            stirred = before()
            assert await holder.force_unlock()  # publishes the unlock message
            for _ in range(1000):  # 5 s at most
                if service._table.get(channel).stirred != stirred:
                    break
                await asyncio.sleep(0.005)
            assert service._table.get(channel).stirred != stirred, "no unlock message came"
            return await real(*args, **kwargs)

        service.subscribe = subscribe_async
        return

    def subscribe(*args: Any, **kwargs: Any) -> Any:
        service.subscribe = real
        stirred = before()
        assert holder.force_unlock()
        eventually(
            lambda: service._table.get(channel).stirred != stirred,
            timeout=5,
            what="the unlock message reaching the waiter's client",
        )
        return real(*args, **kwargs)

    service.subscribe = subscribe


def test_a_release_between_the_first_try_and_joining_is_not_missed(
    flavor: Flavor, single_topology: Topology, topology_config: Any, lock_name: str
) -> None:
    # The channel is subscribed and quiet, but nobody of this client waits on it (a
    # waiter left a moment ago; it stays subscribed for a grace period). A release right
    # after the next waiter's first try wakes nobody: the waiter must see that its
    # subscription was stirred after that try, and try again rather than sleep on.
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
