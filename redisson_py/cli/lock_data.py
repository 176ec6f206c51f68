"""What ``redisson-py lock status`` and ``lock unlock`` read: the kind of object a name
holds, told from its data alone, and what that data says (holders, waiters, tokens,
permits).

Every key is named by the library's own functions (`redisson_py.core.routing.naming`, the
lock kinds' ``aux_keys`` and the objects' layouts), with the topology's ``by_slot``, and
read on the master the library routes the name to (``client.redis(name)``): all of an
object's keys share its hash slot, so one MULTI/EXEC reads them as one snapshot.

Kinds, and the data that tells them (see `classify`):

- ``reentrant``: Redisson's hash of owner fields ``<client uuid>:<owner id>`` -> hold
  count. Spin and non-reentrant locks have exactly this layout, and so has a fair lock
  nobody waits for, so they show as ``reentrant`` too.
- ``fair``: that hash, plus a waiter queue ``redisson_lock_queue:{name}`` or its
  timeouts ``redisson_lock_timeout:{name}`` (the queue may exist with no holder).
- ``fenced``: that hash, or no hash, plus a token counter ``redisson_lock_token:{name}``.
- ``read-write``: a hash with a ``mode`` field (``read`` or ``write``); writers' fields
  end in ``:write``.
- ``semaphore or count-down latch``: a plain integer string at ``name``; a semaphore's
  available permits and a latch's count look the same (and so does a permit-expirable
  semaphore none of whose permits is taken).
- ``permit-expirable semaphore``: the same count plus the sorted set ``{name}:timeout``
  of acquired permits (id -> expiry in wall-clock ms).
- ``fenced resource``: a fence record ``redisson_py_fence:{name}`` (highest token,
  owner) exists; ``name`` itself is the resource (a string, a hash, or absent).
- ``not locked``: none of these keys exists; ``other``: ``name`` holds something else.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import Any

import redis

from redisson_py.cli.common import text
from redisson_py.config import redact_address
from redisson_py.core.flows import count_down_latch as latch_flows
from redisson_py.core.flows import permit_semaphore as permit_flows
from redisson_py.core.flows import semaphore as semaphore_flows
from redisson_py.core.flows.lock_kinds import ACQUIRE_LATCH_PREFIX, FAIR, FENCED, READ
from redisson_py.core.routing import naming
from redisson_py.core.scripts import fenced_resource as fencing
from redisson_py.core.scripts import rwlock
from redisson_py.core.scripts.permit_semaphore import NO_LEASE
from redisson_py.errors import RedissonError

__all__ = [
    "FAIR_KIND",
    "FENCED_KIND",
    "FENCED_RESOURCE_KIND",
    "LOCK_KINDS",
    "NOT_LOCKED",
    "OTHER",
    "PERMIT_SEMAPHORE_KIND",
    "READ_WRITE_KIND",
    "REENTRANT_KIND",
    "SEMAPHORE_OR_LATCH_KIND",
    "KeyNames",
    "Snapshot",
    "classify",
    "lock_status",
    "read_snapshot",
]

REENTRANT_KIND = "reentrant"
FAIR_KIND = "fair"
FENCED_KIND = "fenced"
READ_WRITE_KIND = "read-write"
SEMAPHORE_OR_LATCH_KIND = "semaphore or count-down latch"
PERMIT_SEMAPHORE_KIND = "permit-expirable semaphore"
FENCED_RESOURCE_KIND = "fenced resource"
NOT_LOCKED = "not locked"
OTHER = "other"
LOCK_KINDS = frozenset({REENTRANT_KIND, FAIR_KIND, FENCED_KIND, READ_WRITE_KIND})
"""The kinds ``lock unlock --force`` frees (besides ``not locked``, a no-op)."""

_OWNER_FIELD = re.compile(r"^[0-9a-fA-F-]{36}:.+$")
_INTEGER = re.compile(r"^-?[0-9]{1,19}$")
_MAX_STRING = 64
"""A string longer than this is no counter: its value is not read."""
_MAX_FIELDS = 10_000
"""A hash with more fields than this is no lock: its fields are not read."""
_READ_ATTEMPTS = 3


@dataclass(frozen=True, slots=True)
class KeyNames:
    """Every key and channel an object named ``name`` may have, one per layout, named
    as the library names them on a topology that does (``by_slot``) or does not route
    by hash slot."""

    name: str
    lock_channel: str
    fair_queue: str
    fair_timeouts: str
    fair_alive: str
    fenced_token: str
    read_write_channel: str
    permits: str
    semaphore_channel: str
    latch_channel: str
    fence_record: str

    @classmethod
    def of(cls, name: str, *, by_slot: bool) -> KeyNames:
        """The names for object ``name``."""
        queue, timeouts, alive = FAIR.aux_keys(name, by_slot)
        (token,) = FENCED.aux_keys(name, by_slot)
        (permits,) = permit_flows.LAYOUT.aux(name, by_slot)
        return cls(
            name=name,
            lock_channel=naming.channel_name(name, by_slot=by_slot),
            fair_queue=queue,
            fair_timeouts=timeouts,
            fair_alive=alive,
            fenced_token=token,
            read_write_channel=naming.prefixed_name(READ.channel_prefix, name, by_slot=by_slot),
            permits=permits,
            semaphore_channel=semaphore_flows.LAYOUT.channel(name, by_slot),
            latch_channel=latch_flows.LAYOUT.channel(name, by_slot),
            fence_record=naming.prefixed_name(fencing.FENCE_PREFIX, name, by_slot=by_slot),
        )


@dataclass(slots=True)
class Snapshot:
    """The data under one name, read at one instant.

    ``key_type`` is Redis's ``TYPE`` of ``name`` (``none`` when absent); ``fields`` its
    hash fields but redisson-py's acquire-request fields (None: not a hash, or too big
    to be a lock); ``value`` its string (None: not a string, or too long to be a count);
    ``queue`` the fair queue's owner fields in order, ``timeouts`` their timeouts (ms);
    ``permits`` the acquired permits (id, expiry ms); ``fence`` the fence record.
    """

    key_type: str = "none"
    ttl_ms: int | None = None
    fields: dict[str, str] | None = None
    value: str | None = None
    token: str | None = None
    queue: list[str] = field(default_factory=list)
    timeouts: dict[str, int] = field(default_factory=dict)
    permits: list[tuple[bytes, int]] = field(default_factory=list)
    fence: dict[str, str] = field(default_factory=dict)


def _ok(reply: Any) -> Any:
    """A transaction's reply, or None when that command failed (a key of another type)."""
    return None if isinstance(reply, Exception) else reply


