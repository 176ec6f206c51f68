"""Telling a holder its hold is lost: once, with the reason, to its callback and to the
client's listeners.

A hold is lost when its key is found gone (a renewal round, an unlock), or when its safe
end passes (`report_expired`: a lease that ran out while held, renewals that were
not confirmed in time; see `Hold`). The report is the
same whoever finds it: the hold leaves the client's table (renewal stops, the owner's
next ``unlock()`` raises saying how it went), a ``lost`` event goes to the listeners, and
the hold's ``on_lost`` tells the lock's callback (or its MultiLock/RedLock's).
"""

from __future__ import annotations

from redisson_py.core.state import events
from redisson_py.core.state.client_state import ClientState
from redisson_py.core.state.holds import Hold, capped_text, gone_text, lease_text, orphaned_text


def declare_lost(state: ClientState, hold: Hold, reason: str, gone: str) -> bool:
    """Report ``hold`` lost for ``reason`` (``gone``: what its owner's next ``unlock()``
    says happened), unless it was reported already or is being released; True if it
    was reported now."""
    if not state.holds.take_lost(hold, gone):
        return False

    def tell() -> None:
        if state.listeners:
            emit(state, "lost", hold, error=reason)
        hold.on_lost(hold, reason)

    # The hold left the table above, wherever this runs (its owner's unlock raises from
    # now on); the telling goes where the client's owners are.
    state.deliver(tell)
    return True


def emit(
    state: ClientState,
    kind: events.EventKind,
    hold: Hold,
    *,
    node: str | None = None,
    error: str | None = None,
) -> None:
    """Tell the client's listeners of ``kind`` happening to ``hold`` (only called when
    there are some)."""
    events.emit(
        state,
        events.LockEvent(
            kind, hold.name, hold.owner, hold_count=hold.count, node=node, error=error
        ),
    )


def expiry_reason(hold: Hold) -> str:
    """Why ``hold`` was lost at its safe end, for the report."""
    if hold.watchdog and hold.capped:
        return capped_text(hold)
    if hold.watchdog and hold.orphaned:
        return orphaned_text(hold)
    if not hold.watchdog:
        return f"its lease of {lease_text(hold.lease or 0.0)} expired while held"
    return _unrenewed_reason(hold.unconfirmed)


def _unrenewed_reason(why: str | None) -> str:
    """Why a watchdog hold was not renewed in time, from its last renewal's failure
    (`Hold.unconfirmed`; None: no renewal ran)."""
    if why is None:
        return (
            "it was not renewed before its key could expire (the watchdog did not run in"
            " time: the process, or its event loop, was blocked)"
        )
    if why.startswith(UNREACHABLE):
        return f"Redis unreachable until the lock expired ({why.removeprefix(UNREACHABLE)})"
    if why.startswith(REFUSED):
        return f"its renewals were refused until the lock expired ({why.removeprefix(REFUSED)})"
    return (
        "its renewals were not confirmed before its key could expire on a replica a"
        f" failover would promote: {why}"
    )


UNREACHABLE = "unreachable: "
"""How `Hold.unconfirmed` starts when the last renewal did not reach the node."""

REFUSED = "refused: "
"""How `Hold.unconfirmed` starts when the node refused the last renewal
(CLUSTERDOWN on a minority master, NOREPLICAS, READONLY after a demotion...)."""


def report_expired(state: ClientState, now: float) -> int:
    """Report every hold whose safe end is at or before ``now`` (a lease that ran out
    while held, a watchdog hold whose renewals were not confirmed in time); return how
    many were reported. No I/O: the safe end is known here."""
    reported = 0
    for hold in state.holds.all_holds():
        if now >= hold.expires_at:
            reported += declare_lost(state, hold, expiry_reason(hold), gone_text(hold, now))
    return reported


def report_if_expired(state: ClientState, name: str, owner: str, now: float) -> None:
    """Report ``owner``'s hold on ``name`` now if its safe end has passed (an unlock
    about to run, which must then raise, however late the watchdog's report would be)."""
    hold = state.holds.get(name, owner)
    if hold is not None and now >= hold.expires_at:
        declare_lost(state, hold, expiry_reason(hold), gone_text(hold, now))
