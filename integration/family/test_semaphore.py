"""The semaphore on single and cluster, sync and asyncio: permits set once, taken, given
back, added and drained; a release wakes as many waiters as it frees permits, by its
message; a timed wait ends at its deadline; 4 processes x 8 threads never hold more
permits than there are; a lost reply is counted once; and a client acting as Java
Redisson on the same key and channel shares the semaphore, both ways."""

from __future__ import annotations

import math
import multiprocessing
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
import redis
from kind_helpers import by_slot, listening, publish_command
from object_helpers import client_through, clocked, java_client

from redisson_py import (
    ArgumentError,
    ArgumentTypeError,
    ClientClosedError,
    Config,
    Redisson,
)
from redisson_py.core.routing import naming
from redisson_py.core.scripts import semaphore as scripts
from redisson_py.testing import Topology
from redisson_py.testing.faults.proxy import ReplyDropper
from redisson_py.testing.owners import Flavor

PAUSE_BOUND = 3.0
"""A waiter re-checks this often without a message: wake-ups well under it came by one."""


def test_permits_are_set_once_taken_given_back_added_and_drained(
    flavor: Flavor, make_client: Callable[..., Any], lock_name: str
) -> None:
    semaphore = make_client().get_semaphore(lock_name)
    alice = flavor.owner("alice")
    assert alice(semaphore.available_permits) == 0  # never set
    assert alice(semaphore.try_acquire) is False
    assert alice(semaphore.try_set_permits, 3) is True
    assert alice(semaphore.try_set_permits, 9) is False  # set once
    assert alice(semaphore.try_acquire, 2) is True
    assert alice(semaphore.available_permits) == 1
    assert alice(semaphore.try_acquire, 2) is False  # one left: all or nothing
    alice(semaphore.acquire, 0)  # nothing to take
    alice(semaphore.release, 2)
    alice(semaphore.add_permits, 2)
    assert alice(semaphore.available_permits) == 5
    alice(semaphore.add_permits, -4)
    assert alice(semaphore.drain_permits) == 1
    assert alice(semaphore.available_permits) == 0
    assert alice(semaphore.delete) is True
    assert alice(semaphore.delete) is False
    assert alice(semaphore.release_if_exists) is False  # deleted stays deleted
    assert alice(semaphore.available_permits) == 0
    alice(semaphore.release)  # a plain release creates the count
    assert alice(semaphore.release_if_exists) is True
    assert alice(semaphore.available_permits) == 2


def test_the_semaphore_is_a_context_manager_over_one_permit(
    flavor: Flavor, make_client: Callable[..., Any], lock_name: str
) -> None:
    semaphore = make_client().get_semaphore(lock_name)
    alice = flavor.owner("alice")
    alice(semaphore.try_set_permits, 1)

    if flavor.name == "sync":

        def inside() -> int:
            with semaphore:
                return int(semaphore.available_permits())
    else:

        async def inside() -> int:  # type: ignore[misc]
            async with semaphore:
                return int(await semaphore.available_permits())

    assert alice(inside) == 0
    assert alice(semaphore.available_permits) == 1


def test_a_release_wakes_as_many_waiters_as_it_frees_permits(
    flavor: Flavor, make_client: Callable[..., Any], lock_name: str
) -> None:
    first, second = make_client(), make_client()
    flavor.owner("setup")(first.get_semaphore(lock_name).try_set_permits, 0)
    waiters = [flavor.owner(f"waiter{n}") for n in range(3)]
    waiting = [
        owner.start_timed(client.get_semaphore(lock_name).acquire)
        for owner, client in zip(waiters, (first, second, second), strict=True)
    ]
    time.sleep(0.5)
    assert not any(future.done() for future in waiting)
    released_at = time.monotonic()
    flavor.owner("releaser")(first.get_semaphore(lock_name).release, 2)
    time.sleep(1.0)
    woken = [future for future in waiting if future.done()]
    assert len(woken) == 2  # two permits: two waiters, the third still waits
    for future in woken:
        _, finished = future.result()
        assert finished - released_at < 1.0 < PAUSE_BOUND  # woken by the message
    flavor.owner("releaser")(first.get_semaphore(lock_name).release)
    for future in waiting:
        future.result(timeout=10)
    assert flavor.owner("check")(first.get_semaphore(lock_name).available_permits) == 0


