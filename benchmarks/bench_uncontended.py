"""Uncontended ``lock()`` + ``unlock()`` cycles per second, one thread (or task), one lock.

Every contender runs in this process against the same redis-server, finely interleaved:
each takes a turn of a few cycles (about 10 ms), in a rotating order, turn after turn, so
that all of them see the same machine; load from other programs on a shared machine
swings within a second, far faster than a benchmark of one contender after another
could average out. Turns are summed into blocks (about 2 s each); a contender's rate is
the median of its block rates and its ratio the median over blocks of its rate divided
by the floor's rate in the same block. The asyncio contenders are also compared with the
asyncio floor (the same two scripts by ``redis.asyncio``): the event loop costs them all
alike.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from benchmarks.contenders import (
    ASYNC_KINDS,
    SYNC_KINDS,
    AsyncContender,
    AsyncCycle,
    Contender,
    Cycle,
    Server,
)
from benchmarks.stats import median, paired_ratio


def _sync_turn(cycle: Cycle, count: int) -> float:
    acquire, release = cycle.acquire, cycle.release
    start = time.perf_counter()
    for _ in range(count):
        acquire()
        release()
    return time.perf_counter() - start


async def _async_turn(cycle: AsyncCycle, count: int) -> float:
    acquire, release = cycle.acquire, cycle.release
    start = time.perf_counter()
    for _ in range(count):
        await acquire()
        await release()
    return time.perf_counter() - start


def run(
    server: Server, *, blocks: int = 9, turns: int = 25, turn_cycles: int = 20
) -> dict[str, Any]:
    """Measure every contender; rates in cycles/s."""
    loop = asyncio.new_event_loop()
    sync = {kind: Contender(kind, [server]) for kind in SYNC_KINDS}
    aio = {kind: AsyncContender(kind, server) for kind in ASYNC_KINDS}
    try:
        for starting in aio.values():
            loop.run_until_complete(starting.start())
        runners: dict[str, Any] = {}
        for kind, contender in sync.items():
            cycle = contender.lock(f"bench:uncontended:{kind}")
            runners[kind] = lambda n, c=cycle: _sync_turn(c, n)
        for kind, acontender in aio.items():
            acycle = acontender.lock(f"bench:uncontended:{kind}")
            runners[kind] = lambda n, c=acycle: loop.run_until_complete(_async_turn(c, n))
        kinds = list(runners)
        for kind in kinds:  # warm-up: connections, script caches, code paths
            runners[kind](10 * turn_cycles)
        rates: dict[str, list[float]] = {kind: [] for kind in kinds}
        for _ in range(blocks):
            spent = dict.fromkeys(kinds, 0.0)
            for turn in range(turns):
                shift = turn % len(kinds)
                for kind in kinds[shift:] + kinds[:shift]:
                    spent[kind] += runners[kind](turn_cycles)
            for kind in kinds:
                rates[kind].append(turns * turn_cycles / spent[kind])
    finally:
        for closing in sync.values():
            closing.close()
        for aclosing in aio.values():
            loop.run_until_complete(aclosing.close())
        loop.close()
    return {
        "unit": "cycles/s",
        "blocks": blocks,
        "turns_per_block": turns,
        "cycles_per_turn": turn_cycles,
        "rates": rates,
        "median": {kind: median(values) for kind, values in rates.items()},
        "ratio": {kind: paired_ratio(values, rates["floor"]) for kind, values in rates.items()},
        "ratio_vs_asyncio_floor": {
            kind: paired_ratio(rates[kind], rates["floor-asyncio"]) for kind in ASYNC_KINDS
        },
    }
