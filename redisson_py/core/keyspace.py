"""The keyspace: every key, hash field, channel and message redisson-py reads or writes,
and how an object's name becomes each of them, in one place.

Each object named ``name`` keeps its main data at the key ``name`` itself and its other
keys and channels at names built from ``name`` by one rule (Redisson's ``prefixName`` and
``suffixName``, see `redisson_py.core.routing.naming`):

- a prefixed name is ``prefix:{name}`` (``prefix:name`` when ``name`` already holds a
  ``{``), a suffixed name ``{name}:suffix``;
- ``by_slot`` says that the topology places keys by hash slot (a cluster). Every name
  of an object must then share ``name``'s slot (one script declares them all, a release
  publishes on a channel of that slot), and for the few names Redisson's rule would put
  in another slot (``a}b``, ``a{``) the slot-safe form ``prefix:{<tag>}:name`` is used;
  on the other topologies a name is always Redisson's.

Two kinds of names live here. **Redisson's wire format** ("Redisson" in the table): a
Java client using Redisson reads and writes the same keys, fields and messages, so both
share a lock; these must never change. **redisson-py's own** ("ours"): bookkeeping
Redisson neither reads nor disturbs (request latches that make a retried call count
once, the fair lock's keepalives, the fenced resource, hand-off tickets, the queued
lock); each starts with ``redisson_py`` so that it never meets a Redisson name.

The table (``{name}`` stands for the hashtagged form; ``<owner>`` for an owner field
``<client id>:<owner id>``; ``<id>`` for a request id):

| key, field or channel | what it is | whose |
| --- | --- | --- |
| ``name``, field ``<owner>`` | a lock's holds (hash) | Redisson |
| ``redisson_lock__channel:{name}`` | a lock's releases (``0``) | Redisson |
| ``redisson_unlock_latch:{name}:<id>`` | a release's outcome | Redisson |
| ``redisson_lock_queue:{name}`` | a fair lock's waiters (list) | Redisson |
| ``redisson_lock_timeout:{name}`` | their timeouts (sorted set) | Redisson |
| ``redisson_lock__channel:{name}:<owner>`` | a fair waiter's own channel | Redisson |
| ``redisson_lock_token:{name}`` | a fenced lock's token counter | Redisson |
| ``name``, fields ``mode``, ``<owner>:write`` | a read-write lock (hash) | Redisson |
| ``{name}:<owner>:rwlock_timeout:<n>`` | a read hold's expiry | Redisson |
| ``redisson_rwlock:{name}`` | its releases (``0``, ``1``) | Redisson |
| ``name`` | a semaphore's or latch's count | Redisson |
| ``redisson_sc:{name}`` | a semaphore's permits freed | Redisson |
| ``{name}:timeout`` | a permit semaphore's permits | Redisson |
| ``redisson_countdownlatch__channel__{name}`` | a latch's ``0`` (and ``1``) | Redisson |
| field ``redisson_py_acquire:<owner>`` | a lock's last acquire request | ours |
| ``redisson_py_acquire:{name}`` | a read-write lock's of them | ours |
| ``redisson_py_fair_alive:{name}`` | fair waiters' keepalives | ours |
| ``redisson_py_request:{name}:<id>`` | a semaphore or latch request | ours |
| ``redisson_py_fence:{name}`` | a fenced resource's record | ours |
| ``redisson_py_fence_latch:{name}:<id>`` | an accepted fenced write | ours |
| ``redisson_py_handoff:{name}:<ticket>`` | an exported hold's ticket | ours |
| ``redisson_py_queued_lock_*:{name}`` | a queued lock's waiters | ours |
| ``redisson_py_queued_lock__channel:{name}`` | its releases (``:<owner>``: grants) | ours |

Every function takes ``by_slot`` by keyword, without a default: a name is right only
for the topology it is computed for. This module does no I/O and holds no state; the
operator CLI (`redisson_py.cli`) and the chaos suite read the keyspace through it.
"""

from __future__ import annotations

from redisson_py.core.routing.naming import key_prefix, key_slot, prefixed_name, suffixed_name

