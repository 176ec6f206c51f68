"""Managers follow a failover: the same client writes again on the new master, and a
subscription made before the failover receives a message published after it."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from redisson_py.core.keyspace import lock_channel
from redisson_py.core.routing.naming import key_slot
from redisson_py.testing import Node, Topology
from redisson_py.testing.owners import Flavor


def _until_writable(flavor: Flavor, lock: Any, deadline: float) -> float:
    """Try the lock until it is granted; return when it was (monotonic)."""
    owner = flavor.owner("writer")
    while True:
        try:
            if owner(lock.try_lock, 0.0, 30.0):
                owner(lock.unlock)
                return time.monotonic()
        except Exception as error:  # refused, timed out, no master yet: keep trying
            last = error
        if time.monotonic() > deadline:
            raise AssertionError(f"no write succeeded before the deadline; last error: {last!r}")
        time.sleep(0.05)


def _master_of(topology: Topology, key: str) -> Node:
    if topology.kind == "cluster":
        return topology.master_for_slot(key_slot(key))
    return topology.master()


def _failover_keeps_the_client_working(
    flavor: Flavor, topology: Topology, topology_config: Any, lock_name: str, budget: float
) -> None:
    client = flavor.create_client(topology_config(topology, check_lock_synced_slaves=False))
    manager = client.connection_manager
    lock = client.get_lock(lock_name)
    channel = lock_channel(lock_name, by_slot=True)
    _until_writable(flavor, lock, time.monotonic() + 5)
    subscription = flavor.run(manager.subscribe(channel, 5.0))

    old = _master_of(topology, lock_name)
    old.kill()
    killed = time.monotonic()
    recovered = _until_writable(flavor, lock, killed + budget + 10)
    assert recovered - killed <= budget, f"writes came back after {recovered - killed:.1f} s"

    new = topology.wait_for_new_master(old, timeout=30)
    assert _master_of(topology, lock_name).port == new.port

    # The subscription from before the failover now listens on the new master.
    def published() -> bool:
        receivers = new.client().execute_command(manager.publish_command, channel, "0")
        return bool(receivers) and bool(flavor.run(subscription.wait(0.5)))

    deadline = time.monotonic() + 10
    while not published():
        assert time.monotonic() < deadline, "the old subscription never heard the new master"
    flavor.run(subscription.close())


def test_sentinel_failover(
    flavor: Flavor, topology_factory: Callable[..., Topology], topology_config: Any, lock_name: str
) -> None:
    topology = topology_factory("sentinel")
    # down-after 1 s + failover timeout 2 s + 2 s, as the issue sets it
    _failover_keeps_the_client_working(flavor, topology, topology_config, lock_name, budget=5.0)


def test_cluster_failover(
    flavor: Flavor, topology_factory: Callable[..., Topology], topology_config: Any, lock_name: str
) -> None:
    topology = topology_factory("cluster")
    # node timeout + replica election + the client's refresh
    _failover_keeps_the_client_working(flavor, topology, topology_config, lock_name, budget=8.0)
