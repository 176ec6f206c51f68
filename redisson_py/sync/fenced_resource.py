# GENERATED from redisson_py/asyncio/fenced_resource.py by scripts/generate_sync.py: do not edit.
# Edit the asyncio source, then run `python3 scripts/generate_sync.py`.
"""The fenced resource: a value in Redis that accepts writes only from the holder of the
highest fencing token it has seen (see `redisson_py.core.flows.fenced_resource`)."""

from __future__ import annotations

from collections.abc import Callable, Generator, Mapping
from typing import Any, TypeVar

from redisson_py.core.effects import Effect
from redisson_py.core.flows import fenced_resource
from redisson_py.core.flows.calls import guarded
from redisson_py.core.flows.fenced_resource import Fence, ResourceRef, Value
from redisson_py.core.handles import check_name
from redisson_py.core.keyspace import owner_field
from redisson_py.core.scripts.fenced_resource import DELETE, HSET, SET
from redisson_py.errors import ClientClosedError
from redisson_py.sync import _primitives
from redisson_py.sync.driver import run

T = TypeVar("T")


class FencedResource:
    """A Redis key (a string or a hash) written only with a fencing token, such as the
    one a [`FencedLock`][redisson_py.FencedLock] hands its holder.

    A write is accepted when its token is larger than every token accepted before, or
    equal to the highest one and written by the same owner; anything else raises
    [`StaleTokenError`][redisson_py.errors.StaleTokenError] and writes nothing. The
    owner is the lock owner a [`Fence`][redisson_py.Fence] names
    (``lock.fence()``), or, with a bare ``int`` token, the calling thread of this
    client (the same owner as the lock's when the lock is taken through this client in
    this thread).

    The highest token and its owner live in ``redisson_py_fence:{name}``, in the
    resource's hash slot. They are only as durable as the node that holds them: keep
    the resource where the lock's failover cannot roll it back (a Redis deployment
    other than the lock's, with persistence if it must outlive a restart), or a lost
    record lets an old token in again. Get one from the client's
    ``get_fenced_resource``.
    """

    def __init__(self, client: Any, name: str):
        check_name(name, "fenced resource")
        self._client = client
        self.name = name

    def _ref(self) -> ResourceRef:
        state = self._client._state
        if state.closed:
            raise ClientClosedError(
                f"fenced resource {self.name!r}: the client is shut down; create a new client"
            )
        writer = owner_field(state.client_id, _primitives.current_owner_id())
        return ResourceRef(self.name, writer, self._client._manager, state)

    def _flow(
        self, flow: Callable[..., Generator[Effect, Any, T]], *args: Any
    ) -> Generator[Effect, Any, T]:
        """``flow(ref, *args)`` for this resource and the calling thread; its errors
        name the resource and its node."""
        ref = self._ref()
        return guarded(ref, flow(ref, *args))

    def set(self, value: Value, token: int | Fence) -> None:
        """Make ``value`` the resource's value (a string key) if ``token`` is accepted.

        Raises [`StaleTokenError`][redisson_py.errors.StaleTokenError] when it is
        refused (nothing is written),
        [`ArgumentError`][redisson_py.errors.ArgumentError] for a token that is not 1 ..
        2**63 - 1 or a value that is not str, bytes, int or float. A write retried after
        a lost reply is applied once.
        """
        checked = fenced_resource.check_value(self.name, value)
        run(self._flow(fenced_resource.write, token, SET, (checked,)))

    def hset(self, mapping: Mapping[Value, Value], token: int | Fence) -> None:
        """Set the fields of ``mapping`` in the resource (a hash) if ``token`` is
        accepted; other fields stay. Refusals and errors as
        [`set`][redisson_py.FencedResource.set]."""
        pairs = fenced_resource.hset_arguments(self.name, mapping)
        run(self._flow(fenced_resource.write, token, HSET, pairs))

    def delete(self, token: int | Fence) -> None:
        """Delete the resource's value if ``token`` is accepted; the token still counts
        as accepted (the record stays). Refusals and errors as
        [`set`][redisson_py.FencedResource.set]."""
        run(self._flow(fenced_resource.write, token, DELETE))

    def get(self) -> bytes | None:
        """The resource's value (a string key), None when it has none."""
        value: bytes | None = run(self._flow(fenced_resource.get))
        return value

    def hgetall(self) -> dict[bytes, bytes]:
        """The resource's fields and values (a hash), empty when it has none."""
        fields: dict[bytes, bytes] = run(self._flow(fenced_resource.hgetall))
        return fields

    def highest_token(self) -> int | None:
        """The highest token a write was accepted with, None before the first."""
        token: int | None = run(self._flow(fenced_resource.highest_token))
        return token

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"
