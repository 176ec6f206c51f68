"""The fenced lock's own flows: an acquire that returns its token, and reading the token.

The acquire is the reentrant lock's (:func:`redisson_py.core.lock_flows.try_lock`: the
same waiting, deadlines, replica sync and undo); the lock's kind
(:data:`~redisson_py.core.lock_kinds.FENCED`) makes it run the fenced script, whose grant
carries the token.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Generator
from typing import Any

from redisson_py.core import lock_flows
from redisson_py.core.effects import Effect
from redisson_py.core.lock_flows import AcquireReply, LockRef


def try_lock_and_get_token(
    ref: LockRef, wait: float | None, lease: float | None
) -> Generator[Effect, Any, int | None]:
    """Acquire as :func:`~redisson_py.core.lock_flows.try_lock`; the token of the hold
    taken, or None when the lock was not had within ``wait``."""
    grants: list[AcquireReply] = []
    ref = dataclasses.replace(ref, on_grant=grants.append)
    acquired = yield from lock_flows.try_lock(ref, wait, lease)
    if not acquired or not grants:
        return None
    return grants[-1].token


def get_token(ref: LockRef) -> Generator[Effect, Any, int | None]:
    """The lock's current token: the last holder's (None before any acquire)."""
    value = yield from lock_flows.read(ref, "GET", ref.aux[0])
    return None if value is None else int(value)