def test_try_acquire_ends_at_its_deadline(
    flavor: Flavor, make_client: Callable[..., Any], lock_name: str
) -> None:
    semaphore = make_client().get_semaphore(lock_name)
    alice = flavor.owner("alice")
    alice(semaphore.try_set_permits, 1)
    taken, took = clocked(lambda: alice(semaphore.try_acquire, 2, 1.0))
    assert taken is False
    assert 0.9 <= took < 2.5
    assert alice(semaphore.available_permits) == 1  # the failed wait took nothing


def test_bad_arguments_are_refused_naming_the_semaphore(
    flavor: Flavor, make_client: Callable[..., Any], lock_name: str
) -> None:
    client = make_client()
    semaphore = client.get_semaphore(lock_name)
    alice = flavor.owner("alice")
    for call, error, words in [
        (lambda: semaphore.try_acquire(-1), ArgumentError, "permits"),
        (lambda: semaphore.release("2"), ArgumentTypeError, "permits"),
        (lambda: semaphore.acquire(True), ArgumentTypeError, "permits"),
        (lambda: semaphore.try_acquire(1, math.nan), ArgumentError, "wait_time"),
        (lambda: semaphore.try_acquire(1, "1"), ArgumentTypeError, "wait_time"),
        (lambda: semaphore.try_set_permits(2**31), ArgumentError, "permits"),
    ]:
        with pytest.raises(error, match=f"semaphore {lock_name!r}.*{words}"):
            alice(call)
    flavor.run(client.shutdown())
    with pytest.raises(ClientClosedError, match=f"semaphore {lock_name!r}"):
        alice(semaphore.available_permits)
    with pytest.raises(ClientClosedError):
        client.get_semaphore(lock_name)


# --- 4 processes x 8 threads -----------------------------------------------------------

ENTER = """
local holders = redis.call('incr', KEYS[1])
if holders > tonumber(redis.call('get', KEYS[2]) or '0') then
    redis.call('set', KEYS[2], holders)
end
return holders
"""


