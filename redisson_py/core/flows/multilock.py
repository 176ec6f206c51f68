"""MultiLock (all members) and RedLock (a majority of members), written once.

A round sends every member's acquire at the same time (one `Gather`; members on
the same node share a round trip) with a per-member reply timeout, so a slow or paused
master costs one short timeout, never the whole wait. A failed round releases what it
got, including members whose reply was lost (those are undone only if the acquire was
in fact applied), and retries after a jittered pause until the wait time is spent.

The member locks keep their own semantics: each is a reentrant hold of the current
owner in its own client, renewed by that client's watchdog when there is no lease. A
`GroupState` aggregates their losses: a MultiLock is lost when any member is, a
RedLock when fewer than a quorum remain.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from redisson_py.core.effects import (
    Call,
    CallResult,
    Command,
    Effect,
    Gather,
    Sleep,
    to_millis,
)
from redisson_py.core.flows import quorum
from redisson_py.core.flows.calls import WARN_EVERY, unsynced_extension, unsynced_text
from redisson_py.core.flows.lock import (
    AcquireRequest,
    forget_one_hold,
    owner_text,
    record_extension,
    release_command,
    undo_later,
)
from redisson_py.core.flows.lock_kinds import (
    AcquireFlag,
    AcquireReply,
    LockRef,
    decode_acquire,
    decode_release,
)
from redisson_py.core.routing import failures
from redisson_py.core.routing.refusals import refusal_of
from redisson_py.core.state import events
from redisson_py.core.state.group_holds import GroupState
from redisson_py.errors import (
    ArgumentError,
    GroupExtendError,
    LockNotOwnedError,
    LockReentryError,
    LockUnavailableError,
    NoSyncedReplicasError,
    RedissonError,
)

Flow = Generator[Effect, Any, Any]
T = TypeVar("T")

log = logging.getLogger("redisson_py.lock")


@dataclass(frozen=True, slots=True)
class _Outcome:
    reply: AcquireReply | None
    error: BaseException | None
    acquire: AcquireRequest | None

    @property
    def acquired(self) -> bool:
        return self.reply is not None and self.reply.acquired


def _acquire_round(
    refs: Sequence[LockRef], lease: float | None, timeout: float
) -> Generator[Effect, Any, list[_Outcome]]:
    # One request id per member per round: a round that fails undoes its members by
    # request id, taking back exactly what each applied (see lock_flows).
    acquires = [AcquireRequest(ref, lease) for ref in refs]
    calls = []
    for ref, acquire in zip(refs, acquires, strict=True):
        settings = ref.state.settings
        sync = settings.sync_replicas
        # A member the owner holds already: its field may name this acquire from now on.
        ref.state.holds.acquiring(ref.name, ref.owner, acquire.request_id)
        calls.append(
            Call(ref.target, ref.name, (acquire.command(),), sync_replicas=sync, timeout=timeout)
        )
    try:
        results: list[CallResult | BaseException] = yield Gather(tuple(calls))
    except GeneratorExit:
        raise
    except BaseException:
        # Interrupted with every member in flight: undo them all, off the caller's path.
        for acquire in acquires:
            yield undo_later(acquire)
        raise
    outcomes = []
    for acquire, result in zip(acquires, results, strict=True):
        if isinstance(result, BaseException):
            outcomes.append(_Outcome(None, result, acquire))
            continue
        try:
            flag = int(result.replies[0][0])
            reply = decode_acquire(result.replies[0])
        except Exception as error:  # an error reply, or a key that is not a lock
            outcomes.append(_Outcome(None, error, None))
            continue
        if flag == AcquireFlag.STALE:  # not with a fresh request id: count it as a failure
            outcomes.append(_Outcome(None, RuntimeError("stale acquire"), acquire))
            continue
        if flag == AcquireFlag.REFUSED:  # a non-reentrant member this owner holds already
            reentry = LockReentryError(
                f"lock {acquire.ref.name!r} is not reentrant and owner {acquire.ref.owner}"
                " already holds it",
                lock_name=acquire.ref.name,
            )
            outcomes.append(_Outcome(None, reentry, None))
            continue
        if reply.acquired and result.synced < result.required:
            settings = acquire.ref.state.settings
            unsynced = NoSyncedReplicasError(
                unsynced_text(result, settings.slaves_sync_timeout),
                lock_name=acquire.ref.name,
                acknowledged=max(0, result.synced),
                required=result.required,
            )
            outcomes.append(_Outcome(reply, unsynced, acquire))
            continue
        outcomes.append(_Outcome(reply, None, acquire))
    return outcomes


def _undo_round(
    refs: Sequence[LockRef],
    outcomes: Sequence[_Outcome],
    timeout: float,
    *,
    leader_last: bool = False,
) -> Generator[Effect, Any, None]:
    """Undo this round's acquires: those granted, and those whose reply was lost (the
    request id takes back only what was applied). With
    ``leader_last`` the leader is released after the others, so the next leader holder
    does not find members still held by this round. An undo that fails is retried in
    the background, so a dead node does not hold up the caller."""
    calls: dict[int, Call] = {}
    undos: dict[int, AcquireRequest] = {}
    for index, (ref, outcome) in enumerate(zip(refs, outcomes, strict=True)):
        granted = outcome.reply is not None and outcome.reply.acquired
        # A member's refusal (see core.refusals) is an answer: nothing was applied.
        unanswered = (
            outcome.error is not None
            and outcome.reply is None
            and refusal_of(outcome.error) is None
        )
        if outcome.acquire is None or not (granted or unanswered):
            continue
        undos[index] = outcome.acquire
        calls[index] = Call(
            ref.target, ref.name, (outcome.acquire.undo_command(),), timeout=timeout
        )
    leader = leader_index(refs) if leader_last else -1
    order = [i for i in calls if i != leader] + ([leader] if leader in calls else [])
    batches = [order[:-1], order[-1:]] if leader in calls else [order]
    for batch in batches:
        if not batch:
            continue
        results = yield Gather(tuple(calls[i] for i in batch))
        for index, result in zip(batch, results, strict=True):
            if isinstance(result, BaseException):
                yield undo_later(undos[index])


def _member_label(ref: LockRef) -> str:
    address = ref.target.describe(ref.name)
    return f"{ref.name!r}" + (f" at {address}" if address else "")


def leader_index(refs: Sequence[LockRef]) -> int:
    """The member every MultiLock over these locks takes first, whatever the order the
    locks were given in: the least by (name, node address)."""

    def order(i: int) -> tuple[str, str]:
        return (refs[i].name, refs[i].target.describe(refs[i].name))

    return min(range(len(refs)), key=order)


def _all_of_round(
    refs: Sequence[LockRef], lease: float | None, timeout: float
) -> Generator[Effect, Any, list[_Outcome]]:
    """MultiLock's round: the leader member first, then the others together.

    Contenders that all sent everything at once could each win some members and all
    fail, for ever in the worst case; taking the leader first means only its holder
    contends for the rest, so among owners that try at the same moment exactly one
    wins. It costs a second round trip, only when there is more than one member.
    """
    leader = leader_index(refs)
    first = yield from _acquire_round([refs[leader]], lease, timeout)
    outcomes: list[_Outcome | None] = [None] * len(refs)
    outcomes[leader] = first[0]
    others = [i for i in range(len(refs)) if i != leader]
    if others and first[0].error is None and first[0].acquired:
        rest = yield from _acquire_round([refs[i] for i in others], lease, timeout)
        for index, outcome in zip(others, rest, strict=True):
            outcomes[index] = outcome
    not_tried = _Outcome(None, None, None)
    return [not_tried if o is None else o for o in outcomes]


def try_lock(
    group: GroupState,
    refs: Sequence[LockRef],
    owner: str,
    wait: float | None,
    lease: float | None,
    *,
    member_timeout: float | None = None,
) -> Flow:
    """Acquire at least ``group.need`` members within ``wait`` seconds (None: for ever).

    Returns True when held, False when other owners held members until the deadline.
    Raises [`LockUnavailableError`][redisson_py.errors.LockUnavailableError] (naming
    each member's error) when the last round failed because members failed rather than
    because others held them. A RedLock round also fails when the lease left after the
    round, minus clock drift, is not positive
    (`redisson_py.core.flows.quorum.validity`).
    """
    settings = refs[0].state.settings
    effective_lease = settings.key_ttl(lease)
    timeout = member_timeout or quorum.member_timeout(effective_lease, settings.command_timeout)
    all_of = group.all_of
    if not all_of and quorum.validity(effective_lease, timeout) <= 0:
        # No round could pass the validity check: say so now, not after the whole wait.
        raise ArgumentError(
            f"{group.label}: a lease of {effective_lease:g} s cannot outlast one round"
            f" (member replies may take up to {timeout:g} s, plus clock drift"
            f" {quorum.clock_drift(effective_lease):g} s); use a longer lease"
        )
    clock = refs[0].state.clock
    begun = clock()
    deadline = None if wait is None else begun + max(0.0, wait)
    failed_rounds = 0
    while True:
        started = clock()
        believed = [ref.state.holds.count(ref.name, ref.owner, started) for ref in refs]
        if all_of:
            outcomes = yield from _all_of_round(refs, lease, timeout)
        else:
            outcomes = yield from _acquire_round(refs, lease, timeout)
        elapsed = clock() - started
        won = {i for i, o in enumerate(outcomes) if o.error is None and o.acquired}
        valid = all_of or quorum.validity(effective_lease, elapsed) > 0
        reentry = next((o.error for o in outcomes if isinstance(o.error, LockReentryError)), None)
        if len(won) >= group.need and valid and reentry is None:
            outcomes = yield from _drop_leftovers(refs, outcomes, won, believed)
            _record_members(refs, outcomes, won, lease, started)
            group.acquired(owner, won, lease, _valid_until(effective_lease, started))
            if refs[0].state.listeners:
                _emit(group, refs, owner, "acquired", wait=clock() - begun)
            return True
        yield from _undo_round(refs, outcomes, timeout, leader_last=all_of)
        if reentry is not None:
            # A non-reentrant member this owner holds already: waiting cannot help, and
            # a quorum without it would let the group's unlock release that other hold.
            raise reentry
        left = None if deadline is None else deadline - clock()
        errors = {_member_label(refs[i]): o.error for i, o in enumerate(outcomes) if o.error}
        failing = "; ".join(f"{member}: {error}" for member, error in errors.items())
        if deadline is None and errors:
            failed_rounds += 1
            if failed_rounds % WARN_EVERY == 1:  # waiting for ever: never silently
                log.warning(
                    "%s: still waiting through failures (%d rounds): %s",
                    group.label,
                    failed_rounds,
                    failing,
                )
        if left is not None and left <= 0:
            contended = any(o.reply is not None and not o.reply.acquired for o in outcomes)
            if errors and not contended:
                raise LockUnavailableError(
                    f"{group.label}: {len(errors)} of {len(refs)} members failed, "
                    f"{group.need} needed: {failing}",
                    errors,
                )
            return False
        yield Sleep(quorum.retry_pause(left))


def _valid_until(lease: float, started: float) -> float:
    """When a hold granted (or extended) by a round that started sending at ``started``
    with a lease of ``lease`` seconds stops being valid: Redlock's lease - elapsed -
    clock drift, as a monotonic time."""
    return started + quorum.validity(lease, 0.0)


def extend(
    group: GroupState,
    refs: Sequence[LockRef],
    owner: str,
    seconds: float,
    *,
    member_timeout: float | None = None,
) -> Flow:
    """Make ``owner``'s leased group hold expire ``seconds`` from now on its members:
    one round sending every member's extend script at once (it sets the TTL only while
    the member's field is the owner's), with the acquire's rule: every member of a
    MultiLock, a majority of a RedLock, and for a RedLock a round short enough that
    ``seconds`` minus the round minus clock drift stays positive. On success the hold
    is valid for that much from the round's start (`remaining_validity`).

    Raises [`LockNotOwnedError`][redisson_py.errors.LockNotOwnedError] when the owner
    holds no group hold (or it was reported lost),
    [`ArgumentError`][redisson_py.errors.ArgumentError] for a hold taken without a
    lease (the watchdogs renew it) or a lease no round can outlast, and
    [`GroupExtendError`][redisson_py.errors.GroupExtendError] naming the members not
    extended when too few were: the members extended keep the new lease (the owner
    still holds them; ``unlock()`` releases them), the group keeps its former validity,
    or the new one when that is shorter (a shortening that reached some members).
    """
    settings = refs[0].state.settings
    timeout = member_timeout or quorum.member_timeout(seconds, settings.command_timeout)
    _check_extendable(group, owner, seconds, timeout)
    started, results = yield from _extend_round(refs, seconds, timeout)
    elapsed = refs[0].state.clock() - started
    extended, errors = _record_extensions(refs, results, seconds, started)
    valid = group.all_of or quorum.validity(seconds, elapsed) > 0
    if len(extended) >= group.need and valid:
        if group.extended(owner, extended, seconds, _valid_until(seconds, started)):
            return None
        raise LockNotOwnedError(
            f"cannot extend {group.label}: it was released or reported lost while the"
            " extension was in flight"
        )
    if extended:
        # Members extended to a shorter lease than the validity left bring it forward.
        group.cap_validity(owner, _valid_until(seconds, started))
    raise _extend_error(
        group, refs, extended=extended, errors=errors, seconds=seconds, elapsed=elapsed
    )


def _check_extendable(group: GroupState, owner: str, seconds: float, timeout: float) -> None:
    """Raise what `extend` raises before sending: no hold, no lease, or a lease no round
    of ``timeout`` can outlast."""
    held, lease, _ = group.lease_of(owner)
    if not held:
        raise LockNotOwnedError(
            f"cannot extend {group.label}: owner {owner} holds it not"
            " (never acquired, released, or reported lost)"
        )
    if lease is None:
        raise ArgumentError(
            f"{group.label}: a hold taken without a lease is renewed by its members'"
            " watchdogs and has no lease to extend; take it with lease_time=... to extend it"
        )
    if not group.all_of and quorum.validity(seconds, timeout) <= 0:
        raise ArgumentError(
            f"{group.label}: a lease of {seconds:g} s cannot outlast one round"
            f" (member replies may take up to {timeout:g} s, plus clock drift"
            f" {quorum.clock_drift(seconds):g} s); use a longer lease"
        )


def _extend_round(
    refs: Sequence[LockRef], seconds: float, timeout: float
) -> Generator[Effect, Any, tuple[float, list[CallResult | BaseException]]]:
    """Send every member's extend script at once; (when the round started, each
    member's result)."""
    settings = refs[0].state.settings
    ms = to_millis(seconds)
    calls = tuple(
        Call(
            ref.target,
            ref.name,
            (ref.kind.extend(ref, ms),),
            sync_replicas=settings.sync_replicas,
            timeout=timeout,
        )
        for ref in refs
    )
    # While the round is in flight the members' watchdogs report no loss: an old lease
    # ending meanwhile is this extension's to judge (as for one lock's extend).
    for ref in refs:
        ref.state.holds.releasing(ref.name, ref.owner, +1)
    started = refs[0].state.clock()
    try:
        results: list[CallResult | BaseException] = yield Gather(calls)
    finally:
        for ref in refs:
            ref.state.holds.releasing(ref.name, ref.owner, -1)
    return started, results