__all__ = [
    "ACQUIRE_FIELD_PREFIX",
    "ACQUIRE_LATCHES_PREFIX",
    "FAIR_ALIVE_PREFIX",
    "FAIR_QUEUE_PREFIX",
    "FAIR_TIMEOUT_PREFIX",
    "FENCED_TOKEN_PREFIX",
    "FENCE_LATCH_PREFIX",
    "FENCE_PREFIX",
    "HANDOFF_TICKET_PREFIX",
    "LATCH_CHANNEL_PREFIX",
    "LATCH_NEW_COUNT_MESSAGE",
    "LATCH_ZERO_MESSAGE",
    "LOCK_CHANNEL_PREFIX",
    "MODE_FIELD",
    "PERMIT_NO_LEASE",
    "PERMIT_TIMEOUT_SUFFIX",
    "QUEUED_ALIVE_PREFIX",
    "QUEUED_CHANNEL_PREFIX",
    "QUEUED_ENTRIES_PREFIX",
    "QUEUED_QUEUE_PREFIX",
    "READ_HOLD_TIMEOUT",
    "READ_UNLOCK_MESSAGE",
    "READ_WRITE_CHANNEL_PREFIX",
    "REQUEST_ID_LETTER",
    "REQUEST_PREFIX",
    "SEMAPHORE_CHANNEL_PREFIX",
    "UNLOCK_LATCH_PREFIX",
    "UNLOCK_MESSAGE",
    "WRITE_SUFFIX",
    "WRITE_UNLOCK_MESSAGE",
    "acquire_field",
    "acquire_latches",
    "fair_alive",
    "fair_queue",
    "fair_timeouts",
    "fair_waiter_channel",
    "fence_latch",
    "fence_record",
    "fenced_token",
    "handoff_ticket",
    "hashtagged",
    "latch_channel",
    "lock_channel",
    "owner_field",
    "permit_timeouts",
    "queued_alive",
    "queued_channel",
    "queued_entries",
    "queued_queue",
    "read_hold_timeout_prefix",
    "read_write_channel",
    "request_id",
    "request_latch",
    "semaphore_channel",
    "unlock_latch",
    "write_field",
]

# --- REDISSON: Redisson's wire format (shared with Java clients; never change) ---

LOCK_CHANNEL_PREFIX = "redisson_lock__channel"
"""A lock's release channel (``RLock``, fair, fenced, spin, non-reentrant locks)."""
UNLOCK_MESSAGE = "0"
"""What a release publishes on the lock's channel (Redisson's ``LockPubSub.UNLOCK_MESSAGE``)."""
UNLOCK_LATCH_PREFIX = "redisson_unlock_latch"
"""A release request's outcome, kept a while for its retries (Redisson 3.24.1+)."""
FAIR_QUEUE_PREFIX = "redisson_lock_queue"
"""A fair lock's waiters, in order (a list of owner fields)."""
FAIR_TIMEOUT_PREFIX = "redisson_lock_timeout"
"""A fair lock's waiters' timeouts (a sorted set: owner field -> ms)."""
FENCED_TOKEN_PREFIX = "redisson_lock_token"
"""A fenced lock's token counter (a plain integer)."""
READ_WRITE_CHANNEL_PREFIX = "redisson_rwlock"
"""A read-write lock's release channel."""
READ_UNLOCK_MESSAGE = "0"
"""What a read unlock that frees a read-write lock publishes (wakes one waiter)."""
WRITE_UNLOCK_MESSAGE = "1"
"""What a write unlock publishes (wakes every waiter)."""
WRITE_SUFFIX = ":write"
"""Ends a writer's owner field in a read-write lock's hash."""
MODE_FIELD = "mode"
"""A read-write lock's hash field holding ``read`` or ``write``."""
READ_HOLD_TIMEOUT = "rwlock_timeout"
"""Names a read hold's expiry key: ``{name}:<owner>:rwlock_timeout:<n>``."""
SEMAPHORE_CHANNEL_PREFIX = "redisson_sc"
"""A semaphore's (and a permit-expirable semaphore's) channel: permits became free."""
PERMIT_TIMEOUT_SUFFIX = "timeout"
"""A permit-expirable semaphore's acquired permits (sorted set: id -> expiry ms)."""
PERMIT_NO_LEASE = 922337203685477
"""The score of a permit acquired without a lease (Redisson's ``nonExpirableTimeout``)."""
LATCH_CHANNEL_PREFIX = "redisson_countdownlatch__channel__"
"""A count-down latch's channel; no colon: the hashtagged name follows at once."""
LATCH_ZERO_MESSAGE = "0"
"""What a latch publishes when its count reaches zero."""
LATCH_NEW_COUNT_MESSAGE = "1"
"""What a latch publishes when it is deleted or its count is set (Redisson's)."""

# --- REDISSON_PY: redisson-py's own bookkeeping (Redisson ignores it) ---

