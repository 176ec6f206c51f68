"""The lock kinds: for each, its data layout (Redisson's) and the commands that act on it.

Every lock kind shares the reentrant lock's algorithms (`redisson_py.core.flows.lock`
for one lock, `redisson_py.core.flows.multilock` for MultiLock/RedLock, and the
watchdog's rounds): waiting with deadlines, replica sync, request ids that make retries
count once, undoing a wait that gives up, renewal, loss reports. What differs between
kinds is only which scripts run with which keys, where a waiter listens, and how a
waiter sleeps; a `LockKind` says that, and the flows ask it.

The reply protocol, the same for every acquire script (the semaphores' too):

========================  ============================================================
``{1, count[, token]}``   `AcquireFlag.GRANTED`: the owner holds it ``count``
                          times (a fenced lock adds its token)
``{0, ms}``               `AcquireFlag.HELD`: another owner holds it; ``ms`` until
                          a retry is worth it (negative: the key has no expiry)
``{2, 0}``                `AcquireFlag.STALE`: this request's hold is gone or was
                          undone; the caller starts a new request (never a grant)
``{3, 0}``                `AcquireFlag.REFUSED`: a non-reentrant lock's holder
                          asked again (or, to an owner who counts no hold, a leftover)
========================  ============================================================

Release scripts answer the holds the owner has left, or nil when it held none
(`decode_release`). `LockRef` is one lock as one owner sees it: what every
flow acts on.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

from redisson_py.core import keyspace, scripts
from redisson_py.core.effects import Arg, Command, Script, ScriptCommand, Target, to_millis
from redisson_py.core.flows.backoff import BackOff, ExponentialBackOff
from redisson_py.core.flows.calls import new_request_id
from redisson_py.core.routing import naming
from redisson_py.core.scripts import fair_lock, fenced_lock, read_write_lock
from redisson_py.core.state.client_state import ClientState
from redisson_py.core.state.holds import Hold, report_lost


class AcquireFlag(IntEnum):
    """The first element of an acquire script's reply (see the table above)."""

    HELD = 0
    GRANTED = 1
    STALE = 2
    REFUSED = 3


def renew_flags(holds: Sequence[Hold]) -> tuple[str, ...]:
    """The renewal scripts' per-lock flags: none when every hold is renewed, else ``1``
    (renew) or ``0`` (only check: a leased hold, or one past its ``max_hold_time``) per
    hold."""
    if all(h.renews for h in holds):
        return ()
    return tuple("1" if h.renews else "0" for h in holds)