def read_snapshot(redis_client: Any, keys: KeyNames) -> Snapshot:
    """Read every key of ``keys`` in one MULTI/EXEC on ``redis_client`` (the master of
    the name's slot). A first transaction sizes ``name`` (its type, string length, hash
    length), so a big key that is no lock is never fetched; if its type changed before
    the second, both are read again (a few times at most; then the last reading stands,
    without the contents of ``name``)."""
    name = keys.name
    snapshot = Snapshot()
    for attempt in range(1, _READ_ATTEMPTS + 1):
        sizing = redis_client.pipeline(transaction=True)
        sizing.type(name).strlen(name).hlen(name)
        key_type, length, field_count = (_ok(r) for r in sizing.execute(raise_on_error=False))
        key_type = text(key_type)
        reads = redis_client.pipeline(transaction=True)
        reads.type(name).pttl(name)
        reads.get(keys.fenced_token)
        reads.lrange(keys.fair_queue, 0, -1)
        reads.zrange(keys.fair_timeouts, 0, -1, withscores=True)
        reads.zrange(keys.permits, 0, -1, withscores=True)
        reads.hgetall(keys.fence_record)
        if key_type == "hash" and int(field_count or 0) <= _MAX_FIELDS:
            reads.hgetall(name)
        elif key_type == "string" and int(length or 0) <= _MAX_STRING:
            reads.get(name)
        replies = [_ok(r) for r in reads.execute(raise_on_error=False)]
        if text(replies[0]) != key_type:
            if attempt < _READ_ATTEMPTS:
                continue  # changed in between: read again
            key_type, replies = text(replies[0]), replies[:7]
        snapshot = Snapshot(key_type=key_type)
        ttl = replies[1]
        snapshot.ttl_ms = int(ttl) if ttl is not None and int(ttl) >= 0 else None
        snapshot.token = None if replies[2] is None else text(replies[2])
        snapshot.queue = [text(owner) for owner in replies[3] or ()]
        snapshot.timeouts = {text(owner): int(score) for owner, score in replies[4] or ()}
        snapshot.permits = [
            (member if isinstance(member, bytes) else text(member).encode(), int(score))
            for member, score in replies[5] or ()
        ]
        snapshot.fence = {text(k): text(v) for k, v in (replies[6] or {}).items()}
        if len(replies) > 7 and replies[7] is not None:
            if key_type == "hash":
                fields = {text(k): text(v) for k, v in replies[7].items()}
                # redisson-py's per-owner acquire-request fields ride along with the owners
                snapshot.fields = {
                    k: v for k, v in fields.items() if not k.startswith(ACQUIRE_LATCH_PREFIX)
                }
            else:
                snapshot.value = text(replies[7])
        break
    return snapshot


