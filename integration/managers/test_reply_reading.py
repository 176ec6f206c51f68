"""Both shells read a call's replies from a real server as redis-py reads them, and
leave no connection in a state redis-py would not: a read that fails (or, in asyncio, is
cancelled by the round trip's timer) closes it, and bytes past the replies asked for
(out of step) close it too."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
import redis
import redis.asyncio
from redis._parsers import _AsyncRESP2Parser, _RESP2Parser
from redis.exceptions import ConnectionError, NoScriptError, ResponseError, TimeoutError
from redis.utils import HIREDIS_AVAILABLE

from redisson_py.asyncio import _primitives as async_primitives
from redisson_py.asyncio.manager import ConnectionManager as AsyncConnectionManager
from redisson_py.core import scripts
from redisson_py.sync._primitives import read_directly
from redisson_py.sync.manager import ConnectionManager
from redisson_py.testing import Topology

COMMANDS: list[tuple[Any, ...]] = [
    ("SET", "replies:big", "v" * 200_000),  # +OK
    ("GET", "replies:big"),  # a bulk string spread over several reads
    ("GET", "replies:none"),  # nil
    ("EVAL", "return {1, false, 'x', {2, {}}, redis.status_reply('S')}", 0),
    ("EVAL", "return redis.error_reply('MY own error')", 0),
    ("EVALSHA", "0" * 40, 0),  # NOSCRIPT
    ("EVAL", "return {1, redis.pcall('incr', KEYS[1])}", 1, "replies:big"),  # error inside
    ("EVAL", "return -3", 0),
    *[("PING", f"p{i}") for i in range(50)],
]


def lock_commands(key: str) -> list[tuple[Any, ...]]:
    """A lock call's replies on ``key``: a refusal (the holder's TTL, which must not
    depend on the millisecond a connection's pipeline ran in: both connections must read
    the same), a reentrant grant, a WAIT's count, and the key deleted again (each
    connection's pipeline leaves the server as it found it)."""
    return [
        ("HSET", key, "o:1", 1),  # a hold with no TTL yet: the refusal says -1
        ("EVAL", scripts.ACQUIRE.source, 1, key, 30_000, "o:2", "o:2:a", "r2"),
        ("EVAL", scripts.ACQUIRE.source, 1, key, 30_000, "o:1", "o:1:a", "r1"),
        ("WAIT", 0, 10),
        ("DEL", key),
    ]


@pytest.fixture
def connect(single_topology: Topology) -> Iterator[Any]:
    node = single_topology.master()
    made: list[redis.Connection] = []

    def connect(**options: Any) -> redis.Connection:
        options.setdefault("protocol", 2)  # what the client speaks by default (Config.protocol)
        connection = redis.Connection(host=node.host, port=node.port, **options)
        connection.connect()
        made.append(connection)
        return connection

    yield connect
    cleanup = connect()
    cleanup.send_command("DEL", "replies:big")
    cleanup.read_response()
    for connection in made:
        connection.disconnect()


read_replies = ConnectionManager._read
"""How the threaded client reads a call's replies: itself where it can, else by redis-py."""


def _reply_by_redis_py(connection: redis.Connection) -> Any:
    """The reference: one reply as redis-py's own reader gives it."""
    try:
        return connection.read_response()
    except ResponseError as error:
        return error


@pytest.mark.parametrize(
    "options",
    [{}, {"decode_responses": True}, {"protocol": 3}],
    ids=["resp2", "decoded (redis-py reads)", "resp3 (redis-py reads)"],
)
def test_replies_read_as_redis_py_reads_them(connect: Any, options: dict[str, Any]) -> None:
    ours, theirs = connect(**options), connect(**options)
    if not options and not HIREDIS_AVAILABLE:
        assert type(ours._parser) is _RESP2Parser  # read here, not by redis-py
    for connection in (ours, theirs):
        connection.send_packed_command(connection.pack_commands(COMMANDS))
    if options:  # left to redis-py, before anything is read
        assert read_directly(ours, len(COMMANDS)) is None
    expected = [_reply_by_redis_py(theirs) for _ in COMMANDS]
    got = read_replies(ours, len(COMMANDS))
    # A repr shows each value's type too: bytes from str, an exception's class and text.
    assert repr(got) == repr(expected), (got[:8], expected[:8])
    assert isinstance(got[5], NoScriptError) and got[1] == (
        "v" * 200_000 if options.get("decode_responses") else b"v" * 200_000
    )
    # The connection is left in step: the next call reads its own reply.
    ours.send_command("PING", "after")
    assert read_replies(ours, 1) == ["after" if options.get("decode_responses") else b"after"]
    assert ours._sock is not None


def test_the_lock_scripts_replies_read_as_redis_py_reads_them(connect: Any) -> None:
    ours, theirs = connect(), connect()
    commands = lock_commands("replies:lock")
    for connection in (ours, theirs):
        connection.send_packed_command(connection.pack_commands(commands))
    expected = [_reply_by_redis_py(theirs) for _ in commands]
    assert repr(read_replies(ours, len(commands))) == repr(expected)


def test_bytes_past_the_replies_asked_for_close_the_connection(connect: Any) -> None:
    connection = connect()
    connection.send_packed_command(connection.pack_commands([("PING", "a"), ("PING", "b")]))
    time.sleep(0.1)  # both replies arrive in one read
    assert read_replies(connection, 1) == [b"a"]
    assert connection._sock is None  # out of step: never reused with "b" unread
    connection.send_command("PING", "c")  # a later call reconnects
    assert read_replies(connection, 1) == [b"c"]


