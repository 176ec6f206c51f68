"""Network partitions (``network="namespace"``, process backend): both sides stay alive,
packets between them are dropped, and the harness still sees every node.

Skipped, with the reason, where partitions cannot run (not root, no iptables, Redis
older than 7.0). Timings the sentinel and cluster tests measure are printed (``-s``).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from redisson_py import Config, Redisson
from redisson_py.testing import (
    Node,
    Topology,
    TopologyError,
    start_topology,
    sweep_leftovers,
    wait_until,
)
from redisson_py.testing.network.namespace import (
    NAMESPACE_DIR,
    namespace_exists,
    namespace_inode,
    thread_namespace_inode,
)
from redisson_py.testing.topologies.replies import parse_info, parse_replica_entries
from redisson_py.testing.topologies.waiting import NotYet

pytestmark = pytest.mark.usefixtures("partitions_supported")

Factory = Callable[..., Topology]

HERE = Path(__file__).resolve().parent
SIDE_CLIENT = HERE / "side_client.py"


def side_client(node: Node) -> redis.Redis:
    """A plain redis-py client of ``node`` with 1 s timeouts and no retries (redis-py's
    default retries a timeout 10 times, with backoff): made inside ``network.joined``, it
    is on the joined host's side."""
    return redis.Redis(
        host=node.host,
        port=node.port,
        decode_responses=True,
        socket_timeout=1.0,
        socket_connect_timeout=1.0,
        retry=Retry(NoBackoff(), 0),
    )


def client_addresses(node: Node) -> dict[str, str]:
    """The named clients of ``node`` -> the address (``ip``) each connects from."""
    out = {}
    for line in str(node.command("CLIENT", "LIST")).splitlines():
        fields = dict(item.split("=", 1) for item in line.split(" ") if "=" in item)
        if fields.get("name"):
            out[fields["name"]] = fields["addr"].rsplit(":", 1)[0]
    return out


def our_namespaces() -> set[str]:
    try:
        return {p.name for p in NAMESPACE_DIR.iterdir() if p.name.startswith("rpy-")}
    except OSError:
        return set()


