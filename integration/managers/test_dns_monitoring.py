"""DNS monitoring (``dnsMonitoringInterval``; replicated mode's ``monitorIPChanges``) on
real servers and a real DNS server, sync and asyncio.

The test owns a ``dnsmasq`` on a loopback address (`redisson_py.testing.network.dns`)
and runs the client in a child process whose ``/etc/resolv.conf`` names it (a mount
namespace of its own: the machine's file is untouched), so the client resolves
``redis-primary.test`` through ``getaddrinfo`` as users' clients do. A name maps to an
address, not a port: each node is reached through a proxy, all proxies on one port,
each on an address of its own, and moving the name from one proxy's address to
another's moves it from one node to the other. A proxy's count of open connections is
the client's count of connections to that node.

What a user relies on: once the name moves, within one interval plus one timeout the
connections to the old node are closed, writes go to the new node (and never to the
old one, which still answers here), and a lock waiter subscribed on the old node is
woken by a release on the new one. With ``-1`` nothing of this happens; a literal IP
address is never resolved.
"""

from __future__ import annotations

import contextlib
import json
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from redisson_py import Config
from redisson_py.testing import Node, Topology
from redisson_py.testing.faults.proxy import LoopbackProxy
from redisson_py.testing.network.dns import DnsServer, dns_support, same_port_proxies
from redisson_py.testing.owners import Flavor

HERE = Path(__file__).parent
HOST = "redis-primary.test"
INTERVAL = 0.5
"""dnsMonitoringInterval (and the replicated test's scanInterval), seconds."""
TIMEOUT = 1.0
"""The client's command timeout: the budget to follow a move is INTERVAL + TIMEOUT."""
SLACK = 2.0
"""Added to budgets on a loaded machine before calling a late follow a failure."""

pytestmark = pytest.mark.skipif(dns_support() is not None, reason=str(dns_support()))


class Child:
    """The client process (dns_client.py): one command line in, one JSON line out."""

    def __init__(self, dns: DnsServer, flavor: str, yaml: str, run_dir: Path):
        config = run_dir / "client.yaml"
        config.write_text(yaml)
        argv = dns.client_argv([sys.executable, str(HERE / "dns_client.py"), flavor, str(config)])
        self.stderr = run_dir / "client.stderr"
        with self.stderr.open("w") as stderr:
            self.process = subprocess.Popen(
                argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr, text=True
            )
        self.replies: queue.Queue[dict[str, Any]] = queue.Queue()
        self.events: queue.Queue[dict[str, Any]] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.ready = self._next(self.replies, 30.0)
        assert self.ready.get("ready"), self.ready

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            message = json.loads(line)
            is_event = "granted" in message or "waiter_error" in message
            (self.events if is_event else self.replies).put(message)

    def _next(self, source: queue.Queue[dict[str, Any]], timeout: float) -> dict[str, Any]:
        try:
            return source.get(timeout=timeout)
        except queue.Empty:
            said = self.stderr.read_text()[-3000:]
            raise AssertionError(
                f"no answer from the client within {timeout:g} s; its stderr:\n{said}"
            ) from None

    def ask(self, *words: object) -> dict[str, Any]:
        assert self.process.stdin is not None
        self.process.stdin.write(" ".join(map(str, words)) + "\n")
        self.process.stdin.flush()
        return self._next(self.replies, 30.0)

    def event(self, timeout: float) -> dict[str, Any]:
        return self._next(self.events, timeout)

    def close(self) -> None:
        if self.process.poll() is None:
            # "quit" has no answer: the client ends (asking would wait 30 s for one).
            with contextlib.suppress(OSError):
                assert self.process.stdin is not None
                self.process.stdin.write("quit\n")
                self.process.stdin.flush()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


@pytest.fixture
def dns(tmp_path: Path) -> Iterator[DnsServer]:
    with DnsServer(tmp_path / "dns") as server:
        yield server


