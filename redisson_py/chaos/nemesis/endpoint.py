"""A managed service's primary endpoint for the nemesis (``--dns``): a host name the
workers resolve through a DNS server the run owns, and which the nemesis moves to the
node it promoted, as ElastiCache, Azure Cache and Memorystore move theirs.

Everything lives in the topology's network namespace: `DnsServer`
(dnsmasq) listens there, and the workers run through `DnsServer.client_argv` (their own
mount namespace, a ``resolv.conf`` naming it) inside it. A name maps to an address, not
a port, while each node listens on an address and a port of its own; so each data node
also gets an alias address (127.0.53.N, port `PORT`) that the namespace's NAT table
(``OUTPUT`` chain, ``DNAT``) sends on to the node's own address and port. The address
translation happens before the filter table's ``OUTPUT`` chain, where the partitions'
drop rules are: a worker cut from a node is cut from it through the name too, and the
worker's connections still leave from its own address. The workers' DNS queries leave
from 127.0.0.1, which no cut names: the endpoint's DNS stays reachable, as a service's
does, while its nodes may not be.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import Self

from redisson_py.testing import Node, Topology
from redisson_py.testing.errors import TopologyError
from redisson_py.testing.network.dns import DnsServer
from redisson_py.testing.network.python_argv import through_run_from

__all__ = ["HOST", "PORT", "PrimaryEndpoint"]

HOST = "redis-primary.test"
"""The primary endpoint's host name."""

PORT = 6379
"""The primary endpoint's port (on every alias address)."""


class PrimaryEndpoint:
    """`HOST`:`PORT` in ``topology``'s network namespace, pointing at one data node at a
    time (the master when started). A context manager; ``directory`` keeps the DNS
    server's files."""

    def __init__(self, topology: Topology, directory: Path):
        self.topology = topology
        self.namespace = topology.network.namespace
        self.dns = DnsServer(directory)
        self.aliases = {
            node.name: f"127.0.53.{number}"
            for number, node in enumerate(topology.data_nodes, start=1)
        }
        self.node = ""
        """The name of the node the endpoint names now."""

    @property
    def url(self) -> str:
        return f"redis://{HOST}:{PORT}"

    def start(self) -> Self:
        """Route the aliases, start dnsmasq in the namespace, point the name at the
        master; raises [`TopologyError`][redisson_py.testing.TopologyError]."""
        rules = "".join(
            f"-A OUTPUT -d {self.aliases[node.name]}/32 -p tcp --dport {PORT} "
            f"-j DNAT --to-destination {node.host}:{node.port}\n"
            for node in self.topology.data_nodes
        )
        self.namespace.run(["iptables-restore", "--noflush"], stdin=f"*nat\n{rules}COMMIT\n")
        # dnsmasq is started by a thread in the namespace: it listens there.
        with self.namespace.entered():
            self.dns.start()
        self.point(self.topology.master())
        return self

    def point(self, node: Node) -> None:
        """Make the name resolve to ``node``'s alias; returns once the server says so."""
        with self.namespace.entered():
            self.dns.point(HOST, self.aliases[node.name])
        self.node = node.name

    def worker_argv(self, argv: Sequence[str], source: str) -> list[str]:
        """A Python command line ``argv`` that resolves through this endpoint's DNS
        server and whose connections leave from ``source`` (its client host's address),
        for ``topology.network.popen``."""
        command = through_run_from(argv, source)
        if command is None:
            raise TopologyError(f"{list(argv)!r} is not a Python command")
        return self.dns.client_argv(command)

    def close(self) -> None:
        """Stop dnsmasq (the NAT rules go with the namespace); idempotent."""
        self.dns.close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()
