"""The reentrant lock's algorithms, written once for the sync and asyncio shells.

Every public operation of a lock is a generator here: it yields effects
(:mod:`redisson_py.core.effects`) and receives their outcomes, so the same decisions
(which script, what its reply means, how long to wait, when to retry, what to undo)
drive both the threaded and the asyncio client. Nothing in this module performs I/O.
"""

from __future__ import annotations

import contextlib
import logging
import time
import uuid
from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import Any

from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from redisson_py.core import naming, scripts
from redisson_py.core.client_state import ClientState
from redisson_py.core.effects import (
    Call,
    CallResult,
    Command,
    Effect,
    ScriptCommand,
    Sleep,
    Subscribe,
    Unsubscribe,
    WaitSignal,
)
from redisson_py.core.holds import Hold, report_lost
from redisson_py.errors import LockNotOwnedError, NoSyncedReplicasError, RedissonError

Flow = Generator[Effect, Any, Any]

log = logging.getLogger("redisson_py.lock")

RETRYABLE: tuple[type[BaseException], ...] = (RedisConnectionError, RedisTimeoutError)
"""Errors after which a command is retried (redis-py's ConnectionError covers LOADING)."""

WAIT_THROUGH: tuple[type[BaseException], ...] = (NoSyncedReplicasError, *RETRYABLE)
"""Errors a waiting acquire outlasts while its wait time lasts (what a failover raises)."""

WARN_EVERY = 10
"""A wait with no deadline logs a WARNING at its 1st, 11th, 21st... failure."""

POLL_WITHOUT_SUBSCRIPTION = 0.5
"""Longest sleep between tries when the unlock channel could not be subscribed."""


@dataclass(frozen=True, slots=True)
class LockRef:
    """One lock as seen by one owner: everything a flow needs to act on it.

    ``owner`` is the hash field ``<client id>:<thread or task id>``; ``target`` the
    connection manager that routes ``name`` to its master; ``on_lost`` what to do when
    the watchdog finds this owner's hold lost (None: report through the lock's callback,
    else the client's).
    """

    name: str
    owner: str
    target: Any
    state: ClientState
    on_lost_callback: Callable[[Any], object] | None = None
    group_on_lost: Callable[[Hold, str], None] | None = None
    channel: str = ""
    """The unlock channel; derived from the name when not given."""

    def __post_init__(self) -> None:
        if not self.channel:
            object.__setattr__(self, "channel", naming.channel_name(self.name))

    def report(self, hold: Hold, reason: str) -> None:
        """Report ``hold`` lost: to the MultiLock/RedLock it belongs to, or to the user."""
        if self.group_on_lost is not None:
            self.group_on_lost(hold, reason)
            return
        callback = self.on_lost_callback or self.state.on_lock_lost
        report_lost(hold.name, hold.owner, reason, callback)


@dataclass(frozen=True, slots=True)
class AcquireReply:
    """A decoded acquire: ``acquired`` with the owner's ``hold_count``, or the holder's
    remaining ``ttl`` in seconds (None when the holder's key has no expiry)."""

    acquired: bool
    hold_count: int = 0
    ttl: float | None = None


def decode_acquire(reply: Any) -> AcquireReply:
    """Decode the ACQUIRE script's ``{flag, value}`` reply."""
    flag, value = int(reply[0]), int(reply[1])
    if flag == 1:
        return AcquireReply(acquired=True, hold_count=value)
    return AcquireReply(acquired=False, ttl=None if value < 0 else value / 1000)


def decode_release(reply: Any) -> int | None:
    """Decode the RELEASE script's reply: holds left, or None when nothing was held."""
    return None if reply is None else int(reply)


def to_millis(seconds: float) -> int:
    """Seconds to whole milliseconds for PEXPIRE, never below 1 (0 would delete the key)."""
    return max(1, round(seconds * 1000))


def call_with_retry(
    ref: LockRef,
    commands: Callable[[int], tuple[Command, ...]],
    *,
    sync_replicas: float | None = None,
) -> Generator[Effect, Any, CallResult]:
    """Run ``commands(attempt)`` on the lock's master, retrying connection errors.

    ``attempt`` is 0 first, then 1, 2, ...; a retry may send different arguments (an
    acquire tells the server which outcome of its first attempt would mean "applied").
    Retries follow the config's retry attempts and delay; the manager re-resolves the
    master between tries, so a retry lands on the new master after a failover.
    """
    settings = ref.state.settings
    attempt = 0
    while True:
        try:
            result: CallResult = yield Call(
                ref.target, ref.name, commands(attempt), sync_replicas=sync_replicas
            )
            return result
        except RETRYABLE:
            attempt += 1
            if attempt > settings.retry_attempts:
                raise
            yield Sleep(settings.retry_delay(attempt))


