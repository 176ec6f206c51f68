"""The watchdog's rounds and schedule, written once for both shells.

One round looks at every hold in the client's table: the holds taken without a lease are
renewed, the leased ones only checked (still there, still this owner's), with the same
script and in the same calls. Holds are grouped per connection manager and, in a
cluster, per hash slot (a script's keys must share a slot), cut into chunks of
``renew_batch_size`` keys, and sent as one :class:`Gather`, which the manager pipelines
per node: about one round trip per node, whatever the number of locks.

A chunk that fails with a connection error is sent again at once, in the same round: the
manager closed the connection that failed, so the resend goes out on a fresh one (after
a server restart, the first use of a pooled connection fails though the server is
back). A node still unreachable after that is looked at again every
:data:`PROBE_INTERVAL` rather than every renewal interval, so the holder of a lock the
restart lost hears of it moments after the node is back.

A hold is lost when a round finds the owner gone from the key, when its lease runs out
while it is still held (reported at that moment, without asking Redis), or when the
manager stayed unreachable until the key must have expired (``Hold.expires_at``). Each
loss is reported once, through the hold's ``on_lost``; the hold leaves the table, so
renewal stops for it and the next ``unlock()`` raises, saying how it went.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Generator
from dataclasses import dataclass, field
from typing import Any

from redis.exceptions import AuthenticationError
from redis.exceptions import ConnectionError as RedisConnectionError

from redisson_py.core import events, failures, naming
from redisson_py.core.client_state import ClientState
from redisson_py.core.effects import Call, CallResult, Effect, Gather
from redisson_py.core.holds import EXPIRY_SLACK, Hold, gone_text, lease_text
from redisson_py.core.lock_flows import to_millis
from redisson_py.core.lock_kinds import REENTRANT, LockKind
from redisson_py.errors import AuthError, ConnectError

GroupKey = tuple[int, int, str]
"""(id of the hold's connection manager, hash slot or -1, renewal script): the holds one
call may carry."""

PROBE_INTERVAL = 0.25
"""Seconds between looks at a node that refused connections, until it answers."""

LEASE_REPORT_GAP = 0.05
"""Shortest time between two wake-ups for lease ends: leases ending close together are
reported together, so many leased holds cost few wake-ups (each scans the table)."""


def _kind(hold: Hold) -> LockKind:
    return hold.kind or REENTRANT


def group_key(hold: Hold) -> GroupKey:
    slot = naming.key_slot(hold.name) if hold.target.routes_by_slot else -1
    return (id(hold.target), slot, _kind(hold).renew_script.name)


def plan_round(state: ClientState, holds: list[Hold]) -> list[tuple[Call, list[Hold]]]:
    """Group ``holds`` into renewal calls: per manager, per slot where the manager
    routes by slot, per renewal script (lock kind), at most ``renew_batch_size`` keys a
    call. Watchdog holds are renewed, leased ones only checked."""
    settings = state.settings
    ttl_ms = to_millis(settings.watchdog_timeout)
    groups: dict[GroupKey, list[Hold]] = {}
    for hold in holds:
        groups.setdefault(group_key(hold), []).append(hold)
    size = max(1, settings.renew_batch_size)
    planned = []
    for members in groups.values():
        for start in range(0, len(members), size):
            chunk = members[start : start + size]
            command = _kind(chunk[0]).renew(chunk, ttl_ms)
            call = Call(
                chunk[0].target, chunk[0].name, (command,), timeout=settings.command_timeout
            )
            planned.append((call, chunk))
    return planned


def _lost(hold: Hold, state: ClientState, reason: str, gone: str) -> None:
    if state.holds.take_lost(hold, gone):
        if state.listeners:
            _emit(state, "lost", hold, error=reason)
        hold.on_lost(hold, reason)


def _emit(
    state: ClientState,
    kind: events.EventKind,
    hold: Hold,
    *,
    node: str | None = None,
    error: str | None = None,
) -> None:
    events.emit(
        state,
        events.LockEvent(
            kind, hold.name, hold.owner, hold_count=hold.count, node=node, error=error
        ),
    )


def expire_leases(state: ClientState, now: float) -> int:
    """Report the leased holds whose lease has run out while still held; return how
    many. No I/O: the lease's end is known here."""
    expired = 0
    for hold in state.holds.all_holds():
        if not hold.watchdog and now >= hold.expires_at:
            lease = lease_text(hold.lease if hold.lease is not None else 0.0)
            _lost(hold, state, f"its lease of {lease} expired while held", gone_text(hold, now))
            expired += 1
    return expired


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
    """What a round did: holds ``renewed``, and the groups whose node still refused
    connections after the resend (to be probed soon)."""

    renewed: int = 0
    failing: set[GroupKey] = field(default_factory=set)


def renew_round(
    state: ClientState, only: Collection[GroupKey] | None = None
) -> Generator[Effect, Any, RoundOutcome]:
    """Renew every watchdog hold once and check every leased one (only those in the
    groups ``only``, when given); report the lost ones."""
    outcome = RoundOutcome()
    expire_leases(state, state.clock())
    holds = state.holds.all_holds()
    if only is not None:
        holds = [h for h in holds if group_key(h) in only]
    if not holds:
        return outcome
    planned = plan_round(state, holds)
    sent_at = state.clock()
    results: list[CallResult | BaseException] = list((yield Gather(tuple(c for c, _ in planned))))
    again = [i for i, result in enumerate(results) if _reconnectable(result)]
    if again:
        # The connection that failed was closed by the manager: this goes out on a new
        # one, so a stale pooled connection costs no renewal interval. (A renewal the
        # server ran before the connection broke is harmless to run twice.)
        resent = yield Gather(tuple(planned[i][0] for i in again))
        for index, result in zip(again, resent, strict=True):
            results[index] = result
    timeout = state.settings.watchdog_timeout
    for (_call, chunk), result in zip(planned, results, strict=True):
        if isinstance(result, BaseException):
            if _reconnectable(result):
                outcome.failing.add(group_key(chunk[0]))
            now = state.clock()
            for hold in chunk:
                if state.listeners and hold.watchdog:
                    _emit(state, "renewal_failed", hold, error=str(result))
                if hold.watchdog and now >= hold.expires_at:
                    _lost(
                        hold,
                        state,
                        f"Redis unreachable until the lock expired ({result})",
                        "the hold was lost (Redis unreachable until its key expired)",
                    )
            continue
        for hold, flag in zip(chunk, result.replies[0], strict=True):
            if int(flag) == 1:
                if hold.watchdog:
                    state.holds.renewed(hold, sent_at, timeout)
                    outcome.renewed += 1
                    if state.listeners:
                        _emit(state, "renewed", hold, node=result.address or None)
            else:
                _lost(hold, state, _gone_reason(hold, sent_at), gone_text(hold, sent_at))
    return outcome


def _gone_reason(hold: Hold, sent_at: float) -> str:
    if hold.watchdog or hold.lease is None:
        return "the lock's key no longer names this owner at renewal"
    if sent_at >= hold.expires_at - EXPIRY_SLACK:
        return f"its lease of {lease_text(hold.lease)} expired while held"
    return (
        f"the lock's key was deleted or evicted while held (its lease of "
        f"{lease_text(hold.lease)} had {hold.expires_at - sent_at:.3g} s left)"
    )


class Schedule:
    """When a client's watchdog wakes and what it does then; the shells only sleep
    until :meth:`wake_at` (or until woken) and run :meth:`step`.

    A full round every renewal interval (one round trip per node); at each lease's end,
    that lease's report (no I/O); while a node refuses connections, a round for its
    holds every :data:`PROBE_INTERVAL`; at once when :meth:`ask` was called (pub/sub
    saw a node's connection drop or come back).
    """

    def __init__(self, state: ClientState) -> None:
        self.interval = state.settings.renew_interval
        self.probe_every = min(PROBE_INTERVAL, self.interval)
        self.next_round = state.clock() + self.interval
        self.next_probe = math.inf
        self.probing: set[GroupKey] = set()
        self.asked = False
        self.stepped = -math.inf

    def ask(self) -> None:
        """Run a full round at the next :meth:`step` (the shell wakes its loop)."""
        self.asked = True

    def wake_at(self, state: ClientState) -> float:
        """When the next :meth:`step` is due (monotonic seconds)."""
        at = min(self.next_round, self.next_probe)
        lease_end = state.holds.next_lease_end()
        if lease_end is None:
            return at
        return min(at, max(lease_end, self.stepped + LEASE_REPORT_GAP))

    def step(self, state: ClientState) -> Generator[Effect, Any, int]:
        """Do what is due now; return how many holds were renewed."""
        now = self.stepped = state.clock()
        if self.asked or now >= self.next_round:
            self.asked = False
            self.next_round = now + self.interval
            outcome = yield from renew_round(state)
        elif self.probing and now >= self.next_probe:
            outcome = yield from renew_round(state, only=self.probing)
        else:
            expire_leases(state, now)
            return 0
        self.probing = outcome.failing
        self.next_probe = state.clock() + self.probe_every if self.probing else math.inf
        return outcome.renewed
