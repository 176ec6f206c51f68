"""Contended asyncio throughput: one process, 100 tasks on 10 locks (10 tasks per lock).

Each task loops ``acquire()``; ``release()`` on its lock with an empty critical section.
redisson-py asyncio (``get_lock(name)``, ``lock()``/``unlock()``) against the same work
done with the raw scripts: the waiting floor of :mod:`benchmarks.contenders`
(``floor-asyncio-waiting``: the library's ACQUIRE and RELEASE scripts by
``redis.asyncio``, a refused task sleeping until the unlock message, as any lock that
other processes share must). Beside them, a bound rather than a floor:
``floor-asyncio-queued``, whose tasks queue on an ``asyncio.Lock`` per name in the
process and never wait through Redis (two round trips per acquisition and none spent
waiting, which no lock shared with other processes can match: a waiter learns of a
release by pub/sub and tries again, and a task that releases may take its lock straight
back before the waiter's try arrives).

The contenders live in one worker process (one event loop, one redis-server) and take
turns of one window each, in a rotating order; a contender's rate is the median over its
windows, the ratios the median over rounds of redisson-py's rate over the floor's (and
the bound's), and fairness Jain's index over the 100 tasks' acquisitions in each window
(median).
"""

from __future__ import annotations

import asyncio
import time
from multiprocessing.connection import Connection
from typing import Any

from benchmarks.contenders import (
    QUEUED_FLOOR,
    WAITING_FLOOR,
    AsyncContender,
    AsyncCycle,
    Server,
)
from benchmarks.stats import jain_fairness, median, paired_ratio
from benchmarks.workers import spawned

TASKS = 100
LOCKS = 10
KINDS = (WAITING_FLOOR, "ours-asyncio", QUEUED_FLOOR)


async def _window(cycles: list[AsyncCycle], window: float) -> list[int]:
    """Every task cycles its lock for ``window`` seconds; each task's count."""
    counts = [0] * len(cycles)
    end = time.monotonic() + window

    async def task(index: int) -> None:
        cycle = cycles[index]
        while time.monotonic() < end:
            await cycle.acquire()
            await cycle.release()
            counts[index] += 1

    await asyncio.gather(*(task(i) for i in range(len(cycles))))
    return counts


def _worker(conn: Connection, port: int, rounds: int, window: float) -> None:
    async def main() -> dict[str, list[list[int]]]:
        contenders = {kind: AsyncContender(kind, Server(port)) for kind in KINDS}
        for contender in contenders.values():
            await contender.start()
        cycles = {
            kind: [
                contender.lock(f"bench:asyncio-contended:{kind}:{index % LOCKS}")
                for index in range(TASKS)
            ]
            for kind, contender in contenders.items()
        }
        for contender in contenders.values():
            await contender.ready()
        conn.send("ready")
        counts: dict[str, list[list[int]]] = {kind: [] for kind in KINDS}
        try:
            for kind in KINDS:  # warm-up: connections, subscriptions, code paths
                await _window(cycles[kind], 0.2)
            for number in range(rounds):
                turn = number % len(KINDS)
                for kind in KINDS[turn:] + KINDS[:turn]:
                    counts[kind].append(await _window(cycles[kind], window))
        finally:
            for contender in contenders.values():
                await contender.close()
        return counts

    conn.send(asyncio.run(main()))


def run(server: Server, *, rounds: int = 3, window: float = 2.0) -> dict[str, Any]:
    """Acquisitions/s and fairness of redisson-py asyncio, its floor and the in-process
    bound, 100 tasks on 10 locks in one process."""
    with spawned(_worker, [(server.port, rounds, window)], what="asyncio contended") as pipes:
        [pipe] = pipes
        if not pipe.poll(len(KINDS) * rounds * window + 60):
            raise RuntimeError("asyncio contended: the worker process did not report")
        counts: dict[str, list[list[int]]] = pipe.recv()
    rates = {kind: [sum(c) / window for c in counts[kind]] for kind in KINDS}
    fairness = {kind: median([jain_fairness(c) for c in counts[kind]]) for kind in KINDS}
    return {
        "unit": "acquisitions/s",
        "layout": f"1 process, {TASKS} asyncio tasks on {LOCKS} locks",
        "rounds": rounds,
        "window_seconds": window,
        "rates": rates,
        "owner_counts": counts,
        "median": {kind: median(values) for kind, values in rates.items()},
        "fairness": fairness,
        "ratio": paired_ratio(rates["ours-asyncio"], rates[WAITING_FLOOR]),
        "ratio_vs_queued": paired_ratio(rates["ours-asyncio"], rates[QUEUED_FLOOR]),
    }
