"""Many waiters in one client: one pub/sub connection per node, whatever their number.

Every waiter of a client shares its client's subscription to a channel, and every
channel of a node shares one pub/sub connection. These tests start more waiters at once
than a connection pool holds (64 by default), on more names than that, so their first
attempts and first subscribes all happen together: the client must still open one pub/sub
connection per node (concurrent first subscribes in the asyncio shell used to open one
each, and the waiters whose SUBSCRIBE went out on an orphaned connection slept until the
lock's lease ran out), and callers waiting for a pooled connection must get the ones
given back (they used to wait for the pool's timeout while idle connections piled up).
Connections are counted on the servers (``CLIENT LIST``, by client name).
"""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

import pytest

from redisson_py import Config
from redisson_py.testing import Topology, eventually
from redisson_py.testing.owners import Flavor
from redisson_py.testing.topologies.replies import is_pubsub_connection

LEASE = 120.0
"""The holder's lease: far beyond every bound below, so a waiter that misses its wake-up
(and would sleep until the lease ends) fails the test."""

SUBSCRIBED_WITHIN = 20.0
WOKEN_WITHIN = 30.0


@pytest.fixture(params=["single", "cluster"])
def topology(request: pytest.FixtureRequest) -> Topology:
    fixture: Topology = request.getfixturevalue(f"{request.param}_topology")
    return fixture


def _named(topology: Topology, topology_config: Any, name: str) -> Config:
    config: Config = topology_config(topology)
    config.server_config.client_name = name
    # A caller left waiting on the pool would wait this long: far past the bounds here.
    config.server_config.timeout = 60.0
    return config


def _waiters(flavor: Flavor, client: Any, names: list[str], count: int) -> Callable[[], Any]:
    """A call that runs ``count`` waiters (tasks, or threads), waiter ``i`` taking and
    releasing ``names[i % len(names)]``, all started at once."""
    if flavor.name == "asyncio":

        async def tasks() -> None:
            async def one(index: int) -> None:
                lock = client.get_lock(names[index % len(names)])
                await lock.lock()
                await lock.unlock()

            await asyncio.gather(*(one(i) for i in range(count)))

        return tasks

    def threads() -> None:
        errors: list[BaseException] = []

        def one(index: int) -> None:
            lock = client.get_lock(names[index % len(names)])
            try:
                lock.lock()
                lock.unlock()
            except BaseException as error:
                errors.append(error)

        started = [threading.Thread(target=one, args=(i,)) for i in range(count)]
        for thread in started:
            thread.start()
        for thread in started:
            thread.join()
        if errors:
            raise errors[0]

    return threads


def _waiting(client: Any) -> int:
    """How many waiters the client's subscriptions count now."""
    return sum(sub.waiters for sub in client.connection_manager.pubsub._table.all())


def _subscribed(topology: Topology, name: str) -> tuple[dict[int, int], dict[int, int]]:
    """Per node (by port): the pub/sub connections named ``name``, and the channels
    they subscribe."""
    pubsub: dict[int, int] = {}
    channels: dict[int, int] = {}
    for node in topology.data_nodes:
        mine = [e for e in node.connections(name) if is_pubsub_connection(e)]
        pubsub[node.port] = len(mine)
        channels[node.port] = sum(int(e.get("sub", 0)) + int(e.get("ssub", 0)) for e in mine)
    return pubsub, channels


@pytest.mark.parametrize(("count", "names"), [(300, 100)])
def test_many_waiters_share_one_pubsub_connection_per_node(
    topology: Topology, topology_config: Any, flavor: Flavor, count: int, names: int
) -> None:
    tag = uuid.uuid4().hex[:8]
    name = f"waiters-{tag}"
    holder = flavor.create_client(_named(topology, topology_config, f"holder-{tag}"))
    client = flavor.create_client(_named(topology, topology_config, name))
    lock_names = [f"test:waiters:{tag}:{i}" for i in range(names)]
    owner = flavor.owner("holder")
    for lock_name in lock_names:
        owner(holder.get_lock(lock_name).lock, LEASE)

    done = flavor.owner("waiters").start(_waiters(flavor, client, lock_names, count))
    eventually(
        lambda: _waiting(client) == count and sum(_subscribed(topology, name)[1].values()) == names,
        timeout=SUBSCRIBED_WITHIN,
        what=f"{count} waiters on {names} subscribed channels",
    )
    pubsub, channels = _subscribed(topology, name)
    assert all(count <= 1 for count in pubsub.values()), pubsub
    assert all(pubsub[port] == 1 for port, subscribed in channels.items() if subscribed), pubsub

    for lock_name in lock_names:
        owner(holder.get_lock(lock_name).unlock)
    done.result(timeout=WOKEN_WITHIN)


def test_waiters_that_come_back_while_idle_channels_are_swept_are_woken(
    topology: Topology, topology_config: Any, flavor: Flavor
) -> None:
    """A channel left without waiters is unsubscribed after a grace period, by a sweep
    that goes through the idle channels one by one. Waiters that subscribe the same
    channels again while a sweep is under way must end up subscribed at the node (in
    the asyncio shell the sweep's stale UNSUBSCRIBE used to undo the new SUBSCRIBE, and
    its waiter waited for a confirmation that never came, then polled)."""
    tag = uuid.uuid4().hex[:8]
    name = f"waiters-{tag}"
    names = 300
    holder = flavor.create_client(_named(topology, topology_config, f"holder-{tag}"))
    client = flavor.create_client(_named(topology, topology_config, name))
    lock_names = [f"test:waiters:{tag}:{i}" for i in range(names)]
    owner = flavor.owner("holder")
    # Rounds at several offsets from the previous round's end, so that some round
    # subscribes while the sweep of the previous round's channels is running.
    for delay in (0.0, 0.3, 0.6, 0.9, 1.2):
        time.sleep(delay)
        for lock_name in lock_names:
            owner(holder.get_lock(lock_name).lock, LEASE)
        done = flavor.owner("waiters").start(_waiters(flavor, client, lock_names, names))
        eventually(
            lambda: (
                _waiting(client) == names and sum(_subscribed(topology, name)[1].values()) == names
            ),
            timeout=5.0,
            what=f"{names} waiters on {names} channels subscribed at their nodes",
        )
        for lock_name in lock_names:
            owner(holder.get_lock(lock_name).unlock)
        done.result(timeout=WOKEN_WITHIN)
