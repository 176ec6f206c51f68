"""What ``redisson-py lock status``, ``lock list`` and ``lock unlock`` read: the kind of
object a name holds, told from its data alone, and what that data says (holders,
waiters, tokens, permits).

Every key is named by the library's keyspace (`redisson_py.core.keyspace`, the names
the lock kinds and the objects' layouts use), with the topology's ``by_slot``, and read
on the master the library routes the name to (``client.redis(name)``): all of an
object's keys share its hash slot, so one MULTI/EXEC reads them as one snapshot.

Kinds, and the data that tells them (see `classify`):

- ``reentrant``: Redisson's hash of owner fields ``<client uuid>:<owner id>`` -> hold
  count. Spin and non-reentrant locks have exactly this layout, and so has a fair lock
  nobody waits for: `recognise` keeps them all as candidates unless the evidence (hold
  counts, subscribers) rules some out, and the text says "cannot tell".
- ``fair``: that hash, plus a waiter queue ``redisson_lock_queue:{name}`` or its
  timeouts ``redisson_lock_timeout:{name}`` (the queue may exist with no holder).
- ``fenced``: that hash, or no hash, plus a token counter ``redisson_lock_token:{name}``.
- ``read-write``: a hash with a ``mode`` field (``read`` or ``write``); writers' fields
  end in ``:write``.
- ``semaphore or count-down latch``: a plain integer string at ``name``; a semaphore's
  available permits and a latch's count look the same (and so does a permit-expirable
  semaphore none of whose permits is taken): `recognise` tells them apart only by a
  negative value (no latch) or by who waits on which channel.
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
from redisson_py.core import keyspace
from redisson_py.errors import RedissonError

__all__ = [
    "FAIR_KIND",
    "FENCED_KIND",
    "FENCED_RESOURCE_KIND",
    "LATCH_KIND",
    "LOCK_KINDS",
    "MAX_FIELDS",
    "MAX_STRING",
    "NON_REENTRANT_FAIR_KIND",
    "NON_REENTRANT_KIND",
    "NOT_LOCKED",
    "OTHER",
    "PERMIT_SEMAPHORE_KIND",
    "READ_WRITE_KIND",
    "REENTRANT_KIND",
    "SEMAPHORE_KIND",
    "SEMAPHORE_OR_LATCH_KIND",
    "SPIN_KIND",
    "KeyNames",
    "Recognition",
    "Snapshot",
    "auxiliary_keys",
    "channel_subscribers",
    "classify",
    "lock_status",
    "parse_bounded_reads",
    "queue_bounded_reads",
    "read_snapshot",
    "recognise",
    "said",
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
MAX_STRING = 64
"""A string longer than this is no counter: its value is not read."""
MAX_FIELDS = 10_000
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
        return cls(
            name=name,
            lock_channel=keyspace.lock_channel(name, by_slot=by_slot),
            fair_queue=keyspace.fair_queue(name, by_slot=by_slot),
            fair_timeouts=keyspace.fair_timeouts(name, by_slot=by_slot),
            fair_alive=keyspace.fair_alive(name, by_slot=by_slot),
            fenced_token=keyspace.fenced_token(name, by_slot=by_slot),
            read_write_channel=keyspace.read_write_channel(name, by_slot=by_slot),
            permits=keyspace.permit_timeouts(name, by_slot=by_slot),
            semaphore_channel=keyspace.semaphore_channel(name, by_slot=by_slot),
            latch_channel=keyspace.latch_channel(name, by_slot=by_slot),
            fence_record=keyspace.fence_record(name, by_slot=by_slot),
        )


@dataclass(slots=True)
class Snapshot:
    """The data under one name, read at one instant.

    ``key_type`` is Redis's ``TYPE`` of ``name`` (``none`` when absent); ``fields`` its
    hash fields but redisson-py's acquire-request fields (None: not a hash, or too big
    to be a lock); ``value`` its string (None: not a string, or too long to be a count);
    ``queue`` the fair queue's owner fields in order, ``timeouts`` their timeouts (ms);
    ``permits`` the acquired permits (id, expiry ms); ``fence`` the fence record;
    ``alive`` redisson-py's fair-lock waiters' keepalives (owner field -> server ms).
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
    alive: dict[str, int] = field(default_factory=dict)


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
        queue_sizing(sizing, name)
        key_type, size = sized(sizing.execute(raise_on_error=False))
        reads = redis_client.pipeline(transaction=True)
        queue_reads(reads, keys, key_type, size)
        replies = reads.execute(raise_on_error=False)
        if text(_ok(replies[0])) != key_type and attempt < _READ_ATTEMPTS:
            continue  # changed in between: read again
        snapshot = parse_reads(replies, key_type)
        break
    return snapshot