def _record_extensions(
    refs: Sequence[LockRef],
    results: Sequence[CallResult | BaseException],
    seconds: float,
    started: float,
) -> tuple[set[int], dict[str, BaseException]]:
    """Record each member the round extended (synced as asked); (the indexes of those,
    each other member's error by its label)."""
    extended: set[int] = set()
    errors: dict[str, BaseException] = {}
    for index, (ref, result) in enumerate(zip(refs, results, strict=True)):
        label = _member_label(ref)
        if isinstance(result, BaseException):
            errors[label] = result
            continue
        count = result.replies[0]
        hold = ref.state.holds.get(ref.name, ref.owner)
        if isinstance(count, BaseException) or count is None:
            # Not the owner's any more: its watchdog reports the member lost, as for
            # any loss, and the group follows its rule.
            errors[label] = (
                count
                if isinstance(count, BaseException)
                else LockNotOwnedError(f"{label}: not held by owner {ref.owner}")
            )
            continue
        if result.synced < result.required:
            what = f"{label}: extended"
            errors[label] = unsynced_extension(
                ref, hold, result, lease=seconds, sent_at=started, what=what
            )
            continue
        record_extension(ref, hold, int(count), seconds, started)
        extended.add(index)
    return extended, errors


def _extend_error(
    group: GroupState,
    refs: Sequence[LockRef],
    *,
    extended: set[int],
    errors: dict[str, BaseException],
    seconds: float,
    elapsed: float,
) -> GroupExtendError:
    """The error of an extension too few members took, or that took too long."""
    names = tuple(_member_label(refs[i]) for i in sorted(extended))
    failing = "; ".join(f"{member}: {error}" for member, error in errors.items())
    why = (
        f"{len(extended)} of {len(refs)} members extended, {group.need} needed"
        if len(extended) < group.need
        else f"the round took {elapsed:.3f} s, leaving no validity of a {seconds:g} s lease"
    )
    return GroupExtendError(
        f"cannot extend {group.label}: {why}"
        + (f"; not extended: {failing}" if failing else "")
        + "; the group keeps its former validity (or the new one, if shorter)",
        errors,
        names,
    )


