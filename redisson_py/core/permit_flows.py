"""The permit-expirable semaphore's flows (Redisson's ``RPermitExpirableSemaphore``).

Each acquired permit has an id (16 random bytes; 32 hex digits for the user) and, with
a lease, an expiry: the sorted set ``{name}:timeout`` holds them (see
:mod:`redisson_py.core.scripts.permit_semaphore`). Expired permits return to the count
at the next call of any client, so a dead holder's permits come back. A waiter sleeps
until a permit is announced, or the first lease ends, or :data:`~redisson_py.core.
waiting.RECHECK` passes.
"""

from __future__ import annotations

import os
from collections.abc import Generator
from typing import Any

from redisson_py.core import grants, naming, semaphore_flows
from redisson_py.core.effects import Effect, ScriptCommand
from redisson_py.core.lock_flows import read, to_millis
from redisson_py.core.objects import Layout, ObjectRef, apply_once, once_command
from redisson_py.core.scripts import permit_semaphore as scripts

Flow = Generator[Effect, Any, Any]

PERMIT_ID_BYTES = 16


def timeout_name(name: str, by_slot: bool) -> str:
    """The set of acquired permits: ``{name}:timeout`` (Redisson's ``suffixName``)."""
    return naming.suffixed_name(name, scripts.TIMEOUT_SUFFIX, by_slot=by_slot)


LAYOUT = Layout(
    "permit-expirable semaphore",
    semaphore_flows.channel_name,
    lambda name, by_slot: (timeout_name(name, by_slot),),
)


def _keys(ref: ObjectRef) -> tuple[str, str, str]:
    return (ref.name, ref.aux[0], ref.channel)


def _now_ms(ref: ObjectRef) -> int:
    return round(ref.state.wall_clock() * 1000)


def _expiry(ref: ObjectRef, lease: float | None) -> int:
    """A permit's score: when its lease ends (wall-clock ms), or ``NO_LEASE``."""
    return scripts.NO_LEASE if lease is None else _now_ms(ref) + to_millis(lease)


def try_acquire(ref: ObjectRef, wait: float | None, lease: float | None) -> Flow:
    """Take one permit within ``wait`` seconds (None: for ever), leased for ``lease``
    seconds (None: until released); its id (32 lowercase hex digits), or None when none
    was had in time. The lease counts from the attempt that took the permit."""
    permit = os.urandom(PERMIT_ID_BYTES)
    keys = _keys(ref)
    request = grants.PermitRequest(
        ref,
        lambda request_id: once_command(
            ref, scripts.ACQUIRE, keys, request_id, _now_ms(ref), permit, _expiry(ref, lease)
        ),
        lambda request_id: once_command(
            ref, scripts.UNDO_ACQUIRE, keys, request_id, _now_ms(ref), permit
        ),
        "its permit stays acquired until its lease ends (for ever without one)",
    )
    taken = yield from grants.try_acquire(request, wait)
    return permit.hex() if taken else None


def try_release(ref: ObjectRef, permit: bytes) -> Flow:
    """Release permit ``permit`` and announce the new count; True when it was acquired
    and its lease had not ended, else False (nothing changes)."""
    released = yield from apply_once(ref, scripts.TRY_RELEASE, _keys(ref), _now_ms(ref), permit)
    return released == 1


def update_lease_time(ref: ObjectRef, permit: bytes, lease: float | None) -> Flow:
    """Make permit ``permit`` expire ``lease`` seconds from now (None: never); True when
    it is acquired, False when it is unknown or its lease had ended."""
    expiry = _expiry(ref, lease)
    updated = yield from apply_once(
        ref, scripts.UPDATE_LEASE, _keys(ref), _now_ms(ref), permit, expiry
    )
    return updated == 1


def permits(ref: ObjectRef) -> Flow:
    """``(available, acquired)`` permits, after the expired ones came back."""
    command = ScriptCommand(scripts.PERMITS, _keys(ref), ("0", ref.publish, _now_ms(ref)))
    available, acquired = yield from read(ref, command)
    return int(available), int(acquired)