class LockKind:
    """The reentrant lock (Redisson's ``RLock``); the other kinds override what differs.

    Instances are immutable and shared; ``label`` names the kind in messages and docs.
    """

    label = "reentrant"
    channel_prefix = keyspace.LOCK_CHANNEL_PREFIX
    """Prefix of the channel its releases are announced on."""
    owner_suffix = ""
    """Appended to ``<client id>:<owner id>`` to make the owner's hash field."""
    reentrant = True
    queues = False
    """True when waiters queue (a fair lock): a wait that ends without the lock leaves
    the queue (see `undo`)."""
    release_message = keyspace.UNLOCK_MESSAGE
    release_script: Script = scripts.RELEASE
    """Run by `release` with the keys of `release_keys`."""
    renew_script = scripts.RENEW
    """The watchdog groups holds by this, one script call per group and slot."""
    keepalive: float | None = None
    """Longest sleep (seconds) of a waiter between two tries, when each try keeps its
    place in the queue alive (a fair lock); None: no such bound."""
    passes_on = False
    """True when a release grants the lock to the next waiter and tells it (a queued
    lock): a woken waiter asks `passed_on` before it tries again."""

    def passed_on(self, acquire: Any, subscription: Any) -> AcquireReply | None:
        """For a kind that `passes_on`: the waiter of ``acquire`` was woken on
        ``subscription``; its `AcquireReply` if a release granted it the lock (recorded
        in the hold table, with nothing sent), else None (it tries again)."""
        return None

    def aux_keys(self, name: str, by_slot: bool) -> tuple[str, ...]:
        """Auxiliary key names of lock ``name`` the scripts need (computed once per lock)."""
        return ()

    def publish_command(self, ref: LockRef) -> str:
        return ref.target.publish_command

    def acquire(
        self, ref: LockRef, ttl_ms: int, request_id: str, wait_ms: int, queue: bool
    ) -> ScriptCommand:
        """One attempt of acquire ``request_id``, giving the key ``ttl_ms`` to live (the
        lease, or the watchdog timeout, or what is left of ``max_hold_time``: not always
        the lease); ``wait_ms`` and ``queue`` matter only to kinds with a waiter queue
        (how long this waiter may wait; whether to join)."""
        script = scripts.ACQUIRE if self.reentrant else scripts.ACQUIRE_NON_REENTRANT
        args = (ttl_ms, ref.owner, keyspace.acquire_field(ref.owner), request_id)
        return ScriptCommand(script, (ref.name,), args)

    def undo(self, ref: LockRef, request_id: str, wait_ms: int) -> ScriptCommand:
        """Take back what acquire ``request_id`` applied (if anything), and leave the
        waiter queue, for a wait that ended without the lock."""
        args = (
            ref.owner,
            keyspace.acquire_field(ref.owner),
            request_id,
            self.release_message,
            self.publish_command(ref),
        )
        return ScriptCommand(scripts.UNDO_ACQUIRE, (ref.name, ref.channel), args)

    def release(self, ref: LockRef, acquires: Sequence[str] = ()) -> ScriptCommand:
        """Release one hold, with a request id of its own (its latch key). ``acquires``
        are the request ids of the hold's acquires: the release leaves the lock alone
        when its owner holds it by another acquire by then (see
        `redisson_py.core.scripts.old_hold_check`); none: no such check.

        Every kind's release is this one call: `release_script` on `release_keys`, with
        `release_head`, the owner's acquire field and ``acquires`` as arguments."""
        by_slot = bool(ref.target.routes_by_slot)
        latch = keyspace.unlock_latch(ref.name, new_request_id(), by_slot=by_slot)
        args = (*self.release_head(ref), keyspace.acquire_field(ref.owner), *acquires)
        return ScriptCommand(self.release_script, self.release_keys(ref, latch), args)

    def release_keys(self, ref: LockRef, latch: str) -> tuple[str, ...]:
        """The keys `release_script` takes, ``latch`` (the release's latch key) among
        them."""
        return (ref.name, ref.channel, latch)

    def release_head(self, ref: LockRef) -> tuple[Arg, ...]:
        """The arguments `release_script` takes before the acquire field."""
        return (
            self.release_message,
            ref.owner,
            self.publish_command(ref),
            to_millis(ref.state.settings.latch_ttl),
        )

    def force_release(self, ref: LockRef) -> ScriptCommand:
        """Delete the lock whoever holds it, waking its waiters."""
        args = (self.release_message, self.publish_command(ref))
        return ScriptCommand(scripts.FORCE_RELEASE, (ref.name, ref.channel), args)

    def renew(self, holds: Sequence[Hold], ttl_ms: int) -> ScriptCommand:
        """Renew (or, for leased holds, check) ``holds``, all in one slot."""
        args: tuple[Arg, ...] = (ttl_ms, *(h.owner for h in holds), *renew_flags(holds))
        return ScriptCommand(self.renew_script, tuple(h.name for h in holds), args)

    def extend(self, ref: LockRef, ttl_ms: int) -> ScriptCommand:
        return ScriptCommand(scripts.EXTEND, (ref.name,), (ttl_ms, ref.owner))

    def locked(self, ref: LockRef) -> Command:
        """A command whose reply `is_locked` reads: is the lock held by anyone?"""
        return ("EXISTS", ref.name)

    def hold_count(self, ref: LockRef) -> Command:
        """A command whose reply is the owner's hold count (nil or 0: none)."""
        return ("HGET", ref.name, ref.owner)

    def is_locked(self, reply: Any) -> bool:
        return int(reply) == 1

    def wait_channel(self, ref: LockRef) -> str | None:
        """Where a waiter of ``ref`` listens for its turn (None: it polls)."""
        return ref.channel

    def backoff(self) -> Iterator[float] | None:
        """The sleeps between tries of a kind that polls (None: it listens)."""
        return None

    def __repr__(self) -> str:
        return f"<lock kind {self.label}>"


class NonReentrantKind(LockKind):
    """Redisson's ``RedissonNonReentrantLock``: the holder's second acquire is refused."""

    label = "non-reentrant"
    reentrant = False


class FencedKind(LockKind):
    """Redisson's ``RFencedLock``: a first acquire increments the token counter."""

    label = "fenced"

    def aux_keys(self, name: str, by_slot: bool) -> tuple[str, ...]:
        return (keyspace.fenced_token(name, by_slot=by_slot),)

    def acquire(
        self, ref: LockRef, ttl_ms: int, request_id: str, wait_ms: int, queue: bool
    ) -> ScriptCommand:
        args = (ttl_ms, ref.owner, keyspace.acquire_field(ref.owner), request_id)
        return ScriptCommand(fenced_lock.ACQUIRE_FENCED, (ref.name, ref.aux[0]), args)