def remaining_validity(group: GroupState, refs: Sequence[LockRef], owner: str) -> float:
    """Seconds ``owner``'s group hold can still be relied on; 0.0 when it holds none or
    it was reported lost.

    A leased hold: Redlock's arithmetic from the start of the round that acquired or
    last extended it (lease - elapsed - clock drift). A hold the members' watchdogs
    renew: until the safe end of the ``group.need``-th latest member (every member of
    a MultiLock), which each confirmed renewal moves on.
    """
    held, lease, members = group.lease_of(owner)
    if not held:
        return 0.0
    now = refs[0].state.clock()
    if lease is not None:
        until = group.valid_until(owner)
        return 0.0 if until is None else max(0.0, until - now)
    ends = []
    for index in members:
        ref = refs[index]
        end = ref.state.holds.expires_at(ref.name, ref.owner)
        if end is not None:
            ends.append(end)
    if len(ends) < group.need:
        return 0.0
    ends.sort(reverse=True)
    return max(0.0, ends[group.need - 1] - now)


def guarded(group: GroupState, flow: Generator[Effect, Any, T]) -> Generator[Effect, Any, T]:
    """Run ``flow``; an error leaving it that is not a RedissonError leaves as one,
    naming the group (as `redisson_py.core.flows.calls.guarded` for one lock)."""
    try:
        return (yield from flow)
    except RedissonError:
        raise
    except Exception as error:
        raise failures.as_redisson_error(error, group.label, lock_name=None, node=None) from error