def _wrap_reply_error(ref: LockRef, error: ResponseError) -> RedissonError:
    return RedissonError(
        f"lock {ref.name!r}: Redis refused the lock script: {error}"
        " (is the key used by something other than a lock?)"
    )


def _acquire_once(ref: LockRef, lease: float | None) -> Generator[Effect, Any, AcquireReply]:
    """Try once to take a hold; on success record it, on an unsynced grant undo it."""
    state, settings = ref.state, ref.state.settings
    lease_ms = to_millis(settings.watchdog_timeout if lease is None else lease)
    prior = state.holds.count(ref.name, ref.owner, time.monotonic())

    def commands(attempt: int) -> tuple[Command, ...]:
        # On a retry, a hold count of prior + 1 can only mean the lost attempt applied.
        expect = "0" if attempt == 0 else str(prior + 1)
        return (ScriptCommand(scripts.ACQUIRE, (ref.name,), (lease_ms, ref.owner, expect)),)

    sync = settings.slaves_sync_timeout if settings.check_lock_synced_slaves else None
    try:
        result = yield from call_with_retry(ref, commands, sync_replicas=sync)
    except ResponseError as error:
        raise _wrap_reply_error(ref, error) from error
    except (Exception, GeneratorExit):
        raise  # GeneratorExit: the flow is being discarded; it may yield nothing more
    except BaseException:
        # Interrupted or cancelled while the acquire was in flight: it may have been
        # applied. Undo it if (and only if) it was, then let the interruption go on.
        yield from _undo_if_applied(ref, prior + 1)
        raise
    reply = decode_acquire(result.replies[0])
    if not reply.acquired:
        return reply
    if result.synced < result.required:
        yield from _undo_if_applied(ref, reply.hold_count)
        raise NoSyncedReplicasError(
            f"lock {ref.name!r}: acquired on the master at {result.address}, but only "
            f"{result.synced} of {result.required} replicas acknowledged it within "
            f"{settings.slaves_sync_timeout:g} s; the acquire was undone",
            lock_name=ref.name,
            acknowledged=result.synced,
            required=result.required,
        )
    state.holds.acquired(
        ref.name,
        ref.owner,
        reply.hold_count,
        target=ref.target,
        lease=lease,
        watchdog_timeout=settings.watchdog_timeout,
        now=time.monotonic(),
        on_lost=ref.report,
    )
    return reply


def release_command(ref: LockRef, expect_count: int = 0) -> ScriptCommand:
    request_id = uuid.uuid4().hex
    return ScriptCommand(
        scripts.RELEASE,
        (ref.name, ref.channel, naming.unlock_latch_name(ref.name, request_id)),
        (
            naming.UNLOCK_MESSAGE,
            ref.owner,
            ref.target.publish_command,
            to_millis(ref.state.settings.latch_ttl),
            str(expect_count),
        ),
    )


def _undo_if_applied(ref: LockRef, expect_count: int) -> Generator[Effect, Any, None]:
    """Release one hold if the owner's count is ``expect_count``; one try, never raises.
    If it fails, the hold it meant to undo is not in this client's table, so nothing
    renews it past the owner's own holds and the key expires after its TTL at worst."""
    with contextlib.suppress(Exception):
        yield Call(ref.target, ref.name, (release_command(ref, expect_count),))


def try_lock(ref: LockRef, wait: float | None, lease: float | None) -> Flow:
    """Acquire a hold within ``wait`` seconds (None: wait for ever); return True if held.

    A waiter subscribes to the unlock channel before it retries, then sleeps until a
    message or the holder's remaining TTL, whichever comes first, so a lost message or
    a failover costs at most one TTL. A grant the replicas did not acknowledge is undone
    and retried while time remains, and so are connection errors (a failover); at the
    deadline the last such error is raised (:class:`NoSyncedReplicasError`, or redis-py's
    ``ConnectionError``) if that, not another holder, is why the lock was not taken.
    """
    settings = ref.state.settings
    deadline = None if wait is None else time.monotonic() + max(0.0, wait)

    def remaining() -> float | None:
        return None if deadline is None else deadline - time.monotonic()

    def attempt() -> Generator[Effect, Any, AcquireReply]:
        # A waiter keeps waiting through what a failover looks like from here (refused
        # or unsynced grants, connection errors past the per-command retries) while its
        # wait time lasts; only then is the last such error raised.
        failures = 0
        while True:
            try:
                return (yield from _acquire_once(ref, lease))
            except WAIT_THROUGH as error:
                left = remaining()
                if left is not None and left <= 0:
                    raise
                failures += 1
                if left is None and failures % WARN_EVERY == 1:
                    # Waiting for ever: say so, or a dead Redis would look like a hang.
                    log.warning("lock %r: still waiting through failures (%d so far): %s",
                                ref.name, failures, error)
                pause = settings.retry_delay(failures)
                yield Sleep(pause if left is None else min(pause, left))

    reply = yield from attempt()
    if reply.acquired:
        return True
    left = remaining()
    if left is not None and left <= 0:
        return False
    subscription = None
    try:
        timeout = settings.subscription_timeout if left is None else min(
            settings.subscription_timeout, left
        )
        subscription = yield Subscribe(ref.target, ref.channel, timeout)
    except RETRYABLE:
        pass  # poll instead: slower hand-off, same correctness
    def wait_loop() -> Generator[Effect, Any, bool]:
        while True:
            reply = yield from attempt()
            if reply.acquired:
                return True
            left = remaining()
            if left is not None and left <= 0:
                return False
            pause = settings.watchdog_timeout if reply.ttl is None else reply.ttl
            if subscription is None:
                pause = min(pause, POLL_WITHOUT_SUBSCRIPTION)
            if left is not None:
                pause = min(pause, left)
            if subscription is None:
                yield Sleep(pause)
            else:
                yield WaitSignal(subscription, pause)

    try:
        acquired = yield from wait_loop()
    except GeneratorExit:
        raise  # the flow is being discarded: it may yield nothing more
    except BaseException:
        if subscription is not None:
            yield Unsubscribe(subscription)
        raise
    if subscription is not None:
        yield Unsubscribe(subscription)
    return acquired


