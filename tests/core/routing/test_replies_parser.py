"""The shells' RESP2 reply parser gives what redis-py's parser gives, however the bytes
come in."""

from __future__ import annotations

import socket
from typing import Any

import pytest
import redis.connection
from redis._parsers import _RESP2Parser
from redis.exceptions import (
    AuthenticationError,
    ConnectionError,
    InvalidResponse,
    NoScriptError,
    ReadOnlyError,
    ResponseError,
)

from redisson_py.core.routing.replies import INCOMPLETE, ReplyStream, parse, published, take

ERROR_OF = _RESP2Parser.parse_error

REPLIES: list[bytes] = [
    b":1\r\n",
    b":-42\r\n",
    b"$-1\r\n",
    b"*-1\r\n",
    b"*0\r\n",
    b"$0\r\n\r\n",
    b"+OK\r\n",
    b"$5\r\nhe\r\nl\r\n",  # a bulk string holding CRLF
    b"*3\r\n:1\r\n$-1\r\n$3\r\nabc\r\n",  # an acquire's reply
    b"*2\r\n*2\r\n:1\r\n:2\r\n*1\r\n$1\r\nx\r\n",  # nested
    b"*2\r\n:1\r\n-ERR inside an array\r\n",
    b"-NOSCRIPT No matching script. Please use EVAL.\r\n",
    b"-READONLY You can't write against a read only replica.\r\n",
    b"-BUSY Redis is busy running a script.\r\n",
    b"$70000\r\n" + b"v" * 70000 + b"\r\n",
]


def _by_redis_py(data: bytes) -> Any:
    """What redis-py's own RESP2 parser reads from ``data``, through a real socket."""
    ours, theirs = socket.socketpair()
    try:
        theirs.sendall(data)
        connection = redis.connection.Connection()
        connection._sock = ours
        parser = _RESP2Parser(socket_read_size=65536)
        parser.on_connect(connection)
        return parser.read_response()
    finally:
        ours.close()
        theirs.close()


@pytest.mark.parametrize("data", REPLIES, ids=lambda data: repr(data[:24]))
def test_a_reply_reads_as_redis_py_reads_it(data: bytes) -> None:
    value, end = parse(data + b"+next\r\n", 0, ERROR_OF)
    assert end == len(data)  # and the next reply starts where this one ended
    # A repr shows each value's type too: bytes from str, an exception's class and text.
    assert repr(value) == repr(_by_redis_py(data))


@pytest.mark.parametrize("data", REPLIES[:-1], ids=lambda data: repr(data[:24]))
def test_a_reply_cut_anywhere_asks_for_more(data: bytes) -> None:
    for cut in range(len(data)):
        assert parse(data[:cut], 0, ERROR_OF) == (INCOMPLETE, 0)
        # from the middle of a buffer too: the position stays where the reply starts
        assert parse(b":7\r\n" + data[:cut], 4, ERROR_OF) == (INCOMPLETE, 4)


def test_error_replies_are_redis_pys_exceptions() -> None:
    assert isinstance(parse(REPLIES[11], 0, ERROR_OF)[0], NoScriptError)
    assert isinstance(parse(REPLIES[12], 0, ERROR_OF)[0], ReadOnlyError)
    inside = parse(REPLIES[10], 0, ERROR_OF)[0]
    assert inside[0] == 1 and type(inside[1]) is ResponseError


def test_a_reply_that_refuses_the_client_is_raised_as_redis_py_raises_it() -> None:
    with pytest.raises(ConnectionError, match="max number of clients"):
        parse(b"-ERR max number of clients reached\r\n", 0, ERROR_OF)
    with pytest.raises(AuthenticationError):
        parse(b"-WRONGPASS invalid username-password pair\r\n", 0, ERROR_OF)


def test_bytes_that_are_not_resp2_are_refused() -> None:
    with pytest.raises(InvalidResponse, match="Protocol Error"):
        parse(b"hello\r\n", 0, ERROR_OF)


STREAM = b"".join(REPLIES[:-1])
"""Every reply but the large one, back to back, as a pipelined call's replies come."""


