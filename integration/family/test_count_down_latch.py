"""The count-down latch on single and cluster, sync and asyncio: a count set once and
counted down; zero wakes every waiter of every client by its message (names with
hashtags too); a timed wait ends at its deadline; a deleted latch lets its waiters go
at their next check; a lost reply is counted once; and a client acting as Java Redisson
on the same key and channel shares the latch, both ways."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

import pytest
import redis
from kind_helpers import by_slot, listening, publish_command
from object_helpers import client_through, clocked, java_client

from redisson_py import ArgumentError, ArgumentTypeError
from redisson_py.core.flows import count_down_latch as latch_flows
from redisson_py.core.scripts import count_down_latch, synchronizers
from redisson_py.testing import Topology
from redisson_py.testing.faults.proxy import ReplyDropper
from redisson_py.testing.owners import Flavor

PAUSE_BOUND = 3.0
"""A waiter re-checks this often without a message: wake-ups well under it came by one."""


def test_the_count_is_set_once_counted_down_and_read(
    flavor: Flavor, make_client: Callable[..., Any], family_topology: Topology, lock_name: str
) -> None:
    latch = make_client().get_count_down_latch(lock_name)
    alice = flavor.owner("alice")
    assert alice(latch.get_count) == 0
    assert alice(latch.wait, 0) is True  # no count: open
    assert alice(latch.try_set_count, 2) is True
    assert alice(latch.try_set_count, 5) is False
    assert alice(latch.get_count) == 2
    assert alice(latch.wait, 0.1) is False
    alice(latch.count_down)
    assert alice(latch.get_count) == 1
    alice(latch.count_down)
    assert alice(latch.get_count) == 0 and alice(latch.wait) is True
    with java_client(family_topology, lock_name) as java:
        assert java.exists(lock_name) == 0  # at zero the key is gone, as Redisson's
    alice(latch.count_down)  # at zero it stays there
    assert alice(latch.get_count) == 0
    assert alice(latch.try_set_count, 1) is True
    assert alice(latch.delete) is True
    assert alice(latch.delete) is False
    assert alice(latch.get_count) == 0


@pytest.mark.parametrize("suffix", ["", "{tag}z"])
def test_zero_wakes_every_waiter_of_every_client(
    flavor: Flavor, make_client: Callable[..., Any], lock_name: str, suffix: str
) -> None:
    name = lock_name + suffix  # a hashtag: in a cluster the channel takes the slot-safe form
    clients = [make_client(), make_client()]
    flavor.owner("setup")(clients[0].get_count_down_latch(name).try_set_count, 2)
    owners = [flavor.owner(f"waiter{n}") for n in range(6)]
    waiting = [
        owner.start_timed(clients[n % 2].get_count_down_latch(name).wait, 30.0)
        for n, owner in enumerate(owners)
    ]
    counter = flavor.owner("counter")
    latch = clients[1].get_count_down_latch(name)
    counter(latch.count_down)
    time.sleep(0.5)
    assert not any(future.done() for future in waiting)  # at 1: nobody goes
    opened_at = time.monotonic()
    counter(latch.count_down)
    for future in waiting:
        opened, finished = future.result(timeout=10)
        assert opened is True
        assert finished - opened_at < 1.0 < PAUSE_BOUND  # woken by "0", all of them


def test_a_timed_wait_ends_at_its_deadline_and_a_deleted_latch_lets_waiters_go(
    flavor: Flavor, make_client: Callable[..., Any], lock_name: str
) -> None:
    latch = make_client().get_count_down_latch(lock_name)
    alice, bob = flavor.owner("alice"), flavor.owner("bob")
    alice(latch.try_set_count, 1)
    opened, took = clocked(lambda: alice(latch.wait, 1.0))
    assert opened is False and 0.9 <= took < 2.5
    waiting = bob.start_timed(latch.wait, 30.0)
    time.sleep(0.3)
    deleted_at = time.monotonic()
    assert alice(latch.delete) is True  # announced with "1", as Redisson: wakes nobody...
    opened, finished = waiting.result(timeout=10)
    assert opened is True  # ...but the next check sees zero
    assert finished - deleted_at < PAUSE_BOUND + 1.0


def test_bad_arguments_are_refused_naming_the_latch(
    flavor: Flavor, make_client: Callable[..., Any], lock_name: str
) -> None:
    latch = make_client().get_count_down_latch(lock_name)
    alice = flavor.owner("alice")
    subject = f"count-down latch {lock_name!r}"
    for call, error, words in [
        (lambda: latch.try_set_count(-1), ArgumentError, "count"),
        (lambda: latch.try_set_count("3"), ArgumentTypeError, "count"),
        (lambda: latch.try_set_count(2**60), ArgumentError, "count"),
        (lambda: latch.wait(math.nan), ArgumentError, "timeout"),
        (lambda: latch.wait(-1), ArgumentError, "timeout"),
        (lambda: latch.wait("1"), ArgumentTypeError, "timeout"),
    ]:
        with pytest.raises(error, match=f"{subject}.*{words}"):
            alice(call)


def test_a_lost_reply_is_counted_once(flavor: Flavor, proxy: ReplyDropper, lock_name: str) -> None:
    latch = client_through(flavor, proxy).get_count_down_latch(lock_name)
    alice = flavor.owner("alice")
    alice(latch.try_set_count, 1)
    alice(latch.count_down)  # the scripts, loaded once
    proxy.drop_reply_of(synchronizers.TRY_SET.sha)
    assert alice(latch.try_set_count, 3) is True  # the first run's answer, not "was set"
    proxy.drop_reply_of(count_down_latch.COUNT_DOWN.sha)
    alice(latch.count_down)  # reply lost, retried with its request id
    assert proxy.dropped == 2
    assert alice(latch.get_count) == 2  # counted down once


# --- a Redisson-like client on the same key and channel ---------------------------------

JAVA_COUNT_DOWN = """
local value = redis.call('decr', KEYS[1])
if value <= 0 then
    redis.call('del', KEYS[1])
