"""``redisson-py lock list [PATTERN]``: find every lock (and semaphore, latch, fenced
resource) on the topology, for stuck locks nobody knows the name of.

SCAN walks the keyspace of every master (a cluster's every master; the master of the
single, master/slave and sentinel modes) one page at a time (``COUNT`` `PAGE`). Each key
is mapped back to the object it belongs to (`object_name`: the object's own key, or an
auxiliary key such as a fair lock's queue ``redisson_lock_queue:{name}``, which is all an
idle fair lock with waiters has); redisson-py's bookkeeping keys (request and unlock
latches, read holds' timeouts) are skipped. The names found on a page are read in two
pipelined round trips (`redisson_py.cli.lock_data`'s reads, not one transaction per
name: a name that changes type between them is read again on its own): the first asks
each name's type and counts its auxiliary keys (one ``EXISTS``: they share its slot), so
a key with none that no object of ours looks like (a set, a list) costs no second read;
the second reads it bounded (``HSCAN``, ``GETRANGE``: a big key is never fetched whole),
and its auxiliary keys only when some exist. Each is then recognised as
``lock status`` recognises them (`redisson_py.cli.lock_data.recognise`, shared), and
listed when they are a lock, a semaphore, a latch or a fenced resource (``not locked``
and ``other`` are left out). ``PATTERN`` is a glob (``fnmatch``: ``*``, ``?``,
``[...]``) on the object's name, not on its keys.
"""

from __future__ import annotations

import fnmatch
import time
from collections.abc import Iterator
from typing import Any

import redis

from redisson_py.cli.common import text
from redisson_py.cli.lock_data import (
    FENCED_RESOURCE_KIND,
    NOT_LOCKED,
    OTHER,
    KeyNames,
    auxiliary_keys,
    channel_subscribers,
    classify,
    parse_bounded_reads,
    queue_bounded_reads,
    read_snapshot,
    said,
    status_channels,
    status_entry,
)
from redisson_py.config import redact_address
from redisson_py.core import keyspace
from redisson_py.errors import RedissonError

__all__ = ["PAGE", "ListResult", "format_list", "list_locks", "object_name"]

PAGE = 1000
"""SCAN's ``COUNT``: keys asked for per round trip."""

_AUX_PREFIXES = {
    keyspace.FAIR_QUEUE_PREFIX: "fair_queue",
    keyspace.FAIR_TIMEOUT_PREFIX: "fair_timeouts",
    keyspace.FAIR_ALIVE_PREFIX: "fair_alive",
    keyspace.FENCED_TOKEN_PREFIX: "fenced_token",
    keyspace.FENCE_PREFIX: "fence_record",
}
"""Prefixes of auxiliary keys -> the `KeyNames` attribute that names them."""

_QUEUED_KEYS = {
    keyspace.QUEUED_QUEUE_PREFIX: keyspace.queued_queue,
    keyspace.QUEUED_ALIVE_PREFIX: keyspace.queued_alive,
    keyspace.QUEUED_ENTRIES_PREFIX: keyspace.queued_entries,
}
"""A queued lock's waiter keys (its kind is not told apart yet: its hash reads as the
reentrant lock's); each leads back to the lock's name."""

_SKIPPED_PREFIXES = (
    keyspace.UNLOCK_LATCH_PREFIX + ":",
    keyspace.REQUEST_PREFIX + ":",
    keyspace.ACQUIRE_LATCHES_PREFIX + ":",  # a read-write lock's acquire latches
)
_READ_HOLD_MARK = f":{keyspace.READ_HOLD_TIMEOUT}:"


def _unwrapped(rest: str) -> list[str]:
    """The names whose hashtagged form may be ``rest`` (``{name}``, ``name``, or a
    cluster's ``{<slot tag>}:name``); the caller keeps the one whose keys match."""
    names = [rest]
    if rest.startswith("{") and rest.endswith("}"):
        names.insert(0, rest[1:-1])
    tag, closing, remainder = rest.partition("}:")
    if tag.startswith("{") and closing and "}" in remainder:
        # a cluster's slot-tagged form of a name with "}": first, as ``{tag}:name`` with
        # a valid hashtag names the same keys
        names.insert(0, remainder)
    return names


def object_name(key: str, *, by_slot: bool) -> str | None:
    """The object ``key`` belongs to: its auxiliary key's owner, or ``key`` itself;
    None for bookkeeping keys (request, unlock and read-write acquire latches, read
    holds' timeouts)."""
    if key.startswith(_SKIPPED_PREFIXES) or _READ_HOLD_MARK in key:
        return None
    prefix, colon, rest = key.partition(":")
    if colon and prefix in _QUEUED_KEYS:
        for name in _unwrapped(rest):
            if _QUEUED_KEYS[prefix](name, by_slot=by_slot) == key:
                return name
    if colon and prefix in _AUX_PREFIXES:
        attribute = _AUX_PREFIXES[prefix]
        for name in _unwrapped(rest):
            if getattr(KeyNames.of(name, by_slot=by_slot), attribute) == key:
                return name
    suffix = ":" + keyspace.PERMIT_TIMEOUT_SUFFIX
    if key.endswith(suffix):  # a permit-expirable semaphore's acquired permits
        for name in _unwrapped(key[: -len(suffix)]):
            if KeyNames.of(name, by_slot=by_slot).permits == key:
                return name
    return key


class ListResult:
    """What `list_locks` found: ``entries`` (``lock status`` entries, in scan order per
    master), ``masters`` (addresses scanned), ``keys`` (keys scanned), ``seconds``."""

    def __init__(self) -> None:
        self.entries: list[dict[str, Any]] = []
        self.masters: list[str] = []
        self.keys = 0
        self.seconds = 0.0

    def as_json(self) -> dict[str, Any]:
        return {
            "locks": self.entries,
            "masters": self.masters,
            "keys_scanned": self.keys,
            "seconds": round(self.seconds, 3),
        }


