"""What a connection manager knows of its topology, and how it reads it from Redis.

A `TopologyView` is an immutable snapshot: which master owns each hash slot
(every slot, for the single, master/slave and sentinel modes), how many healthy replicas
each master has (how many a ``WAIT`` after a lock grant asks for), and the replicas to
read from. Managers swap views atomically when a refresh finds a change; what moved
between two views (masters, slots) is computed here too, so the pub/sub layer knows
which subscriptions to re-establish.

The parsers turn the replies of ``CLUSTER NODES`` and of the ``SENTINEL`` commands into
views. The number of replicas a WAIT asks for counts every replica the topology does not
flag as down (cluster ``fail``/``fail?``/``noaddr``; sentinel ``s_down``/``o_down``/
``disconnected``): a link status of ``err`` or a cluster bus link being re-established is
a snapshot (sentinel refreshes a replica's INFO only every 10 s), so such a replica is
waited for, not forgotten. Where the master's own ``INFO replication`` was read, the
larger of the two counts is taken (`TopologyView.with_master_counts`); the master's
count alone is never trusted to go down, since it drops to 0 exactly when a replica has
just been cut off, the moment a WAIT matters most.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from redisson_py.config.addresses import Address
from redisson_py.core.routing.naming import SLOT_COUNT, key_slot

NatMap = Callable[[str, int], tuple[str, int]]


def _identity(host: str, port: int) -> tuple[str, int]:
    return host, port


@dataclass(frozen=True)
class TopologyView:
    """An immutable snapshot of a topology.

    ``slot_starts``/``slot_masters`` are parallel, sorted by start: slot ``s`` belongs to
    ``slot_masters[i]`` for the last ``i`` with ``slot_starts[i] <= s``, unless
    ``uncovered`` says no master serves it. Non-cluster views have one range [0, 16383].
    """

    masters: tuple[Address, ...]
    slot_starts: tuple[int, ...]
    slot_masters: tuple[Address | None, ...]
    replicas: Mapping[Address, tuple[Address, ...]] = field(default_factory=dict)
    healthy_replicas: Mapping[Address, int] = field(default_factory=dict)
    unavailable: str = ""
    """Why no master serves the view's slots, when none does on purpose (replicated
    mode while two nodes claim master): said in the error of a call routed meanwhile."""

    @classmethod
    def single_master(
        cls, master: Address, replicas: Sequence[Address] = (), healthy: int | None = None
    ) -> TopologyView:
        """A view where ``master`` owns every slot (single, master/slave, sentinel, replicated)."""
        return cls(
            masters=(master,),
            slot_starts=(0,),
            slot_masters=(master,),
            replicas={master: tuple(replicas)},
            healthy_replicas={master: len(replicas) if healthy is None else healthy},
        )

    def master_for_slot(self, slot: int) -> Address | None:
        index = bisect.bisect_right(self.slot_starts, slot) - 1
        return self.slot_masters[index] if index >= 0 else None

    def master_for(self, key: str) -> Address | None:
        """The master that owns ``key``'s slot, or None when no master serves it."""
        if len(self.slot_starts) == 1:
            return self.slot_masters[0]
        return self.master_for_slot(key_slot(key))

    def replicas_to_wait_for(self, master: Address) -> int:
        """How many replicas a WAIT after a write on ``master`` must hear from: every
        replica not flagged down (see the module docstring)."""
        return self.healthy_replicas.get(master, 0)

    def with_master_counts(self, counts: Mapping[Address, int]) -> TopologyView:
        """This view with each master's WAIT count raised to what its own ``INFO
        replication`` reported (``counts``), never lowered."""
        raised = dict(self.healthy_replicas)
        changed = False
        for master, count in counts.items():
            if master in self.masters and count > raised.get(master, 0):
                raised[master] = count
                changed = True
        return replace(self, healthy_replicas=raised) if changed else self

    def counting_every_replica(self) -> TopologyView:
        """This view with each master's WAIT count raised to every replica it names,
        flagged down or not: what a client counts when it cannot refresh the view from
        the topology (no sentinel answers). A flag it saw earlier may be stale by now: a
        replica back from a restart and not yet in sync, which the sentinels on the other
        side of a partition could promote, must be waited for."""
        raised = {
            master: max(self.healthy_replicas.get(master, 0), len(self.replicas.get(master, ())))
            for master in self.masters
        }
        if raised == {m: self.healthy_replicas.get(m, 0) for m in self.masters}:
            return self
        return replace(self, healthy_replicas=raised)

    def uncovered_ranges(self) -> list[tuple[int, int]]:
        """Slot ranges no master serves, as inclusive (first, last) pairs."""
        gaps = []
        ends = [*self.slot_starts[1:], SLOT_COUNT]
        for start, end, master in zip(self.slot_starts, ends, self.slot_masters, strict=True):
            if master is None:
                gaps.append((start, end - 1))
        return gaps