def queue_sizing(pipe: Any, name: str) -> None:
    """Queue on ``pipe`` what sizes ``name``: its type, string length and hash length."""
    pipe.type(name).strlen(name).hlen(name)


def sized(replies: list[Any]) -> tuple[str, int]:
    """``name``'s type and size (fields of a hash, bytes of a string), from the replies
    of `queue_sizing`."""
    key_type, length, field_count = (_ok(r) for r in replies)
    key_type = text(key_type)
    if key_type == "hash":
        return key_type, int(field_count or 0)
    return key_type, int(length or 0) if key_type == "string" else 0


def queue_reads(pipe: Any, keys: KeyNames, key_type: str, size: int) -> int:
    """Queue on ``pipe`` the reads of every key of ``keys`` (``name`` of ``key_type`` and
    ``size``, as `sized` gave them: its contents only when small enough to be a lock or a
    count); return how many commands were queued."""
    name = keys.name
    pipe.type(name).pttl(name)
    pipe.get(keys.fenced_token)
    pipe.lrange(keys.fair_queue, 0, -1)
    pipe.zrange(keys.fair_timeouts, 0, -1, withscores=True)
    pipe.zrange(keys.permits, 0, -1, withscores=True)
    pipe.hgetall(keys.fence_record)
    pipe.zrange(keys.fair_alive, 0, -1, withscores=True)
    if key_type == "hash" and size <= MAX_FIELDS:
        pipe.hgetall(name)
        return _FIXED_READS + 1
    if key_type == "string" and size <= MAX_STRING:
        pipe.get(name)
        return _FIXED_READS + 1
    return _FIXED_READS


_FIXED_READS = 8


def auxiliary_keys(keys: KeyNames) -> tuple[str, ...]:
    """Every key but ``name`` an object may have (all in ``name``'s slot)."""
    return (
        keys.fenced_token,
        keys.fair_queue,
        keys.fair_timeouts,
        keys.permits,
        keys.fence_record,
        keys.fair_alive,
    )


def parse_reads(raw: list[Any], key_type: str) -> Snapshot:
    """The snapshot the replies of `queue_reads` show (``key_type``: as sized; when
    ``name``'s type changed since, the new type stands, without ``name``'s contents)."""
    replies = [_ok(r) for r in raw]
    if text(replies[0]) != key_type:
        key_type, replies = text(replies[0]), replies[:_FIXED_READS]
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
    snapshot.alive = {text(owner): int(score) for owner, score in replies[7] or ()}
    if len(replies) > _FIXED_READS and replies[_FIXED_READS] is not None:
        if key_type == "hash":
            fields = {text(k): text(v) for k, v in replies[_FIXED_READS].items()}
            # redisson-py's per-owner acquire-request fields ride along with the owners
            snapshot.fields = {
                k: v for k, v in fields.items() if not k.startswith(keyspace.ACQUIRE_FIELD_PREFIX)
            }
        else:
            snapshot.value = text(replies[_FIXED_READS])
    return snapshot


def queue_bounded_reads(pipe: Any, keys: KeyNames, key_type: str, *, auxiliary: bool) -> int:
    """Queue on ``pipe`` the reads of ``keys`` without sizing ``name`` first (as
    ``lock list`` reads a page of names): ``name``'s contents come bounded (``HSCAN``
    ``COUNT`` `MAX_FIELDS`, ``GETRANGE`` to `MAX_STRING` + 1 bytes), so a big key is never
    fetched whole; ``auxiliary``: read the auxiliary keys too (else they are known
    absent). `parse_bounded_reads` reads the replies; returns how many were queued."""
    name = keys.name
    pipe.type(name).pttl(name)
    count = 2
    if auxiliary:
        pipe.get(keys.fenced_token)
        pipe.lrange(keys.fair_queue, 0, -1)
        pipe.zrange(keys.fair_timeouts, 0, -1, withscores=True)
        pipe.zrange(keys.permits, 0, -1, withscores=True)
        pipe.hgetall(keys.fence_record)
        pipe.zrange(keys.fair_alive, 0, -1, withscores=True)
        count = _FIXED_READS
    if key_type == "hash":
        pipe.hscan(name, 0, count=MAX_FIELDS)
        return count + 1
    if key_type == "string":
        pipe.getrange(name, 0, MAX_STRING)
        return count + 1
    return count


