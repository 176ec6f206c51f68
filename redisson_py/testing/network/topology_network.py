"""The network of one topology started with ``network="namespace"``: its namespace, the
addresses of its nodes and client hosts, the cuts between them, and clients on a side.

Addresses: the nodes get 127.0.0.2, 127.0.0.3, ... in node order (data nodes, then
sentinels); client hosts get the addresses after the nodes', in the order they are first
asked for. 127.0.0.1 is nobody's: the harness's own connections leave from it, and no
cut ever names it, so the harness sees every node whatever the partition.
"""

from __future__ import annotations

import contextlib
import ipaddress
import subprocess
import threading
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TypeAlias

from redisson_py.testing.backends.process import child_setup
from redisson_py.testing.errors import TopologyError
from redisson_py.testing.network import source_binding
from redisson_py.testing.network.cuts import Cut, Host, cuts_between, drop_rule, everyone_else
from redisson_py.testing.network.namespace import PREFIX, NetworkNamespace
from redisson_py.testing.network.python_argv import through_run_from

if TYPE_CHECKING:
    from redisson_py.testing.topologies.node import Node

__all__ = ["FIRST_NODE_ADDRESS", "Member", "Side", "TopologyNetwork", "namespace_name"]

FIRST_NODE_ADDRESS = ipaddress.IPv4Address("127.0.0.2")

Member: TypeAlias = "Node | Host | str"
"""A partition member: a node, a client host, or the name of either."""

Side: TypeAlias = "Member | Iterable[Member]"
"""One side of a partition: one member or several."""

_CLIENT_STOP_TIMEOUT = 5.0


def namespace_name(topology_id: str) -> str:
    """The namespace of topology ``topology_id``: ``rpy-<topology id>``."""
    return f"{PREFIX}{topology_id}"


