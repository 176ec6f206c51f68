"""Both shells' pub/sub readers take from a real server what redis-py's ``get_message``
takes: the same messages in the same order, however they are cut into reads, the
subscription confirmations through redis-py (which keeps its account of what is
subscribed), error replies raised; and a connection the server closes raises redis-py's
``ConnectionError`` and is closed. Where redis-py would not read with its pure-Python
RESP2 parser, nothing is read and redis-py reads."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator
from types import SimpleNamespace
from typing import Any

import pytest
import redis
import redis.asyncio
from redis.exceptions import ConnectionError, ResponseError
from redis.utils import HIREDIS_AVAILABLE

from redisson_py.asyncio import _primitives as async_primitives
from redisson_py.asyncio.pubsub import _Listener as AsyncListener
from redisson_py.core.routing.replies import ReplyStream
from redisson_py.sync import _primitives as primitives
from redisson_py.sync.pubsub import _Listener
from redisson_py.testing import Topology

pytestmark = pytest.mark.skipif(HIREDIS_AVAILABLE, reason="redis-py reads with hiredis")

CHANNELS = ("pushed:a", "{pushed}:b")
PAYLOADS: list[bytes] = [
    *[b"%d" % i for i in range(100)],
    b"a payload\r\nwith CRLF and \x00 bytes",
    b"v" * 200_000,  # spread over several reads
    b"",
]
OPTIONS = [{}, {"decode_responses": True}, {"protocol": 3}]
IDS = ["resp2", "decoded (redis-py reads)", "resp3 (redis-py reads)"]


def _published(node: Any) -> list[tuple[str, Any, Any]]:
    """Publish every payload to both channels, pipelined; what a reader must receive."""
    publisher = redis.Redis(host=node.host, port=node.port)
    pipe = publisher.pipeline(transaction=False)
    expected = []
    for index, payload in enumerate(PAYLOADS):
        channel = CHANNELS[index % 2]
        pipe.publish(channel, payload)
        expected.append(("message", channel, payload))
    pipe.execute()
    publisher.close()
    return expected


def _as_read(message: tuple[str, Any, Any], decoded: bool) -> tuple[str, Any, Any]:
    kind, channel, data = message
    return kind, channel, data.decode() if decoded else data


# --- the threaded shell ---------------------------------------------------------------


@pytest.fixture
def pubsubs(single_topology: Topology) -> Iterator[Any]:
    node = single_topology.master()
    made: list[redis.client.PubSub] = []

    def pubsub(**options: Any) -> redis.client.PubSub:
        options.setdefault("protocol", 2)  # what the client speaks by default
        pool = redis.ConnectionPool(host=node.host, port=node.port, **options)
        made.append(redis.client.PubSub(pool, ignore_subscribe_messages=False))
        return made[-1]

    yield pubsub
    for each in made:
        each.close()


def _receive_until(pubsub: Any, count: int) -> list[tuple[str, str, Any]]:
    """What the client's reader loop receives (its ``_receive``), until ``count``
    messages came; an error reply after them is raised, with them as its notes."""
    stream, got = ReplyStream(), []
    reader = SimpleNamespace(pubsub=pubsub)
    deadline = time.monotonic() + 10
    while len(got) < count and time.monotonic() < deadline:
        received, failure = _Listener._receive(reader, stream)  # type: ignore[arg-type]
        got.extend(received)
        if failure is not None:
            failure.add_note(repr(got))
            raise failure
    return got


@pytest.mark.parametrize("options", OPTIONS, ids=IDS)
def test_messages_read_as_redis_py_reads_them(
    single_topology: Topology, pubsubs: Any, options: dict[str, Any]
) -> None:
    ours = pubsubs(**options)
    ours.subscribe(*CHANNELS)
    confirmations = _receive_until(ours, 2)
    assert sorted(confirmations) == [
        ("subscribe", c, n) for c, n in zip(CHANNELS, (1, 2), strict=True)
    ]
    idle = primitives.read_pushed(ours, ReplyStream(), 0.05)
    # Nothing came: read here it is an empty list; left to redis-py, None (nothing read).
    assert idle == ([] if not options else None)
    expected = _published(single_topology.master())
    got = _receive_until(ours, len(expected))
    assert got == [_as_read(m, bool(options.get("decode_responses"))) for m in expected]
    assert primitives.read_pushed(ours, ReplyStream(), 0.05) in ([], None)  # nothing more


def _needs_sharded_pubsub(node: Any) -> None:
    server = redis.Redis(host=node.host, port=node.port)
    major = int(str(server.info("server")["redis_version"]).split(".")[0])
    server.close()
    if major < 7:
        pytest.skip("sharded pub/sub needs Redis 7")


def test_sharded_messages_are_read_here(single_topology: Topology, pubsubs: Any) -> None:
    node = single_topology.master()
    _needs_sharded_pubsub(node)
    ours = pubsubs()
    ours.ssubscribe(CHANNELS[1])  # as the client listens on a cluster (Redis 7)
    assert _receive_until(ours, 1) == [("ssubscribe", CHANNELS[1], 1)]
    publisher = redis.Redis(host=node.host, port=node.port)
    for payload in (b"0", b"1"):
        publisher.spublish(CHANNELS[1], payload)
    publisher.close()
    assert _receive_until(ours, 2) == [
        ("message", CHANNELS[1], b"0"),
        ("message", CHANNELS[1], b"1"),
    ]


def test_an_unsubscribe_read_here_keeps_redis_pys_account(pubsubs: Any) -> None:
    ours = pubsubs()
    ours.subscribe(CHANNELS[0])
    assert _receive_until(ours, 1) == [("subscribe", CHANNELS[0], 1)]
    assert ours.subscribed
    ours.unsubscribe(CHANNELS[0])
    assert _receive_until(ours, 1) == [("unsubscribe", CHANNELS[0], 0)]
    assert not ours.subscribed and not ours.channels  # redis-py knows
    # Nothing subscribed: not read here (redis-py's get_message waits without reading).
    assert primitives.read_pushed(ours, ReplyStream(), 0.05) is None


def test_a_wait_with_nothing_published_ends_at_its_timeout(pubsubs: Any) -> None:
    ours = pubsubs()
    ours.subscribe(CHANNELS[0])
    _receive_until(ours, 1)
    started = time.monotonic()
    assert primitives.read_pushed(ours, ReplyStream(), 0.3) == []
    assert 0.25 <= time.monotonic() - started < 1.0


def test_an_error_reply_is_raised_as_get_message_raises_it(pubsubs: Any) -> None:
    ours, theirs = pubsubs(), pubsubs()
    for each in (ours, theirs):
        each.subscribe(CHANNELS[0])
        each.execute_command("GET", "pushed:key")  # refused in a subscribed context
    assert theirs.get_message(timeout=5)["type"] == "subscribe"  # type: ignore[index]
    with pytest.raises(ResponseError) as by_redis_py:
        theirs.get_message(timeout=5)
    # The confirmation before the error is taken (both came in one read), then the error.
    with pytest.raises(ResponseError) as read_here:
        _receive_until(ours, 2)
    assert str(read_here.value) == str(by_redis_py.value)
    assert read_here.value.__notes__ == [repr([("subscribe", CHANNELS[0], 1)])]


def test_a_connection_the_server_closes_raises_a_connection_error(
    single_topology: Topology, pubsubs: Any
) -> None:
    ours = pubsubs()
    ours.subscribe(CHANNELS[0])
    _receive_until(ours, 1)
    node = single_topology.master()
    killer = redis.Redis(host=node.host, port=node.port)
    assert killer.client_kill_filter(_type="pubsub") == 1
    killer.close()
    with pytest.raises(ConnectionError):
        _receive_until(ours, 1)
    assert ours.connection._sock is None  # closed, as redis-py's reader closes it


# --- the asyncio shell ----------------------------------------------------------------


@pytest.fixture
async def async_pubsubs(single_topology: Topology) -> AsyncIterator[Any]:
    node = single_topology.master()
    made: list[redis.asyncio.client.PubSub] = []

    def pubsub(**options: Any) -> redis.asyncio.client.PubSub:
        options.setdefault("protocol", 2)
        pool = redis.asyncio.ConnectionPool(host=node.host, port=node.port, **options)
        made.append(redis.asyncio.client.PubSub(pool, ignore_subscribe_messages=False))
        return made[-1]

    yield pubsub
    for each in made:
        await each.aclose()


async def _receive_until_async(pubsub: Any, count: int) -> list[tuple[str, str, Any]]:
    stream, got = ReplyStream(), []
    reader = SimpleNamespace(pubsub=pubsub)
    deadline = time.monotonic() + 10
    while len(got) < count and time.monotonic() < deadline:
        received, failure = await AsyncListener._receive(reader, stream)  # type: ignore[arg-type]
        got.extend(received)
        if failure is not None:
            failure.add_note(repr(got))
            raise failure
    return got


@pytest.mark.parametrize("options", OPTIONS, ids=IDS)
async def test_asyncio_messages_read_as_redis_py_reads_them(
    single_topology: Topology, async_pubsubs: Any, options: dict[str, Any]
) -> None:
    ours = async_pubsubs(**options)
    await ours.subscribe(*CHANNELS)
    confirmations = await _receive_until_async(ours, 2)
    assert sorted(confirmations) == [
        ("subscribe", c, n) for c, n in zip(CHANNELS, (1, 2), strict=True)
    ]
    idle = await async_primitives.read_pushed(ours, ReplyStream(), 0.05)
    assert idle == ([] if not options else None)
    expected = _published(single_topology.master())
    got = await _receive_until_async(ours, len(expected))
    assert got == [_as_read(m, bool(options.get("decode_responses"))) for m in expected]


async def test_asyncio_an_unsubscribe_read_here_keeps_redis_pys_account(
    async_pubsubs: Any,
) -> None:
    ours = async_pubsubs()
    await ours.subscribe(CHANNELS[0])
    assert await _receive_until_async(ours, 1) == [("subscribe", CHANNELS[0], 1)]
    await ours.unsubscribe(CHANNELS[0])
    assert await _receive_until_async(ours, 1) == [("unsubscribe", CHANNELS[0], 0)]
    assert not ours.subscribed and not ours.channels
    assert await async_primitives.read_pushed(ours, ReplyStream(), 0.05) is None


async def test_asyncio_a_wait_ends_at_its_timeout_and_loses_nothing(
    single_topology: Topology, async_pubsubs: Any
) -> None:
    ours = async_pubsubs()
    await ours.subscribe(CHANNELS[0])
    await _receive_until_async(ours, 1)
    started = time.monotonic()
    assert await async_primitives.read_pushed(ours, ReplyStream(), 0.3) == []
    assert 0.25 <= time.monotonic() - started < 1.0
    # A wait cut by its timer took nothing from the stream: the next message is whole.
    node = single_topology.master()
    publisher = redis.asyncio.Redis(host=node.host, port=node.port)
    await publisher.publish(CHANNELS[0], b"after")
    await publisher.aclose()
    assert await _receive_until_async(ours, 1) == [("message", CHANNELS[0], b"after")]


async def test_asyncio_a_connection_the_server_closes_raises_a_connection_error(
    single_topology: Topology, async_pubsubs: Any
) -> None:
    ours = async_pubsubs()
    await ours.subscribe(CHANNELS[0])
    await _receive_until_async(ours, 1)
    node = single_topology.master()
    killer = redis.asyncio.Redis(host=node.host, port=node.port)
    assert await killer.client_kill_filter(_type="pubsub") == 1
    await killer.aclose()
    with pytest.raises(ConnectionError):
        await asyncio.wait_for(_receive_until_async(ours, 1), 10)
    assert not ours.connection.is_connected
