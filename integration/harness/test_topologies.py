"""Each topology on each backend: starts, has the roles its spec says, and survives the
loss of its master the way it should (a failover where there is one)."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest
import redis

from redisson_py.testing import Node, Topology, TopologyError
from redisson_py.testing.topologies.replies import parse_info

Factory = Callable[..., Topology]


def info(node: Node, section: str = "replication") -> dict[str, str]:
    return parse_info(str(node.command("INFO", section)))


def sentinel_master_port(sentinel: Node, name: str) -> int:
    host, port = sentinel.command("SENTINEL", "GET-MASTER-ADDR-BY-NAME", name)
    assert host == "127.0.0.1"
    return int(port)


def test_single(topology_factory: Factory, backend: str) -> None:
    topology = topology_factory("single", backend=backend)
    assert topology.backend == backend
    (node,) = topology.nodes
    assert node.name == "master-0" and node.kind == "redis"
    assert node.address == f"redis://127.0.0.1:{node.port}"
    assert info(node)["role"] == "master"
    assert topology.master() is node
    client = node.client()
    client.set("k", "v")
    assert client.get("k") == "v"
    assert topology.redisson_config() == {"singleServerConfig": {"address": node.address}}

    node.kill()
    assert not node.is_running()
    node.restart()
    assert node.role() == "master"
    assert node.client().ping()


def test_master_replica(topology_factory: Factory, backend: str) -> None:
    topology = topology_factory("master-replica", backend=backend)
    master = topology.master()
    assert master.name == "master-0"
    assert info(master)["connected_slaves"] == "2"
    replicas = topology.replicas_of(master)
    assert [r.name for r in replicas] == ["replica-0-1", "replica-0-2"]
    for replica in replicas:
        replication = info(replica)
        assert replication["role"] == "slave"
        assert replication["master_port"] == str(master.port)
        assert replication["master_link_status"] == "up"
    config = topology.redisson_config()["masterSlaveServersConfig"]
    assert config["masterAddress"] == master.address
    assert sorted(config["slaveAddresses"]) == sorted(r.address for r in replicas)

    # No automatic failover here: the harness promotes a replica on request.
    master.kill()
    new = topology.failover(master)
    assert new in replicas
    assert info(new)["role"] == "master"
    topology.wait_ready(30)
    others = [r for r in replicas if r is not new]
    assert topology.replicas_of(new) == others


def test_replicated(topology_factory: Factory, backend: str) -> None:
    topology = topology_factory("replicated", backend=backend)
    master = topology.master()
    replicas = topology.replicas_of(master)
    assert len(replicas) == 2
    # Every node listed, the master among them: the client finds it by its role.
    config = topology.redisson_config()["replicatedServersConfig"]
    assert config["nodeAddresses"] == [n.address for n in topology.data_nodes]
    assert config["scanInterval"] == 1000

    # A managed-style failover: a replica promoted, the others and the old master (still
    # running) pointed at it, as a managed service does it.
    new = topology.failover(master)
    assert new in replicas
    assert info(new)["role"] == "master"
    assert sorted(n.name for n in topology.replicas_of(new)) == sorted(
        n.name for n in topology.data_nodes if n is not new
    )
    assert info(master)["role"] == "slave"
    assert topology.redisson_config()["replicatedServersConfig"] == config  # unchanged


def test_sentinel_failover(topology_factory: Factory, backend: str) -> None:
    topology = topology_factory("sentinel", backend=backend)
    name = topology.master_name
    assert name == "mymaster"
    assert [s.name for s in topology.sentinels] == ["sentinel-0", "sentinel-1", "sentinel-2"]
    master = topology.master()
    assert master.name == "master-0"
    for sentinel in topology.sentinels:
        assert sentinel.role() == "sentinel"
        assert sentinel_master_port(sentinel, name) == master.port
    assert {r.name for r in topology.replicas()} == {"replica-0-1", "replica-0-2"}
    config = topology.redisson_config()["sentinelServersConfig"]
    assert config["masterName"] == "mymaster"
    assert config["sentinelAddresses"] == [s.address for s in topology.sentinels]

    master.kill()
    started = time.monotonic()
    new = topology.wait_for_new_master(master, timeout=30)
    elapsed = time.monotonic() - started
    assert new.name.startswith("replica-0-")
    # Promoted and announced: every sentinel names it, and it says it is the master.
    assert new.role() == "master"
    for sentinel in topology.sentinels:
        assert sentinel_master_port(sentinel, name) == new.port
    assert elapsed < 20
    topology.wait_ready(30)
    # On a loaded machine sentinel (down-after 1 s) may fail over once more before the
    # topology is ready again; the harness must name whichever replica it promoted.
    current = topology.master()
    assert current.name.startswith("replica-0-") and current.role() == "master"


def test_cluster_failover(topology_factory: Factory, backend: str) -> None:
    topology = topology_factory("cluster", backend=backend)
    assert len(topology.masters()) == 3
    assert len(topology.replicas()) == 3
    for node in topology.data_nodes:
        cluster = parse_info(str(node.command("CLUSTER", "INFO")))
        assert cluster["cluster_state"] == "ok"
        assert cluster["cluster_slots_assigned"] == "16384"
        assert cluster["cluster_known_nodes"] == "6"
    covered = sum(end - start + 1 for r in topology.slot_map() for start, end in [(r.start, r.end)])
    assert covered == 16384
    config = topology.redisson_config()["clusterServersConfig"]
    assert config["nodeAddresses"] == [n.address for n in topology.data_nodes]

    old = topology.master_for_slot(0)
    old_id = old.cluster_id
    old_slots = topology.slots_of(old)
    (replica,) = topology.replicas_of(old)
    old.kill()
    new = topology.wait_for_new_master(old, timeout=30)
    # A replica took its slots.
    assert new is replica
    assert topology.master_for_slot(0) is new
    assert topology.slots_of(new) == old_slots
    for node in topology.data_nodes:
        if node is not old:
            assert "cluster_state:ok" in str(node.command("CLUSTER", "INFO"))

    # Restarted on the same port and directory, the old master keeps its node id and
    # rejoins as a replica of the node that replaced it.
    old.restart()
    topology.wait_ready(30)
    assert old.command("CLUSTER", "MYID") == old_id
    assert old.role() == "slave"
    assert topology.replicas_of(new) == [old]


def test_redlock_has_five_independent_masters(topology_factory: Factory, backend: str) -> None:
    topology = topology_factory("redlock", backend=backend)
    masters = topology.data_nodes
    assert [m.name for m in masters] == [f"master-{i}" for i in range(5)]
    assert len({m.port for m in masters}) == 5
    for node in masters:
        replication = info(node)
        assert replication["role"] == "master"
        assert replication["connected_slaves"] == "0"
    masters[0].client().set("only-here", "1")
    assert [bool(m.client().exists("only-here")) for m in masters] == [True] + [False] * 4
    configs = topology.redisson_configs()
    assert [c["singleServerConfig"]["address"] for c in configs] == [m.address for m in masters]
    assert topology.redisson_yaml().count("---\n") == 5

    # Losing one master leaves the other four untouched.
    masters[2].kill()
    assert [m.ping() for m in masters] == [True, True, False, True, True]


def test_pause_and_resume(topology_factory: Factory, backend: str) -> None:
    topology = topology_factory("single", backend=backend)
    (node,) = topology.nodes
    client = node.client(socket_timeout=0.5, socket_connect_timeout=0.5)
    assert client.ping()

    node.pause()
    assert node.is_paused() and node.is_running()
    started = time.monotonic()
    try:
        client.ping()
        answered = True
    except (redis.TimeoutError, redis.ConnectionError):
        answered = False
    assert not answered, "a paused node answered"
    assert time.monotonic() - started < 5

    node.resume()
    assert not node.is_paused()
    deadline = time.monotonic() + 10
    while True:
        try:
            assert client.ping()
            break
        except (redis.TimeoutError, redis.ConnectionError):
            assert time.monotonic() < deadline, "the resumed node did not answer within 10 s"


def test_partitions_need_a_namespace_topology(topology_factory: Factory, backend: str) -> None:
    topology = topology_factory("single", backend=backend)
    assert topology.network_mode == "host"
    assert topology.state()["network"] == {"mode": "host"}
    for call in (lambda: topology.isolate("master-0"), lambda: topology.client_host("app")):
        with pytest.raises(TopologyError, match='network="namespace"'):
            call()
