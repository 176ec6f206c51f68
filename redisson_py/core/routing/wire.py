"""How a `Call` or `Direct` goes on the wire, and what its replies mean.

Both shells send a planned batch on one connection to one node and read one reply per
command; this module decides the commands (EVALSHA or EVAL, an ``ASKING`` prefix, a
trailing ``WAIT``) and turns the replies into an outcome: done, re-send as EVAL
(NOSCRIPT), follow a redirect (MOVED, ASK), or fail. A reply that refuses the command
(NOREPLICAS, READONLY from a demoted master, BUSY...: see
`redisson_py.core.routing.refusals`) fails as a `Refusal`
naming the node, which the flows retry when it is transient; the command was not
executed. Those that say the client's view is stale (READONLY, TRYAGAIN, CLUSTERDOWN,
MASTERDOWN) also ask the manager for a refresh. An error reply that fails the call
records the node it came from (`note_node`).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass, replace
from typing import Any

from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError

from redisson_py.config.addresses import Address
from redisson_py.core.effects import Arg, Call, CallResult, Direct, ScriptCommand
from redisson_py.core.routing.failures import note_node
from redisson_py.core.routing.refusals import REFUSALS, STALE_VIEW, Refusal, error_code, refused

MAX_REDIRECTS = 5
"""Redirects followed for one call before giving up (a slot moving twice is rare)."""


class TopologyChanged(RedisConnectionError):
    """The client's view names no master for the call's key right now (the manager raises
    it before sending anything); retried as a connection error after a refresh."""


@dataclass(slots=True)
class Planned:
    """One call as sent to one node (made per round trip: not frozen, for speed, like
    `Call`; changed only by `dataclasses.replace`, never in place)."""

    effect: Call | Direct
    address: Address
    required: int = 0
    use_eval: bool = False
    asking: bool = False
    hops: int = 0
    aof: bool = False
    """Confirm with ``WAITAOF 1 required`` (the master's own fsync too) instead of WAIT."""
    probe: bool = False
    """Ask the master which replicas are attached to it (``ROLE``) first, on the same
    connection, and wait for at least that many: the view flags some of its replicas
    down, and one may be back already, unknown to the view (see
    `raise_required`)."""

    @property
    def syncs(self) -> bool:
        """Whether the call asks for replica sync (its WAIT may ask for 0 replicas)."""
        return isinstance(self.effect, Call) and self.effect.sync_replicas is not None

    @property
    def waits(self) -> bool:
        """Whether a WAIT/WAITAOF follows the commands (WAITAOF is sent even for 0
        replicas: the master's own fsync is still confirmed)."""
        return bool(self.required or self.aof)

    def commands(self, *, wait: bool = True) -> list[tuple[Arg, ...]]:
        """The commands to send; with ``wait`` False, without the trailing WAIT (a
        group of calls on one connection shares one: see
        `Group`)."""
        wire: list[tuple[Arg, ...]] = [("ASKING",)] if self.asking else []
        for command in self.effect.commands:
            if isinstance(command, ScriptCommand):
                wire.append(command.eval() if self.use_eval else command.evalsha())
            else:
                wire.append(command)
        if wait and self.waits:
            wire.append(self.wait_command())
        return wire

    def wait_command(self) -> tuple[Arg, ...]:
        """The WAIT (or WAITAOF) that follows the commands, for this call's replicas."""
        assert isinstance(self.effect, Call) and self.effect.sync_replicas is not None
        wait_ms = max(1, round(self.effect.sync_replicas * 1000))
        if self.aof:
            return ("WAITAOF", 1, self.required, wait_ms)
        return ("WAIT", self.required, wait_ms)

    @property
    def reply_timeout(self) -> float | None:
        """How long to wait for the replies beyond a WAIT's own wait, None: default."""
        return self.effect.timeout


def _c_packer() -> Callable[[tuple[Arg, ...]], bytes] | None:
    """hiredis's RESP writer when the ``hiredis`` extra is installed (the same bytes,
    written in C: a fifth of a cycle's packing time), else None."""
    try:
        module = importlib.import_module("hiredis")
    except ImportError:
        return None
    packer: Callable[[tuple[Arg, ...]], bytes] = module.pack_command
    return packer


_C_PACK = _c_packer()


def pack(commands: Sequence[tuple[Arg, ...]]) -> bytes:
    """``commands`` in RESP, as one buffer: the same bytes as redis-py's
    ``Connection.pack_commands`` (a first argument with spaces split into words, ints
    and floats as their ``repr``, text as UTF-8).

    Written here rather than taken from redis-py: a lock cycle packs two scripts, and
    redis-py's general serializer (per-argument encoder dispatch, chunking for large
    values) is a measurable share of a cycle's client CPU, while lock commands have a
    few small arguments of four known types, most of which repeat from call to call
    (kept packed: `_SEGMENTS`). With hiredis installed its C writer does each command
    (it refuses what this one refuses: a bool, another type).
    """
    out: list[bytes] = []
    for given in commands:
        first = given[0]
        words = (*first.split(), *given[1:]) if isinstance(first, str) and " " in first else given
        if _C_PACK is not None:
            out.append(_C_PACK(words))
            continue
        out.append(b"*%d\r\n" % len(words))
        # A lock command's arguments mostly repeat; a bulk one's (the watchdog renewing
        # a hundred locks) are mostly new each time: packed, not looked up.
        keep = len(words) <= KEPT_UP_TO
        for arg in words:
            kind = type(arg)  # exact types first (the common case), subclasses after
            if keep and (kind is str or kind is int):  # not bool: True is no number here
                segment = _SEGMENTS.get(arg)  # type: ignore[arg-type]
                if segment is None:
                    segment = _segment(arg)  # type: ignore[arg-type]
                out.append(segment)
                continue
            if kind is str:
                data = arg.encode()  # type: ignore[union-attr]
            elif kind is bytes:
                data = arg
            elif kind is int or kind is float:
                data = repr(arg).encode()
            else:
                data = _encode_other(arg)
            out.append(b"$%d\r\n%b\r\n" % (len(data), data))
    return b"".join(out)


KEPT_UP_TO = 16
"""Commands of at most this many words use `_SEGMENTS` (every lock command does)."""

SEGMENTS_KEPT = 4096
"""Packed arguments kept (`_SEGMENTS`); then the table starts again, so request ids,
which never repeat, cost a table of this size at most."""

SEGMENT_MAX = 256
"""Longer arguments are packed, not kept (names and ids are shorter; a long value
seldom repeats, and the table stays under a megabyte)."""

_SEGMENTS: dict[str | int, bytes] = {}
"""A text or integer argument as packed (``$<length>\\r\\n<bytes>\\r\\n``): most of
a lock command's arguments (the script's SHA, the key and channel names, the owner, the
lease) repeat from call to call, and a lookup costs a fifth of encoding them."""


def _segment(arg: str | int) -> bytes:
    """``arg`` (exactly a str or an int) packed, and kept in `_SEGMENTS`."""
    data = arg.encode() if isinstance(arg, str) else repr(arg).encode()
    segment = b"$%d\r\n%b\r\n" % (len(data), data)
    if len(data) <= SEGMENT_MAX:
        if len(_SEGMENTS) >= SEGMENTS_KEPT:
            _SEGMENTS.clear()
        _SEGMENTS[arg] = segment
    return segment


def _encode_other(arg: object) -> bytes:
    # Subclasses of str, bytes, int and float (never bool: True would go out as "True").
    if isinstance(arg, str):
        return arg.encode()
    if isinstance(arg, bytes):
        return bytes(arg)
    if isinstance(arg, bool) or not isinstance(arg, int | float):
        raise TypeError(f"a command argument must be str, bytes, int or float, not {arg!r}")
    return repr(arg).encode()


@dataclass(frozen=True, slots=True)
class Done:
    value: CallResult | tuple[Any, ...]


@dataclass(frozen=True, slots=True)
class Resend:
    """Send again: ``planned`` says where and how (EVAL, ASKING)."""

    planned: Planned
    moved: bool = False


@dataclass(frozen=True, slots=True)
class Fail:
    error: BaseException
    suspect: bool = False
    """True when the node's answer says the view is stale: refresh the topology."""


Outcome = Done | Resend | Fail


def as_refusal(error: BaseException, address: Address) -> BaseException:
    """``error``, met on ``address`` outside a call's replies (redis-py's handshake on a
    new connection: its health-check PING answered BUSY, say), as `interpret`
    reports a refused reply: a `Refusal` naming the node
    when it is one (the shell raises it from ``error``); any other error as it is."""
    if not isinstance(error, ResponseError) or isinstance(error, Refusal):
        return error
    code, text = error_code(error)
    if code not in REFUSALS:
        return error
    refusal = refused(code, text, str(address))
    note_node(refusal, address)
    return refusal


def _redirect_target(rest: str) -> tuple[str, int]:
    """``"<slot> <host>:<port>"`` of a MOVED/ASK reply, as (host, port)."""
    endpoint = rest.rsplit(maxsplit=1)[-1]
    host, _, port = endpoint.rpartition(":")
    return host.strip("[]"), int(port)


def _synced(planned: Planned, reply: Any) -> int:
    """Acknowledgements from a WAIT reply (an integer) or a WAITAOF reply ([local,
    replicas]); a master that did not fsync its own AOF counts as -1, below any
    requirement, so the grant is undone."""
    if not planned.aof:
        return int(reply)
    local, replicas = (int(x) for x in reply)
    return int(replicas) if local >= 1 else -1


def _only_the_wait_failed(planned: Planned, replies: list[Any]) -> bool:
    """Whether the one error among ``replies`` (after any ``ASKING`` reply) is the
    trailing WAIT's."""
    effect = planned.effect
    if not planned.waits or not isinstance(effect, Call):
        return False
    count = len(effect.commands)
    if len(replies) <= count or not isinstance(replies[count], ResponseError):
        return False
    return not any(isinstance(reply, ResponseError) for reply in replies[:count])


def interpret(planned: Planned, replies: list[Any]) -> Outcome:
    """Decide what ``replies`` (one per wire command, error replies as exceptions) mean."""
    if planned.asking:
        replies = replies[1:]
    errors = [(*error_code(r), r) for r in replies if isinstance(r, ResponseError)]
    if errors and _only_the_wait_failed(planned, replies):
        # The commands ran; only the WAIT after them failed (renamed, refused by an ACL
        # or a proxy, the master demoted meanwhile): the write stands unconfirmed, and
        # the flow undoes it at once as it does a write too few replicas acknowledged.
        return Done(_result(planned, replies))
    if errors:
        return _interpret_errors(planned, errors)
    return Done(_result(planned, replies))


def _interpret_errors(
    planned: Planned, errors: list[tuple[str, str, ResponseError]]
) -> Resend | Fail:
    """What the error replies ``errors`` (code, rest of the text, the error) mean: send
    again (the script's source, or to where a redirect points), or fail."""
    if not planned.use_eval and any(code == "NOSCRIPT" for code, _, _ in errors):
        # Nothing ran (a script that is not loaded does nothing); send the source.
        return Resend(replace(planned, use_eval=True))
    code, rest, first = errors[0]
    if code in ("MOVED", "ASK"):
        if planned.hops >= MAX_REDIRECTS or isinstance(planned.effect, Direct):
            note_node(first, planned.address)
            return Fail(first, suspect=True)
        host, port = _redirect_target(rest)
        target = planned.address.with_endpoint(host, port)
        asking = code == "ASK"
        return Resend(
            replace(planned, address=target, asking=asking, hops=planned.hops + 1),
            moved=not asking,
        )
    address = str(planned.address)
    if code in REFUSALS:
        # Refused before it ran (see refusals): nothing was applied. The flows retry
        # a transient refusal as a connection error and name it when they give up.
        refusal = refused(code, rest, address)
        refusal.__cause__ = first
        note_node(refusal, address)
        return Fail(refusal, suspect=code in STALE_VIEW)
    note_node(first, address)
    return Fail(first)


_ADDRESS_TEXT: dict[Address, str] = {}
"""``str(address)`` per node, formatted once (a result names its node)."""


def _result(planned: Planned, replies: list[Any]) -> CallResult | tuple[Any, ...]:
    """The outcome of error-free ``replies`` (after any ``ASKING`` reply)."""
    effect = planned.effect
    if isinstance(effect, Direct):
        return tuple(replies)
    count = len(effect.commands)
    address = _ADDRESS_TEXT.get(planned.address)
    if address is None:
        if len(_ADDRESS_TEXT) > 4096:  # nodes come and go over months: stay bounded
            _ADDRESS_TEXT.clear()
        address = _ADDRESS_TEXT[planned.address] = str(planned.address)
    if not planned.waits:
        return CallResult(tuple(replies[:count]), planned.required, 0, address)
    wait_reply = replies[count]
    if isinstance(wait_reply, ResponseError):
        failed = f"{'WAITAOF' if planned.aof else 'WAIT'} failed: {wait_reply}"
        return CallResult(tuple(replies[:count]), planned.required, -1, address, failed)
    synced = _synced(planned, wait_reply)
    return CallResult(tuple(replies[:count]), planned.required, synced, address)


def finished(planned: Planned, replies: list[Any]) -> CallResult | tuple[Any, ...] | None:
    """What `settle` returns for first replies that hold no error and follow no
    ``ASKING`` (nearly every call), without starting its loop; None: ask `settle`."""
    if planned.asking:
        return None
    for reply in replies:
        if isinstance(reply, ResponseError):
            return None
    return _result(planned, replies)


def settle(
    planned: Planned, replies: list[Any], suspect: Callable[[Address | None], None]
) -> Generator[Planned, list[Any], CallResult | tuple[Any, ...]]:
    """The re-send loop of one call, written once for both shells: given the first
    replies, yield each `Planned` re-send (EVAL after NOSCRIPT, the redirect of a
    MOVED or ASK) and receive its replies, until the outcome is known; return it, or
    raise the reply's error. ``suspect(address)`` asks the manager for a topology
    refresh (None: a slot moved) when an answer says its view is stale.

    The shell primes it with ``next()`` only when a re-send is needed; a first reply
    that settles the call returns at once (``StopIteration``) without a yield.
    """
    while True:
        outcome = interpret(planned, replies)
        if isinstance(outcome, Done):
            return outcome.value
        if isinstance(outcome, Resend):
            if outcome.moved:
                suspect(None)
            planned = outcome.planned
            replies = yield planned
            continue
        if outcome.suspect:
            suspect(planned.address)
        raise outcome.error
