"""How every flow calls Redis: retries, deadlines, undoing, errors, naps.

The lock, semaphore, latch and fenced-resource flows all act on a `Subject` (a
lock's ref or a semaphore's or latch's ref) and make their calls through these helpers,
so retry rules, deadlines and error wrapping are the same for every object:

- `call_with_retry` retries connection errors and transient refusals, up to a
  deadline; `read` is one read-only command through it;
- `outlast_failures` keeps a waiter waiting through what a failover looks like;
- `undo_in_background` and `undo_unsynced` take back what may have been
  applied; `unsynced_extension` judges an extension too few replicas acknowledged;
- `guarded` and `reply_error` turn what leaves a flow into a
  [`RedissonError`][redisson_py.errors.RedissonError] naming the object and its node;
- `nap` is a waiter's sleep;
- `new_request_id` names each call that changes state, so that its retries count once.
"""

from __future__ import annotations

import logging
import os
import random
from collections.abc import Callable, Generator
from typing import Any, Protocol, TypeVar

from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from redisson_py.core import keyspace
from redisson_py.core.effects import (
    Background,
    Call,
    CallResult,
    Command,
    Effect,
    ScriptCommand,
    Sleep,
    Subscribe,
    Target,
    WaitSignal,
    WakeRule,
)
from redisson_py.core.routing import failures
from redisson_py.core.routing.refusals import TransientRefusal, refusal_of
from redisson_py.core.state.client_state import ClientState
from redisson_py.core.state.holds import Hold, safe_end
from redisson_py.errors import ClientClosedError, NoSyncedReplicasError, RedissonError

T = TypeVar("T")

log = logging.getLogger("redisson_py.lock")

RETRYABLE: tuple[type[BaseException], ...] = (
    RedisConnectionError,
    RedisTimeoutError,
    TransientRefusal,
)
"""Errors after which a command is retried: connection errors, timeouts, and a node's
transient refusals (NOREPLICAS, READONLY, BUSY...; LOADING comes as redis-py's
``BusyLoadingError``, a ConnectionError), which leave nothing applied: see
`redisson_py.core.routing.refusals`."""

WAIT_THROUGH: tuple[type[BaseException], ...] = (NoSyncedReplicasError, *RETRYABLE)
"""Errors a waiting acquire outlasts while its wait time lasts (what a failover raises,
and a node's transient refusals)."""

WARN_EVERY = 10
"""A wait with no deadline logs a WARNING at its 1st, 11th, 21st... failure."""

POLL_WITHOUT_SUBSCRIPTION = 0.5
"""Longest sleep between tries when the unlock channel could not be subscribed."""


# Request ids come from a generator of this module's own, seeded by the OS (and seeded
# again in a forked child). Not os.urandom per id: that is a system call releasing the
# GIL, which with several threads acquiring costs a thread switch per acquire (see
# `IdleConnections` for the other one removed). Not the random module's generator: a
# program's random.seed() must not make ids repeat.
_ids = random.Random()
os.register_at_fork(after_in_child=_ids.seed)


def new_request_id() -> str:
    """A fresh request id (`redisson_py.core.keyspace.request_id`: a letter, then 128
    random bits, as many as uuid4's, in hex). Each acquire, release and change of a
    semaphore, latch or fenced resource has one: its latch remembers the outcome, so a
    retry after a lost reply is not applied twice."""
    return keyspace.request_id(_ids.getrandbits(128))


class Subject(Protocol):
    """What the shared helpers below (`call_with_retry`, `undo_in_background`,
    `undo_unsynced`, `outlast_failures`, `guarded`, `read`) need
    of the object they act on: a lock's `LockRef`, or a semaphore's or latch's
    ref (`redisson_py.core.flows.synchronizers.ObjectRef`)."""

    @property
    def name(self) -> str:
        """The object's key, which routes its commands."""

    @property
    def target(self) -> Target: ...

    @property
    def state(self) -> ClientState: ...

    @property
    def subject(self) -> str:
        """How messages name it (``lock 'x'``, ``semaphore 'x'``)."""


