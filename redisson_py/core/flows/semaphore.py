"""The semaphore's flows (Redisson's ``RSemaphore``), for both shells.

The permit count lives at the key ``name``; ``redisson_sc:{name}`` announces permits
becoming available (see `redisson_py.core.scripts.semaphore`). Permits belong to
nobody: any client may release them, and a holder that dies keeps its permits taken
(the permit-expirable semaphore is the one whose permits come back). Every change is
one request, applied once however often it is retried; an acquire is waited for as
`redisson_py.core.flows.grants.try_acquire` says.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

from redisson_py.core import keyspace
from redisson_py.core.effects import Effect
from redisson_py.core.flows import calls, grants
from redisson_py.core.flows.synchronizers import Layout, ObjectRef, apply_once, once_command
from redisson_py.core.scripts import semaphore, synchronizers
from redisson_py.core.state.holds import Taken

Flow = Generator[Effect, Any, Any]


LAYOUT = Layout(
    "semaphore", lambda name, by_slot: keyspace.semaphore_channel(name, by_slot=by_slot)
)
"""Redisson's channel, ``redisson_sc:{name}``."""


def acquire_request(ref: ObjectRef, permits: int) -> grants.PermitRequest:
    """The request that takes ``permits`` permits."""
    return grants.PermitRequest(
        ref,
        lambda request_id: once_command(ref, semaphore.ACQUIRE, (ref.name,), request_id, permits),
        lambda request_id: once_command(
            ref, semaphore.UNDO_ACQUIRE, (ref.name, ref.channel), request_id, permits
        ),
        f"{permits} permit(s) stay taken until released",
    )


def try_acquire(ref: ObjectRef, permits: int, wait: float | None) -> Flow:
    """Take ``permits`` permits within ``wait`` seconds (None: for ever); True if taken.
    0 permits are taken at once, without asking Redis (as Redisson's). Permits taken
    are counted in the client's `TakenTable` (less those released through it), for its
    shutdown to give back."""
    if permits == 0:
        return True
    taken = yield from grants.try_acquire(acquire_request(ref, permits), wait)
    if taken:
        ref.state.taken.took((ref.name, ""), _taken(ref, permits))
    return taken


def _taken(ref: ObjectRef, permits: int) -> Taken:
    """``permits`` taken through this client, for its shutdown to give back."""

    def release(count: int) -> Any:
        keys = (ref.name, ref.channel)
        return once_command(ref, semaphore.RELEASE, keys, calls.new_request_id(), count, "0")

    return Taken(f"{ref.subject}: {permits} permit(s)", ref.target, ref.name, permits, release)


def release(ref: ObjectRef, permits: int, if_exists: bool = False) -> Flow:
    """Give back ``permits`` permits and announce the new count; with ``if_exists`` only
    when the semaphore exists. True when released."""
    if permits == 0:
        return True
    keys = (ref.name, ref.channel)
    count = yield from apply_once(ref, semaphore.RELEASE, keys, permits, "1" if if_exists else "0")
    released = not (if_exists and count < 0)
    if released:
        ref.state.taken.gave((ref.name, ""), permits)
    return released


def try_set_permits(ref: ObjectRef, permits: int) -> Flow:
    """Set the count to ``permits`` unless it is set; True when set."""
    keys = (ref.name, ref.channel)
    return bool((yield from apply_once(ref, synchronizers.TRY_SET, keys, permits, "")))


def add_permits(ref: ObjectRef, permits: int, announce: str = "count") -> Flow:
    """Add ``permits`` (negative: take away) to the count, whatever it is (a missing
    count is 0); the new count. ``announce``: see the ``ADD_PERMITS`` script."""
    keys = (ref.name, ref.channel)
    return (yield from apply_once(ref, semaphore.ADD_PERMITS, keys, permits, announce))


def drain_permits(ref: ObjectRef) -> Flow:
    """Take every available permit; how many there were."""
    return (yield from apply_once(ref, semaphore.DRAIN_PERMITS, (ref.name,)))


def available_permits(ref: ObjectRef) -> Flow:
    """The available permits (0 when the count is not set)."""
    value = yield from calls.read(ref, "GET", ref.name)
    return 0 if value is None else int(value)