class TopologyNetwork:
    """The network namespace of one topology, and what happens in it.

    Made by [`start_topology`][redisson_py.testing.start_topology] for
    ``network="namespace"``; reached as ``topology.network``. The partition methods
    (``partition``, ``isolate``, ``heal``, ``cuts``, ``client_host``) are also on the
    topology itself.
    """

    def __init__(self, topology_id: str):
        self.name = namespace_name(topology_id)
        self._namespace: NetworkNamespace | None = None
        self._nodes: list[Node] = []
        self._clients: dict[str, Host] = {}
        self._cuts: list[Cut] = []
        self._children: list[subprocess.Popen[Any]] = []
        self._lock = threading.RLock()

    def __repr__(self) -> str:
        return f"<TopologyNetwork {self.name} cuts={len(self._cuts)}>"

    # -- setting up --------------------------------------------------------------------------

    def assign(self, nodes: Sequence[Node]) -> None:
        """Give each node its address (``node.host``), in order; done once, at start."""
        self._nodes = list(nodes)
        for index, node in enumerate(self._nodes):
            node.host = str(FIRST_NODE_ADDRESS + index)

    def create(self) -> None:
        """Make the namespace and point the nodes' harness connections into it."""
        self._namespace = NetworkNamespace.create(self.name)
        for node in self._nodes:
            node.network_namespace = self._namespace

    @property
    def namespace(self) -> NetworkNamespace:
        """The namespace (raises [`TopologyError`][redisson_py.testing.TopologyError]
        before start or after stop)."""
        if self._namespace is None or self._namespace.deleted:
            raise TopologyError(
                f"network namespace {self.name} does not exist (not started, or stopped)."
            )
        return self._namespace

    def record(self) -> dict[str, Any]:
        """What the state file keeps, so another process can delete the namespace."""
        return {"mode": "namespace", "namespace": self.name}

    # -- hosts ---------------------------------------------------------------------------

    def client_host(self, name: str) -> Host:
        """The client endpoint called ``name``, with an address of its own (the same
        host for the same name). Raises
        [`TopologyError`][redisson_py.testing.TopologyError] for a node's name."""
        with self._lock:
            host = self._clients.get(name)
            if host is not None:
                return host
            if any(node.name == name for node in self._nodes):
                raise TopologyError(
                    f"{name!r} is a node of this topology; pick another client name."
                )
            address = FIRST_NODE_ADDRESS + len(self._nodes) + len(self._clients)
            host = Host(name, str(address))
            self._clients[name] = host
            return host

    def hosts(self) -> list[Host]:
        """Every node and client host, nodes first."""
        with self._lock:
            return [Host(n.name, n.host) for n in self._nodes] + list(self._clients.values())

    def resolve(self, member: Member) -> Host:
        """The host of a node, a client host, or the name of either."""
        if isinstance(member, Host):
            if member not in self.hosts():
                raise TopologyError(f"{member} is not a host of topology network {self.name}.")
            return member
        if isinstance(member, str):
            for host in self.hosts():
                if host.name == member:
                    return host
            names = ", ".join(h.name for h in self.hosts())
            raise TopologyError(f"no node or client host is called {member!r} (known: {names}).")
        for node in self._nodes:
            if node is member:
                return Host(node.name, node.host)
        raise TopologyError(f"{member!r} is not a node of this topology.")

    def _side(self, side: Side) -> list[Host]:
        if isinstance(side, (str, Host)) or not isinstance(side, Iterable):
            return [self.resolve(side)]
        return [self.resolve(member) for member in side]

    def _client(self, host: Host | str) -> Host:
        resolved = self.resolve(host)
        if resolved.name not in self._clients:
            raise TopologyError(
                f"{resolved.name} is a node; clients run on hosts from client_host(name)."
            )
        return resolved

    # -- cuts ----------------------------------------------------------------------------

    def partition(self, side_a: Side, side_b: Side, *, one_way: bool = False) -> None:
        """Cut ``side_a`` off from ``side_b`` (see ``Topology.partition``)."""
        cuts = cuts_between(self._side(side_a), self._side(side_b), one_way=one_way)
        self._add(cuts)

    def isolate(self, *members: Member) -> None:
        """Cut ``members`` off from every other node and client host, both ways."""
        inside = self._side(members)
        self._add(cuts_between(inside, everyone_else(inside, self.hosts())))

    def _add(self, cuts: Sequence[Cut]) -> None:
        with self._lock:
            new = [cut for cut in dict.fromkeys(cuts) if cut not in self._cuts]
            if not new:
                return
            # One iptables-restore: every rule of the partition appears at once, so no
            # side sees a half-cut network for the time a rule-per-command loop takes.
            script = "*filter\n" + "".join(" ".join(drop_rule(c)) + "\n" for c in new) + "COMMIT\n"
            self.namespace.run(["iptables-restore", "--noflush"], stdin=script)
            self._cuts += new

    def heal(self) -> None:
        """Remove every cut (flush the namespace's OUTPUT chain)."""
        with self._lock:
            self.namespace.run(["iptables", "-F", "OUTPUT"])
            self._cuts.clear()

    def cuts(self) -> list[tuple[str, str]]:
        """The one-way cuts in force, as ``(from, to)`` pairs of names, in the order made."""
        with self._lock:
            return [cut.names for cut in self._cuts]

    # -- clients on a side -------------------------------------------------------------------

    def popen(
        self, host: Host | str, argv: Sequence[str], **popen_kwargs: Any
    ) -> subprocess.Popen[Any]:
        """Start ``argv`` inside the namespace as a client on ``host``'s side.

        A Python command (``[sys.executable, "-m", module, ...]``, ``[sys.executable,
        script, ...]`` or ``-c``) runs through `run_from`,
        so its TCP connections to 127.x leave from ``host.address``; any other program runs
        inside the namespace but connects from 127.0.0.1, which no cut touches. The child
        dies with this process (``PR_SET_PDEATHSIG``, tied to the calling thread, as for
        the nodes) and is stopped with the topology at the latest. ``popen_kwargs`` go to
        `subprocess.Popen` (a ``preexec_fn`` given runs after ours).
        """
        client = self._client(host)
        command = through_run_from(argv, client.address) or list(argv)
        namespace = self.namespace
        ours = child_setup(die_with_parent=True, namespace_fd=namespace.fd)
        theirs = popen_kwargs.pop("preexec_fn", None)

        def setup() -> None:
            if ours is not None:
                ours()
            if theirs is not None:
                theirs()

        child: subprocess.Popen[Any] = subprocess.Popen(
            command,
            preexec_fn=setup,  # noqa: PLW1509 - setns and prctl, then the caller's own
            **popen_kwargs,
        )
        with self._lock:
            self._children = [c for c in self._children if c.poll() is None] + [child]
        return child

    @contextlib.contextmanager
    def joined(self, host: Host | str) -> Iterator[Host]:
        """Put the calling thread on ``host``'s side for the block; yields the host.

        The thread enters the namespace (threads it starts there stay in it) and the
        sockets that threads in the namespace connect to 127.x leave from ``host.address``
        (`source_binding`). At the end the thread goes
        back to the namespace it came from and the binding is lifted: create *and* use
        (and shut down) clients inside the block; a client's threads that outlive it
        stay in the namespace but reconnect from 127.0.0.1, outside every cut. One
        client host per process at a time
        ([`TopologyError`][redisson_py.testing.TopologyError] otherwise).
        """
        client = self._client(host)
        namespace = self.namespace
        with namespace.entered(), source_binding.bind_namespace(namespace.inode, client.address):
            yield client

    # -- teardown ------------------------------------------------------------------------

    def close(self) -> None:
        """Stop the clients started by
        [`popen`][redisson_py.testing.TopologyNetwork.popen] and delete the namespace
        (its iptables rules go with it). Idempotent."""
        with self._lock:
            children, self._children = self._children, []
        for child in children:
            _stop_child(child)
        if self._namespace is not None:
            self._namespace.delete()
        self._cuts.clear()


def _stop_child(child: subprocess.Popen[Any]) -> None:
    if child.poll() is not None:
        return
    child.terminate()
    try:
        child.wait(_CLIENT_STOP_TIMEOUT)
    except subprocess.TimeoutExpired:
        child.kill()
        child.wait()