ACQUIRE_LATCHES_PREFIX = "redisson_py_acquire"
"""A read-write lock's hash of acquire latches (owner field -> request id)."""
ACQUIRE_FIELD_PREFIX = ACQUIRE_LATCHES_PREFIX + ":"
"""Starts the lock-hash field holding an owner's last acquire request id (every lock
kind but the read-write lock, whose latches have a hash of their own)."""
FAIR_ALIVE_PREFIX = "redisson_py_fair_alive"
"""redisson-py's fair-lock waiters' keepalives (sorted set: owner field -> server ms)."""
REQUEST_PREFIX = "redisson_py_request"
"""A semaphore's or latch's request outcome, kept a while for its retries."""
FENCE_PREFIX = "redisson_py_fence"
"""A fenced resource's record (hash: the highest token seen, its owner)."""
FENCE_LATCH_PREFIX = "redisson_py_fence_latch"
"""An accepted fenced write, kept a while for its retries."""
HANDOFF_TICKET_PREFIX = "redisson_py_handoff"
"""An exported hold's adoption ticket (see `redisson_py.core.flows.handoff`)."""
QUEUED_CHANNEL_PREFIX = "redisson_py_queued_lock__channel"
"""A queued lock's release channel (and, with ``:<owner>``, each waiter's grants)."""
QUEUED_QUEUE_PREFIX = "redisson_py_queued_lock_queue"
"""A queued lock's waiters, in order (a list of owner fields)."""
QUEUED_ALIVE_PREFIX = "redisson_py_queued_lock_alive"
"""A queued lock's waiters' keepalives (sorted set)."""
QUEUED_ENTRIES_PREFIX = "redisson_py_queued_lock_entries"
"""A queued lock's waiters' pending acquires (hash)."""
REQUEST_ID_LETTER = "r"
"""Starts every request id, so that Lua's ``tonumber`` never reads one as a count."""


def hashtagged(name: str, *, by_slot: bool) -> str:
    """The form of ``name`` every other name of the object embeds: ``{name}``
    (``name`` when it holds a ``{``; in a cluster, the slot-safe form)."""
    return key_prefix(name, by_slot=by_slot)


# --- hash fields ---


def owner_field(client_id: str, owner_id: str | int) -> str:
    """The hash field naming one owner: ``<client uuid>:<thread or task id>``."""
    return f"{client_id}:{owner_id}"


def write_field(owner: str) -> str:
    """A read-write lock's writer field of owner field ``owner``: ``<owner>:write``."""
    return owner + WRITE_SUFFIX


def acquire_field(owner: str) -> str:
    """The hash field where a lock records ``owner``'s last applied acquire request:
    ``redisson_py_acquire:<owner>`` (never taken for an owner: it holds no count)."""
    return ACQUIRE_FIELD_PREFIX + owner


def request_id(bits: int) -> str:
    """A request id from 128 random ``bits``: the letter, then 32 hex digits."""
    return f"{REQUEST_ID_LETTER}{bits:032x}"


# --- locks ---


def lock_channel(name: str, *, by_slot: bool) -> str:
    """Where lock ``name`` announces a release: ``redisson_lock__channel:{name}``."""
    return prefixed_name(LOCK_CHANNEL_PREFIX, name, by_slot=by_slot)


def unlock_latch(name: str, request: str, *, by_slot: bool) -> str:
    """The key remembering release ``request``'s outcome, so that a release retried
    after a lost reply releases one hold, not two:
    ``redisson_unlock_latch:{name}:<request>``."""
    return f"{prefixed_name(UNLOCK_LATCH_PREFIX, name, by_slot=by_slot)}:{request}"


def fair_queue(name: str, *, by_slot: bool) -> str:
    """Fair lock ``name``'s waiter queue: ``redisson_lock_queue:{name}``."""
    return prefixed_name(FAIR_QUEUE_PREFIX, name, by_slot=by_slot)


def fair_timeouts(name: str, *, by_slot: bool) -> str:
    """Fair lock ``name``'s waiters' timeouts: ``redisson_lock_timeout:{name}``."""
    return prefixed_name(FAIR_TIMEOUT_PREFIX, name, by_slot=by_slot)


def fair_alive(name: str, *, by_slot: bool) -> str:
    """Fair lock ``name``'s waiters' keepalives: ``redisson_py_fair_alive:{name}``."""
    return prefixed_name(FAIR_ALIVE_PREFIX, name, by_slot=by_slot)


def fair_waiter_channel(channel: str, owner: str) -> str:
    """Where a fair lock's waiter ``owner`` is told its turn: the lock's ``channel``
    and ``:<owner>`` (so for a queued lock's grants)."""
    return f"{channel}:{owner}"


def fenced_token(name: str, *, by_slot: bool) -> str:
    """Fenced lock ``name``'s token counter: ``redisson_lock_token:{name}``."""
    return prefixed_name(FENCED_TOKEN_PREFIX, name, by_slot=by_slot)