def _drop_leftovers(
    refs: Sequence[LockRef], outcomes: list[_Outcome], won: set[int], believed: list[int]
) -> Generator[Effect, Any, list[_Outcome]]:
    """Members granted with a hold count above 1 though the owner counted none hold
    leftovers of a hold reported lost (see `drop_leftovers`): release them, on all such
    members at once. A member whose release fails keeps the server's count (its unlock
    then leaves the leftover to its TTL)."""
    counts = {i: reply.hold_count for i in won if (reply := outcomes[i].reply) is not None}
    extra = {i: count - 1 for i, count in counts.items() if believed[i] == 0 and count > 1}
    if not extra:
        return outcomes
    calls = []
    for i, n in extra.items():
        acquire = outcomes[i].acquire
        ids = () if acquire is None else (acquire.request_id,)
        releases = tuple(refs[i].kind.release(refs[i], ids) for _ in range(n))
        calls.append(Call(refs[i].target, refs[i].name, releases))
    results = yield Gather(tuple(calls))
    fixed = list(outcomes)
    for (index, _), result in zip(extra.items(), results, strict=True):
        reply = outcomes[index].reply
        if isinstance(result, BaseException) or reply is None:
            log.warning(
                "%s: could not release %d leftover hold(s) of a hold reported lost: %s",
                _member_label(refs[index]),
                extra[index],
                result,
            )
            continue
        fixed[index] = replace(outcomes[index], reply=replace(reply, hold_count=1))
    return fixed


