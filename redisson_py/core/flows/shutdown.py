"""Releasing everything a client holds when it shuts down, written once for both shells.

A client that shuts down cannot renew its holds, so keeping them only makes the next
holder wait until they expire (up to the watchdog timeout). `plan` lists, for every
hold in the client's table (every lock kind; the members of its MultiLock/RedLock
holds) and every semaphore permit taken through it (`TakenTable`), the call that gives
it back; `release_all` sends them all at once and retries what failed with a
connection error, all under one deadline (`LockSettings.release_timeout`), so a frozen
or dead master cannot make a shutdown hang. The shell waits for that deadline at most
and then logs a WARNING for each release that did not happen (`warn_unreleased`):
that hold is left to expire by itself.
"""

from __future__ import annotations

import logging
from collections.abc import Generator
from dataclasses import dataclass, replace
from typing import Any

from redisson_py.core.effects import Call, Effect, Gather, Sleep
from redisson_py.core.flows.calls import RETRYABLE
from redisson_py.core.flows.lock_kinds import REENTRANT, LockRef, decode_release
from redisson_py.core.state import events
from redisson_py.core.state.client_state import ClientState
from redisson_py.core.state.holds import Hold

log = logging.getLogger("redisson_py.lock")


@dataclass(slots=True, eq=False)
class Release:
    """One release a shutdown sends: ``what`` names it in the log (a lock and its
    owner, a semaphore's permits), ``call`` gives it back, ``error`` says why it has
    not been done yet (None: not tried)."""

    what: str
    call: Call
    hold: Hold | None = None
    done: bool = False
    error: str | None = None


def _lock_release(state: ClientState, hold: Hold) -> Release:
    """Every one of ``hold``'s reentrant holds, released in one call (each release with
    its own latch, so a retry counts once)."""
    ref = LockRef(hold.name, hold.owner, hold.target, state, kind=hold.kind or REENTRANT)
    commands = tuple(ref.kind.release(ref, hold.acquires) for _ in range(max(1, hold.count)))
    what = f"{ref.kind.label} lock {hold.name!r} (owner {hold.owner})"
    return Release(what, Call(hold.target, hold.name, commands), hold)


def plan(state: ClientState) -> list[Release]:
    """The releases of everything ``state``'s client holds: its lock holds (a leased
    permit's watch is no lock: the permit itself is released below), each marked as
    being released, and the semaphore permits taken through it. The permits' table is
    emptied."""
    releases = []
    for hold in state.holds.all_holds():
        if hold.checked:
            # Being released: a renewal round still in flight that finds it gone, or its
            # safe end passing now, is no loss to report.
            state.holds.releasing(hold.name, hold.owner, +1)
            releases.append(_lock_release(state, hold))
    for taken in state.taken.drain():
        call = Call(taken.target, taken.route, (taken.release(taken.count),))
        releases.append(Release(taken.subject, call))
    return releases


def release_all(
    state: ClientState, releases: list[Release], deadline: float
) -> Generator[Effect, Any, None]:
    """Send every release of ``releases`` at once (calls to one node share a round
    trip); those that fail with a connection error or a timeout are sent again after
    the retry delay while time remains before ``deadline`` (monotonic seconds), each
    attempt's wait cut to the time left. Marks each release done, or records its last
    error. Never raises for a release's failure."""
    settings = state.settings
    pending = list(releases)
    attempt = 0
    while pending:
        left = deadline - state.clock()
        if left <= 0:
            return
        timeout = min(settings.command_timeout, left)
        calls = tuple(replace(r.call, timeout=timeout) for r in pending)
        results = yield Gather(calls)
        again = []
        for release, result in zip(pending, results, strict=True):
            if isinstance(result, BaseException):
                release.error = f"{type(result).__name__}: {result}"
                if isinstance(result, RETRYABLE):
                    again.append(release)
                continue
            release.done = True
            _released(state, release, result.replies)
        pending = again
        attempt += 1
        pause = min(settings.retry_delay(attempt), deadline - state.clock())
        if pending and pause > 0:
            yield Sleep(pause)


def _released(state: ClientState, release: Release, replies: tuple[Any, ...]) -> None:
    hold = release.hold
    if hold is None:
        return
    if decode_release(replies[-1]) is None:
        # Gone already (expired, force-unlocked): nothing was this client's to free.
        log.debug("%s was not held any more at shutdown", release.what)
        return
    if state.listeners:
        event = events.LockEvent("released", hold.name, hold.owner, hold_count=0)
        events.emit(state, event)


def warn_unreleased(releases: list[Release]) -> int:
    """Log a WARNING for each release of ``releases`` not done (it is left to expire by
    itself), naming what and the node; how many."""
    missed = 0
    for release in releases:
        if release.done:
            continue
        missed += 1
        node = release.call.target.describe(release.call.route)
        why = release.error or "no reply before the shutdown's deadline"
        log.warning(
            "%s on %s was not released at shutdown (%s); it expires by itself",
            release.what,
            node,
            why,
        )
    return missed
