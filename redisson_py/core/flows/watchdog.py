"""The watchdog's rounds, its schedule and its loss reports, written once for both shells.

One round looks at every hold in the client's table: the holds taken without a lease are
renewed, the leased ones only checked (still there, still this owner's), with the same
script and in the same calls. Holds are grouped per connection manager and, in a
cluster, per hash slot (a script's keys must share a slot), cut into chunks of
``renew_batch_size`` keys, and sent as one `Gather`, which the manager pipelines
per node: about one round trip per node, whatever the number of locks.

**A renewal counts only when confirmed.** With replica sync on
(``checkLockSyncedSlaves``), each round's calls carry ``sync_replicas``: the manager
follows a node's renewals with one ``WAIT`` (or ``WAITAOF``) on the same connection,
for the replicas a grant would wait for (the same counting rules), in the same round
trip. A renewal the master applied but too few replicas acknowledged is *not* a
success: a failover could promote a replica whose copy of the key still has the old
expiry, and grant the lock to another client when that runs out. So a hold is safe only
until `safe_end` of its last confirmed write (when it was
sent, plus the TTL it set, minus the safety margin), whatever the master the client can
still reach says. This is what tells a holder cut off with an old master that still
answers: its renewals go on succeeding there, but are never acknowledged.

A chunk that fails with a connection error is sent again at once, in the same round: the
manager closed the connection that failed, so the resend goes out on a fresh one (after
a server restart, the first use of a pooled connection fails though the server is
back). Holds whose renewal did not count (a node unreachable, replicas not
acknowledging) are looked at again every `PROBE_INTERVAL` rather than every
renewal interval, so one confirmed renewal in time keeps the hold, and the holder of a
lock a restart lost hears of it moments after the node is back.

A hold is lost when a round finds the owner gone from the key, or when its safe end
passes (`report_expired`, no I/O: a lease ran out while
held, or renewals were not confirmed in time). The shells run the reports on their own
timer, apart from the rounds (`ExpiryReports`), so a round waiting on a frozen
node or a ``WAIT`` cannot make a report late. Each loss is reported once (see
`redisson_py.core.state.losses`); the hold leaves the table, so renewal stops for it and
the next ``unlock()`` raises, saying how it went.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Collection, Generator
from dataclasses import dataclass, field
from typing import Any

from redis.exceptions import AuthenticationError
from redis.exceptions import ConnectionError as RedisConnectionError

from redisson_py.core.effects import Call, CallResult, Effect, Gather, to_millis
from redisson_py.core.flows.calls import unsynced_text
from redisson_py.core.flows.lock_kinds import REENTRANT, LockKind
from redisson_py.core.routing import failures, naming
from redisson_py.core.routing.refusals import refusal_of
from redisson_py.core.state.client_state import ClientState
from redisson_py.core.state.holds import (
    EXPIRY_SLACK,
    Hold,
    capped_text,
    gone_text,
    lease_text,
    orphaned_text,
)
from redisson_py.core.state.losses import REFUSED, UNREACHABLE, declare_lost, emit, report_expired
from redisson_py.errors import AuthError, ConnectError

GroupKey = tuple[int, int, str]
"""(id of the hold's connection manager, hash slot or -1, renewal script): the holds one
call may carry."""

PROBE_INTERVAL = 0.25
"""Seconds between looks at holds whose last renewal did not count, until one does."""

REPORT_GAP = 0.02
"""Safe ends this close together (seconds) are reported in one wake-up, the later ones
that much early, never late; and the shortest time between two wake-ups, so many
leased holds cost few wake-ups (each scans the table)."""


def _kind(hold: Hold) -> LockKind:
    return hold.kind or REENTRANT


def group_key(hold: Hold) -> GroupKey:
    slot = naming.key_slot(hold.name) if hold.target.routes_by_slot else -1
    return (id(hold.target), slot, _kind(hold).renew_script.name)


Route = Callable[[Any], Any]
"""Maps a hold's connection manager to the one a round sends its renewal on (the asyncio
client's watchdog thread sends on a threaded twin of each manager)."""


def _same(target: Any) -> Any:
    return target


def renewal_ttl(state: ClientState, hold: Hold, now: float) -> float:
    """The TTL a renewal sent at ``now`` gives ``hold``: the watchdog timeout, or less
    when that would carry the hold past its ``max_hold_time``; then the key expires when
    the cap is reached, and this is the hold's last renewal."""
    ttl = state.settings.watchdog_timeout
    if hold.renew_until is not None and hold.renews:
        ttl = min(ttl, max(MIN_TTL, hold.renew_until - now))
    return ttl


MIN_TTL = 0.001
"""The shortest TTL a renewal sets (PEXPIRE counts whole milliseconds)."""


def plan_round(
    state: ClientState, holds: list[Hold], now: float | None = None, route: Route = _same
) -> list[tuple[Call, list[Hold], float]]:
    """Group ``holds`` into renewal calls: per manager, per slot where the manager
    routes by slot, per renewal script (lock kind), per TTL (a hold's last renewal
    before its ``max_hold_time`` gets a shorter one: `renewal_ttl`), at most
    ``renew_batch_size`` keys a call; each with its TTL. Watchdog holds are renewed,
    leased ones only checked. With replica sync on, a call that renews asks for the
    replicas' acknowledgement (one WAIT per node)."""
    settings = state.settings
    now = state.clock() if now is None else now
    sync = settings.sync_replicas
    groups: dict[tuple[GroupKey, int], list[Hold]] = {}
    for hold in holds:
        ttl_ms = to_millis(renewal_ttl(state, hold, now))
        groups.setdefault((group_key(hold), ttl_ms), []).append(hold)
    size = max(1, settings.renew_batch_size)
    planned = []
    for (_key, ttl_ms), members in groups.items():
        for start in range(0, len(members), size):
            chunk = members[start : start + size]
            command = _kind(chunk[0]).renew(chunk, ttl_ms)
            renews = any(hold.renews for hold in chunk)
            call = Call(
                route(chunk[0].target),
                chunk[0].name,
                (command,),
                sync_replicas=sync if renews else None,
                timeout=settings.command_timeout,
            )
            planned.append((call, chunk, ttl_ms / 1000))
    return planned


def _reconnectable(result: object) -> bool:
    """A connection error worth one resend on a fresh connection (not a timeout: a
    frozen node would only cost another command timeout; not refused credentials)."""
    return (
        isinstance(result, RedisConnectionError | OSError | ConnectError)
        and not isinstance(result, AuthenticationError | AuthError)
        and not failures.is_timeout(result)
    )


@dataclass(slots=True)
class RoundOutcome:
    """What a round did: holds ``renewed`` (confirmed), and the groups whose renewals
    did not count (a node unreachable, replicas not acknowledging), to look at soon."""

    renewed: int = 0
    failing: set[GroupKey] = field(default_factory=set)


def renew_round(
    state: ClientState, only: Collection[GroupKey] | None = None, route: Route = _same
) -> Generator[Effect, Any, RoundOutcome]:
    """Renew every watchdog hold once and check every leased one (only those in the
    groups ``only``, when given), sending each call on ``route`` of its hold's manager;
    report the lost ones (through `ClientState.deliver`)."""
    outcome = RoundOutcome()
    holds = _holds_to_check(state, only)
    if not holds:
        return outcome
    sent_at = state.clock()
    planned = plan_round(state, holds, sent_at, route)
    results, again, resent_at = yield from _send_round(state, planned)
    for index, ((_call, chunk, ttl), result) in enumerate(zip(planned, results, strict=True)):
        at = resent_at if index in again else sent_at
        _take_reply(state, outcome, chunk, ttl, result=result, at=at)
    # A round is also a look at the clock: what ran out while it waited is reported.
    report_expired(state, state.clock())
    return outcome


def _holds_to_check(state: ClientState, only: Collection[GroupKey] | None) -> list[Hold]:
    """The holds a round sends for (in the groups ``only``, when given), after capping
    those past their ``max_hold_time`` and orphaning those of finished owners."""
    state.holds.cap(state.clock())  # holds past max_hold_time are only checked from now
    # ...and so are the holds of owners that finished without releasing them (an asyncio
    # task that ended holding a lock): renewed for ever, they would keep the lock from
    # every other owner until shutdown, with no one left to release it.
    state.holds.orphan(state.client_id, state.runtime.owner_finished)
    holds = [hold for hold in state.holds.all_holds() if hold.checked]
    if only is not None:
        holds = [h for h in holds if group_key(h) in only]
    return holds


def _send_round(
    state: ClientState, planned: list[tuple[Call, list[Hold], float]]
) -> Generator[Effect, Any, tuple[list[CallResult | BaseException], list[int], float]]:
    """Send the planned calls at once, and once more those whose connection failed;
    (each call's result, the indexes sent again, when they were sent again)."""
    results: list[CallResult | BaseException] = list(
        (yield Gather(tuple(call for call, _, _ in planned)))
    )
    again = [i for i, result in enumerate(results) if _reconnectable(result)]
    if not again:
        return results, again, 0.0
    # The connection that failed was closed by the manager: this goes out on a new
    # one, so a stale pooled connection costs no renewal interval. (A renewal the
    # server ran before the connection broke is harmless to run twice.) Its safe end
    # counts from this send.
    resent_at = state.clock()
    resent = yield Gather(tuple(planned[i][0] for i in again))
    for index, result in zip(again, resent, strict=True):
        results[index] = result
    return results, again, resent_at


def _take_reply(
    state: ClientState,
    outcome: RoundOutcome,
    chunk: list[Hold],
    ttl: float,
    *,
    result: CallResult | BaseException,
    at: float,
) -> None:
    """What one renewal call sent at ``at`` says of its ``chunk`` of holds: renewed,
    gone (declared lost), or not counted (the node failed, the replicas did not
    acknowledge)."""
    if isinstance(result, BaseException):
        outcome.failing.add(group_key(chunk[0]))
        how = REFUSED if refusal_of(result) is not None else UNREACHABLE
        _not_counted(state, chunk, f"{how}{result}", str(result))
        return
    confirmed = result.synced >= result.required
    if not confirmed:
        outcome.failing.add(group_key(chunk[0]))
    unsynced: str | None = None
    for hold, flag in zip(chunk, result.replies[0], strict=True):
        if int(flag) != 1:
            declare_lost(state, hold, _gone_reason(hold, at), gone_text(hold, at))
        elif not hold.renews:
            continue  # leased or capped, still there: its safe end stays where it was
        elif confirmed:
            if state.holds.renewed(hold, at, ttl, state.clock()):
                outcome.renewed += 1
                if state.listeners:
                    node = result.address or None
                    state.deliver(functools.partial(emit, state, "renewed", hold, node=node))
        else:
            if unsynced is None:
                unsynced = f"renewed on the master at {result.address}, but " + unsynced_text(
                    result, state.settings.slaves_sync_timeout
                )
            _not_counted(state, [hold], unsynced, unsynced)


def _not_counted(state: ClientState, holds: list[Hold], why: str, error: str) -> None:
    """Renewals of ``holds`` that did not count: recorded for the loss report their safe
    end may bring, and told to listeners as failed renewals."""
    for hold in holds:
        if hold.renews:
            state.holds.unconfirmed(hold, why)
            if state.listeners:
                state.deliver(functools.partial(emit, state, "renewal_failed", hold, error=error))


def _gone_reason(hold: Hold, sent_at: float) -> str:
    if hold.capped and sent_at >= hold.expires_at - EXPIRY_SLACK:
        return capped_text(hold)
    if hold.orphaned and sent_at >= hold.expires_at - EXPIRY_SLACK:
        return orphaned_text(hold)
    if hold.watchdog or hold.lease is None:
        return "the lock's key no longer names this owner at renewal"
    if sent_at >= hold.expires_at - EXPIRY_SLACK:
        return f"its lease of {lease_text(hold.lease)} expired while held"
    return (
        f"the lock's key was deleted or evicted while held (its lease of "
        f"{lease_text(hold.lease)} had {hold.expires_at - sent_at:.3g} s left)"
    )


class Schedule:
    """When a client's renewal rounds run and what they do then; the shells only sleep
    until `wake_at` (or until woken) and run `step`.

    A full round every renewal interval (one round trip per node); sooner for a hold
    whose safe end is too close for that (`hurry`); while holds' renewals
    do not count (a node refusing connections, replicas not acknowledging), a round for
    their groups every `PROBE_INTERVAL`; at once when `ask` was called
    (pub/sub saw a node's connection drop or come back). Loss reports at safe ends are
    `ExpiryReports`' job, on a timer of their own.
    """

    def __init__(self, state: ClientState) -> None:
        self.interval = state.settings.renew_interval
        self.probe_every = min(PROBE_INTERVAL, self.interval)
        self.next_round = state.clock() + self.interval
        self.next_probe = math.inf
        self.early = math.inf
        """When a full round must come before `next_round` (see `hurry`)."""
        self.probing: set[GroupKey] = set()
        self.asked = False

    def ask(self) -> None:
        """Run a full round at the next `step` (the shell wakes its loop)."""
        self.asked = True

    def hurry(self, hold: Hold, now: float) -> bool:
        """Plan a full round a third of the way from ``now`` to ``hold``'s safe end (the
        renewal interval's own rule) when the round planned would leave it less than a
        renewal interval before that end: a hold given a shorter TTL than the
        watchdog's (a queued lock's grant, a few seconds); True when the shell must wake
        its loop to see it. A hold the watchdog's TTL was given never hurries a round.

        One round takes up every such grant of the last moments, and a grant released
        before its round costs no call at all: a hot queued lock, handed on every
        millisecond, pays one round trip per node every second or so, not one per
        hand-off."""
        planned = min(self.early, self.next_round)
        if not hold.renews or hold.expires_at - planned >= self.interval:
            return False
        due = now + (hold.expires_at - now) / 3
        if due >= planned:
            return False
        self.early = due
        return True

    def wake_at(self, state: ClientState) -> float:
        """When the next `step` is due (monotonic seconds)."""
        return min(self.next_round, self.next_probe, self.early)

    def step(self, state: ClientState, route: Route = _same) -> Generator[Effect, Any, int]:
        """Do what is due now (its calls sent on ``route`` of each hold's manager);
        return how many holds were renewed."""
        now = state.clock()
        if self.asked or now >= min(self.next_round, self.early):
            self.asked = False
            # Reset before the round reads the hold table: a hold `hurry` plans for
            # from now on is either in this round or plans a round of its own.
            self.early = math.inf
            self.next_round = now + self.interval
            outcome = yield from renew_round(state, route=route)
        elif self.probing and now >= self.next_probe:
            outcome = yield from renew_round(state, only=self.probing, route=route)
        else:
            return 0
        self.probing = outcome.failing
        self.next_probe = state.clock() + self.probe_every if self.probing else math.inf
        return outcome.renewed


class ExpiryReports:
    """When the shell's report timer wakes: at the earliest safe end of any hold, where
    `report_expired` tells the holders whose safe end has come. Safe ends within
    `REPORT_GAP` of each other are reported together, early rather than late, and
    two wake-ups are never closer than that."""

    def __init__(self) -> None:
        self.stepped = -math.inf

    def wake_at(self, state: ClientState) -> float:
        """When `step` is next due (monotonic seconds; inf: no hold)."""
        end = state.holds.next_expiry()
        if end is None:
            return math.inf
        return max(end - REPORT_GAP, self.stepped + REPORT_GAP)

    def step(self, state: ClientState) -> int:
        """Report the holds whose safe end is due; how many."""
        now = self.stepped = state.clock()
        return report_expired(state, now + REPORT_GAP)