def read_write_channel(name: str, *, by_slot: bool) -> str:
    """Read-write lock ``name``'s release channel: ``redisson_rwlock:{name}``."""
    return prefixed_name(READ_WRITE_CHANNEL_PREFIX, name, by_slot=by_slot)


def read_hold_timeout_prefix(name: str, owner: str, *, by_slot: bool) -> str:
    """The prefix of reader ``owner``'s per-hold expiry keys in read-write lock
    ``name``: ``{name}:<owner>:rwlock_timeout`` (the scripts add ``:<n>``)."""
    return f"{hashtagged(name, by_slot=by_slot)}:{owner}:{READ_HOLD_TIMEOUT}"


def acquire_latches(name: str, *, by_slot: bool) -> str:
    """Read-write lock ``name``'s acquire latches: ``redisson_py_acquire:{name}``."""
    return prefixed_name(ACQUIRE_LATCHES_PREFIX, name, by_slot=by_slot)


def handoff_ticket(name: str, ticket: str, *, by_slot: bool) -> str:
    """The adoption ticket ``ticket`` of a hold exported from lock ``name``:
    ``redisson_py_handoff:{name}:<ticket>``."""
    return f"{prefixed_name(HANDOFF_TICKET_PREFIX, name, by_slot=by_slot)}:{ticket}"


def queued_channel(name: str, *, by_slot: bool) -> str:
    """Queued lock ``name``'s release channel: ``redisson_py_queued_lock__channel:{name}``."""
    return prefixed_name(QUEUED_CHANNEL_PREFIX, name, by_slot=by_slot)


def queued_queue(name: str, *, by_slot: bool) -> str:
    """Queued lock ``name``'s waiters: ``redisson_py_queued_lock_queue:{name}``."""
    return prefixed_name(QUEUED_QUEUE_PREFIX, name, by_slot=by_slot)


def queued_alive(name: str, *, by_slot: bool) -> str:
    """Queued lock ``name``'s keepalives: ``redisson_py_queued_lock_alive:{name}``."""
    return prefixed_name(QUEUED_ALIVE_PREFIX, name, by_slot=by_slot)


def queued_entries(name: str, *, by_slot: bool) -> str:
    """Queued lock ``name``'s pending acquires: ``redisson_py_queued_lock_entries:{name}``."""
    return prefixed_name(QUEUED_ENTRIES_PREFIX, name, by_slot=by_slot)


# --- semaphores, latches, fenced resources ---


def semaphore_channel(name: str, *, by_slot: bool) -> str:
    """Semaphore ``name``'s channel (a permit-expirable one's too): ``redisson_sc:{name}``."""
    return prefixed_name(SEMAPHORE_CHANNEL_PREFIX, name, by_slot=by_slot)


def permit_timeouts(name: str, *, by_slot: bool) -> str:
    """Permit-expirable semaphore ``name``'s acquired permits: ``{name}:timeout``."""
    return suffixed_name(name, PERMIT_TIMEOUT_SUFFIX, by_slot=by_slot)


def latch_channel(name: str, *, by_slot: bool) -> str:
    """Count-down latch ``name``'s channel: ``redisson_countdownlatch__channel__{name}``,
    Redisson's (braces around the whole name, whatever it holds).

    In a cluster that channel must share the latch's hash slot (a script publishes on
    it, and sharded pub/sub places it by slot); for a name holding braces it may not
    (``a{b}c``: Redisson's channel hashes ``a{b``, the key ``b``). There, and only there,
    the channel is the prefix and the name's hashtagged form instead
    (``redisson_countdownlatch__channel__a{b}c``), which does.
    """
    redisson = f"{LATCH_CHANNEL_PREFIX}{{{name}}}"
    if not by_slot or key_slot(redisson) == key_slot(name):
        return redisson
    return LATCH_CHANNEL_PREFIX + key_prefix(name, by_slot=True)


def request_latch(name: str, request: str, *, by_slot: bool) -> str:
    """The key remembering semaphore or latch ``name``'s request ``request``:
    ``redisson_py_request:{name}:<request>``."""
    return f"{prefixed_name(REQUEST_PREFIX, name, by_slot=by_slot)}:{request}"


def fence_record(name: str, *, by_slot: bool) -> str:
    """Fenced resource ``name``'s record: ``redisson_py_fence:{name}``."""
    return prefixed_name(FENCE_PREFIX, name, by_slot=by_slot)


def fence_latch(name: str, request: str, *, by_slot: bool) -> str:
    """The key remembering that fenced write ``request`` on ``name`` was accepted:
    ``redisson_py_fence_latch:{name}:<request>``."""
    return f"{prefixed_name(FENCE_LATCH_PREFIX, name, by_slot=by_slot)}:{request}"