@pytest.fixture
def proxies() -> Iterator[Callable[[list[Node]], dict[int, LoopbackProxy]]]:
    made: list[LoopbackProxy] = []

    def make(nodes: list[Node]) -> dict[int, LoopbackProxy]:
        """A proxy per node, all on one port: {node port: proxy}."""
        new = same_port_proxies([node.port for node in nodes])
        made.extend(new)
        return {node.port: proxy for node, proxy in zip(nodes, new, strict=True)}

    yield make
    for proxy in made:
        proxy.close()


@pytest.fixture
def child(tmp_path: Path) -> Iterator[Callable[..., Child]]:
    started: list[Child] = []

    def start(dns: DnsServer, flavor: Flavor, yaml: str) -> Child:
        client = Child(dns, flavor.name, yaml, tmp_path)
        started.append(client)
        return client

    yield start
    for client in started:
        client.close()


def _single_yaml(port: int, interval: str) -> str:
    return (
        "singleServerConfig:\n"
        f"  address: redis://{HOST}:{port}\n"
        f"  timeout: {int(TIMEOUT * 1000)}\n"
        f"  dnsMonitoringInterval: {interval}\n"
        "  retryDelay: !<org.redisson.config.ConstantDelay> {delay: PT0.1S}\n"
    )


def _wait_for(what: str, condition: Callable[[], bool], budget: float) -> float:
    """Poll ``condition`` every 20 ms; the seconds it took (fails past budget + SLACK)."""
    start = time.monotonic()
    while not condition():
        elapsed = time.monotonic() - start
        assert elapsed < budget + SLACK, f"{what}: not after {elapsed:.2f} s"
        time.sleep(0.02)
    return time.monotonic() - start


def _setup(
    topology: Topology, dns: DnsServer, proxies: Callable[[list[Node]], dict[int, LoopbackProxy]]
) -> tuple[Node, Node, dict[int, LoopbackProxy]]:
    """The master and a replica, a proxy for each, and the name on the master's."""
    old = topology.master()
    new = topology.replicas_of(old)[0]
    by_port = proxies([old, new])
    dns.point(HOST, by_port[old.port].address)
    return old, new, by_port


def _holder_and_waiter(client: Child, lock_name: str, new: Node) -> None:
    """A holder takes ``lock_name`` (replicated to ``new``), and a waiter subscribes."""
    assert client.ask("lock", lock_name, "holder", 60)["ok"] is True
    _wait_for("the grant on the replica", lambda: new.client().exists(lock_name) == 1, 5.0)
    assert client.ask("wait", lock_name, "waiter", 30, 60) == {"started": True}
    _wait_for("the waiter's subscription", lambda: client.ask("listens", lock_name)["listens"], 5)


def test_a_moved_name_is_followed_within_an_interval_and_a_timeout(
    flavor: Flavor,
    topology_factory: Callable[..., Topology],
    dns: DnsServer,
    proxies: Callable[[list[Node]], dict[int, LoopbackProxy]],
    child: Callable[..., Child],
    lock_name: str,
) -> None:
    topology = topology_factory("replicated")
    old, new, by_port = _setup(topology, dns, proxies)
    client = child(dns, flavor, _single_yaml(by_port[old.port].port, str(int(INTERVAL * 1000))))
    assert client.ready["hosts"] == {HOST: by_port[old.port].port}
    _holder_and_waiter(client, lock_name, new)
    assert by_port[old.port].open_connections >= 2  # commands and pub/sub
    assert by_port[new.port].open_connections == 0

    # The replica becomes a master of its own, holding the data; the old master keeps
    # answering as a master too: only DNS tells the client where to go now.
    new.command("REPLICAOF", "NO", "ONE")
    try:
        dns.point(HOST, by_port[new.port].address)
        closed = _wait_for(
            "the connections to the old node closed",
            lambda: by_port[old.port].open_connections == 0,
            INTERVAL + TIMEOUT,
        )
        print(f"\n[{flavor.name}] old connections closed {closed:.3f} s after the DNS move")
        assert closed <= INTERVAL + TIMEOUT + SLACK

        probe = f"{lock_name}:probe"
        assert client.ask("lock", probe, "writer", 30)["ok"] is True
        assert new.client().exists(probe) == 1
        assert old.client().exists(probe) == 0  # never written to the old node
        assert by_port[old.port].open_connections == 0

        # The waiter's subscription followed: a release on the new node wakes it.
        _wait_for("the resubscription", lambda: client.ask("listens", lock_name)["listens"], 5)
        released = client.ask("unlock", lock_name, "holder")
        assert released["ok"] is True
        woken = client.event(10.0)
        assert woken["granted"] is True and woken["owner"] == "waiter", woken
        print(f"[{flavor.name}] waiter granted {woken['at'] - released['at']:.3f} s after release")
        assert woken["at"] - released["at"] < 1.5  # a wake-up, not the 30 s wait running out
    finally:
        new.command("REPLICAOF", old.host, old.port)


