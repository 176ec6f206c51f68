"""Partitions without starting anything: which iptables rules a partition makes, how
members and commands are checked, the configs of nodes in a namespace, and the source
binding on real sockets of this machine's loopback."""

from __future__ import annotations

import re
import socket
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from redisson_py.testing import TopologyError, start_topology
from redisson_py.testing.backends.binaries import RedisServerBinary
from redisson_py.testing.network import Host, NetworkUnavailableError
from redisson_py.testing.network.cuts import (
    Cut,
    cuts_between,
    drop_rule,
    everyone_else,
    partition_rules,
)
from redisson_py.testing.network.namespace import thread_namespace_inode
from redisson_py.testing.network.python_argv import RUN_FROM, through_run_from
from redisson_py.testing.network.source_binding import bind_namespace, exempt
from redisson_py.testing.network.support import binary_reason, require_partition_support
from redisson_py.testing.network.topology_network import TopologyNetwork, namespace_name
from redisson_py.testing.topologies.conf import render_redis_conf, render_sentinel_conf
from redisson_py.testing.topologies.spec import load_spec

A = Host("a", "127.0.0.2")
B = Host("b", "127.0.0.3")
C = Host("c", "127.0.0.4")


# -- rules -----------------------------------------------------------------------------------


def test_a_partition_cuts_both_ways_between_every_pair() -> None:
    assert partition_rules([A], [B, C]) == [
        ["-A", "OUTPUT", "-s", "127.0.0.2", "-d", "127.0.0.3", "-j", "DROP"],
        ["-A", "OUTPUT", "-s", "127.0.0.2", "-d", "127.0.0.4", "-j", "DROP"],
        ["-A", "OUTPUT", "-s", "127.0.0.3", "-d", "127.0.0.2", "-j", "DROP"],
        ["-A", "OUTPUT", "-s", "127.0.0.4", "-d", "127.0.0.2", "-j", "DROP"],
    ]
    assert [c.names for c in cuts_between([A], [B, C])] == [
        ("a", "b"),
        ("a", "c"),
        ("b", "a"),
        ("c", "a"),
    ]


def test_a_one_way_cut_drops_only_from_side_a_to_side_b() -> None:
    assert partition_rules([A, B], [C], one_way=True) == [
        ["-A", "OUTPUT", "-s", "127.0.0.2", "-d", "127.0.0.4", "-j", "DROP"],
        ["-A", "OUTPUT", "-s", "127.0.0.3", "-d", "127.0.0.4", "-j", "DROP"],
    ]
    assert drop_rule(Cut(C, A)) == [
        "-A",
        "OUTPUT",
        "-s",
        "127.0.0.4",
        "-d",
        "127.0.0.2",
        "-j",
        "DROP",
    ]


def test_a_member_named_twice_on_one_side_counts_once() -> None:
    assert len(cuts_between([A, A], [B])) == 2


@pytest.mark.parametrize(
    ("side_a", "side_b", "complaint"),
    [
        ([A, B], [B], "b cannot be on both sides"),
        ([A], [Host("a-again", "127.0.0.2")], "cannot be on both sides"),
        ([], [A], "at least one member on each side"),
        ([A], [], "at least one member on each side"),
    ],
    ids=["same-host", "same-address", "empty-a", "empty-b"],
)
def test_bad_sides_are_refused(side_a: list[Host], side_b: list[Host], complaint: str) -> None:
    with pytest.raises(TopologyError, match=complaint):
        cuts_between(side_a, side_b)


def test_isolating_leaves_everyone_else_on_the_other_side() -> None:
    assert everyone_else([A], [A, B, C]) == [B, C]
    with pytest.raises(TopologyError, match="nobody on the other side"):
        everyone_else([A, B, C], [A, B, C])


@pytest.mark.parametrize(
    ("name", "address"),
    [("", "127.0.0.2"), (" x", "127.0.0.2"), ("x", "0.0.0.0"), ("x", "localhost")],
)
def test_hosts_are_named_and_on_loopback(name: str, address: str) -> None:
    with pytest.raises(TopologyError):
        Host(name, address)