def _read(chunks: list[bytes], count: int) -> tuple[list[Any], bytes]:
    """The replies, and the bytes kept past them, as a shell's read loop gets them from
    ``chunks`` received one after another (the loop of ``read_directly``)."""
    values: list[Any] = []
    kept = b""
    for chunk in chunks:
        if len(values) >= count:
            break
        kept = take(values, count, kept, chunk, ERROR_OF)
    return values, kept


@pytest.mark.parametrize("size", [1, 2, 3, 7, 64, len(STREAM)])
def test_replies_received_in_chunks_of_any_size_are_the_replies(size: int) -> None:
    count = len(REPLIES) - 1
    chunks = [STREAM[at : at + size] for at in range(0, len(STREAM), size)]
    values, left = _read(chunks, count)
    expected = [parse(data, 0, ERROR_OF)[0] for data in REPLIES[:-1]]
    assert repr(values) == repr(expected)
    assert left == b""


def test_take_stops_at_the_replies_asked_for() -> None:
    values: list[Any] = []
    assert take(values, 1, b"", b":1\r\n:2\r\n", ERROR_OF) == b":2\r\n"  # out of step
    assert values == [1]
    assert take(values, 1, b"", b":3\r\n", ERROR_OF) == b":3\r\n"  # none more asked for
    assert take([], 2, b":1\r", b"\n:2", ERROR_OF) == b":2"  # the second cut short
    with pytest.raises(ConnectionError, match="closed"):  # an empty read: the stream ended
        take([], 1, b":1", b"", ERROR_OF)
    assert _read([b":1\r\n:", b"2\r\n:3"], 2) == ([1, 2], b":3")


def _message(kind: bytes, channel: bytes, data: bytes) -> bytes:
    parts = [kind, channel, data]
    return b"*3\r\n" + b"".join(b"$%d\r\n%s\r\n" % (len(p), p) for p in parts)


PUSHED = [
    b"*3\r\n$9\r\nsubscribe\r\n$2\r\nch\r\n:1\r\n",  # a subscription's confirmation
    _message(b"message", b"ch", b"0"),
    _message(b"smessage", b"{lock}ch", b"1"),
    _message(b"message", b"ch", b"a payload\r\nwith CRLF " + b"x" * 3000),
    b"*3\r\n$11\r\nunsubscribe\r\n$2\r\nch\r\n:0\r\n",
]
"""What a pub/sub connection receives unasked, back to back."""


@pytest.mark.parametrize("size", [1, 2, 5, 64, len(b"".join(PUSHED))])
def test_pushed_replies_received_in_chunks_of_any_size_are_the_replies(size: int) -> None:
    data = b"".join(PUSHED)
    stream, got = ReplyStream(), []
    for at in range(0, len(data), size):
        replies = stream.feed(data[at : at + size], ERROR_OF)
        got.extend(replies)
        # Each whole reply is returned by the chunk that completes it, not later.
        assert len(got) == sum(
            1 for pushed in PUSHED if data.find(pushed) + len(pushed) <= at + size
        )
    assert repr(got) == repr([_by_redis_py(pushed) for pushed in PUSHED])
    with pytest.raises(ConnectionError, match="closed"):  # an empty read: the stream ended
        stream.feed(b"", ERROR_OF)


def test_published_messages_are_told_from_every_other_reply() -> None:
    replies = [parse(pushed, 0, ERROR_OF)[0] for pushed in PUSHED]
    assert [published(reply) for reply in replies] == [
        None,
        (b"ch", b"0"),
        (b"{lock}ch", b"1"),
        (b"ch", b"a payload\r\nwith CRLF " + b"x" * 3000),
        None,
    ]
    # a pattern's message (4 items), a reply of another shape, an error: not ours to take
    assert published([b"pmessage", b"c*", b"ch", b"0"]) is None
    assert published([b"message", b"ch"]) is None
    assert published(b"message") is None
    assert published(ResponseError("MOVED 1 127.0.0.1:7001")) is None
