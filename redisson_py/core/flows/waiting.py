"""How the semaphores and the count-down latch wait.

`wait_for` is how every one of them waits, for permits or for a zero count: try;
subscribe to the object's channel; try again (a change may have come before the
subscription; a waiter that joined its client's live subscription before its first
try skips both, see `join_live`); then sleep until a message wakes this waiter, or a
bounded pause, and try again, until the try succeeds or the deadline passes. A lost
message therefore costs a bounded delay (`RECHECK`, or less when the try says when to
look again), never a hang.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import Any

from redisson_py.core.effects import Effect, Subscribe, Unsubscribe, WakeRule
from redisson_py.core.flows.calls import (
    POLL_WITHOUT_SUBSCRIPTION,
    RETRYABLE,
    join_live,
    nap,
    outlast_failures,
)
from redisson_py.core.flows.synchronizers import ObjectRef

RECHECK = 3.0
"""Longest sleep of a waiter between two tries when no message comes (seconds)."""


@dataclass(frozen=True, slots=True)
class Tried:
    """One try of a wait: ``done``, or not, with ``pause``: the longest a waiter should
    sleep before the next try (None: until a message, or `RECHECK` at most)."""

    done: bool
    pause: float | None = None


def wait_for(
    ref: ObjectRef,
    once: Callable[[], Generator[Effect, Any, Tried]],
    deadline: float | None,
    rule: WakeRule,
) -> Generator[Effect, Any, Tried]:
    """Try ``once()`` until it is done or ``deadline`` (monotonic seconds; None: for
    ever) passes; the last try.

    Between tries the waiter listens on ``ref.channel`` (``rule`` says how many waiters
    a message wakes); when the channel cannot be subscribed it polls, every
    `POLL_WITHOUT_SUBSCRIPTION` seconds. Connection
    errors and unsynced grants are waited through while time lasts
    (`outlast_failures`), then raised.

    Deadline: every pause, subscription and retry is cut to the time left, so the flow
    ends at most one command timeout after ``deadline``.
    """
    clock = ref.state.clock

    def attempt() -> Generator[Effect, Any, Tried]:
        return (yield from outlast_failures(ref, once, deadline))

    subscription = None
    closing = False
    try:
        timeout = ref.state.settings.subscription_timeout
        join = (
            join_live(ref.target, ref.channel, timeout, rule)
            if deadline is None or deadline > clock()
            else None
        )
        if join is not None:
            subscription = yield join
        tried = yield from attempt()
        if tried.done or (deadline is not None and deadline <= clock()):
            return tried
        if subscription is None:
            try:
                left = None if deadline is None else deadline - clock()
                subscription = yield Subscribe(
                    ref.target, ref.channel, timeout if left is None else min(timeout, left), rule
                )
            except RETRYABLE:
                pass  # poll instead: slower to notice, same outcome
            tried = yield from attempt()  # a change may have come before the subscription
        while True:
            left = None if deadline is None else deadline - clock()
            if tried.done or (left is not None and left <= 0):
                return tried
            pause = RECHECK if tried.pause is None else min(RECHECK, max(0.0, tried.pause))
            if subscription is None:
                pause = min(pause, POLL_WITHOUT_SUBSCRIPTION)
            yield nap(subscription, pause, left)
            tried = yield from attempt()
    except GeneratorExit:
        closing = True  # the flow is being discarded: it may yield nothing more
        raise
    finally:
        if subscription is not None and not closing:
            yield Unsubscribe(subscription)