def test_minus_one_turns_dns_monitoring_off(
    flavor: Flavor,
    topology_factory: Callable[..., Topology],
    dns: DnsServer,
    proxies: Callable[[list[Node]], dict[int, LoopbackProxy]],
    child: Callable[..., Child],
    lock_name: str,
) -> None:
    topology = topology_factory("replicated")
    old, new, by_port = _setup(topology, dns, proxies)
    client = child(dns, flavor, _single_yaml(by_port[old.port].port, "-1"))
    assert client.ready["hosts"] == {}
    assert client.ask("lock", lock_name, "holder", 60)["ok"] is True
    before = by_port[old.port].open_connections
    assert before >= 1
    new.command("REPLICAOF", "NO", "ONE")
    try:
        dns.point(HOST, by_port[new.port].address)
        time.sleep(3 * INTERVAL + TIMEOUT)
        # Nothing re-resolved: the pooled connections stay on the old node, and so do writes.
        assert by_port[old.port].open_connections == before
        probe = f"{lock_name}:probe"
        assert client.ask("lock", probe, "writer", 30)["ok"] is True
        assert old.client().exists(probe) == 1
        assert new.client().exists(probe) == 0
    finally:
        new.command("REPLICAOF", old.host, old.port)


def test_a_replicated_primary_endpoint_is_followed_with_monitor_ip_changes(
    flavor: Flavor,
    topology_factory: Callable[..., Topology],
    dns: DnsServer,
    proxies: Callable[[list[Node]], dict[int, LoopbackProxy]],
    child: Callable[..., Child],
    lock_name: str,
) -> None:
    # Replicated mode listing only the service's primary endpoint: after a managed
    # failover the node behind the name answers ROLE slave, and only re-resolving the
    # name (monitorIPChanges, at each scan) finds the new master.
    topology = topology_factory("replicated")
    old = topology.master()
    by_port = proxies([old, *topology.replicas_of(old)])
    dns.point(HOST, by_port[old.port].address)
    yaml = (
        "replicatedServersConfig:\n"
        f"  nodeAddresses: [redis://{HOST}:{by_port[old.port].port}]\n"
        f"  scanInterval: {int(INTERVAL * 1000)}\n"
        "  monitorIPChanges: true\n"
        f"  timeout: {int(TIMEOUT * 1000)}\n"
        "  retryDelay: !<org.redisson.config.ConstantDelay> {delay: PT0.1S}\n"
    )
    client = child(dns, flavor, yaml)
    assert client.ready["hosts"] == {HOST: by_port[old.port].port}
    assert client.ask("lock", lock_name, "alice", 60)["ok"] is True

    new = topology.failover(old)
    dns.point(HOST, by_port[new.port].address)
    start = time.monotonic()
    probe = f"{lock_name}:probe"
    while True:
        reply = client.ask("lock", probe, "writer", 30)
        if reply.get("ok") is True:
            break
        elapsed = time.monotonic() - start
        assert elapsed < INTERVAL + TIMEOUT + SLACK, f"not followed after {elapsed:.2f} s: {reply}"
        time.sleep(0.05)
    followed = time.monotonic() - start
    print(f"\n[{flavor.name}] replicated primary endpoint followed in {followed:.3f} s")
    assert new.client().exists(probe) == 1
    _wait_for(
        "the old node's connections closed", lambda: by_port[old.port].open_connections == 0, 1
    )
    # The grant made before the failover survived it (replicated by WAIT).
    assert client.ask("lock", lock_name, "bob", 60)["ok"] is False


