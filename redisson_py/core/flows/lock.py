"""The reentrant lock's algorithms (and every lock kind's), written once for the sync
and asyncio shells: `redisson_py.asyncio.lock` and its generated threaded twin run
them.

Every public operation of a lock is a generator here: it yields effects
(`redisson_py.core.effects`) and receives their outcomes, so the same decisions
(which script, what its reply means, how long to wait, when to retry, what to undo)
drive both the threaded and the asyncio client. Nothing in this module performs I/O.
The calls themselves (retries, deadlines, undoing) are `redisson_py.core.flows.calls`;
what a reply means is `redisson_py.core.flows.lock_kinds`.
"""

from __future__ import annotations

import math
from collections.abc import Generator, Sequence
from dataclasses import replace
from typing import Any

from redis.exceptions import BusyLoadingError, ResponseError

from redisson_py.core.effects import (
    Background,
    Command,
    Effect,
    ScriptCommand,
    Subscribe,
    Unsubscribe,
    to_millis,
)
from redisson_py.core.flows.calls import (
    POLL_WITHOUT_SUBSCRIPTION,
    QUEUE_PAUSE,
    RETRYABLE,
    call_with_retry,
    join_live,
    nap,
    new_request_id,
    node_of,
    outlast_failures,
    read,
    reply_error,
    undo_in_background,
    undo_unsynced,
    unsynced_extension,
)
from redisson_py.core.flows.lock_kinds import (
    AcquireFlag,
    AcquireReply,
    LockRef,
    decode_acquire,
    decode_release,
)
from redisson_py.core.state import events, losses
from redisson_py.core.state.client_state import ClientState
from redisson_py.core.state.holds import Hold, gone_text
from redisson_py.errors import ArgumentError, HandOffError, LockNotOwnedError, LockReentryError

Flow = Generator[Effect, Any, Any]


class AcquireRequest:
    """One logical acquire (one ``lock()`` or ``try_lock()`` call) across its attempts.

    Every attempt carries the same request id, which the server records in the lock's
    hash (the owner's latch field) when it applies one, so an attempt it runs late
    (written on a connection the client gave up on, say) finds it and counts nothing
    twice. ``maybe_applied`` is True once an attempt of the current request went unanswered:
    it may have been applied, so a wait that ends without a grant undoes the request.
    ``queued`` is True once an attempt may have put the owner in a fair lock's waiter
    queue, which a wait that ends without a grant leaves. ``wait`` (None: for ever) is
    how long the call may wait: 0 tries once and joins no queue. ``max_hold`` caps a
    watchdog hold's renewals (seconds; None: the config's ``lockMaxHoldTime``; inf: no
    cap; ignored with a lease, which is never renewed).
    """

    __slots__ = (
        "answered",
        "lease",
        "max_hold",
        "maybe_applied",
        "queue",
        "queued",
        "ref",
        "request_id",
        "ttl",
        "ttl_ms",
        "wait_ms",
    )

    def __init__(
        self,
        ref: LockRef,
        lease: float | None,
        wait: float | None = 0.0,
        max_hold: float | None = None,
    ):
        settings = ref.state.settings
        self.ref = ref
        self.lease = lease
        if max_hold is None:
            max_hold = settings.max_hold_time
        self.max_hold = None if lease is not None or max_hold == math.inf else max_hold
        # A cap shorter than the watchdog timeout is the key's first TTL: the hold ends
        # at the cap even when no renewal round comes before it.
        self.ttl = settings.key_ttl(lease)
        if self.max_hold is not None:
            self.ttl = min(self.ttl, self.max_hold)
        self.ttl_ms = to_millis(self.ttl)
        # A fair lock's waiter keeps its place this long after its last try (Redisson's).
        self.wait_ms = to_millis(wait if wait else settings.fair_lock_wait_timeout)
        self.queue = ref.kind.queues and (wait is None or wait > 0)
        self.queued = False
        self.request_id = ""
        self.maybe_applied = False
        self.answered: tuple[str, float, int] | None = None
        """The last refusal: (request id, when its attempt was sent, the replicas its
        WAIT asked for); a queued lock's waiter counts a grant passed on to it from
        there (`redisson_py.core.flows.queued_lock`)."""
        self.renew()

    def renew(self) -> None:
        """Start a new request (after the last one was undone, or its hold vanished)."""
        self.request_id = new_request_id()
        self.maybe_applied = False

    def command(self, ttl: float | None = None) -> ScriptCommand:
        """This request's attempt, giving the key `ttl` (or ``ttl`` seconds: a
        reentrant acquire within a hold's ``max_hold_time``)."""
        ref = self.ref
        ttl_ms = self.ttl_ms if ttl is None else to_millis(ttl)
        return ref.kind.acquire(ref, ttl_ms, self.request_id, self.wait_ms, self.queue)

    def undo_command(self) -> ScriptCommand:
        """Take back this request's hold, if it was applied, and leave the queue."""
        return self.ref.kind.undo(self.ref, self.request_id, self.wait_ms)

    @property
    def undo_window(self) -> float:
        """How long an undo is worth retrying: past the lease (or watchdog timeout), a
        hold this request may have left has expired by itself."""
        return self.ttl_ms / 1000


