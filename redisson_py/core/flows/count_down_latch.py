"""The count-down latch's flows (Redisson's ``RCountDownLatch``), for both shells.

The count lives at the key ``name`` (no key: 0, open); ``0`` on the latch's channel
announces that it reached zero (see `redisson_py.core.scripts.count_down_latch`). A waiter
checks the count, subscribes, checks again, then sleeps until ``0`` is announced or
`RECHECK` passes, so a lost message, or a latch deleted
(which Redisson announces with ``1``, waking nobody), costs that long at most.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

from redisson_py.core import keyspace
from redisson_py.core.effects import Effect
from redisson_py.core.flows.calls import call_with_retry, read
from redisson_py.core.flows.synchronizers import Layout, ObjectRef, apply_once
from redisson_py.core.flows.waiting import Tried, wait_for
from redisson_py.core.scripts import count_down_latch
from redisson_py.core.scripts.synchronizers import TRY_SET

Flow = Generator[Effect, Any, Any]


LAYOUT = Layout(
    "count-down latch", lambda name, by_slot: keyspace.latch_channel(name, by_slot=by_slot)
)
"""Redisson's channel, ``redisson_countdownlatch__channel__{name}`` (in a cluster, for
a name holding braces, the form that shares its slot: see
`redisson_py.core.keyspace.latch_channel`)."""


def _count(reply: Any) -> int:
    return 0 if reply is None else int(reply)


def wait(ref: ObjectRef, timeout: float | None) -> Flow:
    """Until the count is zero (True), or ``timeout`` seconds passed (False; None: wait
    for ever). Returns within ``timeout`` + one command timeout whatever the servers do;
    connection errors are waited through until then, and the last one is raised if the
    count could not be read at the deadline."""
    deadline = None if timeout is None else ref.state.clock() + max(0.0, timeout)

    def once() -> Generator[Effect, Any, Tried]:
        get = ("GET", ref.name)
        result = yield from call_with_retry(ref, lambda attempt: (get,), deadline=deadline)
        return Tried(_count(result.replies[0]) <= 0)

    tried = yield from wait_for(ref, once, deadline, "latch")
    return tried.done


def count_down(ref: ObjectRef) -> Flow:
    """Decrement the count; at zero the latch opens (its key is deleted, its waiters are
    told). A count already at zero stays there."""
    yield from apply_once(ref, count_down_latch.COUNT_DOWN, (ref.name, ref.channel))


def try_set_count(ref: ObjectRef, count: int) -> Flow:
    """Set the count to ``count`` unless one is set; True when set."""
    keys = (ref.name, ref.channel)
    return bool(
        (yield from apply_once(ref, TRY_SET, keys, count, keyspace.LATCH_NEW_COUNT_MESSAGE))
    )


def get_count(ref: ObjectRef) -> Flow:
    """The count (0 when none is set)."""
    return _count((yield from read(ref, "GET", ref.name)))