class SpinKind(LockKind):
    """Redisson's ``RSpinLock``: no pub/sub; waiters retry after a back-off."""

    label = "spin"

    def __init__(self, policy: BackOff | None = None) -> None:
        self.policy = policy or ExponentialBackOff()

    def publish_command(self, ref: LockRef) -> str:
        return ""  # nobody listens: Redisson's spin lock publishes nothing

    def wait_channel(self, ref: LockRef) -> str | None:
        return None

    def backoff(self) -> Iterator[float] | None:
        return self.policy.delays()


class FairKind(LockKind):
    """Redisson's ``RFairLock`` (and, with ``reentrant=False``, its non-reentrant twin):
    waiters queue, each wakes on its own channel; see `redisson_py.core.scripts.fair_lock`."""

    label = "fair"
    queues = True
    keepalive = fair_lock.KEEPALIVE_INTERVAL
    release_script = fair_lock.RELEASE_FAIR

    def __init__(self, *, reentrant: bool = True) -> None:
        self.reentrant = reentrant
        if not reentrant:
            self.label = "non-reentrant fair"

    def aux_keys(self, name: str, by_slot: bool) -> tuple[str, ...]:
        return (
            keyspace.fair_queue(name, by_slot=by_slot),
            keyspace.fair_timeouts(name, by_slot=by_slot),
            keyspace.fair_alive(name, by_slot=by_slot),
        )

    def _keys(self, ref: LockRef) -> tuple[str, str, str, str]:
        return (ref.name, ref.aux[0], ref.aux[1], ref.aux[2])

    def acquire(
        self, ref: LockRef, ttl_ms: int, request_id: str, wait_ms: int, queue: bool
    ) -> ScriptCommand:
        args = (
            ttl_ms,
            ref.owner,
            keyspace.acquire_field(ref.owner),
            request_id,
            wait_ms,
            to_millis(ref.state.wall_clock()),
            "1" if queue else "0",
            "1" if self.reentrant else "0",
            to_millis(fair_lock.ALIVE_WINDOW),
        )
        return ScriptCommand(fair_lock.ACQUIRE_FAIR, self._keys(ref), args)

    def undo(self, ref: LockRef, request_id: str, wait_ms: int) -> ScriptCommand:
        args = (
            ref.owner,
            keyspace.acquire_field(ref.owner),
            request_id,
            self.release_message,
            self.publish_command(ref),
            wait_ms,
        )
        return ScriptCommand(fair_lock.UNDO_FAIR, (*self._keys(ref), ref.channel), args)

    def release_keys(self, ref: LockRef, latch: str) -> tuple[str, ...]:
        return (*self._keys(ref), ref.channel, latch)

    def release_head(self, ref: LockRef) -> tuple[Arg, ...]:
        # now (wall-clock ms): the queue's timeouts are counted from it
        return (*super().release_head(ref), to_millis(ref.state.wall_clock()))

    def force_release(self, ref: LockRef) -> ScriptCommand:
        args = (
            self.release_message,
            self.publish_command(ref),
            to_millis(ref.state.wall_clock()),
        )
        return ScriptCommand(fair_lock.FORCE_RELEASE_FAIR, (*self._keys(ref), ref.channel), args)

    def wait_channel(self, ref: LockRef) -> str | None:
        return keyspace.fair_waiter_channel(ref.channel, ref.owner)