def _record_members(
    refs: Sequence[LockRef],
    outcomes: Sequence[_Outcome],
    won: set[int],
    lease: float | None,
    sent_at: float,
) -> None:
    """Record the members ``won`` as held, each safe from ``sent_at`` (when the round
    that granted them started sending)."""
    for index in won:
        ref, outcome = refs[index], outcomes[index]
        reply = outcome.reply
        assert reply is not None
        ref.state.holds.acquired(
            ref.name,
            ref.owner,
            reply.hold_count,
            target=ref.target,
            lease=lease,
            ttl=ref.state.settings.key_ttl(lease),
            now=sent_at,
            on_lost=ref.report,
            kind=ref.kind,
            request_id="" if outcome.acquire is None else outcome.acquire.request_id,
            max_hold=None if outcome.acquire is None else outcome.acquire.max_hold,
        )


def unlock(group: GroupState, refs: Sequence[LockRef], owner: str) -> Flow:
    """Release one hold on every member (also those the acquire seemed to miss).

    Raises [`LockNotOwnedError`][redisson_py.errors.LockNotOwnedError] when the owner
    held no hold on the group, when the group was reported lost, or when fewer than
    ``group.need`` members were still held at release (all for a MultiLock).
    """
    settings = refs[0].state.settings
    calls = tuple(
        Call(ref.target, ref.name, (release_command(ref),), timeout=settings.command_timeout)
        for ref in refs
    )
    for ref in refs:
        ref.state.holds.releasing(ref.name, ref.owner, +1)
    try:
        results: list[CallResult | BaseException] = yield Gather(calls)
    finally:
        for ref in refs:
            ref.state.holds.releasing(ref.name, ref.owner, -1)
    released = 0
    failures: list[str] = []
    for ref, result in zip(refs, results, strict=True):
        if isinstance(result, BaseException):
            failures.append(f"{_member_label(ref)}: {result}")
            forget_one_hold(ref)
            continue
        left = decode_release(result.replies[0])
        if left is None:
            ref.state.holds.forget(ref.name, ref.owner)
            continue
        released += 1
        ref.state.holds.released(ref.name, ref.owner, left)
    was_lost = group.released(owner)
    if was_lost or released < group.need:
        detail = f"; release failed on {'; '.join(failures)}" if failures else ""
        raise LockNotOwnedError(
            f"cannot unlock {group.label}: "
            + (
                "it was reported lost before"
                if was_lost
                else f"only {released} of {len(refs)} members were held by this owner "
                f"({owner_text(refs[0].state, refs[0].owner)}), {group.need} needed: it "
                "never locked the group, or already released it"
            )
            + detail
        )
    if refs[0].state.listeners:
        _emit(group, refs, owner, "released")