def _owner_holds(fields: dict[str, str]) -> bool:
    """Every field is an owner field with a hold count (and there is one at least)."""
    return bool(fields) and all(_OWNER_FIELD.match(f) and v.isdigit() for f, v in fields.items())


def classify(snapshot: Snapshot) -> str:
    """The kind of object ``snapshot`` shows (see the module docstring)."""
    fields = snapshot.fields
    if snapshot.key_type == "hash" and fields is not None:
        mode = fields.get("mode")
        holders = {k: v for k, v in fields.items() if k != "mode"}
        if mode in ("read", "write") and _owner_holds(holders):
            return READ_WRITE_KIND
        if mode is None and _owner_holds(fields):
            if snapshot.queue or snapshot.timeouts:
                return FAIR_KIND
            return FENCED_KIND if snapshot.token is not None else REENTRANT_KIND
    if snapshot.fence:
        return FENCED_RESOURCE_KIND
    if snapshot.key_type == "string" and _INTEGER.match(snapshot.value or ""):
        return PERMIT_SEMAPHORE_KIND if snapshot.permits else SEMAPHORE_OR_LATCH_KIND
    if snapshot.key_type == "none":
        if snapshot.queue or snapshot.timeouts:
            return FAIR_KIND  # waiters queued, nobody holds it (for now)
        if snapshot.permits:
            return PERMIT_SEMAPHORE_KIND  # every permit taken, no count key
        if snapshot.token is not None:
            return FENCED_KIND  # not held; its token counter stays
        return NOT_LOCKED
    return OTHER


def _holder(field_name: str, count: str, mode: str | None) -> dict[str, Any]:
    owner = field_name
    if mode is not None and owner.endswith(rwlock.WRITE_SUFFIX):
        owner = owner[: -len(rwlock.WRITE_SUFFIX)]
        mode = "write"
    client_id, _, owner_id = owner.partition(":")
    return {
        "field": field_name,
        "client_id": client_id,
        "owner_id": owner_id,
        "count": int(count),
        "mode": mode,
    }


def _numsub(manager: Any, redis_client: Any, channels: list[str]) -> int | None:
    """Clients subscribed to ``channels`` (summed), or None when unknowable: classic
    pub/sub on a cluster, where subscribers may sit on any node."""
    if manager.publish_command == "spublish":
        reply = redis_client.execute_command("PUBSUB", "SHARDNUMSUB", *channels)
    elif manager.routes_by_slot:
        return None
    else:
        reply = redis_client.execute_command("PUBSUB", "NUMSUB", *channels)
    if not isinstance(reply, list):
        return None
    # [channel, count, ...] (redis-py may already have paired it up)
    if reply and isinstance(reply[0], tuple):
        return sum(int(count) for _, count in reply)
    return sum(int(count) for count in reply[1::2])


