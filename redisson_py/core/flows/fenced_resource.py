"""The fenced resource: a Redis-held value that accepts a write only with a fencing token
at least as large as every token it accepted before (Kleppmann's fencing, which a lock
alone cannot give), written once for both shells as flows of effects.

The rule, applied atomically by `FENCED_WRITE` on
the node that holds the resource:

- a token larger than the highest one accepted is accepted, and becomes the highest, with
  its writer recorded as its owner;
- a token equal to the highest is accepted from that owner only (the first writer of a
  token keeps it): a failover of the lock's deployment can hand one token to two holders
  (the grant and its token increment lost with the old master, the new master counts the
  same token again), and their writes must not interleave;
- anything else is refused, and changes nothing:
  [`StaleTokenError`][redisson_py.errors.StaleTokenError].

The writer of a write is the lock owner a [`Fence`][redisson_py.Fence] names
(``FencedLock.fence()``), or, for a bare ``int`` token, the calling thread or task of
the resource's client. A write is one request with its own id: retried after a lost
reply, it finds its latch and is neither applied twice nor reported refused because a
newer write came in between.
"""

from __future__ import annotations

from collections.abc import Generator, Mapping
from dataclasses import dataclass
from typing import Any

from redisson_py.core import keyspace
from redisson_py.core.effects import Arg, Effect, ScriptCommand, Target, to_millis
from redisson_py.core.flows.calls import call_with_retry, new_request_id, read
from redisson_py.core.scripts import fenced_resource
from redisson_py.core.state.client_state import ClientState
from redisson_py.errors import ArgumentError, ArgumentTypeError, StaleTokenError

MAX_TOKEN = 2**63 - 1
"""The largest token: Redis's INCR (which counts a fenced lock's tokens) stops there."""

Value = str | bytes | int | float
"""What a fenced resource stores (as Redis does: bytes; numbers as their decimal text)."""


@dataclass(frozen=True, slots=True)
class Fence:
    """A fencing token and the lock owner it was granted to: what a writer presents to a
    fenced resource (``FencedLock.fence()`` gives the current holder's).

    ``owner`` is the lock's owner field, ``<client uuid>:<owner id>``. Two holders that
    got the same ``token`` (a failover lost the first one's grant) differ by owner, so a
    resource lets the first of them to write keep the token and refuses the other. The
    fence is plain data: pass it to another thread, task or process that writes for the
    holder.
    """

    token: int
    owner: str


@dataclass(frozen=True, slots=True)
class ResourceRef:
    """One fenced resource as one writer sees it: its keys and where they live.

    ``writer`` is the owner field a bare ``int`` token is written under (the calling
    thread's or task's, on the resource's client); a [`Fence`][redisson_py.Fence] brings its own.
    """

    name: str
    writer: str
    target: Target
    state: ClientState

    @property
    def subject(self) -> str:
        """The resource as messages name it."""
        return f"fenced resource {self.name!r}"

    @property
    def record(self) -> str:
        """The key of its fence record (the highest token and its owner), in its slot."""
        by_slot = bool(self.target.routes_by_slot)
        return keyspace.fence_record(self.name, by_slot=by_slot)

    def latch(self, request_id: str) -> str:
        """The key that remembers write ``request_id`` was accepted, in its slot."""
        by_slot = bool(self.target.routes_by_slot)
        return keyspace.fence_latch(self.name, request_id, by_slot=by_slot)


def check_token(name: str, token: object) -> int:
    """``token`` (an ``int`` or a [`Fence`][redisson_py.Fence]'s) checked: 1 .. `MAX_TOKEN`."""
    value = token.token if isinstance(token, Fence) else token
    if isinstance(value, bool) or not isinstance(value, int):
        raise ArgumentTypeError(
            f"fenced resource {name!r}: a token is an int or a Fence (from a fenced lock),"
            f" not {token!r}"
        )
    if not 1 <= value <= MAX_TOKEN:
        raise ArgumentError(
            f"fenced resource {name!r}: a token is 1 .. 2**63 - 1 (a fenced lock's tokens"
            f" start at 1); got {value}"
        )
    if isinstance(token, Fence) and (not isinstance(token.owner, str) or not token.owner):
        raise ArgumentError(f"fenced resource {name!r}: the fence {token!r} names no owner")
    return value


