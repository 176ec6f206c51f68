"""The asyncio client's watchdog on threads (docs/asyncio.md): an event loop blocked for
longer than the watchdog timeout keeps its holds, the loss is still reported honestly
(and never as a double grant) when the server is frozen meanwhile, and shutdown leaves
no thread and no connection behind. asyncio only: the threaded client's watchdog has
always been a thread.
"""

from __future__ import annotations

import asyncio
import itertools
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from redisson_py import Config, LockLost, LockNotOwnedError
from redisson_py import Redisson as ThreadedRedisson
from redisson_py.asyncio import Redisson
from redisson_py.core.routing import naming
from redisson_py.events import LockEvent
from redisson_py.testing import Topology

WATCHDOG = 1.0


@pytest.fixture(params=["single", "cluster", "sentinel"])
def topology(request: pytest.FixtureRequest) -> Topology:
    fixture: Topology = request.getfixturevalue(f"{request.param}_topology")
    return fixture


def _threads() -> set[str]:
    return {t.name for t in threading.enumerate() if t.name.startswith("redisson-py")}


def _pttl(topology: Topology, name: str) -> int:
    if topology.kind == "cluster":
        node = topology.master_for_slot(naming.key_slot(name))
    else:
        node = topology.master()
    value: int = node.admin.pttl(name)
    return value


def test_a_blocked_loop_keeps_its_hold(
    topology: Topology, topology_config: Any, lock_name: str
) -> None:
    """The issue's test: ``time.sleep(2 * watchdog_timeout)`` inside ``async with lock``.
    The hold survives, renewed during the block (the key's TTL is seen renewed from
    another thread while the loop sleeps, and another client cannot take the lock)."""
    config = topology_config(topology, lock_watchdog_timeout=WATCHDOG)
    seen: list[int] = []
    others: list[bool] = []

    def watch(stop: threading.Event) -> None:
        other = ThreadedRedisson.create(config)
        try:
            while not stop.wait(0.1):
                seen.append(_pttl(topology, lock_name))
                others.append(other.get_lock(lock_name).try_lock())
        finally:
            other.shutdown()

    async def main() -> tuple[list[LockEvent], int]:
        client = await Redisson.create(config)
        heard: list[LockEvent] = []
        client.add_listener(heard.append)
        lock = client.get_lock(lock_name)
        stop = threading.Event()
        watcher = threading.Thread(target=watch, args=(stop,))
        async with lock:
            watcher.start()
            time.sleep(2 * WATCHDOG)  # noqa: ASYNC251  # the event loop is blocked: the test
            stop.set()
            watcher.join()
            held = await lock.is_held_by_current_task()
        await client.shutdown()
        assert held
        return heard, len(seen)

    heard, looks = asyncio.run(main())
    renewed = [e for e in heard if e.kind == "renewed"]
    assert len(renewed) >= 3, heard  # every third of the watchdog timeout, while blocked
    assert not [e for e in heard if e.kind == "lost"]
    assert looks >= 10 and not any(others)
    # Without renewal the TTL would only fall, and the key would be gone by the end.
    assert min(seen) > 0
    assert any(later > earlier for earlier, later in itertools.pairwise(seen)), seen


def test_renewals_during_a_blocked_three_seconds(
    topology: Topology, topology_config: Any, lock_name: str
) -> None:
    """The figure for the docs: renewals while the loop is blocked for 3 s, with a
    3 s watchdog timeout (a renewal every second)."""
    config = topology_config(topology, lock_watchdog_timeout=3.0)

    async def main() -> int:
        client = await Redisson.create(config)
        heard: list[LockEvent] = []
        client.add_listener(heard.append)
        async with client, client.get_lock(lock_name):
            time.sleep(3.0)  # noqa: ASYNC251  # blocked on purpose
            await asyncio.sleep(0)  # the events the threads queued for the loop
        return sum(e.kind == "renewed" for e in heard)

    renewals = asyncio.run(main())
    print(f"\n{topology.kind}: {renewals} renewals during a blocked 3 s")
    assert renewals >= 2


def test_the_opt_out_keeps_everything_on_the_loop(
    single_topology: Topology, topology_config: Any, lock_name: str
) -> None:
    """``watchdog_thread=False``: no thread, and a loop blocked past the watchdog
    timeout loses the hold, reported honestly once it wakes (the documented limit)."""
    config = topology_config(single_topology, lock_watchdog_timeout=WATCHDOG)

    async def main() -> None:
        before = _threads()
        client = await Redisson.create(config, watchdog_thread=False)
        lock = client.get_lock(lock_name)
        async with client:
            await lock.lock()
            assert _threads() == before
            time.sleep(2 * WATCHDOG)  # noqa: ASYNC251  # blocked on purpose
            with pytest.raises(LockNotOwnedError):
                await lock.unlock()

    asyncio.run(main())