def parse_bounded_reads(raw: list[Any], key_type: str, *, auxiliary: bool) -> Snapshot:
    """The snapshot the replies of `queue_bounded_reads` show."""
    fixed = list(raw[:_FIXED_READS] if auxiliary else [*raw[:2], None, [], [], [], {}, []])
    rest = raw[_FIXED_READS:] if auxiliary else raw[2:]
    content = _ok(rest[0]) if rest else None
    if key_type == "hash" and isinstance(content, (list, tuple)):
        cursor, fields = content
        content = fields if int(cursor) == 0 else None  # more to read: too big for a lock
    elif key_type == "string" and isinstance(content, bytes | str):
        content = content if len(content) <= MAX_STRING else None
    else:
        content = None
    return parse_reads([*fixed, content], key_type)


def _owner_holds(fields: dict[str, str]) -> bool:
    """Every field is an owner field with a hold count (and there is one at least)."""
    return bool(fields) and all(_OWNER_FIELD.match(f) and v.isdigit() for f, v in fields.items())


def classify(snapshot: Snapshot) -> str:
    """The kind of object ``snapshot`` shows (see the module docstring)."""
    held = _held_lock_kind(snapshot)
    if held is not None:
        return held
    if snapshot.fence:
        return FENCED_RESOURCE_KIND
    if snapshot.key_type == "string" and _INTEGER.match(snapshot.value or ""):
        return PERMIT_SEMAPHORE_KIND if snapshot.permits else SEMAPHORE_OR_LATCH_KIND
    if snapshot.key_type == "none":
        return _absent_kind(snapshot)
    return OTHER


def _held_lock_kind(snapshot: Snapshot) -> str | None:
    """The kind of a lock hash of owner fields (None: the key is no such hash)."""
    fields = snapshot.fields
    if snapshot.key_type != "hash" or fields is None:
        return None
    mode = fields.get("mode")
    holders = {k: v for k, v in fields.items() if k != "mode"}
    if mode in ("read", "write") and _owner_holds(holders):
        return READ_WRITE_KIND
    if mode is not None or not _owner_holds(fields):
        return None
    if snapshot.queue or snapshot.timeouts:
        return FAIR_KIND
    return FENCED_KIND if snapshot.token is not None else REENTRANT_KIND


def _absent_kind(snapshot: Snapshot) -> str:
    """The kind of an object whose key is absent, from its other keys."""
    if snapshot.queue or snapshot.timeouts:
        return FAIR_KIND  # waiters queued, nobody holds it (for now)
    if snapshot.permits:
        return PERMIT_SEMAPHORE_KIND  # every permit taken, no count key
    if snapshot.token is not None:
        return FENCED_KIND  # not held; its token counter stays
    return NOT_LOCKED


SPIN_KIND = "spin"
NON_REENTRANT_KIND = "non-reentrant"
NON_REENTRANT_FAIR_KIND = "non-reentrant fair"
SEMAPHORE_KIND = "semaphore"
LATCH_KIND = "count-down latch"


@dataclass(frozen=True, slots=True)
class Recognition:
    """What the data says an object is: ``layout`` (`classify`'s answer: the data
    layout), ``candidates`` (the kinds of the library that layout and the evidence
    allow; one when the kind is told) and ``evidence`` (one sentence per clue used)."""

    layout: str
    candidates: tuple[str, ...]
    evidence: tuple[str, ...] = ()

    @property
    def told(self) -> bool:
        """True when the data leaves one kind."""
        return len(self.candidates) == 1


