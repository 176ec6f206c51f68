"""Replicated mode (``replicatedServersConfig``, managed Redis without cluster mode) on
real servers, sync and asyncio: the client finds the master by each node's ``ROLE``,
follows a managed-style failover (a replica promoted with ``REPLICAOF NO ONE``, the
others and the old master pointed at it) within one scan interval plus one timeout,
waits for the current master's replicas, and writes nowhere while two nodes claim
master.

The figures (how long the client took to follow) are printed: run with ``-s`` to see
them.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from redisson_py import Config
from redisson_py.core.keyspace import lock_channel
from redisson_py.errors import ConnectError
from redisson_py.testing import Node, Topology
from redisson_py.testing.owners import Flavor

SCAN = 1.0
"""The topology's scanInterval (Redisson's default, as the harness writes it)."""
TIMEOUT = 1.0
"""The clients' command timeout here: the failover budget is one scan plus one timeout."""


def _master_port(client: Any) -> int | None:
    masters = client.connection_manager.view.masters
    return masters[0].port if len(masters) == 1 else None


def _wait_for(what: str, condition: Callable[[], bool], budget: float) -> float:
    """Poll ``condition`` every 10 ms; the seconds it took to hold (fails past ``budget``,
    with some slack for a loaded machine before calling it a failure)."""
    start = time.monotonic()
    while not condition():
        elapsed = time.monotonic() - start
        assert elapsed < budget + 5.0, f"{what}: not after {elapsed:.2f} s"
        time.sleep(0.01)
    return time.monotonic() - start


def _config(topology: Topology, topology_config: Any, **settings: Any) -> Config:
    config: Config = topology_config(topology, **settings)
    config.server_config.timeout = TIMEOUT
    return config


def test_the_master_is_found_by_its_role(
    flavor: Flavor, topology_factory: Callable[..., Topology], topology_config: Any, lock_name: str
) -> None:
    topology = topology_factory("replicated")
    # The nodes listed in any order: the master is whichever says so, not the first.
    config = _config(topology, topology_config)
    section = config.server_config
    section.node_addresses = list(reversed(section.node_addresses))  # type: ignore[union-attr]
    client = flavor.create_client(config)
    master = topology.master()
    assert _master_port(client) == master.port
    view = client.connection_manager.view
    assert view.replicas_to_wait_for(view.masters[0]) == 2
    owner = flavor.owner("alice")
    assert owner(client.get_lock(lock_name).try_lock, 0.0, 30.0) is True
    # Granted on the master, confirmed by both replicas (WAIT), so on them too.
    for replica in topology.replicas_of(master):
        assert replica.client().exists(lock_name) == 1
    owner(client.get_lock(lock_name).unlock)


def test_a_managed_failover_is_followed_within_a_scan_and_a_timeout(
    flavor: Flavor, topology_factory: Callable[..., Topology], topology_config: Any, lock_name: str
) -> None:
    topology = topology_factory("replicated")
    client = flavor.create_client(_config(topology, topology_config))
    alice, bob = flavor.owner("alice"), flavor.owner("bob")
    held = client.get_lock(lock_name)
    assert alice(held.try_lock, 0.0, 60.0) is True
    old = topology.master()

    # No traffic: only the scan can find the new master. The view is watched from
    # before the promotion (the harness's failover also waits for the new links).
    changed: list[float] = []

    def watch() -> None:
        while not changed and time.monotonic() - start < SCAN + TIMEOUT + 10.0:
            if _master_port(client) not in (old.port, None):
                changed.append(time.monotonic())
            time.sleep(0.005)

    start = time.monotonic()
    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    new = topology.failover(old)
    watcher.join()
    assert changed, "the scan never found the new master"
    followed = changed[0] - start
    assert _master_port(client) == new.port
    print(f"\n[{flavor.name}] replicated failover followed by the scan in {followed:.3f} s")
    assert followed <= SCAN + TIMEOUT
    view = client.connection_manager.view
    # WAIT now counts the new master's replicas: the old master and the other replica.
    assert view.replicas_to_wait_for(view.masters[0]) == 2

    # The grant made before the failover was replicated (WAIT), so it survived it.
    assert bob(held.try_lock, 0.0, 30.0) is False
    alice(held.unlock)
    assert bob(held.try_lock, 0.0, 30.0) is True
    bob(held.unlock)
    assert new.client().exists(lock_name) == 0