def call_with_retry(
    ref: Subject,
    commands: Callable[[int], tuple[Command, ...]],
    *,
    sync_replicas: float | None = None,
    deadline: float | None = None,
) -> Generator[Effect, Any, CallResult]:
    """Run ``commands(unanswered)`` on the lock's master, retrying connection errors
    and transient refusals.

    ``unanswered`` is how many earlier attempts went unanswered (0 first): a connection
    error or a timeout leaves an attempt's outcome unknown (the server may still run
    it), a refusal does not (nothing was applied; see
    `redisson_py.core.routing.refusals`). Retries follow the config's retry attempts and
    delay, and stop at ``deadline`` (monotonic seconds; None: no deadline): no retry
    starts after it and no pause runs past it, so a call ends at most one command
    timeout after the deadline. The manager re-resolves the master between tries, so a
    retry lands on the new master after a failover.
    """
    settings = ref.state.settings
    attempt = unanswered = 0
    while True:
        if ref.state.closed:  # shut down while this call waited or retried
            raise ClientClosedError(f"{ref.subject}: the client is shut down")
        try:
            result: CallResult = yield Call(
                ref.target, ref.name, commands(unanswered), sync_replicas=sync_replicas
            )
            return result
        except RETRYABLE as error:
            if refusal_of(error) is None:
                unanswered += 1
            attempt += 1
            left = None if deadline is None else deadline - ref.state.clock()
            if attempt > settings.retry_attempts or (left is not None and left <= 0):
                raise
            pause = settings.retry_delay(attempt)
            if left is not None and pause >= left:
                # The pause would end at the deadline: no try could follow it.
                yield Sleep(left)
                raise
            yield Sleep(pause)


def reply_error(ref: Subject, error: BaseException) -> RedissonError:
    """The error to raise for an error reply to a lock's command: a
    [`ServerRefusedError`][redisson_py.errors.ServerRefusedError] for a refusal, else
    one naming the lock, the node and Redis's text, with a hint for WRONGTYPE (see
    `as_redisson_error`)."""
    return failures.as_redisson_error(error, ref.subject, lock_name=ref.name, node=node_of(ref))


def undo_in_background(
    ref: Subject, command: ScriptCommand, window: float, *, if_applied: str = ""
) -> Generator[Effect, Any, None]:
    """Send ``command`` (an undo) until it is answered, retrying connection errors with
    the config's retry delay, for ``window`` seconds at most. Never raises; giving up
    logs a WARNING that ends with ``if_applied`` (what is left if the server applied
    the acquire; by default: a hold that expires within ``window``)."""
    settings = ref.state.settings
    give_up = ref.state.clock() + window
    attempt = 0
    while True:
        try:
            if ref.state.closed:
                raise ClientClosedError("the client is shut down")
            yield Call(ref.target, ref.name, (command,))
            return
        except Exception as error:
            attempt += 1
            left = give_up - ref.state.clock()
            if left <= 0 or ref.state.closed or not isinstance(error, RETRYABLE):
                why = (
                    "the client was shut down"
                    if ref.state.closed
                    else f"{type(error).__name__}: {error}"
                )
                log.warning(
                    "%s: could not undo an unanswered acquire (%s); if the server applied it, %s",
                    ref.subject,
                    why,
                    if_applied or f"the hold expires by itself within {window:.3g} s",
                )
                return
            yield Sleep(min(settings.retry_delay(attempt), left))


def unsynced_text(result: CallResult, timeout: float) -> str:
    """Why a grant did not count: too few replicas acknowledged it, or (WAITAOF, where a
    negative count says so) the master did not fsync it to its append-only file, or the
    WAIT itself failed."""
    if result.wait_error:
        return (
            f"its {result.wait_error} (a server that cannot run it needs"
            " checkLockSyncedSlaves: false)"
        )
    if result.synced < 0:
        return f"the master did not fsync it to its append-only file within {timeout:g} s"
    return (
        f"only {result.synced} of {result.required} replicas acknowledged it within {timeout:g} s"
    )


def undo_unsynced(
    ref: Subject, result: CallResult, undo: ScriptCommand, window: float, *, if_applied: str = ""
) -> Generator[Effect, Any, NoSyncedReplicasError]:
    """A grant too few replicas acknowledged (``result``): take it back with ``undo``
    now (the node just answered), or in the background (for ``window`` seconds; see
    `undo_in_background`) if it stopped answering meanwhile; the error to raise
    for it. A cancellation during the undo propagates: the caller's own clean-up undoes
    it then."""
    try:
        yield Call(ref.target, ref.name, (undo,))
    except Exception:
        background = undo_in_background(ref, undo, window, if_applied=if_applied)
        yield Background(background, name="redisson-py-undo")
    return unsynced_error(ref, result, f"{ref.subject}: acquired", "the acquire was undone")


def unsynced_extension(
    ref: Subject,
    hold: Hold | None,
    result: CallResult,
    *,
    lease: float | None,
    sent_at: float,
    what: str,
) -> NoSyncedReplicasError:
    """A change of ``hold``'s expiry (``what``: "lock 'x': extended") that the master
    applied but too few replicas acknowledged: the hold stays safe only until the
    earlier of its old end and the new one (a failover could promote a replica that
    has only the old one); the error to raise for it."""
    if hold is not None and lease is not None:
        new_end = safe_end(sent_at, lease)
        ref.state.holds.extended(hold, lease, min(hold.expires_at, new_end))
    outcome = "it counts as safe only until the earlier of its old and new lease end"
    return unsynced_error(ref, result, what, outcome)