def _contender(config_yaml: str, name: str, threads: int, rounds: int) -> None:
    """``threads`` threads each take a permit ``rounds`` times, counting the holders
    around a short critical section (a process of the test below)."""
    client = Redisson.create(Config.from_yaml(config_yaml))
    semaphore = client.get_semaphore(name)
    holders, peak, done = (f"{{{name}}}:{key}" for key in ("holders", "peak", "done"))
    raw = client.redis(holders)

    def work() -> None:
        for _ in range(rounds):
            semaphore.acquire()
            try:
                raw.eval(ENTER, 2, holders, peak)
                time.sleep(0.002)
                raw.decr(holders)
                raw.incr(done)
            finally:
                semaphore.release()

    workers = [threading.Thread(target=work) for _ in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    client.shutdown()


def test_permits_are_never_exceeded_by_four_processes_of_eight_threads(
    family_topology: Topology, topology_config: Any, lock_name: str
) -> None:
    config = topology_config(family_topology)
    processes, threads, rounds, permits = 4, 8, 10, 3
    client = Redisson.create(config)
    try:
        semaphore = client.get_semaphore(lock_name)
        assert semaphore.try_set_permits(permits)
        spawn = multiprocessing.get_context("spawn")  # no fork of a process with threads
        args = (config.to_yaml(), lock_name, threads, rounds)
        children = [spawn.Process(target=_contender, args=args) for _ in range(processes)]
        for child in children:
            child.start()
        for child in children:
            child.join(timeout=240)
            assert child.exitcode == 0, child
        raw = client.redis(lock_name)
        keys = [f"{{{lock_name}}}:{key}" for key in ("peak", "done", "holders")]
        peak, done, holders = (int(value or 0) for value in raw.mget(keys))
        assert done == processes * threads * rounds  # every acquisition completed
        assert 1 <= peak <= permits  # never more holders than permits
        print(f"peak {peak}")
        assert holders == 0
        assert semaphore.available_permits() == permits  # every permit given back once
    finally:
        client.shutdown()


# --- lost replies ------------------------------------------------------------------------


def test_a_lost_reply_is_counted_once(flavor: Flavor, proxy: ReplyDropper, lock_name: str) -> None:
    semaphore = client_through(flavor, proxy).get_semaphore(lock_name)
    alice = flavor.owner("alice")
    alice(semaphore.try_set_permits, 5)
    # Each script once first: a fresh server answers NOSCRIPT, which is no lost reply.
    alice(semaphore.acquire)
    alice(semaphore.release)
    alice(semaphore.add_permits, 0)
    for script, call, available in [
        (scripts.ACQUIRE, lambda: semaphore.acquire(2), 3),
        (scripts.RELEASE, lambda: semaphore.release(2), 5),
        (scripts.ADD_PERMITS, lambda: semaphore.add_permits(3), 8),
    ]:
        dropped = proxy.dropped
        proxy.drop_reply_of(script.sha)
        alice(call)  # its reply is lost; retried with its request id
        assert proxy.dropped == dropped + 1
        assert alice(semaphore.available_permits) == available  # applied once


# --- a Redisson-like client on the same key and channel ---------------------------------

JAVA_TRY_ACQUIRE = """
local value = redis.call('get', KEYS[1])
if value ~= false and tonumber(value) >= tonumber(ARGV[1]) then
    redis.call('decrby', KEYS[1], ARGV[1])
    return 1
end
return 0
"""
JAVA_RELEASE = """
local value = redis.call('incrby', KEYS[1], ARGV[1])
redis.call(ARGV[2], KEYS[2], value)
"""


def java_try_acquire(java: redis.Redis, name: str, permits: int) -> bool:
    """RSemaphore.tryAcquire(permits), as Java Redisson runs it (our own Lua)."""
    return bool(java.eval(JAVA_TRY_ACQUIRE, 1, name, permits))


def java_release(java: redis.Redis, name: str, channel: str, permits: int) -> None:
    """RSemaphore.release(permits): the new count is published on the channel."""
    java.eval(JAVA_RELEASE, 2, name, channel, permits, publish_command(java))


def test_a_redisson_client_and_redisson_py_share_the_semaphore(
    flavor: Flavor, make_client: Callable[..., Any], family_topology: Topology, lock_name: str
) -> None:
    semaphore = make_client().get_semaphore(lock_name)
    ours, waiter = flavor.owner("ours"), flavor.owner("waiter")
    channel = naming.prefixed_name("redisson_sc", lock_name, by_slot=by_slot(family_topology))
    assert channel == f"redisson_sc:{{{lock_name}}}"
    with java_client(family_topology, lock_name) as java:
        assert ours(semaphore.try_set_permits, 1)
        assert java.get(lock_name) == "1"  # a plain integer, as Redisson reads it
        assert java_try_acquire(java, lock_name, 1)  # Java takes the only permit
        assert ours(semaphore.try_acquire, 1, 0.2) is False
        waiting = waiter.start_timed(semaphore.acquire)
        time.sleep(0.3)
        assert not waiting.done()
        released_at = time.monotonic()
        java_release(java, lock_name, channel, 1)  # publishes "1": wakes our waiter
        _, finished = waiting.result(timeout=10)
        assert finished - released_at < 1.0 < PAUSE_BOUND
        assert not java_try_acquire(java, lock_name, 1)  # ours now
        with listening(java, channel) as listener:  # as a Java waiter listens
            ours(semaphore.release)
            assert listener.message(timeout=5) == "1"  # the new count
        assert java_try_acquire(java, lock_name, 1)
        java_release(java, lock_name, channel, 1)
    assert ours(semaphore.available_permits) == 1