def test_a_write_to_the_demoted_master_refreshes_at_once(
    flavor: Flavor, topology_factory: Callable[..., Topology], topology_config: Any, lock_name: str
) -> None:
    # A scan interval long enough that only the READONLY reply can explain a quick follow.
    topology = topology_factory("replicated")
    config = _config(topology, topology_config)
    config.server_config.scan_interval = 60.0  # type: ignore[union-attr]
    client = flavor.create_client(config)
    owner = flavor.owner("writer")
    lock = client.get_lock(lock_name)
    old = topology.master()
    new = topology.failover(old)
    start = time.monotonic()
    while True:
        try:
            if owner(lock.try_lock, 0.0, 30.0):
                break
        except Exception as error:  # READONLY from the demoted master, once
            assert "READONLY" in str(error), error
        assert time.monotonic() - start < 5.0, "the write never reached the new master"
        time.sleep(0.01)
    took = time.monotonic() - start
    print(f"\n[{flavor.name}] replicated failover followed after READONLY in {took:.3f} s")
    assert took < 2.0
    assert _master_port(client) == new.port
    owner(lock.unlock)


def _promote(node: Node) -> None:
    node.command("REPLICAOF", "NO", "ONE")


def test_two_masters_at_once_get_no_write(
    flavor: Flavor, topology_factory: Callable[..., Topology], topology_config: Any, lock_name: str
) -> None:
    topology = topology_factory("replicated")
    client = flavor.create_client(_config(topology, topology_config))
    owner = flavor.owner("alice")
    old = topology.master()
    rogue = topology.replicas_of(old)[0]
    _promote(rogue)  # half a managed failover: promoted, the old master not demoted
    try:
        _wait_for(
            "the view dropping its master",
            lambda: not client.connection_manager.view.masters,
            SCAN + TIMEOUT,
        )
        with pytest.raises(ConnectError) as raised:
            owner(client.get_lock(lock_name).try_lock, 0.0, 30.0)
        message = str(raised.value)
        assert "claim master" in message
        assert str(old.port) in message and str(rogue.port) in message
        # Written on neither.
        assert old.client().exists(lock_name) == 0
        assert rogue.client().exists(lock_name) == 0
    finally:
        rogue.command("REPLICAOF", old.host, old.port)
    topology.wait_ready()
    _wait_for(
        "the master back in the view", lambda: _master_port(client) == old.port, SCAN + TIMEOUT
    )
    assert owner(client.get_lock(lock_name).try_lock, 0.0, 30.0) is True
    owner(client.get_lock(lock_name).unlock)


def test_startup_refuses_two_masters_naming_both(
    flavor: Flavor, topology_factory: Callable[..., Topology], topology_config: Any
) -> None:
    topology = topology_factory("replicated")
    old = topology.master()
    rogue = topology.replicas_of(old)[0]
    _promote(rogue)
    with pytest.raises(ConnectError) as raised:
        flavor.create_client(_config(topology, topology_config))
    message = str(raised.value)
    assert "claim master" in message
    assert str(old.port) in message and str(rogue.port) in message


def test_a_node_down_at_startup_is_a_replica_to_probe(
    flavor: Flavor, topology_factory: Callable[..., Topology], topology_config: Any, lock_name: str
) -> None:
    topology = topology_factory("replicated")
    master = topology.master()
    down = topology.replicas_of(master)[0]
    down.kill()
    client = flavor.create_client(_config(topology, topology_config))
    view = client.connection_manager.view
    assert _master_port(client) == master.port
    assert len(view.replicas[view.masters[0]]) == 2
    assert view.replicas_to_wait_for(view.masters[0]) == 1
    owner = flavor.owner("alice")
    assert owner(client.get_lock(lock_name).try_lock, 0.0, 30.0) is True
    owner(client.get_lock(lock_name).unlock)


def test_a_subscription_moves_to_the_new_master(
    flavor: Flavor, topology_factory: Callable[..., Topology], topology_config: Any, lock_name: str
) -> None:
    topology = topology_factory("replicated")
    client = flavor.create_client(_config(topology, topology_config))
    manager = client.connection_manager
    channel = lock_channel(lock_name, by_slot=True)
    subscription = flavor.run(manager.subscribe(channel, 5.0))
    old = topology.master()
    new = topology.failover(old)
    _wait_for("the new master", lambda: _master_port(client) == new.port, SCAN + TIMEOUT)

    # The subscription from before the failover now listens on the new master.
    def heard() -> bool:
        receivers = new.client().execute_command(manager.publish_command, channel, "0")
        return bool(receivers) and bool(flavor.run(subscription.wait(0.5)))

    _wait_for("a message published on the new master", heard, SCAN + TIMEOUT)
    flavor.run(subscription.close())