def recognise(
    snapshot: Snapshot, keys: KeyNames, subscribers: dict[str, int] | None
) -> Recognition:
    """Which kinds ``snapshot`` (of ``keys``) can be, from every clue its data has.

    ``subscribers``: clients subscribed to each of the object's channels
    (`channel_subscribers`; None when unknowable). The clues, beyond `classify`'s layout:

    - the reentrant lock's layout is shared by the spin and non-reentrant locks and by a
      fair lock nobody waits for. A hold count above 1 rules out the non-reentrant kinds;
      subscribers on ``redisson_lock__channel:{name}`` are waiters that listen there:
      reentrant or non-reentrant (a spin lock's waiters poll, a fair lock's listen on
      channels of their own).
    - a fair lock's queue does not tell the fair lock from its non-reentrant twin but by
      a hold count above 1.
    - a plain integer is a semaphore's permits or a latch's count (or a permit-expirable
      semaphore none of whose permits is taken): below zero it is no latch (a latch's key
      goes at zero); subscribers on the semaphores' channel or on the latch's tell them
      apart (weak: only while someone waits).

    Where no clue decides, every candidate stays: the caller says "cannot tell".
    """
    layout = classify(snapshot)
    counts = [int(v) for k, v in (snapshot.fields or {}).items() if k != "mode" and v.isdigit()]
    most = max(counts, default=0)
    if layout == REENTRANT_KIND:
        return _recognise_reentrant_layout(most, keys, subscribers)
    if layout == FAIR_KIND:
        if most > 1:
            return Recognition(
                layout, (FAIR_KIND,), (f"held {most} times by one owner: reentrant",)
            )
        evidence = ("a waiter queue; no hold count above 1 to tell it from its twin",)
        return Recognition(layout, (FAIR_KIND, NON_REENTRANT_FAIR_KIND), evidence)
    if layout == SEMAPHORE_OR_LATCH_KIND:
        return _recognise_counter(int(snapshot.value or 0), keys, subscribers)
    return Recognition(layout, (layout,))


def _recognise_reentrant_layout(
    most: int, keys: KeyNames, subscribers: dict[str, int] | None
) -> Recognition:
    """The kinds of the reentrant lock's layout a hold count of ``most`` (the highest)
    and the lock channel's ``subscribers`` leave."""
    evidence: list[str] = []
    candidates = [
        REENTRANT_KIND,
        NON_REENTRANT_KIND,
        SPIN_KIND,
        FAIR_KIND,
        NON_REENTRANT_FAIR_KIND,
    ]
    if most > 1:
        evidence.append(f"held {most} times by one owner: reentrant")
        candidates = [k for k in candidates if not k.startswith("non-reentrant")]
    listening = None if subscribers is None else subscribers.get(keys.lock_channel, 0)
    if listening:
        evidence.append(
            f"{listening} client(s) wait on {keys.lock_channel}: not a spin lock (its "
            "waiters poll) nor a fair lock (its waiters listen on channels of their own)"
        )
        candidates = [k for k in candidates if k in (REENTRANT_KIND, NON_REENTRANT_KIND)]
    elif subscribers is None:
        evidence.append("waiters unknown (classic pub/sub on a cluster)")
    else:
        evidence.append(
            f"no client listens on {keys.lock_channel}: no evidence (a spin lock's "
            "waiters poll, a fair lock with no waiter has this layout)"
        )
    return Recognition(REENTRANT_KIND, tuple(candidates), tuple(evidence))


def _recognise_counter(
    value: int, keys: KeyNames, subscribers: dict[str, int] | None
) -> Recognition:
    """The kinds a plain integer ``value`` and the channels' ``subscribers`` leave."""
    evidence: list[str] = []
    candidates = [SEMAPHORE_KIND, LATCH_KIND, PERMIT_SEMAPHORE_KIND]
    if value < 0:
        evidence.append(f"{value} is below zero: no latch (its key goes at zero)")
        candidates.remove(LATCH_KIND)
    if subscribers is None:
        evidence.append("waiters unknown (classic pub/sub on a cluster)")
        return Recognition(SEMAPHORE_OR_LATCH_KIND, tuple(candidates), tuple(evidence))
    on_semaphore = subscribers.get(keys.semaphore_channel, 0)
    on_latch = subscribers.get(keys.latch_channel, 0)
    if on_latch and not on_semaphore and LATCH_KIND in candidates:
        evidence.append(f"{on_latch} client(s) wait on {keys.latch_channel}")
        candidates = [LATCH_KIND]
    elif on_semaphore and not on_latch:
        evidence.append(f"{on_semaphore} client(s) wait on {keys.semaphore_channel}")
        candidates = [k for k in candidates if k != LATCH_KIND]
    elif not on_semaphore and not on_latch:
        evidence.append("nobody waits on the semaphores' channel nor the latch's")
    return Recognition(SEMAPHORE_OR_LATCH_KIND, tuple(candidates), tuple(evidence))


def said(layout: str, candidates: list[str] | tuple[str, ...]) -> str:
    """The kinds an object of ``layout`` may be, as words: ``reentrant lock``, or
    ``cannot tell: reentrant, spin or fair lock``."""
    names = list(candidates)
    words = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]
    if layout in (REENTRANT_KIND, FAIR_KIND, FENCED_KIND):
        words += " lock"
    return words if len(names) == 1 else f"cannot tell: {words}"