def lock_status(client: Any, name: str) -> dict[str, Any]:
    """What Redis says about the object ``name``, read through ``client`` (a sync
    Redisson): the ``lock status --json`` entry (see docs/cli.md for every field).

    Fields present for every kind: ``name``, ``kind``, ``type`` (Redis's type of
    ``name``, null when absent), ``node``, ``locked`` (null for what is no lock),
    ``holders`` (``field``, ``client_id``, ``owner_id``, ``count``, ``mode``: ``read``
    or ``write`` for a read-write lock, else null), ``ttl_ms``, ``waiters`` (a count,
    null when unknowable or not applicable), ``mode``, ``queue`` (a fair lock's waiters
    in order: ``field``, ``client_id``, ``owner_id``, ``timeout_ms``), ``token``,
    ``value``, ``permits`` (``available``, ``acquired``: ``id``, ``expires_ms``) and
    ``fence`` (``token``, ``owner``), each null (or empty) when the kind has none.
    """
    manager = client.connection_manager
    node = manager.view.master_for(name)
    where = "no master" if node is None else redact_address(str(node))
    try:
        return _status(manager, client.redis(name), name, node)
    except redis.RedisError as exc:  # one line for the operator, not a traceback
        raise RedissonError(f"reading {name!r} on {where}: {exc}") from exc


def _status(manager: Any, redis_client: Any, name: str, node: Any) -> dict[str, Any]:
    keys = KeyNames.of(name, by_slot=manager.routes_by_slot)
    snapshot = read_snapshot(redis_client, keys)
    kind = classify(snapshot)
    entry: dict[str, Any] = {
        "name": name,
        "kind": kind,
        "type": None if snapshot.key_type == "none" else snapshot.key_type,
        "node": None if node is None else redact_address(str(node)),
        "locked": None,
        "holders": [],
        "ttl_ms": snapshot.ttl_ms,
        "waiters": None,
        "mode": None,
        "queue": [],
        "token": None if snapshot.token is None else _number(snapshot.token),
        "value": None,
        "permits": None,
        "fence": None,
    }
    fields = snapshot.fields or {}
    channels = [keys.lock_channel]
    if kind == READ_WRITE_KIND:
        entry["mode"] = fields["mode"]
        entry["holders"] = [
            _holder(f, count, "read")
            for f, count in sorted(fields.items(), key=_write_first)
            if f != "mode"
        ]
        channels = [keys.read_write_channel]
    elif kind in (REENTRANT_KIND, FAIR_KIND, FENCED_KIND) and snapshot.key_type == "hash":
        entry["holders"] = [_holder(f, count, None) for f, count in sorted(fields.items())]
    if kind in LOCK_KINDS or kind == NOT_LOCKED:
        entry["locked"] = bool(entry["holders"])
    if kind == FAIR_KIND:
        entry["queue"] = [
            {
                "field": owner,
                "client_id": owner.partition(":")[0],
                "owner_id": owner.partition(":")[2],
                "timeout_ms": snapshot.timeouts.get(owner),
            }
            for owner in snapshot.queue
        ]
        entry["waiters"] = len(snapshot.queue)  # exact, whatever the pub/sub
    elif kind in (SEMAPHORE_OR_LATCH_KIND, PERMIT_SEMAPHORE_KIND):
        available = snapshot.value
        entry["value"] = None if available is None else int(available)
        channels = [keys.semaphore_channel]
        if kind == SEMAPHORE_OR_LATCH_KIND:
            channels.append(keys.latch_channel)
        else:
            entry["permits"] = {
                "available": int(available or 0),
                "acquired": [
                    {"id": permit.hex(), "expires_ms": None if expiry >= NO_LEASE else expiry}
                    for permit, expiry in snapshot.permits
                ],
            }
    if snapshot.fence:
        entry["fence"] = {
            "token": _number(snapshot.fence.get("token")),
            "owner": snapshot.fence.get("owner"),
        }
    if kind not in (FAIR_KIND, FENCED_RESOURCE_KIND):
        entry["waiters"] = _numsub(manager, redis_client, channels)
    return entry