def undo_later(acquire: AcquireRequest) -> Background:
    """The effect that undoes ``acquire`` in the background."""
    return Background(
        undo_in_background(acquire.ref, acquire.undo_command(), acquire.undo_window),
        name="redisson-py-undo",
    )


def _within_cap(ref: LockRef, acquire: AcquireRequest) -> float:
    """The TTL a reentrant acquire without a lease gives the key: its own, cut to the
    time left before the hold's ``max_hold_time`` (a reentrant acquire cannot carry the
    hold past its cap)."""
    hold = ref.state.holds.get(ref.name, ref.owner)
    if acquire.lease is not None or hold is None or hold.renew_until is None:
        return acquire.ttl
    return min(acquire.ttl, max(MIN_CAP_TTL, hold.renew_until - ref.state.clock()))


MIN_CAP_TTL = 0.001
"""The shortest TTL an acquire within a cap gives (PEXPIRE counts whole milliseconds)."""


class _Stale(Exception):
    """The current request's hold is gone or undone: start a new request at once."""


def _acquire_once(
    acquire: AcquireRequest, deadline: float | None
) -> Generator[Effect, Any, AcquireReply]:
    """One attempt of ``acquire``: take a hold, record it; an unsynced grant is undone."""
    ref = acquire.ref
    state, settings = ref.state, ref.state.settings
    sync = settings.sync_replicas
    sent = [0.0]
    believed = state.holds.count(ref.name, ref.owner, state.clock())
    ttl = acquire.ttl
    if believed:
        state.holds.acquiring(ref.name, ref.owner, acquire.request_id)
        ttl = _within_cap(ref, acquire)
    command = acquire.command(ttl)

    def attempts(unanswered: int) -> tuple[Command, ...]:
        if unanswered:
            # An earlier attempt went unanswered: the server may still run it, after
            # this one; a wait that ends without a grant must undo the request.
            acquire.maybe_applied = True
        sent[0] = state.clock()  # the hold's safe end counts from the send that got it
        return (command,)

    try:
        result = yield from call_with_retry(ref, attempts, sync_replicas=sync, deadline=deadline)
    except (ResponseError, BusyLoadingError) as error:
        # Answered, not in flight: an error reply, or a refusal, which Redis gives before
        # it runs anything (see refusals): nothing was applied, nothing to undo. A
        # transient refusal goes on as it is, for the wait to outlast (WAIT_THROUGH).
        if isinstance(error, RETRYABLE):
            raise
        raise reply_error(ref, error) from error
    except GeneratorExit:
        raise  # the flow is being discarded; it may yield nothing more
    except BaseException:
        # Unanswered (connection error, timeout, or interrupted while in flight): the
        # server may still run it. The caller retries it, or undoes it when giving up.
        acquire.maybe_applied = True
        raise
    flag = int(result.replies[0][0])  # compared with the enum's ints: none is built
    if flag == AcquireFlag.STALE:
        raise _Stale()
    if flag == AcquireFlag.REFUSED and believed == 0:
        # Held on the server by this owner, who counts no hold: a leftover (see
        # drop_leftovers), of acquires this client no longer knows. Once it is
        # released, the acquire starts over.
        yield from drop_leftovers(ref, 1, ())
        raise _Stale()
    if flag == AcquireFlag.REFUSED:
        raise LockReentryError(
            f"lock {ref.name!r} is not reentrant and owner {ref.owner} already holds it;"
            " unlock it first (its hold is unchanged)",
            lock_name=ref.name,
        )
    reply = decode_acquire(result.replies[0])
    if not reply.acquired:
        acquire.queued = acquire.queued or acquire.queue
        acquire.answered = (acquire.request_id, sent[0], result.required)
        return reply
    if result.synced < result.required:
        # The grant is certain but not replicated: take it back.
        acquire.maybe_applied = True  # held until undone: if interrupted here, undo later
        unsynced = yield from undo_unsynced(
            ref, result, acquire.undo_command(), acquire.undo_window
        )
        acquire.renew()
        raise unsynced
    if believed == 0 and reply.hold_count > 1:
        yield from drop_leftovers(ref, reply.hold_count - 1, (acquire.request_id,))
        reply = replace(reply, hold_count=1)
    state.holds.acquired(
        ref.name,
        ref.owner,
        reply.hold_count,
        target=ref.target,
        lease=acquire.lease,
        ttl=ttl,
        now=sent[0],
        on_lost=ref.report,
        kind=ref.kind,
        request_id=acquire.request_id,
        max_hold=acquire.max_hold,
    )
    if ref.on_grant is not None:
        ref.on_grant(reply)
    return reply


