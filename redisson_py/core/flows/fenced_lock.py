"""The fenced lock's own flows: an acquire that returns its token, reading the token,
and the current holder's [`Fence`][redisson_py.Fence] (token and owner).

The acquire is the reentrant lock's (`redisson_py.core.flows.lock.try_lock`: the
same waiting, deadlines, replica sync and undo); the lock's kind
(`FENCED`) makes it run the fenced script, whose grant
carries the token.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Generator
from typing import Any

from redisson_py.core.effects import Effect, ScriptCommand
from redisson_py.core.flows import calls, lock
from redisson_py.core.flows.fenced_resource import Fence
from redisson_py.core.flows.lock_kinds import AcquireReply, LockRef
from redisson_py.core.scripts.fenced_lock import FENCE_OF_HOLDER
from redisson_py.errors import LockNotOwnedError


def try_lock_and_get_token(
    ref: LockRef, wait: float | None, lease: float | None
) -> Generator[Effect, Any, int | None]:
    """Acquire as `try_lock`; the token of the hold
    taken, or None when the lock was not had within ``wait``."""
    grants: list[AcquireReply] = []
    ref = dataclasses.replace(ref, on_grant=grants.append)
    acquired = yield from lock.try_lock(ref, wait, lease)
    if not acquired or not grants:
        return None
    return grants[-1].token


def get_token(ref: LockRef) -> Generator[Effect, Any, int | None]:
    """The lock's current token: the last holder's (None before any acquire)."""
    value = yield from calls.read(ref, "GET", ref.aux[0])
    return None if value is None else int(value)


def fence(ref: LockRef) -> Generator[Effect, Any, Fence]:
    """The owner's fence: the token of its hold and its owner field, read in one script
    so the token is the hold's own. Raises
    [`LockNotOwnedError`][redisson_py.errors.LockNotOwnedError] when the owner holds no
    hold (never taken, released, expired, or lost in a failover)."""
    command = ScriptCommand(FENCE_OF_HOLDER, (ref.name, ref.aux[0]), (ref.owner,))
    reply = yield from calls.read(ref, command)
    if int(reply[0]) == 0:
        raise LockNotOwnedError(
            f"lock {ref.name!r}: no fence for owner {ref.owner}: it does not hold the lock"
        )
    if len(reply) < 2:
        raise LockNotOwnedError(
            f"lock {ref.name!r}: owner {ref.owner} holds it, but it has no token: it was"
            " taken as a plain lock (get_lock), not as a fenced lock"
        )
    return Fence(int(reply[1]), ref.owner)
