"""Acquiring permits, for both semaphores: one request id per call, replica sync, undo.

A call to ``acquire()``/``try_acquire()`` is one `PermitRequest`, whose id all its
attempts carry: the server records a grant under it
(`redisson_py.core.scripts.synchronizers`), so an attempt retried after a lost reply,
or run late by the server, takes nothing twice. A grant that too few replicas
acknowledged is given back at once (`undo_unsynced`)
and the wait goes on with a new request; at the deadline
[`NoSyncedReplicasError`][redisson_py.errors.NoSyncedReplicasError] is raised. A wait
that ends without handing the permits to the caller (deadline, error, cancellation)
after an attempt that went unanswered, or after a grant, gives them back in the
background, by request id.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import Any

from redis.exceptions import BusyLoadingError, ResponseError

from redisson_py.core.effects import Background, CallResult, Command, Effect, ScriptCommand
from redisson_py.core.flows.calls import (
    call_with_retry,
    new_request_id,
    undo_in_background,
    undo_unsynced,
)
from redisson_py.core.flows.lock_kinds import AcquireFlag
from redisson_py.core.flows.synchronizers import ObjectRef
from redisson_py.core.flows.waiting import Tried, wait_for


class PermitRequest:
    """One logical acquire across its attempts.

    ``command(request_id)`` is one attempt's script, ``undo(request_id)`` the script that
    gives back what the request took, if anything; ``if_applied`` says, for the log, what
    is left when an undo could not be delivered. ``maybe_applied`` is True once an
    attempt of the current request went unanswered, or was granted: from then on, a call
    that does not return the permits to its caller undoes the request.
    """

    __slots__ = (
        "_command",
        "_undo",
        "if_applied",
        "maybe_applied",
        "ref",
        "request_id",
        "sent_at",
    )

    def __init__(
        self,
        ref: ObjectRef,
        command: Callable[[str], ScriptCommand],
        undo: Callable[[str], ScriptCommand],
        if_applied: str,
    ):
        self.ref = ref
        self._command = command
        self._undo = undo
        self.if_applied = if_applied
        self.request_id = ""
        self.maybe_applied = False
        self.sent_at = 0.0
        """When the current command was made and first sent (monotonic): a permit's
        lease counts from it."""
        self.renew()

    def renew(self) -> None:
        """Start a new request (the last one was undone)."""
        self.request_id = new_request_id()
        self.maybe_applied = False

    def command(self) -> ScriptCommand:
        return self._command(self.request_id)

    def undo(self) -> ScriptCommand:
        return self._undo(self.request_id)

    @property
    def undo_window(self) -> float:
        """How long an undo is worth retrying: while the request's latch lives (after
        that, an undo could not tell whether the request took permits)."""
        return self.ref.state.settings.latch_ttl


def _send(request: PermitRequest, deadline: float | None) -> Generator[Effect, Any, CallResult]:
    """Send the current request, retrying connection errors until ``deadline`` (see
    `call_with_retry`); one left unanswered may have
    been applied."""
    ref = request.ref
    settings = ref.state.settings
    sync = settings.sync_replicas
    # A permit's lease end is written into the command when it is made (the client's
    # clock then, plus the lease), and every attempt resends it as made.
    request.sent_at = ref.state.clock()
    command = request.command()

    def commands(unanswered: int) -> tuple[Command, ...]:
        if unanswered:
            request.maybe_applied = True  # an attempt went unanswered: it may yet run
        return (command,)

    try:
        return (yield from call_with_retry(ref, commands, sync_replicas=sync, deadline=deadline))
    except (ResponseError, BusyLoadingError, GeneratorExit):
        # An error reply or a refusal (LOADING included: see core.refusals), which
        # Redis gives before it runs anything, so nothing was applied; or the flow is
        # being discarded.
        raise
    except BaseException:
        request.maybe_applied = True  # unanswered: the server may still run it
        raise


def _attempt(request: PermitRequest, deadline: float | None) -> Generator[Effect, Any, Tried]:
    """One attempt of ``request`` (a new request when the last was undone): done when
    granted, else how long until retrying is worth it."""
    while True:
        result = yield from _send(request, deadline)
        flag, value = int(result.replies[0][0]), int(result.replies[0][1])
        if flag == AcquireFlag.STALE:
            request.renew()
            continue
        if flag == AcquireFlag.HELD:
            return Tried(False, pause=None if value < 0 else value / 1000)
        request.maybe_applied = True  # held until handed over: undone otherwise
        if result.synced < result.required:
            unsynced = yield from undo_unsynced(
                request.ref,
                result,
                request.undo(),
                request.undo_window,
                if_applied=request.if_applied,
            )
            request.renew()
            raise unsynced
        return Tried(True)


def try_acquire(request: PermitRequest, wait: float | None) -> Generator[Effect, Any, bool]:
    """Take ``request``'s permits within ``wait`` seconds (None: wait for ever); True if
    taken. Waiters listen on the object's channel (wake rule ``permits``); see
    `wait_for` for the deadline."""
    ref = request.ref
    deadline = None if wait is None else ref.state.clock() + max(0.0, wait)
    handed_over = closing = False
    try:
        tried = yield from wait_for(ref, lambda: _attempt(request, deadline), deadline, "permits")
        handed_over = tried.done
        return handed_over
    except GeneratorExit:
        closing = True  # the flow is being discarded: it may yield nothing more
        raise
    finally:
        if request.maybe_applied and not handed_over and not closing:
            undo = undo_in_background(
                ref, request.undo(), request.undo_window, if_applied=request.if_applied
            )
            yield Background(undo, name="redisson-py-undo")