def processes_in(inode: int) -> list[int]:
    """Live processes whose network namespace is ``inode``."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                if os.stat(entry / "ns" / "net").st_ino == inode:
                    state = (entry / "stat").read_text().rpartition(")")[2].split()[0]
                    if state != "Z":
                        found.append(int(entry.name))
    return found


def host_iptables() -> str:
    return subprocess.run(
        ["iptables", "-S"], capture_output=True, text=True, check=True, timeout=30
    ).stdout


# -- cutting a client off ------------------------------------------------------------------


def test_a_cut_client_times_out_and_reaches_the_node_again_after_heal(
    topology_factory: Factory,
) -> None:
    topology = topology_factory("single", network="namespace")
    (node,) = topology.nodes
    assert node.host == "127.0.0.2"
    assert node.address == f"redis://127.0.0.2:{node.port}"
    assert topology.redisson_config() == {"singleServerConfig": {"address": node.address}}
    app = topology.client_host("app")
    assert app.address == "127.0.0.3"
    assert topology.client_host("app") is app

    with topology.network.joined(app):
        connected = side_client(node)
        connected.client_setname("app")
        assert client_addresses(node)["app"] == "127.0.0.3"

        topology.partition(app, node)
        assert topology.cuts() == [("app", "master-0"), ("master-0", "app")]
        started = time.monotonic()
        with pytest.raises(redis.TimeoutError):
            connected.set("k", "v")  # an open connection: the request waits, unanswered
        assert time.monotonic() - started >= 0.9
        with pytest.raises(redis.TimeoutError):
            side_client(node).ping()  # a new one: the SYN is dropped
        assert node.ping()  # the harness still sees the node
        assert node.command("EXISTS", "k") == 0

        topology.heal()
        assert topology.cuts() == []
        assert side_client(node).set("k", "v")
        assert node.command("GET", "k") == "v"


def test_one_way_cuts_drop_one_direction_only(topology_factory: Factory) -> None:
    topology = topology_factory("master-replica", network="namespace", replicas_per_master=1)
    master = topology.master()
    (replica,) = topology.replicas_of(master)
    app = topology.client_host("app")

    with topology.network.joined(app):
        client = side_client(master)
        client.ping()
        # The node's packets to the client are dropped: the SET arrives and is done, the
        # reply is lost.
        topology.partition(master, app, one_way=True)
        assert topology.cuts() == [("master-0", "app")]
        with pytest.raises(redis.TimeoutError):
            client.set("arrived", "1")
        assert master.command("GET", "arrived") == "1"
        topology.heal()

        client = side_client(master)
        client.ping()
        # The client's packets to the node are dropped: the SET never arrives.
        topology.partition(app, master, one_way=True)
        with pytest.raises(redis.TimeoutError):
            client.set("lost", "1")
        assert master.command("EXISTS", "lost") == 0
        topology.heal()

    # Between nodes: the master's replication stream does not reach the replica...
    topology.partition(master, replica, one_way=True)
    master.command("SET", "stream", "1")
    time.sleep(1.5)
    assert replica.command("GET", "stream") is None
    topology.heal()
    wait_until(lambda: _replicated(replica, "stream", "1"), timeout=10, what="the write replicated")

    # ...and the other way round it does, while the replica's acks no longer reach the
    # master, whose lag for the replica grows.
    topology.partition(replica, master, one_way=True)
    master.command("SET", "acks", "1")
    wait_until(lambda: _replicated(replica, "acks", "1"), timeout=5, what="the write replicated")
    wait_until(lambda: _lag_at_least(master, 2), timeout=10, what="the master's lag growing")


def _replicated(replica: Node, key: str, value: str) -> None:
    if replica.command("GET", key) != value:
        raise NotYet(f"{replica.name} does not have {key} yet")


def _lag_at_least(master: Node, seconds: int) -> None:
    (entry,) = parse_replica_entries(master.info())
    if int(entry["lag"]) < seconds:
        raise NotYet(f"{master.name} reports lag {entry['lag']}")


# -- sentinel and cluster across a partition ----------------------------------------------


def test_sentinels_promote_the_replica_while_the_isolated_master_serves_its_side(
    topology_factory: Factory,
) -> None:
    topology = topology_factory(
        "sentinel",
        network="namespace",
        replicas_per_master=1,
        sentinel={"down_after_ms": 1000},
    )
    old = topology.master()
    for sentinel in topology.sentinels:
        reply = sentinel.command("SENTINEL", "GET-MASTER-ADDR-BY-NAME", "mymaster")
        assert reply == [old.host, str(old.port)]
    app = topology.client_host("app")

    topology.isolate(old, app)
    split = time.monotonic()
    new = topology.wait_for_new_master(old, timeout=30)
    promoted_after = time.monotonic() - split
    assert new.name == "replica-0-1"
    assert old.is_running() and old.role() == "master"  # alive, and master on its side
    with topology.network.joined(app):
        assert side_client(old).set("split-brain", "written on the minority side")
        with pytest.raises(redis.TimeoutError):
            side_client(new).ping()

    topology.heal()
    healed = time.monotonic()
    wait_until(lambda: _replicates(old, new), timeout=30, what=f"{old.name} demoted")
    rejoined_after = time.monotonic() - healed
    # The old master resynchronised from the new one: its side's write is gone.
    assert new.command("EXISTS", "split-brain") == 0
    assert old.command("EXISTS", "split-brain") == 0
    print(
        f"\nsentinel: replica promoted {promoted_after:.1f} s after the split; old master a "
        f"replica again {rejoined_after:.1f} s after heal"
    )


def _replicates(node: Node, master: Node) -> None:
    info = node.info()
    if info.get("role") != "slave" or info.get("master_port") != str(master.port):
        raise NotYet(f"{node.name} reports role {info.get('role')}")
    if info.get("master_link_status") != "up":
        raise NotYet(f"{node.name}'s link to {master.name} is not up yet")


def test_cluster_promotes_the_replica_of_an_isolated_master(topology_factory: Factory) -> None:
    topology = topology_factory("cluster", network="namespace", cluster={"node_timeout_ms": 1000})
    old = topology.master_for_slot(0)
    assert old.name == "master-0"
    addresses = {n.host for n in topology.data_nodes}
    assert len(addresses) == 6
    # Every node announces its own address on the cluster bus.
    for entry in str(old.command("CLUSTER", "NODES")).splitlines():
        assert entry.split(" ")[1].split(":")[0] in addresses
    app = topology.client_host("app")

    topology.isolate(old, app)
    split = time.monotonic()
    new = topology.wait_for_new_master(old, timeout=30)
    promoted_after = time.monotonic() - split
    assert new.name == "replica-0-1"
    assert old.is_running() and old.role() == "master"
    # Cut off from the majority of masters for longer than the node timeout, the old
    # master refuses its side's writes.
    assert parse_info(str(old.command("CLUSTER", "INFO")))["cluster_state"] == "fail"
    with topology.network.joined(app), pytest.raises(redis.ResponseError, match="cluster is down"):
        side_client(old).set("{slot0}k", "v")

    topology.heal()
    healed = time.monotonic()
    topology.wait_ready(30)
    assert old.role() == "slave"
    print(
        f"\ncluster: replica promoted {promoted_after:.1f} s after the split; cluster ready, "
        f"old master a replica, {time.monotonic() - healed:.1f} s after heal"
    )


# -- clients on a side -----------------------------------------------------------------------


def test_a_redisson_client_made_in_joined_takes_a_lock_from_the_hosts_address(
    topology_factory: Factory,
) -> None:
    topology = topology_factory("single", network="namespace")
    node = topology.master()
    app = topology.client_host("app")
    host_namespace = thread_namespace_inode()
    with topology.network.joined(app) as joined:
        assert joined == app
        assert thread_namespace_inode() == topology.network.namespace.inode
        client = Redisson.create(Config.from_yaml(topology.redisson_yaml()))
        try:
            with client.get_lock("job"):
                assert node.command("EXISTS", "job") == 1
                sources = {
                    line.split(" ")[1].removeprefix("addr=").rsplit(":", 1)[0]
                    for line in str(node.command("CLIENT", "LIST")).splitlines()
                }
                # The client's connections, and the harness's own from 127.0.0.1.
                assert sources == {app.address, "127.0.0.1"}
            assert node.command("EXISTS", "job") == 0
        finally:
            client.shutdown()
    assert thread_namespace_inode() == host_namespace
    # Cut off, the same client would not get through.
    topology.isolate(app)
    with topology.network.joined(app), pytest.raises(redis.TimeoutError):
        side_client(node).ping()


def test_a_second_host_cannot_join_while_one_is_joined(topology_factory: Factory) -> None:
    topology = topology_factory("single", network="namespace")
    with topology.network.joined(topology.client_host("a")):
        with (
            pytest.raises(TopologyError, match="one client address at a time"),
            topology.network.joined(topology.client_host("b")),
        ):
            pass
        with topology.network.joined("a"):  # the same host nests
            pass
    with pytest.raises(TopologyError, match="is a node"), topology.network.joined("master-0"):
        pass


@pytest.mark.parametrize("mode", ["sync", "asyncio"])
def test_popen_clients_connect_from_their_hosts_address(
    topology_factory: Factory, mode: str
) -> None:
    topology = topology_factory("single", network="namespace")
    node = topology.master()
    script_host = topology.client_host("script")
    module_host = topology.client_host("module")
    node_args = [mode, node.host, str(node.port)]
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), *sys.path])}
    launched = [
        topology.network.popen(
            script_host, [sys.executable, str(SIDE_CLIENT), *node_args, "script"], **_pipes()
        ),
        topology.network.popen(
            module_host,
            [sys.executable, "-m", "side_client", *node_args, "module"],
            env=environment,
            **_pipes(),
        ),
    ]
    try:
        for child in launched:
            assert child.stdout is not None
            assert child.stdout.readline().strip() == "ready", child.stderr
        assert client_addresses(node) == {
            "script": script_host.address,
            "module": module_host.address,
        }
    finally:
        for child in launched:
            _, stderr = child.communicate("done\n", timeout=10)
            assert child.returncode == 0, stderr


def _pipes() -> dict[str, object]:
    return {
        "stdin": subprocess.PIPE,
        "stdout": subprocess.PIPE,
        "stderr": subprocess.PIPE,
        "text": True,
    }


# -- nothing left behind --------------------------------------------------------------------


def test_stop_leaves_no_namespace_process_or_rule(topology_factory: Factory) -> None:
    rules_before = host_iptables()
    topology = topology_factory("master-replica", network="namespace", replicas_per_master=1)
    name = topology.network.namespace.name
    assert name == f"rpy-{topology.id}"
    inode = namespace_inode(name)
    assert inode is not None
    app = topology.client_host("app")
    sleeper = topology.network.popen(app, [sys.executable, "-c", "import time; time.sleep(60)"])
    topology.isolate(topology.master(), app)
    assert host_iptables() == rules_before  # the cuts live in the namespace only
    assert sleeper.pid in processes_in(inode)
    assert len(processes_in(inode)) == 3

    topology.stop()
    assert not namespace_exists(name)
    assert processes_in(inode) == []
    assert sleeper.poll() is not None
    assert host_iptables() == rules_before
    with pytest.raises(TopologyError, match="does not exist"):
        topology.heal()


def test_a_failed_start_leaves_no_namespace() -> None:
    before = our_namespaces()
    with pytest.raises(TopologyError, match="master-0"):
        start_topology(
            "single", backend="process", network="namespace", redis_conf={"no-such-directive": "1"}
        )
    assert our_namespaces() <= before


def test_leftovers_of_a_dead_owner_and_detached_topologies_are_deleted(
    tmp_path: Path,
) -> None:
    before = our_namespaces()
    # An owner killed outright: its nodes die with it, its namespace stays until a sweep.
    owner = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time\n"
            "from redisson_py.testing import start_topology\n"
            "t = start_topology('single', backend='process', network='namespace')\n"
            "print(t.network.namespace.name, flush=True)\n"
            "time.sleep(60)\n",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert owner.stdout is not None
        orphan = owner.stdout.readline().strip()
    finally:
        owner.kill()
        owner.wait()
    assert namespace_exists(orphan)
    wait_until(lambda: _no_processes(orphan), timeout=10, what="the dead owner's nodes exiting")
    swept = sweep_leftovers(backend="process", force=True)
    assert not namespace_exists(orphan), swept

    # A detached one outlives its owner until `topology down`.
    detached = start_topology("single", backend="process", network="namespace", detached=True)
    name = detached.network.namespace.name
    down = subprocess.run(
        [sys.executable, "-m", "redisson_py.cli", "topology", "down", "--all"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert down.returncode == 0, down.stderr
    assert not namespace_exists(name)
    assert our_namespaces() <= before


def _no_processes(name: str) -> None:
    inode = namespace_inode(name)
    if inode is not None and processes_in(inode):
        raise NotYet(f"processes still run in {name}")


# -- refusals ---------------------------------------------------------------------------------


def test_partition_arguments_are_checked(topology_factory: Factory) -> None:
    topology = topology_factory("master-replica", network="namespace", replicas_per_master=1)
    master = topology.node("master-0")
    with pytest.raises(TopologyError, match="both sides"):
        topology.partition([master, "replica-0-1"], "master-0")
    with pytest.raises(TopologyError, match="no node or client host is called 'nobody'"):
        topology.partition(master, "nobody")
    with pytest.raises(TopologyError, match="is a node"):
        topology.client_host("replica-0-1")
    with pytest.raises(TopologyError, match="nobody on the other side"):
        topology.isolate(*topology.nodes)
    assert topology.cuts() == []
