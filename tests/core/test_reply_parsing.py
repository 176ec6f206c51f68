"""The threaded shell's RESP2 reply parser gives what redis-py's parser gives."""

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

from redisson_py.core.routing.replies import INCOMPLETE, parse

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
