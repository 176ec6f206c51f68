"""Waiters at scale: N waiters blocked in one client; what does each cost, how fast is
one woken, and how many connections does the client hold?

One fresh process per case, one client for the waiters (``clientName`` set, so the
servers can tell its connections apart) and another for the holder, both in that
process. The holder takes ``names`` locks (a lease far longer than the run); then N
waiters start at once, waiter ``i`` calling ``lock()`` on name ``i % names``: asyncio
tasks, or threads with the sync client. Once every waiter is blocked (joined to its
channel's subscription, every subscription confirmed by its node):

- **memory per waiter**: the RSS growth while they block, over N (for threads, their
  stacks too); and, in the last round, for up to 1,000 waiters, the Python memory
  allocated since just before the waiters started and still held (``tracemalloc``),
  over N. Both include the task or thread itself, not only the library's share;
- **connections per node**: the runner counts the waiters' client's connections on
  every node (``CLIENT LIST``), pub/sub ones (the promise: one per node, whatever N)
  apart from command ones;
- **wake-up latency**: names are released one after another; each release starts a
  chain: the woken waiter records the time from the release to its ``lock()``
  returning, and releases the lock itself, waking the next waiter of that name. One
  hand-off at a time, so each figure is one wake-up while the other waiters stay
  parked (a burst of simultaneous releases would measure queueing instead). Small
  cases repeat the whole cycle (the holder takes the names again and the waiters block
  again) until they have at least ``MIN_SAMPLES`` hand-offs; every case runs at least
  two rounds. The time for N waiters to block is the first round's (a cold start: N
  first attempts at once), and the library's log warnings are counted.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import math
import multiprocessing
import threading
import time
import tracemalloc
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any

from benchmarks.bench_memory import rss_mb
from benchmarks.machine import load_average
from benchmarks.stats import distribution
from redisson_py import Config, Redisson
from redisson_py import asyncio as aio
from redisson_py.testing import Topology
from redisson_py.testing.topologies.replies import is_pubsub_connection

ASYNCIO_SIZES = (10, 100, 1_000, 10_000)
NAMES = 1_000
THREADS = 1_000
THREAD_NAMES = 100
MIN_SAMPLES = 200
TRACED_MAX = 1_000
HOLD_LEASE = 600.0
"""The holder's lease, seconds: longer than any case, so a missed wake-up shows as a
hang (the case's timeout), not as a late acquire."""
WAITER_CLIENT = "bench-waiters"
HOLDER_CLIENT = "bench-holder"
CASE_TIMEOUT = 900.0


def _config(yaml: str, name: str) -> Config:
    config = Config.from_yaml(yaml)
    config.server_config.client_name = name
    return config


def _blocked(client: Any, count: int) -> bool:
    """Every one of ``count`` waiters has joined its channel, and every channel's
    subscription is confirmed (a message published now reaches it)."""
    service = client.connection_manager.pubsub
    subs = service._table.all()
    if sum(sub.waiters for sub in subs) != count or any(sub.address is None for sub in subs):
        return False
    return not any(listener.confirmations for listener in service._listeners.values())


class _Round:
    """One round's bookkeeping: when each name was last released, how many of its
    waiters have yet to take it, the latencies seen."""

    def __init__(self, names: list[str], per_name: dict[str, int], make_event: Any) -> None:
        self.released_at: dict[str, float] = {}
        self.left = dict(per_name)
        self.done = {name: make_event() for name in names}
        self.samples: list[float] = []

    def acquired(self, name: str) -> bool:
        """A waiter of ``name`` got it now: record; True when it is the last one."""
        self.samples.append(time.monotonic() - self.released_at[name])
        self.left[name] -= 1
        return self.left[name] == 0


def _per_name(names: list[str], count: int) -> dict[str, int]:
    per_name = dict.fromkeys(names, 0)
    for index in range(count):
        per_name[names[index % len(names)]] += 1
    return per_name


def _traced_round(number: int, rounds: int, count: int) -> bool:
    """Whether round ``number`` runs under ``tracemalloc``: the last one, for up to
    `TRACED_MAX` waiters (tracing slows every allocation; with 10,000 tasks starting at
    once, that much slower an event loop turns round trips into timeouts)."""
    return number == rounds - 1 and count <= TRACED_MAX


def _rss_before() -> float:
    gc.collect()
    return rss_mb()


def _rss_growth(before: float, count: int) -> float:
    gc.collect()
    return (rss_mb() - before) * 1024 * 1024 / count


def _traced(count: int) -> float:
    traced, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return traced / count


class _Warnings(logging.Handler):
    """Counts the library's warnings (a round trip timed out, a wait went on through
    failures...)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.count = 0
        logging.getLogger("redisson_py").addHandler(self)

    def emit(self, record: logging.LogRecord) -> None:
        self.count += 1


async def _async_case(conn: Connection, yaml: str, count: int, names: int, rounds: int) -> None:
    warnings = _Warnings()
    holder = await aio.Redisson.create(_config(yaml, HOLDER_CLIENT))
    client = await aio.Redisson.create(_config(yaml, WAITER_CLIENT))
    lock_names = [f"bench:waiters:{i}" for i in range(names)]
    held = {name: holder.get_lock(name) for name in lock_names}
    per_name = _per_name(lock_names, count)

    async def hold_all() -> None:
        # In this task: it releases them below (a task owns what it takes).
        for lock in held.values():
            await lock.lock(HOLD_LEASE)

    async def waiter(index: int, state: _Round) -> None:
        name = lock_names[index % names]
        lock = client.get_lock(name)
        await lock.lock()
        last = state.acquired(name)
        state.released_at[name] = time.monotonic()
        await lock.unlock()
        if last:
            state.done[name].set()

    await hold_all()
    await asyncio.to_thread(conn.send, "ready")
    samples: list[float] = []
    memory: dict[str, float] = {}
    block_seconds = drain_seconds = math.nan
    for number in range(rounds):
        state = _Round(lock_names, per_name, asyncio.Event)
        traced = _traced_round(number, rounds, count)
        rss_before = _rss_before()
        if traced:
            tracemalloc.start()
        started = time.monotonic()
        tasks = [asyncio.create_task(waiter(i, state)) for i in range(count)]
        while not _blocked(client, count):  # noqa: ASYNC110 (the library's state: no event)
            await asyncio.sleep(0.005)
        if number == 0:
            block_seconds = time.monotonic() - started
            memory["rss_bytes_per_waiter"] = _rss_growth(rss_before, count)
            await asyncio.to_thread(conn.send, ("blocked", block_seconds))
            await asyncio.to_thread(conn.recv)  # the runner counted the connections
        if traced:
            memory["traced_bytes_per_waiter"] = _traced(count)
        drained = time.monotonic()
        for name in lock_names:
            state.released_at[name] = time.monotonic()
            await held[name].unlock()
            await state.done[name].wait()
        drain_seconds = time.monotonic() - drained
        await asyncio.gather(*tasks)
        samples += state.samples
        if number + 1 < rounds:
            await hold_all()
    await client.shutdown()
    await holder.shutdown()
    figures = {
        "samples": samples,
        "block_seconds": block_seconds,
        "drain_seconds": drain_seconds,
        **memory,
        "warnings": warnings.count,
    }
    conn.send(("done", figures))


def _thread_case(conn: Connection, yaml: str, count: int, names: int, rounds: int) -> None:
    warnings = _Warnings()
    holder = Redisson.create(_config(yaml, HOLDER_CLIENT))
    client = Redisson.create(_config(yaml, WAITER_CLIENT))
    lock_names = [f"bench:waiters:{i}" for i in range(names)]
    held = {name: holder.get_lock(name) for name in lock_names}
    per_name = _per_name(lock_names, count)
    mutex = threading.Lock()
    states: list[_Round] = []
    go = [threading.Event() for _ in range(rounds)]

    def waiter(index: int) -> None:
        name = lock_names[index % names]
        lock = client.get_lock(name)
        for number in range(rounds):
            go[number].wait()
            state = states[number]
            lock.lock()
            with mutex:
                last = state.acquired(name)
                state.released_at[name] = time.monotonic()
            lock.unlock()
            if last:
                state.done[name].set()

    def hold_all() -> None:
        for lock in held.values():
            lock.lock(HOLD_LEASE)

    hold_all()
    conn.send("ready")
    rss_before = _rss_before()
    started = time.monotonic()
    threads = [threading.Thread(target=waiter, args=(i,), daemon=True) for i in range(count)]
    for thread in threads:
        thread.start()
    samples: list[float] = []
    memory: dict[str, float] = {}
    block_seconds = drain_seconds = math.nan
    for number in range(rounds):
        state = _Round(lock_names, per_name, threading.Event)
        states.append(state)
        traced = _traced_round(number, rounds, count)
        if traced:
            tracemalloc.start()
        go[number].set()
        while not _blocked(client, count):
            time.sleep(0.005)
        if number == 0:
            block_seconds = time.monotonic() - started
            memory["rss_bytes_per_waiter"] = _rss_growth(rss_before, count)
            conn.send(("blocked", block_seconds))
            conn.recv()
        if traced:
            memory["traced_bytes_per_waiter"] = _traced(count)
        drained = time.monotonic()
        for name in lock_names:
            with mutex:
                state.released_at[name] = time.monotonic()
            held[name].unlock()
            state.done[name].wait()
        drain_seconds = time.monotonic() - drained
        samples += state.samples
        if number + 1 < rounds:
            hold_all()
    for thread in threads:
        thread.join()
    client.shutdown()
    holder.shutdown()
    figures = {
        "samples": samples,
        "block_seconds": block_seconds,
        "drain_seconds": drain_seconds,
        **memory,
        "warnings": warnings.count,
    }
    conn.send(("done", figures))


def _child(conn: Connection, kind: str, yaml: str, count: int, names: int, rounds: int) -> None:
    if kind == "asyncio":
        asyncio.run(_async_case(conn, yaml, count, names, rounds))
    else:
        _thread_case(conn, yaml, count, names, rounds)


def _connections(topology: Topology) -> list[dict[str, Any]]:
    """The waiters' client's connections on every node: pub/sub, command, channels."""
    rows = []
    for node in topology.data_nodes:
        mine = node.connections(WAITER_CLIENT)
        pubsub = [e for e in mine if is_pubsub_connection(e)]
        rows.append(
            {
                "node": f"{node.role()} :{node.port}",
                "pubsub": len(pubsub),
                "command": len(mine) - len(pubsub),
                "channels": sum(int(e.get("sub", 0)) + int(e.get("ssub", 0)) for e in pubsub),
            }
        )
    return rows


def _receive(pipe: Connection, what: str) -> Any:
    if not pipe.poll(CASE_TIMEOUT):
        raise RuntimeError(f"waiters benchmark: {what} did not come in {CASE_TIMEOUT:g} s")
    return pipe.recv()


def case(topology: Topology, kind: str, count: int, names: int) -> dict[str, Any]:
    """One case: ``count`` waiters (``kind``: "asyncio" tasks or "threads") on ``names``
    names; its figures."""
    rounds = max(2, math.ceil(MIN_SAMPLES / count))
    load = load_average()
    context = multiprocessing.get_context("spawn")
    ours, theirs = context.Pipe()
    args = (theirs, kind, topology.redisson_yaml(), count, names, rounds)
    process = context.Process(target=_child, args=args, daemon=True)
    started = time.monotonic()
    process.start()
    try:
        _receive(ours, "the holder's locks")
        _receive(ours, "every waiter blocked")
        connections = _connections(topology)
        ours.send("go")
        _, figures = _receive(ours, "the hand-offs")
        process.join(30)
    finally:
        if process.is_alive():
            process.kill()
            process.join()
    samples: list[float] = figures.pop("samples")
    return {
        "kind": kind,
        "waiters": count,
        "names": names,
        "rounds": rounds,
        "latency": distribution(samples),
        "samples": samples,
        "traced_bytes_per_waiter": math.nan,
        **figures,
        "connections": connections,
        "pubsub_per_node_max": max(row["pubsub"] for row in connections),
        "seconds": time.monotonic() - started,
        "load_average_before": load,
    }


def run(
    topology: Topology,
    *,
    sizes: tuple[int, ...] = ASYNCIO_SIZES,
    threads: tuple[int, int] | None = (THREADS, THREAD_NAMES),
    log: Callable[[str], None] = lambda text: None,
) -> dict[str, Any]:
    """Every asyncio size (on ``min(size, NAMES)`` names), then the threads case."""
    cases = []
    for count in sizes:
        log(f"  {count:,} asyncio waiters")
        cases.append(case(topology, "asyncio", count, min(count, NAMES)))
    if threads is not None:
        log(f"  {threads[0]:,} threads")
        cases.append(case(topology, "threads", *threads))
    return {"nodes": len(topology.data_nodes), "cases": cases}
