"""Contended throughput: 2 processes x 4 threads (or 4 asyncio tasks) on one lock.

Each owner loops ``acquire()``; ``release()`` with an empty critical section. The
processes start together at a shared ``time.monotonic()`` instant, a sampler thread in
each reads the owners' counts at the end of each of three equal windows, and the result
is the median window's acquisitions per second over both processes. How evenly the
acquisitions were shared is Jain's fairness index over the 8 owners (1.0: equal shares,
0.125: one owner got everything): a lock that lets the releasing owner take it straight
back scores high throughput and low fairness. Each process also measures its own CPU
time (user and system, every thread) over the windows: the clients' CPU per
acquisition, summed over both processes.
"""

from __future__ import annotations

import asyncio
import resource
import threading
import time
from multiprocessing.connection import Connection
from typing import Any

from benchmarks.bench_handoff import behind_delay
from benchmarks.contenders import AsyncContender, Contender, Server
from benchmarks.stats import jain_fairness, median
from benchmarks.workers import spawned

KINDS = ("ours", "ours-queued", "ours-asyncio", "redis-py", "python-redis-lock", "pottery")
RTT_KINDS = ("ours", "ours-queued", "python-redis-lock")
"""The contenders of the contended run with a round trip added (issue 42)."""
RTT_DELAY = 0.001
PROCESSES = 2
OWNERS = 4
WINDOWS = 3


def _cpu() -> float:
    """This process's CPU seconds so far (user and system, every thread)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _sample(counts: list[int], start: float, window: float) -> tuple[list[int], float]:
    """Total count at the end of each window, and the process's CPU seconds from the
    start to the end of the last window (runs in a thread)."""
    time.sleep(max(0.0, start - time.monotonic()))
    started = _cpu()
    totals = []
    for number in range(1, WINDOWS + 1):
        time.sleep(max(0.0, start + number * window - time.monotonic()))
        totals.append(sum(counts))
    return totals, _cpu() - started


def _run_threads(kind: str, server: Server, name: str, conn: Connection) -> None:
    contender = Contender(kind, [server])
    cycles = [contender.lock(name) for _ in range(OWNERS)]
    counts = [0] * OWNERS
    conn.send("ready")
    start, window = conn.recv()
    end = start + WINDOWS * window

    def owner(index: int) -> None:
        cycle = cycles[index]
        time.sleep(max(0.0, start - time.monotonic()))
        while time.monotonic() < end:
            cycle.acquire()
            cycle.release()
            counts[index] += 1

    threads = [threading.Thread(target=owner, args=(i,)) for i in range(OWNERS)]
    for thread in threads:
        thread.start()
    totals, cpu = _sample(counts, start, window)
    for thread in threads:
        thread.join()
    contender.close()
    conn.send((totals, counts, cpu))


def _run_tasks(kind: str, server: Server, name: str, conn: Connection) -> None:
    async def main() -> tuple[list[int], list[int], float]:
        contender = AsyncContender(kind, server)
        await contender.start()
        cycles = [contender.lock(name) for _ in range(OWNERS)]
        counts = [0] * OWNERS
        conn.send("ready")
        start, window = await asyncio.to_thread(conn.recv)
        end = start + WINDOWS * window

        async def owner(index: int) -> None:
            cycle = cycles[index]
            await asyncio.sleep(max(0.0, start - time.monotonic()))
            while time.monotonic() < end:
                await cycle.acquire()
                await cycle.release()
                counts[index] += 1

        # The sampler is a thread: a task would be delayed by owners that never yield.
        sampler = asyncio.create_task(asyncio.to_thread(_sample, counts, start, window))
        await asyncio.gather(*(owner(i) for i in range(OWNERS)))
        totals, cpu = await sampler
        await contender.close()
        return totals, counts, cpu

    conn.send(asyncio.run(main()))


def _process(conn: Connection, kind: str, port: int, name: str) -> None:
    if kind.endswith("asyncio"):
        _run_tasks(kind, Server(port), name, conn)
    else:
        _run_threads(kind, Server(port), name, conn)


def _measure(kind: str, server: Server, window: float) -> dict[str, Any]:
    name = f"bench:contended:{kind}"
    arguments = [(kind, server.port, name)] * PROCESSES
    with spawned(_process, arguments, what=f"contended {kind}") as pipes:
        start = time.monotonic() + 0.3
        for pipe in pipes:
            pipe.send((start, window))
        reports = []
        for pipe in pipes:
            if not pipe.poll(WINDOWS * window + 60):
                raise RuntimeError(f"contended {kind}: a worker process did not report")
            reports.append(pipe.recv())
    totals = [sum(report[0][w] for report in reports) for w in range(WINDOWS)]
    per_window = [b - a for a, b in zip([0, *totals[:-1]], totals, strict=True)]
    rates = [n / window for n in per_window]
    owners = [count for report in reports for count in report[1]]
    return {
        "window_rates": rates,
        "rate": median(rates),
        "owner_counts": owners,
        "fairness": jain_fairness(owners),
        "client_cpu_us": sum(report[2] for report in reports) / max(1, totals[-1]) * 1e6,
    }


def run_rtt(server: Server, *, delay: float = RTT_DELAY, window: float = 2.0) -> dict[str, Any]:
    """`run` of `RTT_KINDS` with ``delay`` seconds of round trip added between every
    process and the server (a delay proxy)."""
    with behind_delay(server, delay) as proxied:
        return {**run(proxied, window=window, kinds=RTT_KINDS), "delay_seconds": delay}


def run(server: Server, *, window: float = 2.0, kinds: tuple[str, ...] = KINDS) -> dict[str, Any]:
    """Acquisitions/s of every kind under contention, with fairness."""
    results = {kind: _measure(kind, server, window) for kind in kinds}
    return {
        "unit": "acquisitions/s",
        "layout": f"{PROCESSES} processes x {OWNERS} owners",
        "window_seconds": window,
        "windows": WINDOWS,
        "results": results,
    }
