"""The waiters of one client take turns: each release wakes the one asleep longest, and a
task (or thread) that releases and asks again waits behind them instead of taking the
lock straight back. And letting them go first never leaves a waiter asleep beside a
free lock for longer than `QUEUE_PAUSE`."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

from redisson_py.core.flows.calls import QUEUE_PAUSE
from redisson_py.testing import Topology, eventually
from redisson_py.testing.owners import Flavor

OWNERS = 4
TOTAL = 400


def _cycle_sync(client: Any, name: str) -> list[int]:
    counts = [0] * OWNERS
    done = threading.Event()

    def owner(index: int) -> None:
        lock = client.get_lock(name)
        while not done.is_set():
            lock.lock()
            try:
                counts[index] += 1
                if sum(counts) >= TOTAL:
                    done.set()
            finally:
                lock.unlock()

    threads = [threading.Thread(target=owner, args=(i,)) for i in range(OWNERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return counts


def _cycle_async(flavor: Flavor, client: Any, name: str) -> list[int]:
    counts = [0] * OWNERS

    async def run() -> None:
        lock = client.get_lock(name)

        async def owner(index: int) -> None:
            while sum(counts) < TOTAL:
                await lock.lock()
                try:
                    counts[index] += 1
                finally:
                    await lock.unlock()

        await asyncio.wait_for(asyncio.gather(*(owner(i) for i in range(OWNERS))), 60)

    flavor.run(run())
    return counts


def test_a_clients_waiters_take_turns(
    flavor: Flavor, single_topology: Topology, topology_config: Any, lock_name: str
) -> None:
    client = flavor.create_client(topology_config(single_topology))
    if flavor.name == "sync":
        counts = _cycle_sync(client, lock_name)
    else:
        counts = _cycle_async(flavor, client, lock_name)
    # Taken straight back by whoever released it, one owner would get nearly all.
    assert sum(counts) >= TOTAL
    assert min(counts) >= TOTAL / OWNERS / 2, counts


def test_a_waiter_behind_sleepers_takes_a_lock_freed_without_a_message(
    flavor: Flavor, single_topology: Topology, topology_config: Any, lock_name: str
) -> None:
    config = topology_config(single_topology)
    holder_client, client = flavor.create_client(config), flavor.create_client(config)
    alice, bob, carol = flavor.owner("alice"), flavor.owner("bob"), flavor.owner("carol")
    alice(holder_client.get_lock(lock_name).lock, 60.0)
    lock = client.get_lock(lock_name)
    sleeping = bob.start(lock.lock)  # refused: asleep for the holder's TTL (60 s)
    channel = f"redisson_lock__channel:{{{lock_name}}}"
    service = client.connection_manager.pubsub
    eventually(
        lambda: (sub := service._table.get(channel)) is not None and len(sub.sleepers) == 1,
        timeout=5,
        what="bob asleep on the lock",
    )
    # The key goes without an unlock message (as when a lease runs out): nobody is woken.
    assert single_topology.data_nodes[0].client().delete(lock_name) == 1
    started = time.monotonic()
    assert carol(lock.try_lock, 10.0) is True  # behind bob, but not for longer than the pause
    assert time.monotonic() - started < QUEUE_PAUSE + 1.0
    carol(lock.unlock)  # its release wakes bob, asleep longest
    sleeping.result(timeout=5)
    bob(lock.unlock)
