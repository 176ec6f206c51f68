"""The permit-expirable semaphore's flows (Redisson's ``RPermitExpirableSemaphore``).

Each acquired permit has an id (16 random bytes; 32 hex digits for the user) and, with
a lease, an expiry: the sorted set ``{name}:timeout`` holds them (see
`redisson_py.core.scripts.permit_semaphore`). Expired permits return to the count
at the next call of any client, so a dead holder's permits come back. A waiter sleeps
until a permit is announced, or the first lease ends, or
`RECHECK` passes.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Generator, Sequence
from typing import Any

from redisson_py.core import keyspace
from redisson_py.core.effects import Command, Effect, ScriptCommand, to_millis
from redisson_py.core.flows import grants
from redisson_py.core.flows.calls import call_with_retry, new_request_id, read, unsynced_extension
from redisson_py.core.flows.synchronizers import Layout, ObjectRef, apply_once, once_command
from redisson_py.core.scripts import permit_semaphore
from redisson_py.core.state.holds import Hold, Taken, report_lost
from redisson_py.errors import PermitNotHeldError

Flow = Generator[Effect, Any, Any]

PERMIT_ID_BYTES = 16


LAYOUT = Layout(
    "permit-expirable semaphore",
    lambda name, by_slot: keyspace.semaphore_channel(name, by_slot=by_slot),
    lambda name, by_slot: (keyspace.permit_timeouts(name, by_slot=by_slot),),
)
"""Redisson's: the semaphore's channel; the acquired permits ``{name}:timeout``."""


def _keys(ref: ObjectRef) -> tuple[str, str, str]:
    return (ref.name, ref.aux[0], ref.channel)


def _now_ms(ref: ObjectRef) -> int:
    return round(ref.state.wall_clock() * 1000)


def _expiry(ref: ObjectRef, lease: float | None) -> int:
    """A permit's score: when its lease ends (wall-clock ms), or ``PERMIT_NO_LEASE``."""
    return keyspace.PERMIT_NO_LEASE if lease is None else _now_ms(ref) + to_millis(lease)


def _reporter(ref: ObjectRef) -> Callable[[Hold, str], None]:
    """How a leased permit's loss is told: the client's ``on_lock_lost`` (the permit id
    as the owner), an ERROR line naming the semaphore and the permit."""

    def report(hold: Hold, reason: str) -> None:
        subject = f"{ref.subject}: permit {hold.owner}"
        callback, await_later = ref.state.on_lock_lost, ref.state.runtime.await_later
        report_lost(
            hold.name, hold.owner, reason, callback, await_later=await_later, subject=subject
        )

    return report


def _track(ref: ObjectRef, permit: str, lease: float, sent_at: float) -> None:
    """Watch leased permit ``permit`` until its safe end (the lease from ``sent_at``,
    less the safety margin): the client's watchdog tells its holder then (rounds do not
    look at permits; see `Hold`)."""
    ref.state.holds.acquired(
        ref.name,
        permit,
        1,
        target=ref.target,
        lease=lease,
        ttl=lease,
        now=sent_at,
        on_lost=_reporter(ref),
        checked=False,
    )


def try_acquire(ref: ObjectRef, wait: float | None, lease: float | None) -> Flow:
    """Take one permit within ``wait`` seconds (None: for ever), leased for ``lease``
    seconds (None: until released); its id (32 lowercase hex digits), or None when none
    was had in time. The lease counts from the attempt that took the permit.

    A leased permit is watched as a leased lock is: at its safe end (the lease counted
    from the acquire's first send, less the safety margin; see
    `safe_end`) the client tells its holder that it is
    lost, before any other client can take it back, and `release` raises."""
    ids = yield from try_acquire_many(ref, wait, lease, 1)
    return ids[0] if ids else None


def _taken_here(ref: ObjectRef, keys: tuple[str, str, str], permit: bytes) -> None:
    """Record ``permit`` as taken through this client (a shutdown gives it back)."""

    def give_back(count: int) -> ScriptCommand:
        return once_command(
            ref, permit_semaphore.TRY_RELEASE, keys, new_request_id(), _now_ms(ref), permit
        )

    subject = f"{ref.subject}: permit {permit.hex()}"
    ref.state.taken.took(
        (ref.name, permit.hex()), Taken(subject, ref.target, ref.name, 1, give_back)
    )


def try_acquire_many(ref: ObjectRef, wait: float | None, lease: float | None, count: int) -> Flow:
    """Take ``count`` permits at once, all or none (one script: Redisson's
    ``acquire(int permits)``), within ``wait`` seconds (None: for ever), each leased
    for ``lease`` seconds (None: until released); their ids, or an empty list when
    ``count`` were not available together in time. Each leased permit is watched as
    `try_acquire`'s.

    A waiter retries whenever permits are announced or the first lease ends, and takes
    the permits as soon as ``count`` are available at one of its attempts; it is not
    queued, so takers of fewer permits may pass it while fewer are free."""
    permits = [os.urandom(PERMIT_ID_BYTES) for _ in range(count)]
    keys = _keys(ref)
    request = grants.PermitRequest(
        ref,
        lambda request_id: once_command(
            ref,
            permit_semaphore.ACQUIRE,
            keys,
            request_id,
            _now_ms(ref),
            permits[0],
            _expiry(ref, lease),
            *permits[1:],
        ),
        lambda request_id: once_command(
            ref, permit_semaphore.UNDO_ACQUIRE, keys, request_id, _now_ms(ref), *permits
        ),
        "its permits stay acquired until their lease ends (for ever without one)",
    )
    taken = yield from grants.try_acquire(request, wait)
    if not taken:
        return []
    ids = [permit.hex() for permit in permits]
    for permit in permits:
        _taken_here(ref, keys, permit)
    if lease is not None:
        for permit_id in ids:
            _track(ref, permit_id, lease, request.sent_at)
    return ids