def _holder(field_name: str, count: str, mode: str | None) -> dict[str, Any]:
    owner = field_name
    if mode is not None and owner.endswith(keyspace.WRITE_SUFFIX):
        owner = owner[: -len(keyspace.WRITE_SUFFIX)]
        mode = "write"
    client_id, _, owner_id = owner.partition(":")
    return {
        "field": field_name,
        "client_id": client_id,
        "owner_id": owner_id,
        "count": int(count),
        "mode": mode,
    }


def channel_subscribers(
    manager: Any, redis_client: Any, channels: list[str]
) -> dict[str, int] | None:
    """Clients subscribed to each of ``channels`` (on ``redis_client``, the master of
    their slot), or None when unknowable: classic pub/sub on a cluster, where
    subscribers may sit on any node."""
    if not channels:
        return {}
    if manager.publish_command == "spublish":
        reply = redis_client.execute_command("PUBSUB", "SHARDNUMSUB", *channels)
    elif manager.routes_by_slot:
        return None
    else:
        reply = redis_client.execute_command("PUBSUB", "NUMSUB", *channels)
    return numsub_counts(reply)


def numsub_counts(reply: Any) -> dict[str, int] | None:
    """A ``PUBSUB NUMSUB`` reply as channel -> count (None: not a reply of that shape)."""
    if not isinstance(reply, list):
        return None
    # [channel, count, ...] (redis-py may already have paired it up)
    if reply and isinstance(reply[0], tuple):
        return {text(channel): int(count) for channel, count in reply}
    return {
        text(channel): int(count) for channel, count in zip(reply[::2], reply[1::2], strict=True)
    }


def lock_status(client: Any, name: str) -> dict[str, Any]:
    """What Redis says about the object ``name``, read through ``client`` (a sync
    Redisson): the ``lock status --json`` entry (see docs/cli.md for every field).

    Fields present for every kind: ``name``, ``kind``, ``type`` (Redis's type of
    ``name``, null when absent), ``node``, ``locked`` (null for what is no lock),
    ``holders`` (``field``, ``client_id``, ``owner_id``, ``count``, ``mode``: ``read``
    or ``write`` for a read-write lock, else null), ``ttl_ms``, ``waiters`` (a count,
    null when unknowable or not applicable), ``mode``, ``queue`` (a fair lock's waiters
    in order: ``field``, ``client_id``, ``owner_id``, ``timeout_ms``, ``alive_ms``: a
    redisson-py waiter's keepalive, server ms, else null), ``token``, ``value``,
    ``permits`` (``available``, ``acquired``: ``id``, ``expires_ms``) and ``fence``
    (``token``, ``owner``), each null (or empty) when the kind has none; ``kinds``: the
    kinds the data allows (`recognise`: one when told, several when it cannot tell) and
    ``evidence``: the clues that decided (sentences).
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
    channels = status_channels(keys, classify(snapshot))
    subscribers = channel_subscribers(manager, redis_client, channels)
    return status_entry(keys, snapshot, subscribers, node)


def status_channels(keys: KeyNames, layout: str) -> list[str]:
    """The channels whose subscribers an entry of ``layout`` counts (its waiters, and
    `recognise`'s clues)."""
    if layout == READ_WRITE_KIND:
        return [keys.read_write_channel]
    if layout in (REENTRANT_KIND, FAIR_KIND, FENCED_KIND, NOT_LOCKED, OTHER):
        return [keys.lock_channel]
    if layout == SEMAPHORE_OR_LATCH_KIND:
        return [keys.semaphore_channel, keys.latch_channel]
    if layout == PERMIT_SEMAPHORE_KIND:
        return [keys.semaphore_channel]
    return []


def status_entry(
    keys: KeyNames, snapshot: Snapshot, subscribers: dict[str, int] | None, node: Any
) -> dict[str, Any]:
    """The `lock_status` entry of ``snapshot`` (with the subscribers of
    `status_channels`, None when unknowable) read on ``node``."""
    recognition = recognise(snapshot, keys, subscribers)
    kind = recognition.layout
    entry: dict[str, Any] = {
        "name": keys.name,
        "kind": kind,
        "kinds": list(recognition.candidates),
        "evidence": list(recognition.evidence),
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
    if kind == READ_WRITE_KIND:
        entry["mode"] = fields["mode"]
        entry["holders"] = [
            _holder(f, count, "read")
            for f, count in sorted(fields.items(), key=_write_first)
            if f != "mode"
        ]
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
                "alive_ms": snapshot.alive.get(owner),
            }
            for owner in snapshot.queue
        ]
        entry["waiters"] = len(snapshot.queue)  # exact, whatever the pub/sub
    elif kind in (SEMAPHORE_OR_LATCH_KIND, PERMIT_SEMAPHORE_KIND):
        available = snapshot.value
        entry["value"] = None if available is None else int(available)
        if kind == PERMIT_SEMAPHORE_KIND:
            entry["permits"] = {
                "available": int(available or 0),
                "acquired": [
                    {
                        "id": permit.hex(),
                        "expires_ms": None if expiry >= keyspace.PERMIT_NO_LEASE else expiry,
                    }
                    for permit, expiry in snapshot.permits
                ],
            }
    if snapshot.fence:
        entry["fence"] = {
            "token": _number(snapshot.fence.get("token")),
            "owner": snapshot.fence.get("owner"),
        }
    if kind not in (FAIR_KIND, FENCED_RESOURCE_KIND) and subscribers is not None:
        entry["waiters"] = sum(subscribers.get(c, 0) for c in status_channels(keys, kind))
    return entry


