"""Reading a topology from its nodes: the discovery flows every manager runs at startup
and every scan interval, written once for both shells (see `redisson_py.core.effects`).

Each flow returns a new `TopologyView` (or None when
no node answered) and, per address tried, why it failed, so a startup error can list
every address and its reason.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Generator, Sequence
from dataclasses import dataclass, field
from typing import Any

from redisson_py.config.addresses import Address
from redisson_py.core.effects import Direct, Effect, Gather, Target
from redisson_py.core.routing.topology import (
    NatMap,
    SentinelReport,
    TopologyView,
    keeps_replication_backlog,
    master_replica_count,
    own_replica_count,
    parse_cluster_nodes,
    parse_sentinel_report,
)


def describe_error(error: BaseException) -> str:
    """One line for an address's failure; redis-py's messages never carry passwords.

    The operating system's reason ("Connection refused") is added when redis-py's
    message leaves it out (its asyncio client says only "Connect call failed").
    """
    text = str(error).strip() or type(error).__name__
    cause = error.__cause__ or error.__context__
    while cause is not None and not (isinstance(cause, OSError) and cause.errno):
        cause = cause.__cause__ or cause.__context__
    if isinstance(cause, OSError) and cause.errno:
        reason = os.strerror(cause.errno)
        if reason.lower() not in text.lower():
            text = f"{text} ({reason})"
    return f"{type(error).__name__}: {text}"


@dataclass
class Discovery:
    """The outcome of one discovery: the view (None if nothing answered), the errors
    per address tried, and for sentinel the reports of the sentinels that answered."""

    view: TopologyView | None
    errors: dict[Address, BaseException] = field(default_factory=dict)
    reports: dict[Address, SentinelReport] = field(default_factory=dict)

    def reasons(self) -> dict[str, str]:
        return {str(address): describe_error(error) for address, error in self.errors.items()}


def probe(
    target: Target,
    addresses: Sequence[Address],
    commands: tuple[tuple[str, ...], ...],
    timeout: float,
    *,
    sentinel: bool = False,
) -> Generator[Effect, Any, dict[Address, Any]]:
    """Send ``commands`` to every address at once; map each to its replies or error."""
    calls = tuple(Direct(target, a, commands, timeout, sentinel=sentinel) for a in addresses)
    results: list[Any] = yield Gather(calls)
    return dict(zip(addresses, results, strict=True))


def ping_all(
    target: Target, addresses: Sequence[Address], timeout: float
) -> Generator[Effect, Any, Discovery]:
    """PING every address; the view is None, the errors say who did not answer."""
    answers = yield from probe(target, addresses, (("PING",),), timeout)
    return Discovery(None, {a: r for a, r in answers.items() if isinstance(r, BaseException)})


def read_master_counts(
    target: Target, view: TopologyView, timeout: float, *, cluster: bool = False
) -> Generator[Effect, Any, TopologyView]:
    """Raise ``view``'s WAIT counts to what each master says of its own replicas (all
    masters at once; one that does not answer keeps the topology's count): its ``INFO
    replication`` and, in a cluster, its own ``CLUSTER NODES`` (the node first asked may
    not have heard yet, by gossip, that a replica follows that master)."""
    if not view.masters:
        return view
    commands: tuple[tuple[str, ...], ...] = (("INFO", "replication"),)
    if cluster:
        commands += (("CLUSTER", "NODES"),)
    answers = yield from probe(target, view.masters, commands, timeout)
    counts: dict[Address, int] = {}
    for master, reply in answers.items():
        if isinstance(reply, BaseException):
            continue
        count = master_replica_count(reply[0])
        if cluster:
            count = max(count, own_replica_count(reply[1]))
            if (
                count == 0
                and not view.replicas.get(master)
                and keeps_replication_backlog(reply[0], never_promoted=True)
            ):
                # No view names a replica of this master yet (gossip on a fresh
                # cluster), none is connected, yet one attached recently: wait for it.
                count = 1
        counts[master] = count
    return view.with_master_counts(counts)


def discover_cluster(
    target: Target, candidates: Sequence[Address], nat: NatMap, timeout: float
) -> Generator[Effect, Any, Discovery]:
    """Ask candidates for ``CLUSTER NODES`` one after another until one answers.

    One at a time on purpose: the first answer is usually enough, and asking a paused
    node costs one timeout only when it is first in line.
    """
    errors: dict[Address, BaseException] = {}
    for address in dict.fromkeys(candidates):
        answers = yield from probe(target, [address], (("CLUSTER", "NODES"),), timeout)
        reply = answers[address]
        if isinstance(reply, BaseException):
            errors[address] = reply
            continue
        view = parse_cluster_nodes(reply[0], address, nat)
        view = yield from read_master_counts(target, view, timeout, cluster=True)
        return Discovery(view, errors)
    return Discovery(None, errors)


def discover_sentinel(
    target: Target,
    sentinels: Sequence[Address],
    master_name: str,
    data_template: Address,
    *,
    nat: NatMap,
    require_link_ok: bool,
    timeout: float,
    remembered: dict[Address, int] | None = None,
) -> Generator[Effect, Any, Discovery]:
    """Ask every sentinel at once for the master, its replicas and the other sentinels.

    The master is the one most sentinels name (ties: the first sentinel's); its replica
    health comes from a sentinel that names that master, raised to what the master's own
    ``INFO replication`` lists. ``remembered`` (kept by the caller across refreshes) holds
    the most replicas the current master has listed, for those sentinel does not know yet.
    """
    commands = (
        ("SENTINEL", "GET-MASTER-ADDR-BY-NAME", master_name),
        ("SENTINEL", "REPLICAS", master_name),
        ("SENTINEL", "SENTINELS", master_name),
    )
    answers = yield from probe(target, sentinels, commands, timeout, sentinel=True)
    discovery = Discovery(None)
    for address, reply in answers.items():
        if isinstance(reply, BaseException):
            discovery.errors[address] = reply
            continue
        master_reply, replicas_reply, sentinels_reply = reply
        discovery.reports[address] = parse_sentinel_report(
            master_reply,
            replicas_reply,
            sentinels_reply,
            address,
            data_template,
            nat=nat,
            require_link_ok=require_link_ok,
        )
    named = Counter(r.master for r in discovery.reports.values() if r.master is not None)
    if named:
        master = named.most_common(1)[0][0]
        report = next(r for r in discovery.reports.values() if r.master == master)
        answers = yield from probe(target, [master], (("INFO", "replication"),), timeout)
        info = answers[master]
        listed = 0 if isinstance(info, BaseException) else master_replica_count(info[0])
        if (
            listed == 0
            and not report.replicas
            and not isinstance(info, BaseException)
            and keeps_replication_backlog(info[0])
        ):
            # Sentinel lists no replica yet (it learns them from the master every 10 s)
            # and none is connected now, yet the master had one recently: a replica cut
            # off before this client or its sentinels saw it. Wait for one.
            listed = 1
        healthy = report.healthy_replicas
        if remembered is not None:
            # Replicas the master has shown but sentinel does not list yet (it learns
            # them from the master's INFO, every 10 s) stay counted after a cut, when
            # the master's own count drops: sentinel has not flagged them down.
            for other in [m for m in remembered if m != master]:
                del remembered[other]
            remembered[master] = max(remembered.get(master, 0), listed)
            healthy += max(0, remembered[master] - len(report.replicas))
        discovery.view = TopologyView.single_master(
            master, report.replicas, healthy=max(healthy, listed)
        )
    return discovery


def check_replicas(
    target: Target, master: Address, replicas: Sequence[Address], timeout: float
) -> Generator[Effect, Any, Discovery]:
    """Master/slave: PING the configured replicas; those that answer count as healthy
    (or as many as the master's ``INFO replication`` lists, if more)."""
    answered = yield from ping_all(target, replicas, timeout)
    healthy = len(replicas) - len(answered.errors)
    view = TopologyView.single_master(master, replicas, healthy=healthy)
    view = yield from read_master_counts(target, view, timeout)
    return Discovery(view, answered.errors)