def list_locks(client: Any, pattern: str | None = None, *, page: int = PAGE) -> ListResult:
    """Every lock-like object on the masters of ``client`` (a sync Redisson) whose name
    matches ``pattern`` (a glob; None: all).

    Raises [`RedissonError`][redisson_py.errors.RedissonError] naming the address of a
    master that cannot be read (unreachable, or refusing SCAN)."""
    manager = client.connection_manager
    result = ListResult()
    started = time.monotonic()
    for address in manager.view.masters:
        where = redact_address(str(address))
        result.masters.append(where)
        try:
            node_client = manager.pools.client(address)
            result.entries.extend(_scan_node(manager, node_client, address, pattern, page, result))
        except redis.RedisError as exc:  # one line naming the node, not a traceback
            raise RedissonError(f"listing locks on {where}: {exc}") from exc
    result.seconds = time.monotonic() - started
    return result


def _scan_node(  # noqa: PLR0917 (private: one call site)
    manager: Any,
    node_client: Any,
    address: Any,
    pattern: str | None,
    page: int,
    result: ListResult,
) -> Iterator[dict[str, Any]]:
    by_slot = manager.routes_by_slot
    seen: set[str] = set()
    cursor: int = 0
    while True:
        cursor, keys = node_client.scan(cursor, count=page)
        result.keys += len(keys)
        names: list[tuple[str, bool]] = []  # (name, found as an auxiliary key)
        for raw in keys:
            key = text(raw)
            name = object_name(key, by_slot=by_slot)
            if name is None or name in seen:
                continue
            if pattern is not None and not fnmatch.fnmatchcase(name, pattern):
                continue
            seen.add(name)
            names.append((name, name != key))
        yield from _read_page(manager, node_client, address, names)
        if int(cursor) == 0:
            return


def _read_page(
    manager: Any, node_client: Any, address: Any, names: list[tuple[str, bool]]
) -> Iterator[dict[str, Any]]:
    """The entries of ``names`` (one SCAN page): sized in one pipeline, read in a
    second, their channels' subscribers in one PUBSUB call."""
    if not names:
        return
    by_slot = manager.routes_by_slot
    named = [(KeyNames.of(name, by_slot=by_slot), auxiliary) for name, auxiliary in names]
    typing = node_client.pipeline(transaction=False)
    for keys, _ in named:
        typing.type(keys.name)
        typing.exists(*auxiliary_keys(keys))
    replies = typing.execute(raise_on_error=False)
    planned: list[tuple[KeyNames, str, bool]] = []
    for index, (keys, auxiliary) in enumerate(named):
        key_type = text(replies[2 * index])
        whole = auxiliary or bool(replies[2 * index + 1])  # an auxiliary key exists
        if whole or key_type in ("hash", "string"):  # else no object of ours
            planned.append((keys, key_type, whole))
    reads = node_client.pipeline(transaction=False)
    counts = [
        queue_bounded_reads(reads, keys, key_type, auxiliary=whole)
        for keys, key_type, whole in planned
    ]
    replies = reads.execute(raise_on_error=False)
    found = []
    offset = 0
    for (keys, key_type, whole), count in zip(planned, counts, strict=True):
        chunk = replies[offset : offset + count]
        offset += count
        if text(chunk[0]) != key_type:  # changed between the two reads: read it alone
            snapshot = read_snapshot(node_client, keys)
        else:
            snapshot = parse_bounded_reads(chunk, key_type, auxiliary=whole)
        layout = classify(snapshot)
        if layout in (NOT_LOCKED, OTHER):
            continue
        found.append((keys, snapshot, layout))
    channels = sorted({c for keys, _, layout in found for c in status_channels(keys, layout)})
    subscribers = channel_subscribers(manager, node_client, channels)
    for keys, snapshot, _ in found:
        yield status_entry(keys, snapshot, subscribers, address)


def _ttl(entry: dict[str, Any]) -> str:
    ttl = entry["ttl_ms"]
    return "-" if ttl is None else f"{ttl / 1000:.1f}s"


def _holders(entry: dict[str, Any]) -> str:
    holders = [
        f"{h['field']}x{h['count']}" + (f" ({h['mode']})" if h["mode"] else "")
        for h in entry["holders"]
    ]
    if entry["value"] is not None:
        holders.append(f"value {entry['value']}")
    if entry["fence"] is not None:
        holders.append(f"fence {entry['fence']['token']}")
    return ", ".join(holders) or "-"


def format_list(result: ListResult) -> str:
    """``result`` as the table ``lock list`` prints: one row per object (name, kind or
    "cannot tell: ...", holders as ``field x count``, TTL, waiters, node), then a summary
    line."""
    rows = [("NAME", "KIND", "HOLDERS", "TTL", "WAITERS", "NODE")]
    for entry in result.entries:
        waiters = entry["waiters"]
        rows.append(
            (
                entry["name"],
                said(entry["kind"], entry["kinds"]),
                _holders(entry),
                _ttl(entry),
                "-"
                if entry["kind"] == FENCED_RESOURCE_KIND
                else "?"
                if waiters is None
                else str(waiters),
                entry["node"] or "-",
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    lines = [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=False))
        + "  "
        + row[-1]
        for row in rows
    ]
    if len(rows) == 1:
        lines = ["no locks found"]
    lines.append(
        f"{len(result.entries)} object(s); {result.keys} key(s) scanned on "
        f"{len(result.masters)} master(s) in {result.seconds:.2f} s"
    )
    return "\n".join(lines)