# -- addresses and members ------------------------------------------------------------------


class FakeNode:
    def __init__(self, name: str):
        self.name = name
        self.host = "127.0.0.1"


def test_nodes_then_client_hosts_get_consecutive_addresses() -> None:
    network = TopologyNetwork("single-0000")
    assert network.name == namespace_name("single-0000") == "rpy-single-0000"
    nodes = [FakeNode("master-0"), FakeNode("replica-0-1"), FakeNode("sentinel-0")]
    network.assign(nodes)  # type: ignore[arg-type]
    assert [n.host for n in nodes] == ["127.0.0.2", "127.0.0.3", "127.0.0.4"]
    app = network.client_host("app")
    assert app == Host("app", "127.0.0.5")
    assert network.client_host("other").address == "127.0.0.6"
    assert network.client_host("app") is app
    assert network.resolve("replica-0-1") == Host("replica-0-1", "127.0.0.3")
    assert network.resolve(nodes[2]) == Host("sentinel-0", "127.0.0.4")  # type: ignore[arg-type]
    assert network.resolve(app) is app
    with pytest.raises(TopologyError, match="is a node"):
        network.client_host("master-0")
    with pytest.raises(TopologyError, match="no node or client host"):
        network.resolve("nobody")
    with pytest.raises(TopologyError, match="not a host"):
        network.resolve(Host("app", "127.0.0.9"))
    with pytest.raises(TopologyError, match="does not exist"):
        network.heal()  # no namespace before start


# -- clients' command lines --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "expected_tail"),
    [
        ([sys.executable, "-m", "pkg.mod", "x"], ["-m", "pkg.mod", "x"]),
        ([sys.executable, "script.py", "-m", "x"], ["script.py", "-m", "x"]),
        ([sys.executable, "-c", "print(1)", "y"], ["-c", "print(1)", "y"]),
        (["/usr/bin/python3", "-u", "-X", "dev", "-m", "m"], ["-m", "m"]),
    ],
    ids=["module", "script", "code", "options"],
)
def test_python_commands_run_through_run_from(argv: list[str], expected_tail: list[str]) -> None:
    wrapped = through_run_from(argv, "127.0.0.9")
    assert wrapped is not None
    options = argv[1 : argv.index(expected_tail[0])]
    assert wrapped == [
        argv[0],
        *options,
        "-m",
        RUN_FROM,
        "--source",
        "127.0.0.9",
        "--",
        *expected_tail,
    ]


def test_other_programs_run_as_they_are_and_python_without_a_target_is_refused() -> None:
    assert through_run_from(["redis-cli", "-h", "127.0.0.2"], "127.0.0.9") is None
    for argv in ([sys.executable], [sys.executable, "-u"], [sys.executable, "-"]):
        with pytest.raises(TopologyError, match="runs no module, script or -c code"):
            through_run_from(argv, "127.0.0.9")


# -- node configs in a namespace ---------------------------------------------------------------


def addresses(text: str) -> set[str]:
    return set(re.findall(r"\b\d{1,3}(?:\.\d{1,3}){3}\b", text))


def test_a_replica_in_a_namespace_binds_leaves_from_and_names_own_addresses(
    tmp_path: Path,
) -> None:
    text = render_redis_conf(
        load_spec("master-replica"),
        port=12001,
        directory=tmp_path,
        replica_of=12000,
        hosts={12000: "127.0.0.2", 12001: "127.0.0.3"},
        in_namespace=True,
    )
    lines = text.splitlines()
    assert "bind 127.0.0.3" in lines
    assert "bind-source-addr 127.0.0.3" in lines
    assert "protected-mode no" in lines
    assert "replica-announce-ip 127.0.0.3" in lines
    assert "replicaof 127.0.0.2 12000" in lines
    assert addresses(text) == {"127.0.0.2", "127.0.0.3"}


def test_host_network_configs_have_no_namespace_directives(tmp_path: Path) -> None:
    text = render_redis_conf(load_spec("cluster"), port=12000, directory=tmp_path)
    assert "bind-source-addr" not in text
    assert "protected-mode" not in text


