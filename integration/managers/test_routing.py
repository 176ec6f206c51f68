"""Every manager routes a lock to the master that owns its slot, and places the lock's
channel where a message published for it arrives (sync and asyncio)."""

from __future__ import annotations

from typing import Any

import pytest

from redisson_py.core.keyspace import lock_channel
from redisson_py.core.routing.naming import key_slot
from redisson_py.testing import Topology, eventually
from redisson_py.testing.owners import Flavor


@pytest.fixture(params=["single", "master_replica", "replicated", "sentinel", "cluster"])
def topology(request: pytest.FixtureRequest) -> Topology:
    fixture: Topology = request.getfixturevalue(f"{request.param}_topology")
    return fixture


def test_a_thousand_locks_land_on_the_masters_that_own_their_slots(
    flavor: Flavor, topology: Topology, topology_config: Any, lock_name: str
) -> None:
    client = flavor.create_client(topology_config(topology))
    owner = flavor.owner("owner")
    names = [f"{lock_name}:{i}" for i in range(1000)]
    locks = [client.get_lock(name) for name in names]
    for lock in locks:
        assert owner(lock.try_lock, 0.0, 30.0) is True
    masters = topology.masters()
    by_node: dict[str, list[str]] = {}
    for name in names:
        cluster = topology.kind == "cluster"
        node = topology.master_for_slot(key_slot(name)) if cluster else topology.master()
        by_node.setdefault(node.name, []).append(name)
    if topology.kind == "cluster":
        assert len(by_node) == len(masters) == 3  # spread over every master
    for node_name, on_node in by_node.items():
        pipe = topology.node(node_name).client().pipeline(transaction=False)
        for name in on_node:
            pipe.exists(name)
        assert all(pipe.execute()), f"a lock is missing on {node_name}"
    for lock in locks:
        owner(lock.unlock)


def test_a_message_on_a_lock_channel_reaches_the_managers_subscriber(
    flavor: Flavor, topology: Topology, topology_config: Any, lock_name: str
) -> None:
    client = flavor.create_client(topology_config(topology))
    manager = client.connection_manager
    channel = lock_channel(lock_name, by_slot=True)
    subscription = flavor.run(manager.subscribe(channel, 5.0))
    assert flavor.run(subscription.wait(0.2)) is False  # nothing published yet
    # Publish straight on the node that serves the channel, as an unlock script would.
    cluster = topology.kind == "cluster"
    node = topology.master_for_slot(key_slot(channel)) if cluster else topology.master()
    assert node.client().execute_command(manager.publish_command, channel, "0") == 1
    assert flavor.run(subscription.wait(5.0)) is True
    flavor.run(subscription.close())
    eventually(lambda: len(manager.pubsub) == 0, timeout=5, what="the idle channel dropped")


def test_reads_follow_the_read_mode(
    flavor: Flavor, master_replica_topology: Topology, topology_config: Any
) -> None:
    config = topology_config(master_replica_topology)
    client = flavor.create_client(config)
    manager = client.connection_manager
    replicas = {n.port for n in master_replica_topology.replicas()}
    # The default read mode (SLAVE) reads from the replicas, in turn.
    ports = {manager.read_client("k").connection_pool.connection_kwargs["port"] for _ in range(4)}
    assert ports == replicas
    assert manager.master_client("k").connection_pool.connection_kwargs["port"] == (
        master_replica_topology.master().port
    )
