"""DNS monitoring, the decisions without the I/O: which host names to re-resolve, how
often, and what a new answer means.

Redisson re-resolves the host names of the configured nodes every
``dnsMonitoringInterval`` (single server, master/slave, sentinel and cluster; default
5 s, ``-1`` off) and, in replicated mode, at each scan when ``monitorIPChanges`` is on.
A managed service's endpoint (an ElastiCache primary endpoint, an Azure Cache host
name) keeps its name across a failover while its address moves to the promoted node:
connections opened before the move still reach the old node, which is now a replica or
gone.

The shells resolve (off the event loop: ``loop.getaddrinfo`` in asyncio, the background
worker's thread in the threaded shell) and hand each answer to `DnsWatch`, which says
whether the host moved (`Moved`: close the connections to that host name, move its
pub/sub subscriptions, refresh the topology) and whether a failed resolution is worth a
warning (rate-limited: one per host per `WARN_EVERY`). A failed resolution keeps the last
address: connections to a host whose name does not resolve for a moment keep working.

A literal IP address is never monitored: it cannot move.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass, field

from redisson_py.config.addresses import Address
from redisson_py.config.sections import BaseConfig, ReplicatedServersConfig

WARN_EVERY = 60.0
"""Seconds between two warnings about the same host name failing to resolve."""


def is_ip_literal(host: str) -> bool:
    """True when ``host`` is an IPv4 or IPv6 address rather than a name."""
    try:
        ipaddress.ip_address(host.split("%", 1)[0])  # an IPv6 zone ("fe80::1%eth0") too
    except ValueError:
        return False
    return True


def monitoring_interval(section: BaseConfig) -> float | None:
    """Seconds between two resolutions of the section's host names; None: off.

    Replicated mode (``replicatedServersConfig``) follows Redisson: its nodes' names are
    re-resolved at each scan (``scanInterval``) when ``monitorIPChanges`` is true, and
    never otherwise. Every other mode reads ``dnsMonitoringInterval`` (None for
    ``-1``); a section without that key is not monitored.
    """
    if isinstance(section, ReplicatedServersConfig):
        return section.scan_interval if section.monitor_ip_changes else None
    interval = getattr(section, "dns_monitoring_interval", None)
    if not isinstance(interval, (int, float)) or interval <= 0:
        return None
    return float(interval)


def watched_hosts(addresses: Iterable[Address]) -> dict[str, int]:
    """The host names among ``addresses`` (IP literals left out), each with a port to
    resolve it for (the first seen), in the order given."""
    hosts: dict[str, int] = {}
    for address in addresses:
        if address.host not in hosts and not is_ip_literal(address.host):
            hosts[address.host] = address.port
    return hosts


@dataclass(frozen=True)
class Moved:
    """Host ``host`` resolved to ``new`` where it resolved to ``old`` before."""

    host: str
    old: frozenset[str]
    new: frozenset[str]

    def __str__(self) -> str:
        return f"host {self.host} moved from {_shown(self.old)} to {_shown(self.new)}"


def _shown(addresses: frozenset[str]) -> str:
    return ", ".join(sorted(addresses)) or "nothing"


@dataclass
class _HostState:
    addresses: frozenset[str] | None = None
    warned_at: float | None = None
    failing: bool = False


@dataclass
class DnsWatch:
    """The last addresses each watched host name resolved to, and its warnings.

    Not thread-safe: one background loop per client feeds it.
    """

    _hosts: dict[str, _HostState] = field(default_factory=dict)

    def known(self, host: str) -> frozenset[str] | None:
        """The addresses ``host`` last resolved to (None: never resolved yet)."""
        state = self._hosts.get(host)
        return state.addresses if state is not None else None

    def resolved(self, host: str, addresses: Iterable[str]) -> Moved | None:
        """``host`` now resolves to ``addresses``: a `Moved` when that differs from what
        it resolved to before (the order of the answers does not count: a round-robin
        record is not a move), else None. The first answer for a host is the baseline,
        never a move. An empty answer changes nothing (the caller counts it as a
        failure, see `failed`). Call `recovered` first to learn whether a run of
        failures just ended."""
        new = frozenset(addresses)
        state = self._hosts.setdefault(host, _HostState())
        if not new:
            return None
        old, state.addresses = state.addresses, new
        if old is None or old == new:
            return None
        return Moved(host, old, new)

    def failed(self, host: str, now: float) -> bool:
        """Resolving ``host`` failed at ``now`` (monotonic seconds): the last addresses
        stay. True when this failure is to be logged as a warning: the first of a run of
        failures, then at most one per `WARN_EVERY`."""
        state = self._hosts.setdefault(host, _HostState())
        state.failing = True
        if state.warned_at is not None and now - state.warned_at < WARN_EVERY:
            return False
        state.warned_at = now
        return True

    def recovered(self, host: str) -> bool:
        """True once after a run of failures, when ``host`` resolves again (say so)."""
        state = self._hosts.get(host)
        if state is None or not state.failing:
            return False
        state.failing = False
        state.warned_at = None
        return True