def _write_first(item: tuple[str, str]) -> tuple[bool, str]:
    return (not item[0].endswith(keyspace.WRITE_SUFFIX), item[0])


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
    kind = entry["kind"]
    lines = [_status_headline(entry)]
    lines += [f"  evidence: {clue}" for clue in entry["evidence"]]
    lines += _holding_lines(entry)
    if kind != NOT_LOCKED:
        ttl = entry["ttl_ms"]
        lines.append(f"  ttl: {'none' if ttl is None else f'{ttl / 1000:.3f} s'}")
    lines += _waiter_lines(entry)
    if entry["node"]:
        lines.append(f"  node: {entry['node']}")
    return "\n".join(lines)


def _status_headline(entry: dict[str, Any]) -> str:
    """The first line of ``entry``'s status: its name and what it is."""
    name, kind = entry["name"], entry["kind"]
    if kind == NOT_LOCKED:
        what = "not locked"
    elif kind == OTHER:
        what = f"not a lock (a Redis {entry['type']})"
    elif kind == READ_WRITE_KIND:
        what = f"read-write lock, {entry['mode']} mode"
    elif kind in LOCK_KINDS:
        what = said(kind, entry["kinds"]) + ("" if entry["locked"] else ", not held")
    elif kind == SEMAPHORE_OR_LATCH_KIND:
        kinds = entry["kinds"]
        if kinds == [LATCH_KIND]:
            value = "its count"
        elif LATCH_KIND not in kinds:
            value = "available permits"
        else:
            value = "a semaphore's available permits, or a latch's count"
        what = f"{said(kind, kinds)}: {entry['value']} ({value})"
    elif kind == PERMIT_SEMAPHORE_KIND:
        permits = entry["permits"]
        what = (
            f"permit-expirable semaphore: {permits['available']} available, "
            f"{len(permits['acquired'])} acquired"
        )
    else:
        where = "absent" if entry["type"] is None else f"a Redis {entry['type']}"
        what = f"fenced resource ({where})"
    return f"{name}: {what}"


def _holding_lines(entry: dict[str, Any]) -> list[str]:
    """``entry``'s holders, token, acquired permits and fence, a line each."""
    lines = []
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
    return lines


def _waiter_lines(entry: dict[str, Any]) -> list[str]:
    """``entry``'s waiters: a fair lock's queue in order, else their count."""
    kind, waiters = entry["kind"], entry["waiters"]
    if kind == FENCED_RESOURCE_KIND:
        return []
    if kind != FAIR_KIND:
        return [f"  waiters: {'unknown' if waiters is None else waiters}"]
    lines = [f"  waiters: {waiters} queued"]
    for place, waiter in enumerate(entry["queue"], 1):
        timeout = waiter["timeout_ms"]
        when = "no timeout" if timeout is None else f"timeout {_seconds_from_now(timeout)}"
        alive = waiter.get("alive_ms")
        if alive is not None:
            when += f", keepalive (server clock) until {_seconds_from_now(alive)}"
        lines.append(f"  {place}. {waiter['client_id']} owner {waiter['owner_id']}: {when}")
    return lines
