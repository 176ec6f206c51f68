"""Many owners of one client at once: more calls than a node's pool holds, and many
channels subscribed at the same moment (sync and asyncio, single and cluster)."""

from __future__ import annotations

import time
from typing import Any

import pytest

from redisson_py.testing import Topology
from redisson_py.testing.owners import Flavor


@pytest.fixture(params=["single", "cluster"])
def topology(request: pytest.FixtureRequest) -> Topology:
    fixture: Topology = request.getfixturevalue(f"{request.param}_topology")
    return fixture


def _cycles(flavor: Flavor, lock: Any, count: int) -> Any:
    """A call for an owner: ``count`` lock/unlock cycles of ``lock``."""
    if flavor.name == "sync":

        def run() -> None:
            for _ in range(count):
                lock.lock()
                lock.unlock()

        return run

    async def arun() -> None:
        for _ in range(count):
            await lock.lock()
            await lock.unlock()

    return arun


def test_calls_beyond_the_pool_size_wait_only_for_a_connection_given_back(
    flavor: Flavor, topology: Topology, topology_config: Any, lock_name: str
) -> None:
    # Two connections per node for eight owners: six calls at a time wait for the pool.
    # Each must get the next connection a call gives back, not wait out the pool's
    # timeout (the command timeout, 3 s) while the connections sit unused elsewhere.
    config = topology_config(topology)
    section = config.server_config
    for prefix in ("connection", "master_connection"):
        if hasattr(section, f"{prefix}_pool_size"):
            setattr(section, f"{prefix}_minimum_idle_size", 1)
            setattr(section, f"{prefix}_pool_size", 2)
    client = flavor.create_client(config)
    owners = [flavor.owner(f"owner-{i}") for i in range(8)]
    locks = [client.get_lock(f"{lock_name}:{i}") for i in range(8)]
    started = time.monotonic()
    futures = [
        owner.start(_cycles(flavor, lock, 25)) for owner, lock in zip(owners, locks, strict=True)
    ]
    for future in futures:
        future.result(timeout=60)
    # 200 cycles of two round trips each; a single wait for the pool's timeout is 3 s.
    assert time.monotonic() - started < 2.5


def test_waiters_subscribing_at_once_are_each_woken_by_their_release(
    flavor: Flavor, topology: Topology, topology_config: Any, lock_name: str
) -> None:
    # Ten waiters on ten locks of a fresh client subscribe their channels at the same
    # moment (the first subscriptions open the pub/sub connections). Every one must be
    # confirmed, so that each release wakes its waiter at once rather than after the
    # subscription timeout.
    client = flavor.create_client(topology_config(topology))
    holder = flavor.owner("holder")
    names = [f"{lock_name}:{i}" for i in range(10)]
    held = [client.get_lock(name) for name in names]
    for lock in held:
        holder(lock.lock)
    waiters = [flavor.owner(f"waiter-{i}") for i in range(10)]
    waiting = [client.get_lock(name) for name in names]
    futures = [
        waiter.start(lock.try_lock, 30.0) for waiter, lock in zip(waiters, waiting, strict=True)
    ]
    time.sleep(1.0)  # every waiter subscribed and asleep
    assert not any(future.done() for future in futures)
    released = time.monotonic()
    for lock in held:
        holder(lock.unlock)
    assert all(future.result(timeout=60) is True for future in futures)
    # Woken by the releases, not by the subscription timeout (7.5 s) or a TTL.
    assert time.monotonic() - released < 3.0
    for waiter, lock in zip(waiters, waiting, strict=True):
        waiter(lock.unlock)