def _emit(
    group: GroupState,
    refs: Sequence[LockRef],
    owner: str,
    kind: events.EventKind,
    wait: float | None = None,
) -> None:
    """Tell the client's listeners of a group event, named by the group's label."""
    event = events.LockEvent(
        kind, group.label, owner, wait=wait, hold_count=group.held_count(owner)
    )
    events.emit(refs[0].state, event)


def _member_calls(
    refs: Sequence[LockRef], command: Callable[[LockRef], Command]
) -> tuple[Call, ...]:
    timeout = refs[0].state.settings.command_timeout
    return tuple(Call(ref.target, ref.name, (command(ref),), timeout=timeout) for ref in refs)


def is_locked(group: GroupState, refs: Sequence[LockRef]) -> Flow:
    """True when the group is held by anyone: at least ``group.need`` members locked
    (every member for a MultiLock, a quorum for a RedLock), asked of all members at once.

    Members that fail to answer count for neither side; when their answers could have
    decided it, [`LockUnavailableError`][redisson_py.errors.LockUnavailableError] names them.
    """
    results: list[CallResult | BaseException] = yield Gather(
        _member_calls(refs, lambda ref: ref.kind.locked(ref))
    )
    locked = unlocked = 0
    errors: dict[str, BaseException] = {}
    for ref, result in zip(refs, results, strict=True):
        if isinstance(result, BaseException):
            errors[_member_label(ref)] = result
        elif ref.kind.is_locked(result.replies[0]):
            locked += 1
        else:
            unlocked += 1
    if locked >= group.need:
        return True
    if unlocked > len(refs) - group.need:  # a quorum of locked members is out of reach
        return False
    failing = "; ".join(f"{member}: {error}" for member, error in errors.items())
    raise LockUnavailableError(
        f"{group.label}: cannot tell whether it is locked: {locked} of {len(refs)} members"
        f" locked, {group.need} needed, {len(errors)} did not answer: {failing}",
        errors,
    )


def force_unlock(group: GroupState, refs: Sequence[LockRef]) -> Flow:
    """Delete every member whoever holds it and wake its waiters, all at once; True if
    any member was locked. The group's holds known here are forgotten: their owners'
    ``unlock()`` raises [`LockNotOwnedError`][redisson_py.errors.LockNotOwnedError].

    Raises [`LockUnavailableError`][redisson_py.errors.LockUnavailableError] naming the
    members that failed (the others were unlocked all the same).
    """
    for ref in refs:
        ref.state.holds.releasing(ref.name, None, +1)
    try:
        results: list[CallResult | BaseException] = yield Gather(
            _member_calls(refs, lambda ref: ref.kind.force_release(ref))
        )
    finally:
        for ref in refs:
            ref.state.holds.releasing(ref.name, None, -1)
    deleted = False
    errors: dict[str, BaseException] = {}
    for ref, result in zip(refs, results, strict=True):
        if isinstance(result, BaseException):
            errors[_member_label(ref)] = result
            continue
        ref.state.holds.forget(ref.name)
        deleted = deleted or int(result.replies[0]) == 1
    with group._lock:  # every owner's hold on the group is gone with its members
        group._holds.clear()
    if errors:
        failing = "; ".join(f"{member}: {error}" for member, error in errors.items())
        raise LockUnavailableError(
            f"{group.label}: force unlock failed on {len(errors)} of {len(refs)} members"
            f" (the others were unlocked): {failing}",
            errors,
        )
    return deleted