end
if value == 0 then
    redis.call(ARGV[1], KEYS[2], '0')
end
"""
JAVA_TRY_SET_COUNT = """
if redis.call('exists', KEYS[1]) == 0 then
    redis.call('set', KEYS[1], ARGV[2])
    redis.call(ARGV[1], KEYS[2], '1')
    return 1
end
return 0
"""


def java_count_down(java: redis.Redis, name: str, channel: str) -> None:
    """RCountDownLatch.countDown(), as Java Redisson runs it (our own Lua)."""
    java.eval(JAVA_COUNT_DOWN, 2, name, channel, publish_command(java))


def java_try_set_count(java: redis.Redis, name: str, channel: str, count: int) -> bool:
    return bool(java.eval(JAVA_TRY_SET_COUNT, 2, name, channel, publish_command(java), count))


def test_a_redisson_client_and_redisson_py_share_the_latch(
    flavor: Flavor, make_client: Callable[..., Any], family_topology: Topology, lock_name: str
) -> None:
    latch = make_client().get_count_down_latch(lock_name)
    ours, waiter = flavor.owner("ours"), flavor.owner("waiter")
    channel = latch_flows.LAYOUT.channel(lock_name, by_slot(family_topology))
    assert channel == f"redisson_countdownlatch__channel__{{{lock_name}}}"
    with java_client(family_topology, lock_name) as java:
        assert java_try_set_count(java, lock_name, channel, 2)
        assert ours(latch.try_set_count, 5) is False
        assert ours(latch.get_count) == 2
        waiting = waiter.start_timed(latch.wait)
        java_count_down(java, lock_name, channel)
        time.sleep(0.3)
        assert not waiting.done()
        opened_at = time.monotonic()
        java_count_down(java, lock_name, channel)  # publishes "0": wakes our waiter
        opened, finished = waiting.result(timeout=10)
        assert opened is True and finished - opened_at < 1.0 < PAUSE_BOUND
        with listening(java, channel) as listener:  # as a Java waiter listens
            assert ours(latch.try_set_count, 2) is True
            assert listener.message(timeout=5) == "1"  # a new count
            assert java.get(lock_name) == "2"  # a plain integer, as Redisson reads it
            ours(latch.count_down)
            java_count_down(java, lock_name, channel)
            assert listener.message(timeout=5) == "0"  # zero, told by Java's own script
            assert java_try_set_count(java, lock_name, channel, 1)
            assert listener.message(timeout=5) == "1"
            ours(latch.count_down)
            assert listener.message(timeout=5) == "0"  # zero, told by ours