def test_a_cluster_node_in_a_namespace_announces_its_address(tmp_path: Path) -> None:
    text = render_redis_conf(
        load_spec("cluster"),
        port=12000,
        directory=tmp_path,
        hosts={12000: "127.0.0.5"},
        in_namespace=True,
    )
    assert "cluster-announce-ip 127.0.0.5" in text.splitlines()
    assert addresses(text) == {"127.0.0.5"}


def test_a_sentinel_in_a_namespace_names_every_node_by_its_address(tmp_path: Path) -> None:
    text = render_sentinel_conf(
        load_spec("sentinel"),
        port=12010,
        directory=tmp_path,
        my_id="a" * 40,
        master_port=12000,
        replica_ports=[12001],
        peers=[(12011, "b" * 40)],
        hosts={12000: "127.0.0.2", 12001: "127.0.0.3", 12010: "127.0.0.4", 12011: "127.0.0.5"},
        in_namespace=True,
    )
    lines = text.splitlines()
    assert "bind 127.0.0.4" in lines
    assert "bind-source-addr 127.0.0.4" in lines
    assert "protected-mode no" in lines
    assert "sentinel announce-ip 127.0.0.4" in lines
    assert "sentinel monitor mymaster 127.0.0.2 12000 2" in lines
    assert "sentinel known-replica mymaster 127.0.0.3 12001" in lines
    assert f"sentinel known-sentinel mymaster 127.0.0.5 12011 {'b' * 40}" in lines


# -- what a namespace topology needs ---------------------------------------------------------


def test_old_redis_servers_are_refused_with_the_reason() -> None:
    old = RedisServerBinary(Path("/opt/redis-6.2/redis-server"), "6.2.14", "PATH")
    reason = binary_reason(old)
    assert reason is not None
    assert "7.0 or later" in reason and "6.2.14" in reason
    assert binary_reason(RedisServerBinary(Path("/usr/bin/redis-server"), "7.0.15", "PATH")) is None


def test_the_container_backend_is_refused_before_anything_starts() -> None:
    with pytest.raises(NetworkUnavailableError, match="container backend leaves partitions out"):
        require_partition_support("container")
    with pytest.raises(NetworkUnavailableError, match="process backend"):
        start_topology("single", backend="container", network="namespace")


def test_an_unknown_network_is_refused() -> None:
    with pytest.raises(TopologyError, match="unknown network 'bridge'"):
        start_topology("single", backend="process", network="bridge")


# -- the source binding, on this machine's loopback --------------------------------------------


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        server.settimeout(5)
        yield server


def _peer_of_new_connection(server: socket.socket) -> str:
    with socket.create_connection(server.getsockname(), timeout=5):
        accepted, peer = server.accept()
        accepted.close()
    return str(peer[0])


def test_connections_leave_from_the_bound_source_only_inside_the_block(
    listener: socket.socket,
) -> None:
    assert _peer_of_new_connection(listener) == "127.0.0.1"
    with bind_namespace(thread_namespace_inode(), "127.0.0.7"):
        assert _peer_of_new_connection(listener) == "127.0.0.7"
        with exempt():
            assert _peer_of_new_connection(listener) == "127.0.0.1"
        with socket.socket() as bound:  # a socket its owner bound is left alone
            bound.bind(("127.0.0.8", 0))
            bound.connect(listener.getsockname())
            accepted, peer = listener.accept()
            accepted.close()
            assert peer[0] == "127.0.0.8"
        with (
            pytest.raises(TopologyError, match="one client address at a time"),
            bind_namespace(thread_namespace_inode(), "127.0.0.9"),
        ):
            pass
    assert _peer_of_new_connection(listener) == "127.0.0.1"


def test_a_connection_to_another_namespace_is_not_bound(listener: socket.socket) -> None:
    with bind_namespace(thread_namespace_inode() + 1, "127.0.0.7"):
        assert _peer_of_new_connection(listener) == "127.0.0.1"
