"""The spin lock on single and cluster, sync and asyncio: mutual exclusion under
contention across clients; a waiter gets the lock after the holder's unlock by polling,
with no pub/sub at all (nothing subscribed, nothing published); back-off arguments are
checked; reentrancy."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

import pytest
from kind_helpers import assert_reentrant, by_slot, listening, raw_master, subscribers

from redisson_py import (
    ArgumentError,
    ArgumentTypeError,
    ConstantBackOff,
    ExponentialBackOff,
)
from redisson_py.core.routing import naming
from redisson_py.testing import Topology
from redisson_py.testing.owners import Flavor


class Section:
    """A critical section that notices overlap: a counter incremented non-atomically
    (read, pause, write), and the most owners ever inside at once."""

    def __init__(self) -> None:
        self.counter = 0
        self.inside = 0
        self.most_inside = 0

    def enter(self) -> int:
        self.inside += 1
        self.most_inside = max(self.most_inside, self.inside)
        return self.counter

    def leave(self, seen: int) -> None:
        self.counter = seen + 1
        self.inside -= 1


def increments(flavor: Flavor, lock: Any, section: Section, times: int) -> Callable[[], Any]:
    """A call for an owner: ``times`` times, take ``lock`` and increment the counter."""
    if flavor.name == "sync":

        def run() -> None:
            for _ in range(times):
                lock.lock()
                try:
                    seen = section.enter()
                    time.sleep(0.002)
                    section.leave(seen)
                finally:
                    lock.unlock()

        return run

    async def run_async() -> None:
        for _ in range(times):
            await lock.lock()
            try:
                seen = section.enter()
                await asyncio.sleep(0.002)
                section.leave(seen)
            finally:
                await lock.unlock()

    return run_async


def test_owners_of_two_clients_never_overlap(
    flavor: Flavor, make_client: Callable[..., Any], lock_name: str
) -> None:
    clients = [make_client(), make_client()]
    section = Section()
    runs = []
    for index in range(6):
        owner = flavor.owner(f"owner-{index}")
        lock = clients[index % 2].get_spin_lock(lock_name)
        runs.append(owner.start(increments(flavor, lock, section, 10)))
    for run in runs:
        run.result(timeout=120)
    assert section.most_inside == 1
    assert section.counter == 60


def test_a_waiter_polls_without_pubsub_and_gets_the_lock_after_the_unlock(
    flavor: Flavor,
    make_client: Callable[..., Any],
    family_topology: Topology,
    lock_name: str,
) -> None:
    first, second = make_client(), make_client()
    alice, bob = flavor.owner("alice"), flavor.owner("bob")
    holding, waiting_lock = first.get_spin_lock(lock_name), second.get_spin_lock(lock_name)
    alice(holding.lock)  # watchdog: a 30 s TTL, so only polling hands it on quickly
    waiting = bob.start_timed(waiting_lock.lock)
    time.sleep(0.5)
    assert not waiting.done()
    channel = naming.prefixed_name(
        "redisson_lock__channel", lock_name, by_slot=by_slot(family_topology)
    )
    assert subscribers(family_topology, channel) == 0
    with raw_master(family_topology, lock_name) as raw, listening(raw, channel) as listener:
        _, released = alice.start_timed(holding.unlock).result(timeout=10)
        _, granted = waiting.result(timeout=10)
        assert granted - released < 1.0  # the back-off tops out at 128 ms
        assert listener.message(timeout=0.5) is None  # a spin lock publishes nothing
        assert bob(waiting_lock.is_held_by_current_thread) is True
        bob(waiting_lock.unlock)
        assert listener.message(timeout=0.5) is None
    assert subscribers(family_topology, channel) == 0


def test_a_constant_back_off_polls_at_its_pace(
    flavor: Flavor, make_client: Callable[..., Any], lock_name: str
) -> None:
    client = make_client()
    holding = client.get_spin_lock(lock_name)
    waiting_lock = client.get_spin_lock(lock_name, backoff=ConstantBackOff(0.4))
    alice, bob = flavor.owner("alice"), flavor.owner("bob")
    alice(holding.lock)
    started = time.monotonic()
    assert bob(waiting_lock.try_lock, 1.0) is False  # tries at 0, 0.4, 0.8 s: all refused
    assert 1.0 <= time.monotonic() - started < 1.5
    waiting = bob.start_timed(waiting_lock.lock)
    time.sleep(0.2)
    _, released = alice.start_timed(holding.unlock).result(timeout=10)
    _, granted = waiting.result(timeout=10)
    assert granted - released < 0.4 + 0.3  # at the next poll
    bob(waiting_lock.unlock)


def test_back_off_arguments_are_checked(make_client: Callable[..., Any], lock_name: str) -> None:
    client = make_client()
    for wrong in ("fast", 0.1, ExponentialBackOff):
        with pytest.raises(ArgumentTypeError, match="backoff"):
            client.get_spin_lock(lock_name, backoff=wrong)
    for bad in (0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ArgumentError):
            ExponentialBackOff(initial_delay=bad)
        with pytest.raises(ArgumentError):
            ExponentialBackOff(max_delay=bad)
        with pytest.raises(ArgumentError):
            ConstantBackOff(bad)
    client.get_spin_lock(lock_name, backoff=ExponentialBackOff(0.01, 0.5, 3.0))
    client.get_spin_lock(lock_name, backoff=ConstantBackOff(0.01))


def test_a_back_off_delay_of_the_wrong_type_is_an_argument_type_error() -> None:
    with pytest.raises(ArgumentTypeError):
        ExponentialBackOff(initial_delay="0.01")  # type: ignore[arg-type]
    with pytest.raises(ArgumentTypeError):
        ConstantBackOff("0.064")  # type: ignore[arg-type]


def test_the_spin_lock_is_reentrant(
    flavor: Flavor, make_client: Callable[..., Any], lock_name: str
) -> None:
    lock = make_client().get_spin_lock(lock_name)
    alice, bob = flavor.owner("alice"), flavor.owner("bob")
    assert_reentrant(lock, alice, bob)