def check_value(name: str, value: object, what: str = "value") -> Value:
    """``value`` checked as something Redis stores: str, bytes, int or float."""
    if isinstance(value, bool) or not isinstance(value, str | bytes | int | float):
        raise ArgumentTypeError(
            f"fenced resource {name!r}: a {what} is str, bytes, int or float, not {value!r}"
        )
    return value


def hset_arguments(name: str, mapping: object) -> tuple[Value, ...]:
    """A non-empty mapping of fields to values, checked, as HSET's field/value pairs."""
    if not isinstance(mapping, Mapping):
        raise ArgumentTypeError(
            f"fenced resource {name!r}: hset takes a mapping of fields to values, not {mapping!r}"
        )
    if not mapping:
        raise ArgumentError(f"fenced resource {name!r}: hset needs at least one field")
    pairs: list[Value] = []
    for field, value in mapping.items():
        pairs += (check_value(name, field, "field"), check_value(name, value))
    return tuple(pairs)


def write(
    ref: ResourceRef, token: int | Fence, operation: str, arguments: tuple[Value, ...] = ()
) -> Generator[Effect, Any, None]:
    """Apply ``operation`` (``set``, ``hset`` or ``del`` with its ``arguments``) to the
    resource if ``token`` is accepted (see the module docstring); else raise
    [`StaleTokenError`][redisson_py.errors.StaleTokenError] and change nothing.

    Connection errors are retried as the config says, every attempt with this write's
    request id: an attempt the server already applied is found by its latch and counted
    as accepted, never applied again. When the error is raised at last, the write may
    or may not have been applied (as for any Redis write whose reply is lost).
    """
    value = check_token(ref.name, token)
    writer = token.owner if isinstance(token, Fence) else ref.writer
    request_id = new_request_id()
    args: tuple[Arg, ...] = (
        str(value),  # normalised decimal: the script compares tokens as text
        writer,
        to_millis(ref.state.settings.latch_ttl),
        operation,
        *arguments,
    )
    keys = (ref.name, ref.record, ref.latch(request_id))
    command = ScriptCommand(fenced_resource.FENCED_WRITE, keys, args)
    result = yield from call_with_retry(ref, lambda attempt: (command,))
    reply = result.replies[0]
    if int(reply[0]) == 1:
        return
    highest, tie = int(reply[1]), int(reply[2]) == 1
    why = (
        f"token {value} was first written by another owner; {writer} may not write with it"
        if tie
        else f"a write with token {highest} was accepted before; token {value} is stale"
    )
    where = result.address or "its node"
    raise StaleTokenError(
        f"{ref.subject} on {where}: write refused: {why}. The resource follows another"
        " holder now: treat the lock as lost (stop), and take it again for a new token",
        resource=ref.name,
        token=value,
        highest=highest,
        tie=tie,
        address=result.address or None,
    )


def get(ref: ResourceRef) -> Generator[Effect, Any, bytes | None]:
    """The resource's value (GET), None when it has none."""
    value = yield from read(ref, "GET", ref.name)
    return None if value is None else bytes(value)


def hgetall(ref: ResourceRef) -> Generator[Effect, Any, dict[bytes, bytes]]:
    """The resource's fields and values (HGETALL), empty when it has none."""
    reply = yield from read(ref, "HGETALL", ref.name)
    if isinstance(reply, dict):  # RESP3 answers a map
        return {bytes(k): bytes(v) for k, v in reply.items()}
    return {bytes(reply[i]): bytes(reply[i + 1]) for i in range(0, len(reply), 2)}


def highest_token(ref: ResourceRef) -> Generator[Effect, Any, int | None]:
    """The highest token a write was accepted with, None before the first."""
    token = yield from read(ref, "HGET", ref.record, "token")
    return None if token is None else int(token)
