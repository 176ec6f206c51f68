"""The queued lock: a release grants the lock to the next waiter in the same script and
tells it, so a hand-off costs the message alone, not the message and a round trip.

Everything but the hand-off is the reentrant lock's (`redisson_py.core.flows.lock`:
deadlines, request ids, undo, replica sync, the watchdog's renewals and loss reports);
`QueuedKind` says which scripts (`redisson_py.core.scripts.queued_lock`) run with which
keys, and `passed_on` what a woken waiter does.

**When a grant counts, and until when.** A release passes the lock on only to a waiter
whose last try it can see was live; it writes the waiter's hold, with a TTL of at most
`GRANT_TTL`, and publishes the waiter's request id on the waiter's own channel. The
waiter, woken, reads the message: its current request id means the server granted this
request, at some moment after its last try was answered "held" (a grant before that
try ran would have made the try answer "granted"). So the hold's safe end counts from
when that try was *sent*, on the waiter's own clock, never from the message's arrival
(which may come late): the key lives at least the grant's TTL from then. The
waiter's watchdog renews it a third of the way to that safe end
(`redisson_py.core.flows.watchdog.Schedule.hurry`: the key then gets the watchdog's
full TTL), and on its usual interval after that, as any hold: a renewal that does not
come in time leaves the hold to be reported lost at its safe end. A hold released
before that renewal, the common case on a hot lock, costs no call but its release.

The message alone is not enough, and the waiter asks the server instead (its usual
try, which finds the grant by its request id and takes it up, with ``WAIT``), when:

- replica sync is on and the waiter's last try waited for replicas: a grant the
  replicas did not acknowledge is not a hold, and only a write of the waiter's own can
  be waited for;
- the hold was given a lease longer than `GRANT_TTL` (the try sets the lease);
- the grant's safe end, counted as above, has passed or is about to.

A waiter that gives up (deadline, cancellation, interrupt) undoes its request as any
lock's waiter does; the undo script finds a grant passed on to it by its request id and
passes the lock on again, rather than keeping it or dropping it.
"""

from __future__ import annotations

from typing import Any

from redisson_py.core import keyspace
from redisson_py.core.effects import Arg, ScriptCommand, to_millis
from redisson_py.core.flows.lock import AcquireRequest
from redisson_py.core.flows.lock_kinds import AcquireReply, LockKind, LockRef
from redisson_py.core.scripts import queued_lock
from redisson_py.core.state.holds import safe_end

GRANT_TTL = queued_lock.GRANT_TTL
MIN_SAFE = 0.05
"""A grant whose safe end is closer than this (seconds) when its message is read is
confirmed with a try instead of being counted from the message."""


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


class QueuedKind(LockKind):
    """The queued lock (redisson-py's own; see the module docstring): waiters queue in
    the server, a release grants the first live one."""

    label = "queued"
    channel_prefix = keyspace.QUEUED_CHANNEL_PREFIX
    release_script = queued_lock.RELEASE_QUEUED
    queues = True
    keepalive = queued_lock.KEEPALIVE_INTERVAL
    passes_on = True

    def __init__(self, *, reentrant: bool = True) -> None:
        self.reentrant = reentrant
        if not reentrant:
            self.label = "non-reentrant queued"

    def aux_keys(self, name: str, by_slot: bool) -> tuple[str, ...]:
        return (
            keyspace.queued_queue(name, by_slot=by_slot),
            keyspace.queued_alive(name, by_slot=by_slot),
            keyspace.queued_entries(name, by_slot=by_slot),
        )

    def _keys(self, ref: LockRef) -> tuple[str, str, str, str, str]:
        return (ref.name, ref.aux[0], ref.aux[1], ref.aux[2], ref.channel)

    def acquire(
        self, ref: LockRef, ttl_ms: int, request_id: str, wait_ms: int, queue: bool
    ) -> ScriptCommand:
        args = (
            ttl_ms,
            ref.owner,
            keyspace.acquire_field(ref.owner),
            request_id,
            "1" if queue else "0",
            to_millis(queued_lock.ALIVE_WINDOW),
            "1" if self.reentrant else "0",
            self.publish_command(ref),
        )
        return ScriptCommand(queued_lock.ACQUIRE_QUEUED, self._keys(ref), args)

    def undo(self, ref: LockRef, request_id: str, wait_ms: int) -> ScriptCommand:
        args = (ref.owner, keyspace.acquire_field(ref.owner), request_id, self.publish_command(ref))
        return ScriptCommand(queued_lock.UNDO_QUEUED, self._keys(ref), args)

    def release_keys(self, ref: LockRef, latch: str) -> tuple[str, ...]:
        return (*self._keys(ref), latch)

    def release_head(self, ref: LockRef) -> tuple[Arg, ...]:
        # no message: a release publishes the grant (or a wake-up) itself
        return (ref.owner, self.publish_command(ref), to_millis(ref.state.settings.latch_ttl))

    def force_release(self, ref: LockRef) -> ScriptCommand:
        args = (self.publish_command(ref),)
        return ScriptCommand(queued_lock.FORCE_RELEASE_QUEUED, self._keys(ref), args)

    def wait_channel(self, ref: LockRef) -> str | None:
        return f"{ref.channel}:{ref.owner}"

    def passed_on(self, acquire: Any, subscription: Any) -> AcquireReply | None:
        return passed_on(acquire, subscription)


QUEUED = QueuedKind()


def passed_on(acquire: AcquireRequest, subscription: Any) -> AcquireReply | None:
    """The waiter of ``acquire`` was woken on its channel (``subscription``): when the
    channel's last message names its current request, a release granted it the lock:
    record the hold (safe from the send of its last try answered "held", for the
    grant's TTL; the watchdog, told of it, renews it in time), and return the grant,
    having sent nothing. None when
    the message names no grant of this request, or when the grant must be confirmed by
    a try (see the module docstring)."""
    ref = acquire.ref
    state = ref.state
    message = getattr(subscription, "last_message", None)
    answered = acquire.answered
    if message is None or answered is None or _text(message) != acquire.request_id:
        return None
    request_id, sent_at, replicas = answered
    if request_id != acquire.request_id or replicas > 0:
        return None  # replica sync: only a try of this waiter's own can WAIT for it
    if acquire.lease is not None and acquire.ttl > GRANT_TTL:
        return None  # the try gives the key the whole lease
    ttl = min(acquire.ttl, GRANT_TTL)
    if safe_end(sent_at, ttl) - state.clock() < MIN_SAFE:
        return None
    state.holds.acquired(
        ref.name,
        ref.owner,
        1,
        target=ref.target,
        lease=acquire.lease,
        ttl=ttl,
        now=sent_at,
        on_lost=ref.report,
        kind=ref.kind,
        request_id=request_id,
        max_hold=acquire.max_hold,
    )
    reply = AcquireReply(acquired=True, hold_count=1)
    if ref.on_grant is not None:
        ref.on_grant(reply)
    return reply