def drop_leftovers(
    ref: LockRef, count: int, acquires: Sequence[str]
) -> Generator[Effect, Any, None]:
    """Release ``count`` holds the owner has on the server but this client does not
    count: what is left of a hold it reported lost (a hold is reported at its safe end,
    before its key expires; a partition's old master keeps it renewed), or of a release
    whose reply was lost. An acquire that finds them (the owner counts no hold, the
    server grants a count above 1, or a non-reentrant lock says the owner holds it)
    drops them first, so the owner's unlocks match its acquires and no leftover is
    renewed for ever. Each release has a request id of its own, so a retry counts once.
    ``acquires``: the request ids the owner's field may name (the acquire that found
    them; none when unknown). Errors propagate: the acquire fails as if unanswered (and
    is undone)."""
    commands = tuple(ref.kind.release(ref, acquires) for _ in range(count))
    yield from call_with_retry(ref, lambda attempt: commands)


def release_command(ref: LockRef) -> ScriptCommand:
    """Release one of the owner's holds, with a request id of its own (its latch), and
    the request ids of the hold as this client knows it, so that the release, if the
    server runs it late, cannot release a later hold of the same owner."""
    return ref.kind.release(ref, ref.state.holds.acquire_ids(ref.name, ref.owner))


def handed_off(ref: LockRef) -> Flow:
    """Refuse an acquire by an owner that handed its hold away: an owner that exported
    it while its adopter still has the field (the acquire would count as a reentry of
    the adopter's hold), or an adopted view whose hold was released (a new hold under a
    field another client names would be that client's too)."""
    holds = ref.state.holds
    if ref.adopted and holds.count(ref.name, ref.owner, ref.state.clock()) == 0:
        raise HandOffError(
            f"lock {ref.name!r}: the hold adopted from {ref.owner} was released (or lost);"
            " an adopted hold can be re-entered, not taken again: use a lock from"
            " get_lock() for a hold of your own",
            lock_name=ref.name,
            reason="adopted-released",
        )
    if holds.was_exported(ref.name, ref.owner):
        count = yield from read(ref, ref.kind.hold_count(ref))
        if count is not None and int(count) > 0:
            raise HandOffError(
                f"lock {ref.name!r}: owner {ref.owner} exported its hold and the adopter"
                f" still has it (node {node_of(ref)}); acquire it from another thread or"
                " task, or after the adopter releases it",
                lock_name=ref.name,
                reason="exported",
            )
        holds.clear_exported(ref.name, ref.owner)


