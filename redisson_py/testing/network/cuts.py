"""Which packets a partition drops, as iptables rules: pure functions, no I/O.

Inside a topology's namespace every packet is local and goes out through ``lo``, so the
``OUTPUT`` chain sees each one exactly once with its real source and destination
addresses. A cut from X to Y is one rule, ``-A OUTPUT -s X -d Y -j DROP``. DROP rather
than REJECT: a real partition answers nothing, so the sender waits for its timeouts.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from redisson_py.testing.errors import TopologyError

__all__ = ["Cut", "Host", "cuts_between", "drop_rule", "everyone_else", "partition_rules"]


@dataclass(frozen=True)
class Host:
    """An endpoint on a topology's network: a node, or a client (the test process, a
    program it starts) given an address of its own by ``topology.client_host(name)``."""

    name: str
    address: str

    def __post_init__(self) -> None:
        if not self.name or self.name != self.name.strip():
            raise TopologyError(
                f"a host needs a name without surrounding spaces, not {self.name!r}."
            )
        try:
            loopback = ipaddress.IPv4Address(self.address).is_loopback
        except ValueError:
            loopback = False
        if not loopback:
            raise TopologyError(
                f"host {self.name} has address {self.address!r}; partitions use 127.0.0.0/8 only."
            )


@dataclass(frozen=True)
class Cut:
    """Packets from ``source`` to ``target`` are dropped (one direction)."""

    source: Host
    target: Host

    @property
    def names(self) -> tuple[str, str]:
        return (self.source.name, self.target.name)


def cuts_between(
    side_a: Sequence[Host], side_b: Sequence[Host], *, one_way: bool = False
) -> list[Cut]:
    """The one-way cuts that separate ``side_a`` from ``side_b``.

    Both ways by default: every member of each side loses every member of the other.
    ``one_way``: only packets from ``side_a`` to ``side_b`` are dropped. Raises
    [`TopologyError`][redisson_py.testing.TopologyError] for an empty side or a member
    (by name or address) on both.
    """
    if not side_a or not side_b:
        raise TopologyError("a partition needs at least one member on each side.")
    a_names = {h.name for h in side_a} | {h.address for h in side_a}
    both = [h.name for h in side_b if h.name in a_names or h.address in a_names]
    if both:
        raise TopologyError(
            f"{', '.join(sorted(set(both)))} cannot be on both sides of a partition."
        )
    cuts = [Cut(a, b) for a in _unique(side_a) for b in _unique(side_b)]
    if not one_way:
        cuts += [Cut(b, a) for a in _unique(side_a) for b in _unique(side_b)]
    return cuts


def everyone_else(members: Sequence[Host], everyone: Sequence[Host]) -> list[Host]:
    """The other side when ``members`` are isolated: everyone not among them.

    Raises [`TopologyError`][redisson_py.testing.TopologyError] if nobody is left on the other side.
    """
    inside = {h.name for h in members}
    others = [h for h in everyone if h.name not in inside]
    if not others:
        raise TopologyError("isolating every node and client host leaves nobody on the other side.")
    return others


def drop_rule(cut: Cut) -> list[str]:
    """The iptables arguments that make ``cut``: ``-A OUTPUT -s X -d Y -j DROP``."""
    return ["-A", "OUTPUT", "-s", cut.source.address, "-d", cut.target.address, "-j", "DROP"]


def partition_rules(
    side_a: Sequence[Host], side_b: Sequence[Host], *, one_way: bool = False
) -> list[list[str]]:
    """The iptables argument lists of `cuts_between` (one per one-way cut)."""
    return [drop_rule(cut) for cut in cuts_between(side_a, side_b, one_way=one_way)]


def _unique(hosts: Iterable[Host]) -> list[Host]:
    seen: set[str] = set()
    out = []
    for host in hosts:
        if host.name not in seen:
            seen.add(host.name)
            out.append(host)
    return out