def _slot_table(
    owned: Iterable[tuple[int, int, Address]],
) -> tuple[tuple[int, ...], tuple[Address | None, ...]]:
    """Turn (first, last, master) ranges into sorted start/master tables, gaps as None
    and adjacent ranges of one master merged."""
    starts: list[int] = []
    masters: list[Address | None] = []

    def add(start: int, master: Address | None) -> None:
        if masters and masters[-1] == master:
            return  # contiguous with the previous range of the same owner
        starts.append(start)
        masters.append(master)

    cursor = 0
    for first, last, master in sorted(owned, key=lambda r: r[0]):
        if last < cursor:
            continue  # overlaps what an earlier range already claimed
        if first > cursor:
            add(cursor, None)
        add(max(first, cursor), master)
        cursor = last + 1
    if cursor < SLOT_COUNT:
        add(cursor, None)
    return tuple(starts), tuple(masters)


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


# --- Cluster ---------------------------------------------------------------------------

_UNHEALTHY_CLUSTER_FLAGS = frozenset({"fail", "fail?", "noaddr", "handshake"})
"""Flags of a replica not waited for (a node in handshake is not a member yet). The link
column is not consulted: a bus link being re-established says nothing of the replica."""


def parse_cluster_nodes(reply: Any, queried: Address, nat: NatMap = _identity) -> TopologyView:
    """Build a view from a ``CLUSTER NODES`` reply obtained from node ``queried``.

    A node whose address is unknown to itself (``:port``) is the queried one. Slot
    entries in brackets (migrations in progress) are ignored: the source owns the slot
    until the migration ends, and ASK redirects cover the keys already moved.
    """
    masters: dict[str, Address] = {}
    owned: list[tuple[int, int, Address]] = []
    replicas_of: dict[str, list[tuple[Address, bool]]] = {}
    for line in _text(reply).splitlines():
        parts = line.split()
        if len(parts) < 8:
            continue
        node_id, endpoint, flags_text, master_id = parts[0], parts[1], parts[2], parts[3]
        flags = set(flags_text.split(","))
        host_port = endpoint.split("@", 1)[0]
        host, _, port_text = host_port.rpartition(":")
        host = host.strip("[]")
        if not host and "myself" in flags:
            host = queried.host
        if not host or not port_text.isdigit() or "noaddr" in flags:
            continue
        mapped_host, mapped_port = nat(host, int(port_text))
        address = queried.with_endpoint(mapped_host, mapped_port)
        ok = not (flags & _UNHEALTHY_CLUSTER_FLAGS)
        if "master" in flags:
            masters[node_id] = address
            for entry in parts[8:]:
                if entry.startswith("["):
                    continue
                first, _, last = entry.partition("-")
                owned.append((int(first), int(last or first), address))
        elif "slave" in flags and master_id != "-":
            replicas_of.setdefault(master_id, []).append((address, ok))
    # A master flagged as failed still appears until a replica takes over; its slots are
    # kept (the failover will move them) so the view stays total while it lasts.
    starts, slot_masters = _slot_table(owned)
    known = {mid: reps for mid, reps in replicas_of.items() if mid in masters}
    replicas = {masters[mid]: tuple(a for a, _ in reps) for mid, reps in known.items()}
    healthy = {masters[mid]: sum(1 for _, up in reps if up) for mid, reps in known.items()}
    serving = {m for m in slot_masters if m is not None}
    return TopologyView(
        masters=tuple(sorted(serving, key=str)),
        slot_starts=starts,
        slot_masters=slot_masters,
        replicas=replicas,
        healthy_replicas=healthy,
    )


def own_replica_count(reply: Any) -> int:
    """How many replicas a cluster master lists as its own in its ``CLUSTER NODES``
    (those not flagged down); 0 when the answering node is not a master."""
    lines = [line.split() for line in _text(reply).splitlines()]
    lines = [parts for parts in lines if len(parts) >= 8]
    me = next((p for p in lines if "myself" in p[2].split(",")), None)
    if me is None or "master" not in me[2].split(","):
        return 0
    return sum(
        1
        for parts in lines
        if parts[3] == me[0]
        and "slave" in (flags := set(parts[2].split(",")))
        and not flags & _UNHEALTHY_CLUSTER_FLAGS
    )


# --- Sentinel --------------------------------------------------------------------------

_UNHEALTHY_SENTINEL_FLAGS = frozenset({"s_down", "o_down", "disconnected"})


