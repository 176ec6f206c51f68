"""Parsing raw Redis replies the harness reads (INFO, ROLE, CLUSTER SLOTS, SENTINEL ...).

The harness's own clients have redis-py's response callbacks switched off, because what
those callbacks return has changed between redis-py versions (RESP2, RESP3, "unified"
shapes); the raw replies are what Redis documents and do not change. These functions are
pure and take the decoded (``str``) replies.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "ClusterNodeEntry",
    "SlotRange",
    "is_pubsub_connection",
    "parse_client_list",
    "parse_cluster_nodes",
    "parse_cluster_slots",
    "parse_info",
    "parse_pairs",
    "parse_replica_entries",
]


def parse_info(text: str) -> dict[str, str]:
    """``INFO`` text as a flat mapping of field to value (section headers dropped)."""
    out: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#") or ":" not in line:
            continue
        key, _, value = line.partition(":")
        out[key] = value
    return out


def parse_client_list(text: str) -> list[dict[str, str]]:
    """``CLIENT LIST`` text: one mapping of field to value (``name``, ``flags``, ``sub``,
    ``ssub``...) per connection."""
    return [
        dict(field.split("=", 1) for field in line.split() if "=" in field)
        for line in text.splitlines()
        if line.strip()
    ]


def is_pubsub_connection(entry: Mapping[str, str]) -> bool:
    """Whether a ``CLIENT LIST`` entry is a connection in pub/sub mode (flag ``P``, or
    subscribed to a channel, a pattern or a shard channel)."""
    counts = (entry.get(field, "0") for field in ("sub", "psub", "ssub"))
    return "P" in entry.get("flags", "") or any(c not in ("", "0") for c in counts)


def parse_replica_entries(info: dict[str, str]) -> list[dict[str, str]]:
    """The ``slaveN:ip=...,port=...,state=online,...`` entries of INFO replication."""
    entries: list[dict[str, str]] = []
    for key, value in info.items():
        if key.startswith("slave") and key[5:].isdigit():
            fields = dict(part.split("=", 1) for part in value.split(",") if "=" in part)
            entries.append(fields)
    return entries


def parse_pairs(reply: Sequence[Any] | Mapping[Any, Any]) -> dict[str, str]:
    """A flat ``[key, value, key, value, ...]`` reply (SENTINEL MASTER/REPLICAS entries);
    a RESP3 map is accepted too."""
    if isinstance(reply, Mapping):
        return {str(k): str(v) for k, v in reply.items()}
    items = [str(item) for item in reply]
    return dict(zip(items[0::2], items[1::2], strict=False))


@dataclass(frozen=True)
class SlotRange:
    """One range of ``CLUSTER SLOTS``: slots ``start..end`` (inclusive) served by
    ``master_port`` with ``replica_ports``, all on 127.0.0.1 here."""

    start: int
    end: int
    master_host: str
    master_port: int
    replica_ports: tuple[int, ...]


def parse_cluster_slots(reply: Sequence[Any]) -> list[SlotRange]:
    """``CLUSTER SLOTS`` as `SlotRange` values sorted by first slot."""
    ranges: list[SlotRange] = []
    for entry in reply:
        start, end, master, *replicas = entry
        ranges.append(
            SlotRange(
                start=int(start),
                end=int(end),
                master_host=str(master[0]),
                master_port=int(master[1]),
                replica_ports=tuple(sorted(int(r[1]) for r in replicas)),
            )
        )
    ranges.sort(key=lambda r: r.start)
    return ranges


@dataclass(frozen=True)
class ClusterNodeEntry:
    """One line of ``CLUSTER NODES``: who a node is, as seen by the node asked."""

    node_id: str
    port: int
    flags: frozenset[str]
    master_id: str | None
    connected: bool

    @property
    def is_master(self) -> bool:
        return "master" in self.flags

    @property
    def failed(self) -> bool:
        return bool(self.flags & {"fail", "fail?", "noaddr", "handshake"})


def parse_cluster_nodes(text: str) -> list[ClusterNodeEntry]:
    """``CLUSTER NODES`` text as `ClusterNodeEntry` values."""
    entries: list[ClusterNodeEntry] = []
    for line in text.splitlines():
        fields = line.split()
        if len(fields) < 8:
            continue
        # "127.0.0.1:7000@17000[,hostname]"
        address = fields[1].split(",")[0].split("@")[0]
        port_text = address.rpartition(":")[2]
        entries.append(
            ClusterNodeEntry(
                node_id=fields[0],
                port=int(port_text) if port_text.isdigit() else 0,
                flags=frozenset(fields[2].split(",")),
                master_id=None if fields[3] == "-" else fields[3],
                connected=fields[7] == "connected",
            )
        )
    return entries