def try_lock(
    ref: LockRef, wait: float | None, lease: float | None, max_hold: float | None = None
) -> Flow:
    """Acquire a hold within ``wait`` seconds (None: wait for ever); return True if held.
    ``max_hold``: see `AcquireRequest`.

    A waiter subscribes to the unlock channel before it retries, then sleeps until a
    message or the holder's remaining TTL, whichever comes first, so a lost message or
    a failover costs at most one TTL. Where its client listens on the channel already,
    it joins that subscription before its first try (a release after the try wakes it,
    so it needs no second try), and when the client's other waiters sleep there it lets
    them go first, for `QUEUE_PAUSE` at most: each release wakes the one asleep longest,
    so a client's waiters take their turns in order rather than the releasing task
    taking the lock straight back. A fair lock's waiter tries at least every
    `KEEPALIVE_INTERVAL` (`redisson_py.core.scripts.fair_lock`): each try keeps its place in
    the queue alive. A grant the replicas did not acknowledge is undone
    and retried while time remains, and so are connection errors (a failover); at the
    deadline the last such error is raised
    ([`NoSyncedReplicasError`][redisson_py.errors.NoSyncedReplicasError], or the
    connection error) if that, not another holder, is why the lock was not taken.

    Deadline: with ``wait``, the flow returns or raises at most one command timeout
    after ``wait`` seconds, whatever the servers do: every pause and retry is cut to
    the time left. A wait that ends without a grant leaves no hold behind: an attempt
    that went unanswered (and may yet be run by the server) is undone, in the background
    so the caller is not held up; the request id recorded in the lock's hash makes the
    undo take back exactly what that attempt applied. One request id serves every
    attempt, so no attempt is ever counted twice.
    """
    started = ref.state.clock()
    if ref.adopted or ref.state.holds.was_exported(ref.name, ref.owner):
        yield from handed_off(ref)
    waiter = _Waiter(ref, wait, lease, max_hold, started)
    acquire = waiter.acquire
    subscription = None
    acquired = closing = False
    try:
        channel = ref.kind.wait_channel(ref)
        if channel is not None and (wait is None or wait > 0):
            subscription = yield from waiter.join_live(channel)
        reply = yield from waiter.attempt()
        if reply.acquired:
            acquired = True
            return True
        left = waiter.remaining()
        if left is not None and left <= 0:
            return False
        # A waiter that joined a live subscription before its first try sleeps first;
        # one that subscribes now tries again at once (a release may have come before
        # the subscription), unless it polls.
        retry = False
        if subscription is None:
            subscription = yield from waiter.subscribe(channel, left)
            retry = waiter.backoff is None
        acquired = yield from waiter.wait(subscription, reply, retry=retry)
        return acquired
    except GeneratorExit:
        closing = True  # the flow is being discarded: it may yield nothing more
        raise
    finally:
        if acquired and not closing and ref.state.listeners:
            _emit(ref, "acquired", wait=ref.state.clock() - started)
        if not closing:
            if not acquired and (acquire.maybe_applied or acquire.queued):
                yield undo_later(acquire)
            if subscription is not None:
                yield Unsubscribe(subscription)