def forget_one_hold(ref: LockRef) -> None:
    """After a release whose outcome is unknown: count the hold as released here, so its
    renewal stops (as Redisson does) and at worst the key expires after its TTL, rather
    than a watchdog renewing for ever a lock its owner believes released."""
    holds = ref.state.holds
    holds.released(ref.name, ref.owner, holds.count(ref.name, ref.owner, time.monotonic()) - 1)


def unlock(ref: LockRef) -> Flow:
    """Release one hold. Raises :class:`LockNotOwnedError` when the owner holds none,
    or when this client already reported the hold lost (even if the key came back).
    When Redis cannot be reached (the error is raised), the hold stops being renewed."""
    holds = ref.state.holds
    was_lost = holds.was_lost(ref.name, ref.owner)
    command = release_command(ref)
    holds.releasing(ref.name, ref.owner, +1)
    try:
        result = yield from call_with_retry(ref, lambda attempt: (command,))
    except ResponseError as error:
        forget_one_hold(ref)
        raise _wrap_reply_error(ref, error) from error
    except BaseException:
        forget_one_hold(ref)
        raise
    finally:
        holds.releasing(ref.name, ref.owner, -1)
    left = decode_release(result.replies[0])
    if left is None:
        holds.forget(ref.name, ref.owner)
        holds.clear_lost(ref.name, ref.owner)
        reason = "it was lost before" if was_lost else "it is not locked by this owner"
        raise LockNotOwnedError(
            f"cannot unlock lock {ref.name!r}: {reason} (owner {ref.owner})"
        )
    holds.released(ref.name, ref.owner, left)
    if was_lost:
        raise LockNotOwnedError(
            f"lock {ref.name!r} was reported lost to owner {ref.owner} before this unlock;"
            " the critical section was not protected"
        )


def force_unlock(ref: LockRef) -> Flow:
    """Delete the lock whoever holds it and wake its waiters; True if there was one."""
    command = ScriptCommand(
        scripts.FORCE_RELEASE,
        (ref.name, ref.channel),
        (naming.UNLOCK_MESSAGE, ref.target.publish_command),
    )
    ref.state.holds.releasing(ref.name, None, +1)
    try:
        result = yield from call_with_retry(ref, lambda attempt: (command,))
    finally:
        ref.state.holds.releasing(ref.name, None, -1)
    ref.state.holds.forget(ref.name)
    return int(result.replies[0]) == 1


def _read(ref: LockRef, *command: str) -> Generator[Effect, Any, Any]:
    result = yield from call_with_retry(ref, lambda attempt: (command,))
    return result.replies[0]


def is_locked(ref: LockRef) -> Flow:
    """True when any owner holds the lock."""
    return int((yield from _read(ref, "EXISTS", ref.name))) == 1


def is_held(ref: LockRef) -> Flow:
    """True when this owner holds the lock."""
    return int((yield from _read(ref, "HEXISTS", ref.name, ref.owner))) == 1


def hold_count(ref: LockRef) -> Flow:
    """This owner's hold count (0 when it holds none)."""
    value = yield from _read(ref, "HGET", ref.name, ref.owner)
    return 0 if value is None else int(value)


def remain_time_to_live(ref: LockRef) -> Flow:
    """Seconds until the lock expires; None when it is not locked, inf without expiry."""
    pttl = int((yield from _read(ref, "PTTL", ref.name)))
    if pttl == -2:
        return None
    if pttl == -1:
        return float("inf")
    return pttl / 1000