def unsynced_error(
    ref: Subject, result: CallResult, done: str, outcome: str
) -> NoSyncedReplicasError:
    """The error for a write (``done``: "lock 'x': acquired") the master applied but too
    few replicas acknowledged, saying what became of it (``outcome``)."""
    return NoSyncedReplicasError(
        f"{done} on the master at {result.address}, but "
        + unsynced_text(result, ref.state.settings.slaves_sync_timeout)
        + f"; {outcome}",
        lock_name=ref.name,
        acknowledged=max(0, result.synced),
        required=result.required,
    )


def outlast_failures(
    ref: Subject, once: Callable[[], Generator[Effect, Any, T]], deadline: float | None
) -> Generator[Effect, Any, T]:
    """``once()``'s outcome, for a waiter: what a failover looks like from here
    (`WAIT_THROUGH`: unsynced grants, connection errors past the per-command
    retries) is waited through while the wait lasts, each failure followed by the
    config's retry delay cut to ``deadline`` (monotonic seconds; None: for ever, with a
    WARNING at the 1st, 11th, 21st... failure). At the deadline the last such error is
    raised."""
    failures = 0
    while True:
        try:
            return (yield from once())
        except WAIT_THROUGH as error:
            left = None if deadline is None else deadline - ref.state.clock()
            if left is not None and left <= 0:
                raise
            failures += 1
            if left is None and failures % WARN_EVERY == 1:
                # Waiting for ever: say so, or a dead Redis would look like a hang.
                log.warning(
                    "%s: still waiting through failures (%d so far): %s",
                    ref.subject,
                    failures,
                    error,
                )
            pause = ref.state.settings.retry_delay(failures)
            if left is not None and pause >= left:
                yield Sleep(left)  # to the deadline, where no try could follow
                raise
            yield Sleep(pause)


QUEUE_PAUSE = 0.1
"""Longest a new waiter lets its client's sleeping waiters go first before it tries."""


def join_live(
    target: Target, channel: str, timeout: float, rule: WakeRule = "lock"
) -> Subscribe | None:
    """Before a waiter's first try: the effect that joins ``channel``'s subscription if
    this client has it live already (another waiter has it, or had it a moment ago),
    else None. Yielded, it gives the subscription joined, or None.

    A waiter that joined before its try is signalled by any change after that try, so
    when refused it can sleep at once; one that subscribes after its try must try again
    first (a change may have come before its subscription): a round trip per waiter
    under contention. The check is a hint read without effects, so that an acquire with
    nobody waiting costs nothing more; the join itself is `Subscribe` with
    ``live_only``, which changes nothing when the subscription is not live by then."""
    if not target.listens(channel):
        return None
    return Subscribe(target, channel, timeout, rule, live_only=True)


def nap(subscription: Any, pause: float, left: float | None) -> Sleep | WaitSignal:
    """A waiter's sleep: ``pause`` seconds, cut to ``left`` (the time its wait has left;
    None: no limit), ended early by a signal on ``subscription`` (None: it polls)."""
    if left is not None:
        pause = min(pause, left)
    return Sleep(pause) if subscription is None else WaitSignal(subscription, pause)


def guarded(ref: Subject, flow: Generator[Effect, Any, T]) -> Generator[Effect, Any, T]:
    """Run ``flow``; an error leaving it that is not a
    [`RedissonError`][redisson_py.errors.RedissonError] leaves as one (see
    `redisson_py.core.routing.failures`), naming the lock (or semaphore, latch) and its
    node. The shells run every public operation through this."""
    try:
        return (yield from flow)
    except RedissonError:
        raise
    except Exception as error:
        raise failures.as_redisson_error(
            error, ref.subject, lock_name=ref.name, node=node_of(ref)
        ) from error


def node_of(ref: Subject) -> str | None:
    """The address of the node ``ref`` routes to, for messages; None before a view."""
    try:
        return str(ref.target.describe(ref.name))
    except Exception:  # no view yet; the message names no node then
        return None


def read(ref: Subject, *command: Any) -> Generator[Effect, Any, Any]:
    """Run one read-only command (or script) on the object's master (with retries); its
    reply."""
    # read(ref, "PTTL", name), or read(ref, command) with a whole command or script
    whole: Command = command if isinstance(command[0], str) else command[0]
    result = yield from call_with_retry(ref, lambda attempt: (whole,))
    return result.replies[0]