class _Waiter:
    """One `try_lock` call's steps: its tries, the subscription it waits on, its sleeps
    between tries, all within its deadline."""

    __slots__ = ("acquire", "backoff", "deadline", "keepalive", "ref", "started")

    def __init__(
        self,
        ref: LockRef,
        wait: float | None,
        lease: float | None,
        max_hold: float | None,
        started: float,
    ):
        self.ref = ref
        self.started = started
        self.deadline = None if wait is None else started + max(0.0, wait)
        self.acquire = AcquireRequest(ref, lease, wait, max_hold)
        # a kind that polls (the spin lock) rather than listens
        self.backoff = ref.kind.backoff()
        self.keepalive = ref.kind.keepalive if self.acquire.queue else None

    def remaining(self) -> float | None:
        """Seconds the wait has left (None: no limit)."""
        return None if self.deadline is None else self.deadline - self.ref.state.clock()

    def _once(self) -> Generator[Effect, Any, AcquireReply]:
        while True:
            try:
                return (yield from _acquire_once(self.acquire, self.deadline))
            except _Stale:
                self.acquire.renew()

    def attempt(self) -> Generator[Effect, Any, AcquireReply]:
        """One try; a waiter keeps waiting through what a failover looks like from
        here."""
        return (yield from outlast_failures(self.ref, self._once, self.deadline))

    def join_live(self, channel: str) -> Generator[Effect, Any, Any]:
        """Before the first try: the live subscription of ``channel`` this client has
        already, joined (None: none), after this client's waiters asleep on it had
        their turn."""
        ref = self.ref
        join = join_live(ref.target, channel, ref.state.settings.subscription_timeout)
        if join is None:
            return None
        subscription = yield join
        if (
            subscription is not None
            and subscription.behind
            and not ref.state.holds.count(ref.name, ref.owner, self.started)
        ):
            # Waiters of this client sleep on the lock already: the next release's
            # wake-up goes to the one asleep longest. Take a turn after them rather
            # than barge in (a task that releases and asks again would win nearly
            # every turn), but for QUEUE_PAUSE at most; a reentrant acquire by the
            # holder does not wait.
            yield nap(subscription, QUEUE_PAUSE, self.remaining())
        return subscription

    def subscribe(self, channel: str | None, left: float | None) -> Generator[Effect, Any, Any]:
        """After a first try that found the lock held: a subscription of ``channel``
        (None: the kind has none, or it failed and the waiter polls instead)."""
        if channel is None:
            return None
        timeout = self.ref.state.settings.subscription_timeout
        if left is not None:
            timeout = min(timeout, left)
        try:
            return (yield Subscribe(self.ref.target, channel, timeout))
        except RETRYABLE:
            return None  # poll instead: slower hand-off, same correctness

    def wait(
        self, subscription: Any, reply: AcquireReply, *, retry: bool
    ) -> Generator[Effect, Any, bool]:
        """Sleep and try until granted (True) or out of time (False), from ``reply``
        (``retry``: try once more first)."""
        if retry:
            reply = yield from self.attempt()
        while True:
            if reply.acquired:
                return True
            left = self.remaining()
            if left is not None and left <= 0:
                return False
            woken = yield nap(subscription, self._pause(subscription, reply), left)
            if woken and self.ref.kind.passes_on:
                # A queued lock: the wake-up may be a grant a release passed on to this
                # waiter, which then holds the lock with no round trip of its own.
                granted = self.ref.kind.passed_on(self.acquire, subscription)
                if granted is not None:
                    reply = granted
                    continue
            reply = yield from self.attempt()

    def _pause(self, subscription: Any, reply: AcquireReply) -> float:
        """How long to sleep before the next try: the holder's TTL, or the kind's
        backoff, cut to the poll interval without a subscription and to a fair lock's
        keepalive."""
        pause = self.ref.state.settings.watchdog_timeout if reply.ttl is None else reply.ttl
        if self.backoff is not None:
            pause = next(self.backoff)
        elif subscription is None:
            pause = min(pause, POLL_WITHOUT_SUBSCRIPTION)
        if self.keepalive is not None:
            # each try keeps this waiter's queue entry alive (a fair lock)
            pause = min(pause, self.keepalive)
        return pause


def _emit(
    ref: LockRef,
    kind: events.EventKind,
    *,
    wait: float | None = None,
    hold_count: int | None = None,
) -> None:
    """Tell the client's listeners (only called when there are some)."""
    if hold_count is None:
        hold_count = ref.state.holds.count(ref.name, ref.owner, ref.state.clock())
    event = events.LockEvent(
        kind, ref.name, ref.owner, wait=wait, hold_count=hold_count, node=node_of(ref)
    )
    events.emit(ref.state, event)


def forget_one_hold(ref: LockRef) -> None:
    """After a release whose outcome is unknown: count the hold as released here, so its
    renewal stops (as Redisson does) and at worst the key expires after its TTL, rather
    than a watchdog renewing for ever a lock its owner believes released."""
    holds = ref.state.holds
    holds.released(ref.name, ref.owner, holds.count(ref.name, ref.owner, ref.state.clock()) - 1)


def owner_text(state: ClientState, owner: str) -> str:
    """``owner`` (a field, ``<client id>:<owner id>``) as a reader knows it, with the
    field: ``thread MainThread (ident 1234), field <uuid>:1``."""
    described = state.runtime.describe_owner(owner.rpartition(":")[2])
    return f"{described}, field {owner}" if described else f"owner {owner}"


def not_held_reason(ref: LockRef) -> str:
    """Why an owner this client knew no hold of cannot release ``ref``'s lock: another
    owner of this client holds it, or this one never held it (or released it already)."""
    others = sorted(
        {h.owner for h in ref.state.holds.all_holds() if h.name == ref.name} - {ref.owner}
    )
    caller = owner_text(ref.state, ref.owner)
    if others:
        holder = owner_text(ref.state, others[0])
        return (
            f"it is held by another owner of this client ({holder}), not by this one "
            f"({caller}); only the owner that locked it can unlock it"
        )
    return (
        f"it is not locked by this owner ({caller}): it never locked it, or already "
        "released every hold it had (each lock() needs its own unlock())"
    )