def test_a_read_that_times_out_raises_redis_pys_timeout_and_closes(connect: Any) -> None:
    connection = connect(socket_timeout=0.2)
    connection.send_command("BLPOP", "replies:empty", 2)
    started = time.monotonic()
    with pytest.raises(TimeoutError, match="Timeout reading from"):
        read_replies(connection, 1)
    assert time.monotonic() - started < 1.0
    assert connection._sock is None


def test_a_connection_the_server_closes_raises_a_connection_error(connect: Any) -> None:
    connection, killer = connect(), connect()
    connection.send_command("CLIENT", "ID")
    [client_id] = read_replies(connection, 1)
    connection.send_command("BLPOP", "replies:empty", 5)
    time.sleep(0.1)
    threading.Timer(0.1, lambda: killer.send_command("CLIENT", "KILL", "ID", client_id)).start()
    with pytest.raises(ConnectionError):
        read_replies(connection, 1)
    assert connection._sock is None


# --- the asyncio shell ---------------------------------------------------------------


@pytest.fixture
async def connect_async(single_topology: Topology) -> AsyncIterator[Any]:
    node = single_topology.master()
    made: list[redis.asyncio.Connection] = []

    async def connect(**options: Any) -> redis.asyncio.Connection:
        options.setdefault("protocol", 2)
        # As the client's command pools make them: the round trip is timed as a whole.
        options.setdefault("socket_timeout", None)
        connection = redis.asyncio.Connection(host=node.host, port=node.port, **options)
        await connection.connect()
        made.append(connection)
        return connection

    yield connect
    cleanup = await connect()
    await cleanup.send_command("DEL", "replies:big")
    await cleanup.read_response()
    for connection in made:
        await connection.disconnect()


read_replies_async = AsyncConnectionManager._read
"""How the asyncio client reads a call's replies: itself where it can, else by redis-py."""


async def _reply_by_redis_py_async(connection: redis.asyncio.Connection) -> Any:
    try:
        return await connection.read_response()
    except ResponseError as error:
        return error


@pytest.mark.parametrize(
    "options",
    [{}, {"decode_responses": True}, {"protocol": 3}, {"socket_timeout": 5.0}],
    ids=[
        "resp2",
        "decoded (redis-py reads)",
        "resp3 (redis-py reads)",
        "a socket timeout of its own (redis-py reads)",
    ],
)
async def test_asyncio_replies_read_as_redis_py_reads_them(
    connect_async: Any, options: dict[str, Any]
) -> None:
    ours, theirs = await connect_async(**options), await connect_async(**options)
    if not options and not HIREDIS_AVAILABLE:
        assert type(ours._parser) is _AsyncRESP2Parser  # read here, not by redis-py
    for connection in (ours, theirs):
        await connection.send_packed_command(connection.pack_commands(COMMANDS))
    expected = [await _reply_by_redis_py_async(theirs) for _ in COMMANDS]
    direct = await async_primitives.read_directly(ours, len(COMMANDS))
    if options:  # left to redis-py, before anything is read
        assert direct is None
        got = await read_replies_async(ours, len(COMMANDS))
    else:  # read here (the manager's _read returns what this returns)
        assert direct is not None or HIREDIS_AVAILABLE
        got = direct if direct is not None else await read_replies_async(ours, len(COMMANDS))
    assert repr(got) == repr(expected), (got[:8], expected[:8])
    assert isinstance(got[5], NoScriptError)
    await ours.send_command("PING", "after")
    decoded = options.get("decode_responses")
    assert await read_replies_async(ours, 1) == ["after" if decoded else b"after"]
    assert ours.is_connected


async def test_asyncio_lock_scripts_replies_read_as_redis_py_reads_them(
    connect_async: Any,
) -> None:
    ours, theirs = await connect_async(), await connect_async()
    commands = lock_commands("replies:alock")
    for connection in (ours, theirs):
        await connection.send_packed_command(connection.pack_commands(commands))
    expected = [await _reply_by_redis_py_async(theirs) for _ in commands]
    assert repr(await read_replies_async(ours, len(commands))) == repr(expected)


async def test_asyncio_bytes_past_the_replies_asked_for_close_the_connection(
    connect_async: Any,
) -> None:
    connection = await connect_async()
    await connection.send_packed_command(connection.pack_commands([("PING", "a"), ("PING", "b")]))
    await asyncio.sleep(0.1)  # both replies arrive in one read
    assert await read_replies_async(connection, 1) == [b"a"]
    assert not connection.is_connected  # out of step: never reused with "b" unread
    await connection.send_command("PING", "c")  # a later call reconnects
    assert await read_replies_async(connection, 1) == [b"c"]


async def test_asyncio_a_read_cut_by_the_round_trip_timer_closes_the_connection(
    connect_async: Any,
) -> None:
    connection = await connect_async()
    await connection.send_command("BLPOP", "replies:empty", 2)
    started = time.monotonic()
    with pytest.raises(asyncio.TimeoutError):  # the timer's own, as the manager meets it
        async with async_primitives.round_trip_timeout(0.2):
            await read_replies_async(connection, 1)
    assert time.monotonic() - started < 1.0
    assert not connection.is_connected  # the BLPOP's reply may still come: never reused


async def test_asyncio_a_connection_the_server_closes_raises_a_connection_error(
    connect_async: Any,
) -> None:
    connection, killer = await connect_async(), await connect_async()
    await connection.send_command("CLIENT", "ID")
    [client_id] = await read_replies_async(connection, 1)
    await connection.send_command("BLPOP", "replies:empty", 5)

    async def kill() -> None:
        await asyncio.sleep(0.2)
        await killer.send_command("CLIENT", "KILL", "ID", client_id)
        await killer.read_response()

    killing = asyncio.ensure_future(kill())
    with pytest.raises(ConnectionError):
        await read_replies_async(connection, 1)
    await killing
    assert not connection.is_connected