def test_an_ip_address_is_not_monitored_and_a_name_is(
    flavor: Flavor, single_topology: Topology, topology_config: Any
) -> None:
    config: Config = topology_config(single_topology)
    section = config.server_config
    section.dns_monitoring_interval = 0.1  # type: ignore[union-attr]
    port = section.seed_addresses()[0].port
    section.address = f"redis://127.0.0.1:{port}"  # type: ignore[union-attr]
    literal = flavor.create_client(config).connection_manager
    assert literal.dns_interval == 0.1
    assert literal.watched_hosts() == {}
    assert literal.dns_worker is None
    section.address = f"redis://localhost:{port}"  # type: ignore[union-attr]
    named = flavor.create_client(config).connection_manager
    assert named.watched_hosts() == {"localhost": port}
    assert named.dns_worker is not None


def test_a_name_that_stops_resolving_keeps_its_address_with_one_warning(
    flavor: Flavor,
    single_topology: Topology,
    dns: DnsServer,
    proxies: Callable[[list[Node]], dict[int, LoopbackProxy]],
    child: Callable[..., Child],
    lock_name: str,
) -> None:
    node = single_topology.master()
    by_port = proxies([node])
    proxy = by_port[node.port]
    dns.point(HOST, proxy.address)
    client = child(dns, flavor, _single_yaml(proxy.port, str(int(INTERVAL * 1000))))
    assert client.ask("lock", lock_name, "alice", 60)["ok"] is True
    connections = proxy.open_connections
    dns.close()  # the name resolves no more
    time.sleep(4 * INTERVAL + TIMEOUT)
    # The monitor kept the last address: nothing was closed, calls still work.
    assert proxy.open_connections == connections
    assert client.ask("lock", lock_name, "bob", 60)["ok"] is False
    assert client.ask("unlock", lock_name, "alice")["ok"] is True
    assert client.ask("status")["hosts"] == {HOST: proxy.port}  # still watched
    said = client.stderr.read_text()
    assert said.count(f"host {HOST} did not resolve") == 1, said  # one warning a minute


def test_master_slave_mode_follows_a_moved_master_name(
    flavor: Flavor,
    topology_factory: Callable[..., Topology],
    dns: DnsServer,
    proxies: Callable[[list[Node]], dict[int, LoopbackProxy]],
    child: Callable[..., Child],
    lock_name: str,
) -> None:
    topology = topology_factory("replicated")
    old, new, by_port = _setup(topology, dns, proxies)
    # Replica sync off: the promoted node has no replica of its own, while the view
    # still counts the old master's two (master/slave reads them at startup).
    yaml = (
        "checkLockSyncedSlaves: false\n"
        "masterSlaveServersConfig:\n"
        f"  masterAddress: redis://{HOST}:{by_port[old.port].port}\n"
        f"  timeout: {int(TIMEOUT * 1000)}\n"
        f"  dnsMonitoringInterval: {int(INTERVAL * 1000)}\n"
        "  retryDelay: !<org.redisson.config.ConstantDelay> {delay: PT0.1S}\n"
    )
    client = child(dns, flavor, yaml)
    assert client.ready["hosts"] == {HOST: by_port[old.port].port}
    assert client.ask("lock", lock_name, "alice", 60)["ok"] is True
    assert by_port[old.port].open_connections >= 1
    new.command("REPLICAOF", "NO", "ONE")
    try:
        dns.point(HOST, by_port[new.port].address)
        _wait_for(
            "the connections to the old master closed",
            lambda: by_port[old.port].open_connections == 0,
            INTERVAL + TIMEOUT,
        )
        probe = f"{lock_name}:probe"
        reply = client.ask("lock", probe, "writer", 30)
        assert reply.get("ok") is True, reply
        assert new.client().exists(probe) == 1
        assert old.client().exists(probe) == 0
    finally:
        new.command("REPLICAOF", old.host, old.port)