def unlock(ref: LockRef) -> Flow:
    """Release one hold. Raises
    [`LockNotOwnedError`][redisson_py.errors.LockNotOwnedError] when the owner holds
    none, or when this client already reported the hold lost (even if the key came
    back).

    Retries connection errors as the config says ((retry attempts + 1) command timeouts
    and the retry delays between them at most), and no later than the moment the hold
    would have expired anyway. When Redis cannot be reached (the error is raised), the
    hold stops being renewed. A hold reported lost gets one try to release what may be
    left of it (a partition's old master may still have it), and LockNotOwnedError
    whatever that try met."""
    holds = ref.state.holds
    if holds.was_exported(ref.name, ref.owner):
        raise LockNotOwnedError(
            f"cannot unlock lock {ref.name!r}: owner {ref.owner} exported its hold"
            " (export_hold()); its adopter releases it"
        )
    expires_at = holds.expires_at(ref.name, ref.owner)
    if expires_at is not None and ref.state.clock() >= expires_at:
        # Its safe end passed and the watchdog's report may not have run yet: report
        # it now, so this unlock raises as every unlock after the report would.
        losses.report_if_expired(ref.state, ref.name, ref.owner, ref.state.clock())
    was_lost = holds.was_lost(ref.name, ref.owner)
    how = ""
    if was_lost:
        expires_at = ref.state.clock()  # one try: the hold is gone either way
        gone = holds.gone_reason(ref.name, ref.owner, expires_at)
        how = f" ({gone})" if gone else ""
    command = release_command(ref)
    holds.releasing(ref.name, ref.owner, +1)
    try:
        result = yield from call_with_retry(ref, lambda attempt: (command,), deadline=expires_at)
    except Exception as error:
        if was_lost:
            holds.clear_lost(ref.name, ref.owner)
            raise LockNotOwnedError(
                f"lock {ref.name!r} was reported lost to owner {ref.owner} before this"
                f" unlock{how}; the critical section was not protected (releasing what may"
                f" be left of it failed too: {reply_error(ref, error)})"
            ) from error
        forget_one_hold(ref)
        if isinstance(error, ResponseError):
            raise reply_error(ref, error) from error
        raise
    except BaseException:
        forget_one_hold(ref)
        raise
    finally:
        holds.releasing(ref.name, ref.owner, -1)
    left = decode_release(result.replies[0])
    if left is None:
        # Say how a hold this client knew of went (lease ran out, key vanished, reported
        # lost); only a hold it never knew of "is not locked by this owner".
        gone = holds.gone_reason(ref.name, ref.owner, ref.state.clock())
        holds.forget(ref.name, ref.owner)
        holds.clear_lost(ref.name, ref.owner)
        reason = f"it was lost: {gone}" if gone else not_held_reason(ref)
        raise LockNotOwnedError(f"cannot unlock lock {ref.name!r}: {reason}")
    holds.released(ref.name, ref.owner, left)
    if was_lost:
        raise LockNotOwnedError(
            f"lock {ref.name!r} was reported lost to owner {ref.owner} before this"
            f" unlock{how}; the critical section was not protected"
        )
    if ref.state.listeners:
        _emit(ref, "released", hold_count=left)


def force_unlock(ref: LockRef) -> Flow:
    """Delete the lock whoever holds it and wake its waiters; True if there was one
    (a read or write lock: only when it is held in that mode)."""
    command = ref.kind.force_release(ref)
    ref.state.holds.releasing(ref.name, None, +1)
    try:
        result = yield from call_with_retry(ref, lambda attempt: (command,))
    finally:
        ref.state.holds.releasing(ref.name, None, -1)
    ref.state.holds.forget(ref.name)
    return int(result.replies[0]) == 1


def is_locked(ref: LockRef) -> Flow:
    """True when any owner holds the lock (a read lock: any read hold; a write lock:
    a write hold)."""
    return ref.kind.is_locked((yield from read(ref, ref.kind.locked(ref))))


def is_held(ref: LockRef) -> Flow:
    """True when this owner holds the lock."""
    return (yield from hold_count(ref)) > 0


