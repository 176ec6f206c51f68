"""Memory: resident set size of a client process after 10,000 and after N ``lock()`` +
``unlock()`` cycles (default 200,000; ``--full``: 1,000,000), which should not differ by
more than 5 MB: no per-cycle leak in the client, its hold table, subscriptions or pools.

The cycles run in a fresh process (nothing else was ever allocated there), one thread, one
lock, the sync client with its watchdog (lease-less holds). RSS is read from
``/proc/self/status`` after ``gc.collect()`` at the checkpoints.
"""

from __future__ import annotations

import gc
import multiprocessing
import time
from multiprocessing.connection import Connection
from typing import Any

from benchmarks.contenders import Server, redisson_config
from redisson_py import Redisson

FIRST_CHECKPOINT = 10_000
DEFAULT_CYCLES = 200_000
FULL_CYCLES = 1_000_000
LIMIT_MB = 5.0


def rss_mb() -> float:
    """This process's resident set size in MiB (Linux)."""
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def _cycler(conn: Connection, port: int, cycles: int) -> None:
    client = Redisson.create(redisson_config(Server(port)))
    lock = client.get_lock("bench:memory")
    step = max(FIRST_CHECKPOINT, (cycles - FIRST_CHECKPOINT) // 10)
    checkpoints = sorted({FIRST_CHECKPOINT, *range(FIRST_CHECKPOINT + step, cycles, step), cycles})
    points = []
    done = 0
    started = time.monotonic()
    for checkpoint in checkpoints:
        while done < checkpoint:
            lock.lock()
            lock.unlock()
            done += 1
        gc.collect()
        points.append((done, rss_mb(), time.monotonic() - started))
    client.shutdown()
    conn.send(points)


def run(server: Server, *, cycles: int = DEFAULT_CYCLES) -> dict[str, Any]:
    """RSS (MiB) at each checkpoint, and the growth from 10,000 cycles to the end."""
    context = multiprocessing.get_context("spawn")
    ours, theirs = context.Pipe()
    process = context.Process(target=_cycler, args=(theirs, server.port, cycles), daemon=True)
    process.start()
    try:
        if not ours.poll(3600):
            raise RuntimeError("the memory benchmark's process did not report")
        points: list[tuple[int, float, float]] = ours.recv()
        process.join(30)
    finally:
        if process.is_alive():
            process.kill()
            process.join()
    first, last = points[0], points[-1]
    return {
        "unit": "MiB",
        "cycles": cycles,
        "points": [{"cycles": c, "rss_mb": r, "seconds": s} for c, r, s in points],
        "rss_first_mb": first[1],
        "rss_last_mb": last[1],
        "growth_mb": last[1] - first[1],
        "limit_mb": LIMIT_MB,
        "cycles_per_second": last[0] / last[2],
    }