def try_release(ref: ObjectRef, permit: bytes) -> Flow:
    """Release permit ``permit`` and announce the new count; True when it was acquired
    and its lease had not ended, else False (nothing changes). False also when this
    client reported the permit lost (its lease's safe end passed), though a permit the
    server still counted as acquired was released."""
    _, why = yield from _release(ref, (permit,))
    return why is None


def try_release_many(ref: ObjectRef, permits: Sequence[bytes]) -> Flow:
    """Release ``permits`` in one script, all or nothing (Redisson's ``tryRelease`` of a
    list, since 3.41): when every one is acquired and its lease had not ended, all are
    released and the new count announced; else none is. How many were released: all of
    them, or 0, also when this client had reported any of them lost (for a list of
    several, nothing is sent then)."""
    released, why = yield from _release(ref, permits)
    return released if why is None else 0


def release(ref: ObjectRef, permit: bytes) -> Flow:
    """`try_release`, raising
    [`PermitNotHeldError`][redisson_py.errors.PermitNotHeldError] saying why when it
    would return False."""
    yield from release_many(ref, (permit,))


def release_many(ref: ObjectRef, permits: Sequence[bytes]) -> Flow:
    """`try_release_many`, raising
    [`PermitNotHeldError`][redisson_py.errors.PermitNotHeldError] saying why when not
    every permit ended a safe hold; then none of a list was released (Redisson's
    ``release`` of a list, since 3.41)."""
    _, why = yield from _release(ref, permits)
    if why is not None:
        ids = ", ".join(permit.hex() for permit in permits)
        what = f"permit {ids}" if len(permits) == 1 else f"permits {ids}:"
        raise PermitNotHeldError(f"{ref.subject}: {what} {why}", name=ref.name, permit_id=ids)


def _release(
    ref: ObjectRef, permits: Sequence[bytes]
) -> Generator[Effect, Any, tuple[int, str | None]]:
    """Release ``permits``: (how many the server released, none of a list when one was
    reported lost; None when that ended a safe hold of each, else why not)."""
    holds, now = ref.state.holds, ref.state.clock()
    lost: dict[str, str] = {}
    for permit in permits:
        owner = permit.hex()
        if holds.was_lost(ref.name, owner):
            lost[owner] = holds.gone_reason(ref.name, owner, now) or "its lease ended"
    if len(permits) > 1 and lost:
        # All or nothing: a permit of the list is no safe hold any more, so none is
        # released; the others stay acquired (and watched) for the caller to release.
        return (
            0,
            "none was released: reported lost before this release: "
            + "; ".join(f"{owner}: {why}" for owner, why in lost.items()),
        )
    released = yield from apply_once(
        ref, permit_semaphore.TRY_RELEASE, _keys(ref), _now_ms(ref), *permits
    )
    if released or len(permits) == 1:
        # A list the server refused stays acquired as far as this client knows: its
        # permits that are held stay watched.
        for permit in permits:
            holds.released(ref.name, permit.hex(), 0)
            ref.state.taken.gave((ref.name, permit.hex()))
    if len(permits) == 1:
        if lost:
            done = "; it was released now" if released == 1 else ""
            return (
                released,
                f"was reported lost before this release: {lost[permits[0].hex()]}{done}",
            )
        if released != 1:
            return (
                released,
                (
                    "is not acquired: it was never acquired here, was released already,"
                    " or its lease ended"
                ),
            )
        return released, None
    if released != len(permits):
        return (
            0,
            "none was released: not every one is acquired (one was never acquired here,"
            " was released already, or its lease ended)",
        )
    return released, None


def update_lease_time(ref: ObjectRef, permit: bytes, lease: float | None) -> Flow:
    """Make permit ``permit`` expire ``lease`` seconds from now (None: never); True when
    it is acquired, False when it is unknown or its lease had ended.

    With replica sync on, the change is followed by a WAIT, as a grant: one the
    replicas did not acknowledge raises
    [`NoSyncedReplicasError`][redisson_py.errors.NoSyncedReplicasError], and the client
    keeps counting from the earlier of the old and the new lease end (a failover could
    promote a replica that has only the old one)."""
    settings, holds, owner = ref.state.settings, ref.state.holds, permit.hex()
    sent_at = ref.state.clock()
    expiry = _expiry(ref, lease)
    command = once_command(
        ref,
        permit_semaphore.UPDATE_LEASE,
        _keys(ref),
        new_request_id(),
        _now_ms(ref),
        permit,
        expiry,
    )

    def attempts(attempt: int) -> tuple[Command, ...]:
        return (command,)

    result = yield from call_with_retry(ref, attempts, sync_replicas=settings.sync_replicas)
    if int(result.replies[0]) != 1:
        return False
    if result.synced < result.required:
        what = f"{ref.subject}: permit {owner}'s lease was changed"
        hold = holds.get(ref.name, owner)
        raise unsynced_extension(ref, hold, result, lease=lease, sent_at=sent_at, what=what)
    if lease is None:
        holds.released(ref.name, owner, 0)  # never expires now: nothing to watch
    else:
        _track(ref, owner, lease, sent_at)
    return True


def permits(ref: ObjectRef) -> Flow:
    """``(available, acquired)`` permits, after the expired ones came back."""
    command = ScriptCommand(permit_semaphore.PERMITS, _keys(ref), ("0", ref.publish, _now_ms(ref)))
    available, acquired = yield from read(ref, command)
    return int(available), int(acquired)