def sentinel_records(reply: Any) -> list[dict[str, str]]:
    """Decode ``SENTINEL REPLICAS/SENTINELS`` replies (RESP2 flat lists or RESP3 maps)."""
    records = []
    for item in reply or ():
        if isinstance(item, Mapping):
            records.append({_text(k): _text(v) for k, v in item.items()})
        else:
            values = list(item)
            records.append(
                {_text(values[i]): _text(values[i + 1]) for i in range(0, len(values) - 1, 2)}
            )
    return records


@dataclass(frozen=True)
class SentinelReport:
    """What one sentinel said about the monitored master."""

    master: Address | None
    replicas: tuple[Address, ...]
    healthy_replicas: int
    sentinels: tuple[Address, ...]


def parse_sentinel_report(
    master_reply: Any,
    replicas_reply: Any,
    sentinels_reply: Any,
    sentinel: Address,
    data_template: Address,
    *,
    nat: NatMap = _identity,
    require_link_ok: bool = True,
) -> SentinelReport:
    """Decode a sentinel's answers to GET-MASTER-ADDR-BY-NAME, REPLICAS and SENTINELS.

    ``healthy_replicas`` (the WAIT count) is every replica sentinel flags neither down
    nor disconnected, whatever its ``master-link-status``: sentinel refreshes that from
    the replica's INFO only every 10 s, so ``err`` is often a stale snapshot of a replica
    that is attaching or re-attaching, exactly when a grant must wait for it.
    ``require_link_ok`` (Redisson's ``checkSlaveStatusWithSyncing``) is accepted for
    that setting's sake and no longer lowers the count. Data-node addresses take
    ``data_template``'s scheme and credentials; sentinel addresses take ``sentinel``'s.
    """
    master = None
    if master_reply:
        host, port = _text(master_reply[0]), int(_text(master_reply[1]))
        master = data_template.with_endpoint(*nat(host, port))
    replicas: list[Address] = []
    healthy = 0
    for record in sentinel_records(replicas_reply):
        if "ip" not in record or "port" not in record:
            continue
        address = data_template.with_endpoint(*nat(record["ip"], int(record["port"])))
        replicas.append(address)
        flags = set(record.get("flags", "").split(","))
        if not (flags & _UNHEALTHY_SENTINEL_FLAGS):
            healthy += 1
    sentinels = tuple(
        sentinel.with_endpoint(*nat(r["ip"], int(r["port"])))
        for r in sentinel_records(sentinels_reply)
        if "ip" in r and "port" in r
    )
    return SentinelReport(master, tuple(replicas), healthy, sentinels)


def master_replica_count(info: Any) -> int:
    """How many replicas a master's ``INFO replication`` lists: the larger of
    ``connected_slaves`` and its ``slaveN:`` lines, in any state (a replica still in its
    initial sync is one to wait for)."""
    connected = 0
    lines = 0
    for line in _text(info).splitlines():
        key, _, value = line.strip().partition(":")
        if key == "connected_slaves" and value.isdigit():
            connected = int(value)
        elif key.startswith("slave") and key[5:].isdigit() and "ip=" in value:
            lines += 1
    return max(connected, lines)


def attached_replicas(role: Any) -> int:
    """How many replicas a master's ``ROLE`` reply lists as attached now (0 for a reply
    that is not a master's, or an error: a user the ACL denies ``ROLE``)."""
    if isinstance(role, BaseException) or not isinstance(role, list | tuple) or len(role) < 3:
        return 0
    if _text(role[0]) != "master" or not isinstance(role[2], list | tuple):
        return 0
    return len(role[2])


def keeps_replication_backlog(info: Any, *, never_promoted: bool = False) -> bool:
    """True when a master's ``INFO replication`` says it keeps a replication backlog
    (``repl_backlog_active:1``): Redis creates it when a replica attaches and frees it
    only ``repl-backlog-ttl`` (an hour by default) after the last one left, so a master
    that keeps one has had a replica recently, even when none is connected now.

    A promoted replica keeps the backlog it had as a replica, with no replica of its
    own; with ``never_promoted`` such a master (``second_repl_offset`` set) is not
    counted."""
    fields = {}
    for line in _text(info).splitlines():
        key, _, value = line.strip().partition(":")
        fields[key] = value.strip()
    if fields.get("repl_backlog_active") != "1":
        return False
    return not never_promoted or fields.get("second_repl_offset", "-1") == "-1"


def parse_switch_master(message: Any) -> tuple[str, str, int] | None:
    """Decode a ``+switch-master`` message: (master name, new host, new port)."""
    parts = _text(message).split()
    if len(parts) != 5 or not parts[4].isdigit():
        return None
    return parts[0], parts[3], int(parts[4])
