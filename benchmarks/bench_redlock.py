"""RedLock over 3 and 5 independent masters: acquire + release latency, uncontended.

Against redisson-py's single lock on the first of those masters (the baseline here) and
pottery's Redlock on the same masters. For scale, also the floor (the two scripts by
plain redis-py) on one master and on all five (sent to every master, then read): on
loopback a round trip costs less than the client CPU of a call, so even the floor grows
with the number of masters. The contenders take turns of a few cycles in a
rotating order (so load from other programs falls on all alike); turns make blocks, and
a contender's ratio is the median over blocks of its median latency divided by the single
lock's median in the same block.
"""

from __future__ import annotations

import time
from typing import Any

from benchmarks.contenders import Contender, Cycle, Server
from benchmarks.stats import distribution, median, paired_ratio

SINGLE = "ours-single"


def _contenders(servers: list[Server]) -> dict[str, Contender]:
    return {
        "floor-1": Contender("floor", servers[:1]),
        "floor-5": Contender("floor-many", servers[:5]),
        SINGLE: Contender("ours", servers[:1]),
        "ours-redlock-3": Contender("ours-redlock", servers[:3]),
        "ours-redlock-5": Contender("ours-redlock", servers[:5]),
        "pottery-3": Contender("pottery", servers[:3]),
        "pottery-5": Contender("pottery", servers[:5]),
    }


def _cycles(cycle: Cycle, count: int) -> list[float]:
    clock = time.perf_counter
    out = []
    for _ in range(count):
        start = clock()
        cycle.acquire()
        cycle.release()
        out.append(clock() - start)
    return out


def run(
    servers: list[Server], *, blocks: int = 7, turns: int = 5, turn_cycles: int = 20
) -> dict[str, Any]:
    """Latencies in seconds per acquire+release cycle."""
    contenders = _contenders(servers)
    try:
        cycles = {kind: c.lock(f"bench:redlock:{kind}") for kind, c in contenders.items()}
        for cycle in cycles.values():
            _cycles(cycle, 2 * turn_cycles)  # warm-up
        kinds = list(cycles)
        samples: dict[str, list[float]] = {kind: [] for kind in kinds}
        block_medians: dict[str, list[float]] = {kind: [] for kind in kinds}
        for _ in range(blocks):
            block: dict[str, list[float]] = {kind: [] for kind in kinds}
            for turn in range(turns):
                shift = turn % len(kinds)
                for kind in kinds[shift:] + kinds[:shift]:
                    block[kind] += _cycles(cycles[kind], turn_cycles)
            for kind, values in block.items():
                samples[kind] += values
                block_medians[kind].append(median(values))
    finally:
        for contender in contenders.values():
            contender.close()
    return {
        "unit": "seconds",
        "baseline": SINGLE,
        "samples": samples,
        "summary": {kind: distribution(values) for kind, values in samples.items()},
        "ratio_p50_vs_single": {
            kind: paired_ratio(values, block_medians[SINGLE])
            for kind, values in block_medians.items()
        },
    }