def _write_first(item: tuple[str, str]) -> tuple[bool, str]:
    return (not item[0].endswith(rwlock.WRITE_SUFFIX), item[0])


def _number(value: str | None) -> int | str | None:
    """A decimal reply (a token) as an int; anything else as it is."""
    if value is None:
        return None
    return int(value) if _INTEGER.match(value) else value


def _seconds_from_now(ms: int) -> str:
    left = ms / 1000 - time.time()
    return f"in {left:.3f} s" if left >= 0 else f"{-left:.3f} s ago"


def format_status(entry: dict[str, Any]) -> str:
    """``entry`` (from `lock_status`) as the lines ``lock status`` prints."""
    name, kind = entry["name"], entry["kind"]
    lines: list[str] = []
    if kind == NOT_LOCKED:
        lines.append(f"{name}: not locked")
    elif kind == OTHER:
        lines.append(f"{name}: not a lock (a Redis {entry['type']})")
    elif kind == READ_WRITE_KIND:
        lines.append(f"{name}: read-write lock, {entry['mode']} mode")
    elif kind in LOCK_KINDS:
        lines.append(f"{name}: {kind} lock" + ("" if entry["locked"] else ", not held"))
    elif kind == SEMAPHORE_OR_LATCH_KIND:
        lines.append(
            f"{name}: semaphore or count-down latch (the data cannot tell them apart): "
            f"{entry['value']} (a semaphore's available permits, or a latch's count)"
        )
    elif kind == PERMIT_SEMAPHORE_KIND:
        permits = entry["permits"]
        lines.append(
            f"{name}: permit-expirable semaphore: {permits['available']} available, "
            f"{len(permits['acquired'])} acquired"
        )
    else:
        where = "absent" if entry["type"] is None else f"a Redis {entry['type']}"
        lines.append(f"{name}: fenced resource ({where})")
    for holder in entry["holders"]:
        role = f"{holder['mode']} holder" if holder["mode"] else "holder"
        lines.append(
            f"  {role} {holder['client_id']} owner {holder['owner_id']}: "
            f"hold count {holder['count']}"
        )
    if entry["token"] is not None:
        lines.append(f"  token: {entry['token']}")
    for permit in (entry["permits"] or {}).get("acquired", ()):
        expiry = permit["expires_ms"]
        if expiry is None:
            when = "no lease"
        elif expiry * 1e-3 >= time.time():
            when = f"lease ends {_seconds_from_now(expiry)}"
        else:
            when = f"lease ended {_seconds_from_now(expiry)} (back at the next call)"
        lines.append(f"  permit {permit['id']}: {when}")
    if entry["fence"] is not None:
        fence = entry["fence"]
        lines.append(f"  fence: highest token {fence['token']}, owner {fence['owner']}")
    if kind != NOT_LOCKED:
        ttl = entry["ttl_ms"]
        lines.append(f"  ttl: {'none' if ttl is None else f'{ttl / 1000:.3f} s'}")
    waiters = entry["waiters"]
    if kind == FAIR_KIND:
        lines.append(f"  waiters: {waiters} queued")
        for place, waiter in enumerate(entry["queue"], 1):
            timeout = waiter["timeout_ms"]
            when = "no timeout" if timeout is None else f"timeout {_seconds_from_now(timeout)}"
            lines.append(f"  {place}. {waiter['client_id']} owner {waiter['owner_id']}: {when}")
    elif kind != FENCED_RESOURCE_KIND:
        lines.append(f"  waiters: {'unknown' if waiters is None else waiters}")
    if entry["node"]:
        lines.append(f"  node: {entry['node']}")
    return "\n".join(lines)
