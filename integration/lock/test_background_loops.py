"""The client's background loops never die silently (issue 38, item 1).

An unexpected error in the watchdog's renewal loop, its loss-report loop or a pub/sub
reader is logged at ERROR, and the loop goes on: holds are still renewed, losses still
reported, waiters still woken. Before, one error outside a loop's own ``try`` (the
report loop's wait overflowed on a lease of 1e10 s) ended its thread for good, and
``on_lock_lost`` fell silent for every lock of the client. Each test injects one error
into one iteration of a loop (the server stays real) and checks what a user relies on
afterwards.
"""

from __future__ import annotations

import inspect
import logging
import threading
import time
from typing import Any

import pytest
import redis

from redisson_py import LockLost
from redisson_py.asyncio import pubsub as async_pubsub
from redisson_py.core.flows.watchdog import ExpiryReports, Schedule
from redisson_py.sync import pubsub as sync_pubsub
from redisson_py.testing import Topology
from redisson_py.testing.owners import Flavor

INJECTED = "injected failure for the test"


class Told:
    """A lost-lock callback that records what it was told."""

    def __init__(self) -> None:
        self.events: list[LockLost] = []
        self.seen = threading.Event()

    def __call__(self, event: LockLost) -> None:
        self.events.append(event)
        self.seen.set()


def _fail_once(monkeypatch: pytest.MonkeyPatch, owner: Any, name: str) -> threading.Event:
    """Make ``owner.name`` (a method) raise once, the next time it is called; the event
    is set when it has."""
    original = getattr(owner, name)
    failed = threading.Event()

    def once(*args: Any, **kwargs: Any) -> Any:
        if not failed.is_set():
            failed.set()
            raise RuntimeError(INJECTED)
        return original(*args, **kwargs)

    async def once_async(*args: Any, **kwargs: Any) -> Any:
        if not failed.is_set():
            failed.set()
            raise RuntimeError(INJECTED)
        return await original(*args, **kwargs)

    monkeypatch.setattr(owner, name, once_async if inspect.iscoroutinefunction(original) else once)
    return failed


def _logged(caplog: pytest.LogCaptureFixture) -> bool:
    """True when the injected error was logged at ERROR, with its traceback."""
    return any(
        record.levelno == logging.ERROR
        and record.exc_info is not None
        and INJECTED in str(record.exc_info[1])
        for record in caplog.records
    )


def test_the_loss_reports_go_on_after_an_error_in_their_loop(
    flavor: Flavor,
    single_topology: Topology,
    topology_config: Any,
    lock_name: str,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.ERROR, logger="redisson_py")
    failed = _fail_once(monkeypatch, ExpiryReports, "wake_at")
    told = Told()
    client = flavor.create_client(topology_config(single_topology), on_lock_lost=told)
    holder = flavor.owner("holder")
    first, second = client.get_lock(f"{lock_name}:1"), client.get_lock(f"{lock_name}:2")
    holder(first.lock, 0.5)  # starts the report loop, which meets the error at once
    assert told.seen.wait(5), "the lease's end was never reported: the report loop died"
    assert failed.is_set() and _logged(caplog)
    assert told.events[0].name == f"{lock_name}:1" and "lease" in told.events[0].reason
    told.seen.clear()
    holder(second.lock, 0.5)  # and the loop goes on for later holds
    assert told.seen.wait(5), "a later lease's end was not reported"
    assert [event.name for event in told.events] == [f"{lock_name}:1", f"{lock_name}:2"]


def test_renewals_go_on_after_an_error_in_their_loop(
    flavor: Flavor,
    single_topology: Topology,
    topology_config: Any,
    lock_name: str,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.ERROR, logger="redisson_py")
    failed = _fail_once(monkeypatch, Schedule, "wake_at")
    told = Told()
    # Renewed every 0.5 s: a dead renewal loop lets the key expire within 1.5 s.
    config = topology_config(single_topology, lock_watchdog_timeout=1.5)
    client = flavor.create_client(config, on_lock_lost=told)
    holder = flavor.owner("holder")
    lock = client.get_lock(lock_name)
    holder(lock.lock)
    time.sleep(4.0)  # well past the watchdog timeout
    assert failed.is_set() and _logged(caplog)
    assert told.events == [], told.events[0].reason if told.events else ""
    master = single_topology.master()
    with redis.Redis(host=master.host, port=master.port, socket_timeout=5) as admin:
        assert admin.exists(lock_name) == 1
    holder(lock.unlock)  # still this owner's, renewed all along


def test_waiters_are_still_woken_after_an_error_in_the_pubsub_reader(
    flavor: Flavor,
    single_topology: Topology,
    topology_config: Any,
    lock_name: str,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.ERROR, logger="redisson_py")
    client = flavor.create_client(topology_config(single_topology))  # watchdog: 30 s
    holder, waiter = flavor.owner("holder"), flavor.owner("waiter")
    lock = client.get_lock(lock_name)
    holder(lock.lock)
    waiting = waiter.start(lock.lock)  # subscribes: the reader runs
    time.sleep(0.5)
    module: Any = sync_pubsub if flavor.name == "sync" else async_pubsub
    failed = _fail_once(monkeypatch, module.PubSubService, "_sweep")
    assert failed.wait(5), "the reader never swept"
    time.sleep(0.3)  # the reader's loop runs again
    released = time.monotonic()
    holder(lock.unlock)
    waiting.result(timeout=10)
    # Woken by the unlock message, not at the holder's TTL (up to 30 s later).
    assert time.monotonic() - released < 3.0
    assert _logged(caplog)
    waiter(lock.unlock)