def hold_count(ref: LockRef) -> Flow:
    """This owner's hold count (0 when it holds none, and when this client reported its
    hold lost: whatever a node it can still reach says, the hold is not safe, and its
    ``unlock()`` raises)."""
    if ref.state.holds.was_lost(ref.name, ref.owner):
        return 0
    value = yield from read(ref, ref.kind.hold_count(ref))
    return 0 if value is None else int(value)


def remain_time_to_live(ref: LockRef) -> Flow:
    """Seconds until the lock expires; None when it is not locked, inf without expiry."""
    pttl = int((yield from read(ref, "PTTL", ref.name)))
    if pttl == -2:
        return None
    if pttl == -1:
        return float("inf")
    return pttl / 1000


def extend(ref: LockRef, seconds: float) -> Flow:
    """Make this owner's leased hold expire ``seconds`` from now (one atomic script:
    PEXPIRE only while the owner holds the lock), and move the hold's lease end in the
    client's table so the watchdog judges it by the new end, not the old.

    Raises [`ArgumentError`][redisson_py.errors.ArgumentError] for a hold the watchdog
    renews (it has no lease to extend), and
    [`LockNotOwnedError`][redisson_py.errors.LockNotOwnedError] when the owner holds
    nothing, or its hold was reported lost (the critical section was not protected;
    nothing is extended). While the call is in flight the watchdog reports no loss of
    the hold: an old lease ending meanwhile is this extension's to judge. Connection
    errors are retried up to the old lease's end; when one is raised the extension may
    or may not have been applied, and the client keeps counting from the old lease.

    With replica sync on, the extension is followed by a WAIT, as a grant: one the
    replicas did not acknowledge raises
    [`NoSyncedReplicasError`][redisson_py.errors.NoSyncedReplicasError], and the hold
    stays safe only until the earlier of its old and its new lease end (a failover could
    promote a replica that has only the old one).
    """
    holds = ref.state.holds
    hold = holds.get(ref.name, ref.owner)
    if hold is not None and hold.watchdog:
        raise ArgumentError(
            f"lock {ref.name!r}: a hold taken without a lease is renewed by the watchdog"
            " and has no lease to extend; take it with lease_time=... to extend it"
        )
    if holds.was_exported(ref.name, ref.owner):
        raise LockNotOwnedError(
            f"cannot extend lock {ref.name!r}: owner {ref.owner} exported its hold"
        )
    if holds.was_lost(ref.name, ref.owner):
        raise LockNotOwnedError(
            f"cannot extend lock {ref.name!r}: it was reported lost to owner {ref.owner}"
            " before this call; the critical section was not protected"
        )
    command = ref.kind.extend(ref, to_millis(seconds))
    settings = ref.state.settings
    sent = [0.0]

    def attempts(unanswered: int) -> tuple[Command, ...]:
        sent[0] = ref.state.clock()  # the new lease counts from the send that set it
        return (command,)

    holds.releasing(ref.name, ref.owner, +1)
    try:
        result = yield from call_with_retry(
            ref,
            attempts,
            sync_replicas=settings.sync_replicas,
            deadline=holds.expires_at(ref.name, ref.owner),
        )
    except ResponseError as error:
        raise reply_error(ref, error) from error
    finally:
        holds.releasing(ref.name, ref.owner, -1)
    count = result.replies[0]
    if count is None:
        # The table keeps the hold: the watchdog reports it lost, as for any loss.
        gone = not_held_reason(ref) if hold is None else gone_text(hold, ref.state.clock())
        raise LockNotOwnedError(f"cannot extend lock {ref.name!r}: {gone}")
    if result.synced < result.required and hold is not None:
        what = f"lock {ref.name!r}: extended"
        raise unsynced_extension(ref, hold, result, lease=seconds, sent_at=sent[0], what=what)
    record_extension(ref, hold, int(count), seconds, sent[0])


def record_extension(
    ref: LockRef, hold: Hold | None, count: int, seconds: float, sent_at: float
) -> None:
    """Record that ``ref``'s owner holds it ``count`` times with a lease of ``seconds``
    set by a confirmed extension sent at ``sent_at`` (one lock's ``extend`` and a group's
    member alike). ``hold``: the table's hold before it, whose loss callback stays."""
    ref.state.holds.acquired(
        ref.name,
        ref.owner,
        count,
        target=ref.target,
        lease=seconds,
        ttl=seconds,
        now=sent_at,
        on_lost=hold.on_lost if hold is not None else ref.report,
        kind=ref.kind,
    )
