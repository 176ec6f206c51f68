"""What the sync and asyncio semaphores and latches share: identity, argument checks,
and the `ObjectRef` each operation runs on.

The shells subclass `ObjectHandle` and add only the public methods, each of which
runs one flow (`redisson_py.core.flows.semaphore`,
`redisson_py.core.flows.permit_semaphore`, `redisson_py.core.flows.count_down_latch`).
"""

from __future__ import annotations

import string
from collections.abc import Callable, Generator
from typing import Any, TypeVar

from redisson_py.core.effects import Effect
from redisson_py.core.flows.calls import guarded
from redisson_py.core.flows.synchronizers import Layout, ObjectRef, object_ref
from redisson_py.core.handles import check_name
from redisson_py.errors import ArgumentError, ArgumentTypeError, ClientClosedError

T = TypeVar("T")

MAX_PERMITS = 2**31 - 1
"""The most permits one call may name: Java's ``int``, Redisson's type for permits."""

MAX_COUNT = 2**53 - 1
"""The largest latch count: Redis scripts count in doubles, exact up to here."""

_HEX = frozenset(string.hexdigits)


def check_int(
    subject: str, argument: str, value: object, *, low: int = 0, high: int = MAX_PERMITS
) -> int:
    """``value`` checked as an int in ``low..high``: else
    [`ArgumentTypeError`][redisson_py.errors.ArgumentTypeError] (not an int; a bool is not one) or
    [`ArgumentError`][redisson_py.errors.ArgumentError], naming ``subject`` and ``argument``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ArgumentTypeError(f"{subject}: {argument} must be an int, not {value!r}")
    if not low <= value <= high:
        raise ArgumentError(f"{subject}: {argument} must be in {low}..{high}; got {value}")
    return value


def check_permit_id(subject: str, permit_id: object) -> bytes:
    """A permit id as a permit semaphore's ``acquire`` returned it (32 hex digits), as
    its 16 bytes."""
    if not isinstance(permit_id, str):
        raise ArgumentTypeError(
            f"{subject}: a permit id is a str of 32 hex digits, not {permit_id!r}"
        )
    if len(permit_id) != 32 or not _HEX.issuperset(permit_id):
        raise ArgumentError(
            f"{subject}: {permit_id!r} is not a permit id (32 hex digits, as acquire returns)"
        )
    return bytes.fromhex(permit_id)


class ObjectHandle:
    """Base of the semaphore, permit-expirable semaphore and count-down latch classes
    of both shells; ``layout`` says which object it is and where its data lives."""

    layout: Layout

    def __init__(self, client: Any, name: str):
        self.name = check_name(name, self.layout.label)
        self._client = client
        self._ref: ObjectRef = object_ref(name, client._manager, client._state, self.layout)

    @property
    def _subject(self) -> str:
        return self._ref.subject

    def _flow(
        self, flow: Callable[..., Generator[Effect, Any, T]], *args: Any
    ) -> Generator[Effect, Any, T]:
        """``flow(ref, *args)`` for this object, its errors made ours
        (`guarded`); raises
        [`ClientClosedError`][redisson_py.errors.ClientClosedError] after the client's shutdown."""
        if self._ref.state.closed:
            raise ClientClosedError(
                f"{self._subject}: the client is shut down; create a new client"
            )
        return guarded(self._ref, flow(self._ref, *args))

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"