class ReadKind(LockKind):
    """The read half of Redisson's ``RReadWriteLock``; see
    `redisson_py.core.scripts.read_write_lock`."""

    label = "read"
    channel_prefix = keyspace.READ_WRITE_CHANNEL_PREFIX
    release_message = keyspace.READ_UNLOCK_MESSAGE
    release_script = read_write_lock.RELEASE_READ
    renew_script = read_write_lock.RENEW_READ

    def aux_keys(self, name: str, by_slot: bool) -> tuple[str, ...]:
        """The prefix of the readers' timeout keys (``{name}``), the acquire-latch hash."""
        return (
            keyspace.hashtagged(name, by_slot=by_slot),
            keyspace.acquire_latches(name, by_slot=by_slot),
        )

    @staticmethod
    def timeout_prefix(ref: LockRef) -> str:
        """The prefix of this owner's per-hold timeout keys."""
        return keyspace.read_hold_timeout_prefix(
            ref.name, ref.owner, by_slot=bool(ref.target.routes_by_slot)
        )

    def acquire(
        self, ref: LockRef, ttl_ms: int, request_id: str, wait_ms: int, queue: bool
    ) -> ScriptCommand:
        args = (
            ttl_ms,
            ref.owner,
            keyspace.acquire_field(ref.owner),
            request_id,
            keyspace.write_field(ref.owner),
        )
        keys = (ref.name, self.timeout_prefix(ref), ref.aux[1])
        return ScriptCommand(read_write_lock.ACQUIRE_READ, keys, args)

    def undo(self, ref: LockRef, request_id: str, wait_ms: int) -> ScriptCommand:
        keys = (ref.name, ref.channel, self.timeout_prefix(ref), ref.aux[0], ref.aux[1])
        args = (
            self.release_message,
            ref.owner,
            self.publish_command(ref),
            request_id,
            keyspace.acquire_field(ref.owner),
        )
        return ScriptCommand(read_write_lock.UNDO_READ, keys, args)

    def release_keys(self, ref: LockRef, latch: str) -> tuple[str, ...]:
        return (ref.name, ref.channel, self.timeout_prefix(ref), ref.aux[0], latch, ref.aux[1])

    def force_release(self, ref: LockRef) -> ScriptCommand:
        args = (self.release_message, self.publish_command(ref))
        keys = (ref.name, ref.channel, ref.aux[0], ref.aux[1])
        return ScriptCommand(read_write_lock.FORCE_RELEASE_READ, keys, args)

    def renew(self, holds: Sequence[Hold], ttl_ms: int) -> ScriptCommand:
        by_slot = [bool(h.target.routes_by_slot) for h in holds]
        pairs = list(zip(holds, by_slot, strict=True))
        prefixes = (keyspace.hashtagged(h.name, by_slot=b) for h, b in pairs)
        args: tuple[Arg, ...] = (
            ttl_ms,
            *(h.owner for h in holds),
            *prefixes,
            *renew_flags(holds),
        )
        keys = (
            *(h.name for h in holds),
            *(keyspace.acquire_latches(h.name, by_slot=b) for h, b in pairs),
        )
        return ScriptCommand(self.renew_script, keys, args)

    def extend(self, ref: LockRef, ttl_ms: int) -> ScriptCommand:
        keys = (ref.name, self.timeout_prefix(ref), ref.aux[1])
        return ScriptCommand(read_write_lock.EXTEND_READ, keys, (ttl_ms, ref.owner))

    def locked(self, ref: LockRef) -> Command:
        return ScriptCommand(read_write_lock.IS_READ_LOCKED, (ref.name,), ())

    def hold_count(self, ref: LockRef) -> Command:
        # Only holds whose timeout keys still run count (a field can outlive them).
        keys = (ref.name, self.timeout_prefix(ref))
        return ScriptCommand(read_write_lock.READ_HOLD_COUNT, keys, (ref.owner,))


class WriteKind(LockKind):
    """The write half of Redisson's ``RReadWriteLock``: the owner's field ends in
    ``:write``."""

    label = "write"
    channel_prefix = keyspace.READ_WRITE_CHANNEL_PREFIX
    owner_suffix = keyspace.WRITE_SUFFIX
    release_message = keyspace.WRITE_UNLOCK_MESSAGE
    release_script = read_write_lock.RELEASE_WRITE
    renew_script = read_write_lock.RENEW_WRITE

    def aux_keys(self, name: str, by_slot: bool) -> tuple[str, ...]:
        """The prefix of the readers' timeout keys (``{name}``), the acquire-latch hash."""
        return READ.aux_keys(name, by_slot)

    def acquire(
        self, ref: LockRef, ttl_ms: int, request_id: str, wait_ms: int, queue: bool
    ) -> ScriptCommand:
        args = (ttl_ms, ref.owner, keyspace.acquire_field(ref.owner), request_id)
        return ScriptCommand(read_write_lock.ACQUIRE_WRITE, (ref.name, ref.aux[1]), args)

    def undo(self, ref: LockRef, request_id: str, wait_ms: int) -> ScriptCommand:
        args = (
            self.release_message,
            ref.owner,
            self.publish_command(ref),
            request_id,
            keyspace.acquire_field(ref.owner),
        )
        return ScriptCommand(read_write_lock.UNDO_WRITE, (ref.name, ref.channel, ref.aux[1]), args)

    def release_keys(self, ref: LockRef, latch: str) -> tuple[str, ...]:
        return (ref.name, ref.channel, latch, ref.aux[1])

    def force_release(self, ref: LockRef) -> ScriptCommand:
        args = (self.release_message, self.publish_command(ref))
        keys = (ref.name, ref.channel, ref.aux[0], ref.aux[1])
        return ScriptCommand(read_write_lock.FORCE_RELEASE_WRITE, keys, args)

    def renew(self, holds: Sequence[Hold], ttl_ms: int) -> ScriptCommand:
        args: tuple[Arg, ...] = (ttl_ms, *(h.owner for h in holds), *renew_flags(holds))
        keys = (
            *(h.name for h in holds),
            *(
                keyspace.acquire_latches(h.name, by_slot=bool(h.target.routes_by_slot))
                for h in holds
            ),
        )
        return ScriptCommand(self.renew_script, keys, args)

    def extend(self, ref: LockRef, ttl_ms: int) -> ScriptCommand:
        return ScriptCommand(
            read_write_lock.EXTEND_WRITE, (ref.name, ref.aux[1]), (ttl_ms, ref.owner)
        )

    def locked(self, ref: LockRef) -> Command:
        return ("HGET", ref.name, keyspace.MODE_FIELD)

    def is_locked(self, reply: Any) -> bool:
        return reply in (b"write", "write")