@pytest.mark.parametrize("watchdog_thread", [True, False], ids=["threads", "opt-out"])
def test_a_blocked_loop_with_the_server_frozen_loses_the_hold_honestly(
    flavorless_single: Topology, lock_name: str, watchdog_thread: bool
) -> None:
    """The loop blocked while the server is frozen: renewals cannot be confirmed, so
    the hold is reported lost at its safe end, by the threads, before the key can
    expire; another client is granted the lock only after that, and the holder hears
    of it on its loop (on_lock_lost, unlock raising). With the opt-out, the documented
    limit: the loss is recorded only once the loop wakes, after the other's grant."""
    topology = flavorless_single
    config = Config.from_yaml(topology.redisson_yaml())
    config.lock_watchdog_timeout = WATCHDOG
    config.server_config.timeout = 0.3
    config.server_config.retry_attempts = 1
    master = topology.master()
    lost_at: list[float] = []
    granted: list[tuple[float, bool]] = []
    on_loop: list[bool] = []
    events_on_loop: list[bool] = []

    def contender(client: Any, other: Any) -> None:
        try:
            lock = other.get_lock(lock_name)
            if lock.try_lock(10.0):
                holds = client._state.holds
                owner_lost = any(
                    name == lock_name for name, _ in list(holds._lost)
                )  # what the holder's client knew when the other was granted
                granted.append((time.monotonic(), owner_lost))
                lock.unlock()
        finally:
            other.shutdown()

    async def main() -> None:
        loop_thread = threading.current_thread()

        def on_lost(lost: LockLost) -> None:
            lost_at.append(time.monotonic())
            on_loop.append(threading.current_thread() is loop_thread)

        client = await Redisson.create(
            config, on_lock_lost=on_lost, watchdog_thread=watchdog_thread
        )
        client.add_listener(
            lambda event: (
                event.kind == "lost"
                and events_on_loop.append(threading.current_thread() is loop_thread)
            )
        )
        lock = client.get_lock(lock_name)
        await lock.lock()
        rival = ThreadedRedisson.create(config)
        assert rival.get_lock(lock_name).is_locked()  # connections warm
        other = threading.Thread(target=contender, args=(client, rival))
        master.pause()
        try:
            other.start()
            time.sleep(0.5)  # noqa: ASYNC251  # blocked on purpose
            # Thawed while the loop is still blocked: the key expired meanwhile.
            threading.Timer(2.5 * WATCHDOG, master.resume).start()
            time.sleep(4 * WATCHDOG)  # noqa: ASYNC251  # the loop is blocked
        finally:
            other.join(timeout=15)
            if master.is_paused():
                master.resume()
        with pytest.raises(LockNotOwnedError):
            await lock.unlock()
        await asyncio.sleep(0)
        await client.shutdown()

    asyncio.run(main())
    assert granted
    assert granted[0][1] is watchdog_thread, "who knew first: the holder, or the other"
    assert lost_at and on_loop == [True] and events_on_loop == [True]


def test_shutdown_leaves_no_thread_and_no_connection(
    topology: Topology, topology_config: Any, lock_name: str
) -> None:
    """Measures what the threads cost (threads, connections) and checks shutdown
    takes them back."""
    config = topology_config(topology, lock_watchdog_timeout=WATCHDOG)

    def connections() -> int:
        total = 0
        for node in topology.nodes:
            if node.role() == "master":
                listing = node.admin.execute_command("CLIENT", "LIST")
                text = listing.decode() if isinstance(listing, bytes) else str(listing)
                total += len([line for line in text.splitlines() if line])
        return total

    async def main() -> dict[str, int]:
        threads_before = threading.active_count()
        conns_before = connections()
        client = await Redisson.create(config)
        lock = client.get_lock(lock_name)
        await lock.lock()
        conns_held = connections()
        await asyncio.sleep(WATCHDOG)  # a few rounds on the thread
        conns_renewing = connections()
        threads_held = threading.active_count()
        await lock.unlock()
        await client.shutdown()
        await asyncio.sleep(0.1)
        return {
            "extra_threads": threads_held - threads_before,
            "extra_connections": conns_renewing - conns_held,
            "threads_after": threading.active_count() - threads_before,
            "names_after": len(_threads()),
            "connections_after": connections() - conns_before,
        }

    figures = asyncio.run(main())
    print(f"\n{topology.kind}: {figures}")
    assert figures["extra_threads"] == 2
    assert figures["threads_after"] == 0 and figures["names_after"] == 0
    assert figures["extra_connections"] == 1  # one per master holding a lock
    assert figures["connections_after"] == 0


def test_a_loop_closed_without_shutdown_stops_the_threads(
    single_topology: Topology, topology_config: Any, lock_name: str
) -> None:
    """``asyncio.run`` returning without ``shutdown()``: the threads stop renewing (as
    the loop's tasks would have), so the lock expires after the watchdog timeout instead
    of living as long as the process; no thread is left."""
    config = topology_config(single_topology, lock_watchdog_timeout=WATCHDOG)

    async def main() -> None:
        client = await Redisson.create(config)
        await client.get_lock(lock_name).lock()

    before = _threads()
    asyncio.run(main())
    other = ThreadedRedisson.create(config)
    try:
        assert other.get_lock(lock_name).try_lock(4 * WATCHDOG) is True
        other.get_lock(lock_name).unlock()
    finally:
        other.shutdown()
    deadline = time.monotonic() + 5
    while _threads() - before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _threads() - before


@pytest.fixture
def flavorless_single(topology_factory: Callable[..., Topology]) -> Iterator[Topology]:
    topology = topology_factory("single")  # its own: a test freezes its node
    yield topology
    for node in topology.nodes:
        if node.is_paused():
            node.resume()
