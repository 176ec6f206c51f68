"""RESP2 replies parsed from bytes: both shells' reader of lock replies.

redis-py's pure-Python reader (used when hiredis is not installed) costs about 4 us of
client CPU per reply in layers: the connection's and parser's wrappers, a ``BytesIO``
buffer with its seeks, a rewind point per reply; its asyncio reader more (an awaited
``readline`` per line). A RedLock(5) cycle reads ten replies, a cluster cycle three:
5-10% of their client CPU. A lock call's replies are a few small values, so the shells
read them from the connection themselves and parse them here (`parse`), with exactly
redis-py's meanings: integers as ``int``, bulk and simple strings as ``bytes``, nil as
None, arrays as lists, error replies as redis-py's exception instances (its own
``parse_error``, so NOSCRIPT is a ``NoScriptError``). It does so only where redis-py
would read the same bytes the same way: the RESP2 parser, replies not decoded, nothing
buffered by redis-py (see the shells' ``_primitives.read_directly``); anything else goes
through redis-py.

Sans-I/O: the shell hands `take` what it has received, and receives again until it
holds the replies asked for.

A pub/sub connection's messages are read the same way (`ReplyStream`, `published`):
redis-py's ``PubSub.get_message`` costs about 35 us per message on a warm machine and
200 us on a cold one (its health and subscription checks, a ``can_read`` then a
``read_response`` through its retry wrapper, a dict per message), and a waiter woken by
pub/sub waits for it. Only the published messages are taken here; every other reply
on that connection (a subscription's confirmation, an error) goes to redis-py's
``PubSub.handle_message``, which keeps its own account of what is subscribed.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, Final

from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import InvalidResponse

INCOMPLETE: Final = object()
"""`parse`'s value when ``data`` does not hold a whole reply yet: receive more."""

ErrorOf = Callable[[str], BaseException]
"""redis-py's ``parse_error``: the exception an error reply's text stands for."""


# One return per RESP2 type, in one function: it parses every reply the threaded shell
# reads, and a call more per reply (to split it) is paid on each.
def parse(data: bytes, pos: int, error_of: ErrorOf) -> tuple[Any, int]:  # noqa: PLR0911
    """The reply that starts at ``data[pos]`` and the position after it, or
    (`INCOMPLETE`, ``pos``) when ``data`` ends first. An error reply is returned as
    its exception, raised only when redis-py raises it too (a ``ConnectionError``
    subclass: the server refuses the client). Raises ``InvalidResponse`` for bytes
    that are not RESP2."""
    end = data.find(b"\r\n", pos)
    if end < 0:
        return INCOMPLETE, pos
    kind = data[pos]
    if kind == 58:  # b":"
        return int(data[pos + 1 : end]), end + 2
    if kind == 36:  # b"$"
        length = int(data[pos + 1 : end])
        if length < 0:
            return None, end + 2
        start = end + 2
        stop = start + length
        if len(data) < stop + 2:
            return INCOMPLETE, pos
        return data[start:stop], stop + 2
    if kind == 42:  # b"*"
        count = int(data[pos + 1 : end])
        if count < 0:
            return None, end + 2
        items = []
        at = end + 2
        for _ in range(count):
            item, at = parse(data, at, error_of)
            if item is INCOMPLETE:
                return INCOMPLETE, pos
            items.append(item)
        return items, at
    if kind == 43:  # b"+"
        return data[pos + 1 : end], end + 2
    if kind == 45:  # b"-"
        error = error_of(data[pos + 1 : end].decode("utf-8", errors="replace"))
        if isinstance(error, RedisConnectionError):
            raise error
        return error, end + 2
    raise InvalidResponse(f"Protocol Error: {data[pos : end + 2]!r}")


def take(values: list[Any], count: int, kept: bytes, chunk: bytes, error_of: ErrorOf) -> bytes:
    """Append to ``values`` the replies that ``kept + chunk`` holds (bytes kept from
    before, starting at a reply, then the ``chunk`` just received), until ``values`` has
    ``count``; return the bytes after the last one taken, to keep. The read loop both
    shells share: each receives (its own I/O and error mapping) while
    ``len(values) < count``; a reply cut short is parsed again from its start once more
    bytes came (a lock call's replies fit one read, the longest a manager asks for, a
    cluster's slot map, a few); bytes still kept once all replies are in mean the
    connection is out of step. An empty ``chunk`` is the end of the stream: raises
    redis-py's ``ConnectionError``, as its reader does; else what `parse` raises."""
    if not chunk:
        raise RedisConnectionError("Connection closed by server.")
    data = kept + chunk
    pos = 0
    while len(values) < count and pos < len(data):
        reply, at = parse(data, pos, error_of)
        if reply is INCOMPLETE:
            break
        values.append(reply)
        pos = at
    return data[pos:]


class ReplyStream:
    """The replies of a connection that the server writes to unasked (a pub/sub
    connection), received in chunks of any size: `feed` returns every whole reply
    received so far and keeps the bytes of one cut short for the next chunk."""

    __slots__ = ("_kept",)

    def __init__(self) -> None:
        self._kept = b""

    def feed(self, chunk: bytes, error_of: ErrorOf) -> list[Any]:
        """The whole replies ``chunk`` completes, in order (none: more to receive).
        An empty ``chunk`` is the end of the stream (redis-py's ``ConnectionError``)."""
        replies: list[Any] = []
        self._kept = take(replies, sys.maxsize, self._kept, chunk, error_of)
        return replies


_PUBLISHED: Final = (b"message", b"smessage")


def published(reply: Any) -> tuple[bytes, Any] | None:
    """(channel, payload) of a message published to a channel the connection listens
    to (``SUBSCRIBE`` or ``SSUBSCRIBE``); None for any other reply."""
    if type(reply) is list and len(reply) == 3 and reply[0] in _PUBLISHED:
        return reply[1], reply[2]
    return None
