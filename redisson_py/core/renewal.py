"""The watchdog's renewal round, written once for both shells.

One round renews every hold this client took without a lease: holds are grouped per
connection manager and, in a cluster, per hash slot (a script's keys must share a slot),
cut into chunks of ``renew_batch_size`` keys, and sent as one :class:`Gather`, which the
manager pipelines per node: about one round trip per node, whatever the number of locks.

A hold is lost when the renewal finds the owner gone from the key, or when the manager
stayed unreachable until the key must have expired (``Hold.expires_at``). Each loss is
reported once, through the hold's ``on_lost``; the hold leaves the table, so renewal
stops for it and the next ``unlock()`` raises.
"""

from __future__ import annotations

import time
from collections.abc import Generator
from typing import Any

from redisson_py.core import naming, scripts
from redisson_py.core.client_state import ClientState
from redisson_py.core.effects import Call, CallResult, Effect, Gather, ScriptCommand
from redisson_py.core.holds import Hold
from redisson_py.core.lock_flows import to_millis


def plan_round(state: ClientState, holds: list[Hold]) -> list[tuple[Call, list[Hold]]]:
    """Group ``holds`` into renewal calls: per manager, per slot where the manager
    routes by slot, at most ``renew_batch_size`` keys a call."""
    settings = state.settings
    ttl_ms = to_millis(settings.watchdog_timeout)
    groups: dict[tuple[int, int], list[Hold]] = {}
    targets: dict[int, Any] = {}
    for hold in holds:
        slot = naming.key_slot(hold.name) if hold.target.routes_by_slot else -1
        groups.setdefault((id(hold.target), slot), []).append(hold)
        targets[id(hold.target)] = hold.target
    size = max(1, settings.renew_batch_size)
    planned = []
    for (target_id, _slot), members in groups.items():
        for start in range(0, len(members), size):
            chunk = members[start : start + size]
            command = ScriptCommand(
                scripts.RENEW,
                tuple(h.name for h in chunk),
                (ttl_ms, *(h.owner for h in chunk)),
            )
            call = Call(
                targets[target_id], chunk[0].name, (command,), timeout=settings.command_timeout
            )
            planned.append((call, chunk))
    return planned


def _lost(state: ClientState, hold: Hold, reason: str) -> None:
    if state.holds.take_lost(hold):
        hold.on_lost(hold, reason)


def renew_round(state: ClientState) -> Generator[Effect, Any, int]:
    """Renew every watchdog hold once; report the lost ones. Returns how many were renewed."""
    holds = state.holds.watchdog_holds()
    if not holds:
        return 0
    planned = plan_round(state, holds)
    sent_at = time.monotonic()
    results: list[CallResult | BaseException] = yield Gather(tuple(c for c, _ in planned))
    timeout = state.settings.watchdog_timeout
    renewed = 0
    for (_call, chunk), result in zip(planned, results, strict=True):
        if isinstance(result, BaseException):
            now = time.monotonic()
            for hold in chunk:
                if now >= hold.expires_at:
                    _lost(state, hold, f"Redis unreachable until the lock expired ({result})")
            continue
        for hold, flag in zip(chunk, result.replies[0], strict=True):
            if int(flag) == 1:
                state.holds.renewed(hold, sent_at, timeout)
                renewed += 1
            else:
                _lost(state, hold, "the lock's key no longer names this owner at renewal")
    return renewed