REENTRANT = LockKind()
NON_REENTRANT = NonReentrantKind()
FENCED = FencedKind()
FAIR = FairKind()
NON_REENTRANT_FAIR = FairKind(reentrant=False)
READ = ReadKind()
WRITE = WriteKind()


@dataclass(frozen=True, slots=True)
class LockRef:
    """One lock as seen by one owner: everything a flow needs to act on it.

    ``owner`` is the hash field ``<client id>:<thread or task id>`` (and the kind's
    suffix: a write lock's ends in ``:write``); ``target`` the connection manager that
    routes ``name`` to its master; ``on_lost`` what to do when the watchdog finds this
    owner's hold lost (None: report through the lock's callback, else the client's);
    ``kind`` the lock kind, which picks the scripts and keys.
    """

    name: str
    owner: str
    target: Target
    state: ClientState
    on_lost_callback: Callable[[Any], object] | None = None
    group_on_lost: Callable[[Hold, str], None] | None = None
    channel: str = ""
    """The channel releases are announced on; derived from the name when not given."""
    kind: LockKind = REENTRANT
    aux: tuple[str, ...] = ()
    """The kind's auxiliary key names (``kind.aux_keys``); derived when not given."""
    on_grant: Callable[[AcquireReply], None] | None = None
    """Told each grant this call gets (a fenced lock's token comes with it)."""
    adopted: bool = False
    """``owner`` is a field adopted from another client (``adopt_hold``): its holds may
    be re-entered and released, not taken anew once released."""

    def __post_init__(self) -> None:
        by_slot = bool(self.target.routes_by_slot)
        if not self.channel:
            channel = naming.prefixed_name(self.kind.channel_prefix, self.name, by_slot=by_slot)
            object.__setattr__(self, "channel", channel)
        if not self.aux:
            object.__setattr__(self, "aux", self.kind.aux_keys(self.name, by_slot))

    @property
    def subject(self) -> str:
        """How messages name this lock."""
        return f"lock {self.name!r}"

    def report(self, hold: Hold, reason: str) -> None:
        """Report ``hold`` lost: to the MultiLock/RedLock it belongs to, or to the user."""
        if self.group_on_lost is not None:
            self.group_on_lost(hold, reason)
            return
        callback = self.on_lost_callback or self.state.on_lock_lost
        report_lost(
            hold.name, hold.owner, reason, callback, await_later=self.state.runtime.await_later
        )


@dataclass(frozen=True, slots=True)
class AcquireReply:
    """A decoded acquire: ``acquired`` with the owner's ``hold_count``, or the holder's
    remaining ``ttl`` in seconds (None when the holder's key has no expiry)."""

    acquired: bool
    hold_count: int = 0
    ttl: float | None = None
    token: int | None = None
    """A fenced lock's token (None for other locks)."""


def decode_acquire(reply: Any) -> AcquireReply:
    """Decode an acquire script's ``{flag, value}`` reply (``{1, count, token}`` from a
    fenced lock's); flags 2 and 3 are handled before (see `lock_kinds`)."""
    flag, value = int(reply[0]), int(reply[1])
    if flag == AcquireFlag.GRANTED:
        token = int(reply[2]) if len(reply) > 2 and reply[2] is not None else None
        return AcquireReply(acquired=True, hold_count=value, token=token)
    return AcquireReply(acquired=False, ttl=None if value < 0 else value / 1000)


def decode_release(reply: Any) -> int | None:
    """Decode the RELEASE script's reply: holds left, or None when nothing was held."""
    return None if reply is None else int(reply)
