"""RedLock over 3 and 5 independent masters: acquire + release latency, uncontended.

Two settings. On loopback (:func:`run`): against the floor of the same five masters (the
library's two scripts sent by plain redis-py to every master, one connection each,
before any reply is read: the least any Python RedLock can cost), redisson-py's single
lock on the first master, and pottery's Redlock on the same masters; on loopback a round
trip costs less than the client CPU of a call, so even the floor grows with the number
of masters, and the fair yardstick of a RedLock's own overhead is that floor. Through
delay proxies (:func:`run_rtt`): every master behind a :class:`~benchmarks.rtt_proxy.DelayProxy`
that adds a round trip (1 ms), a stand-in for masters on other machines, where a
RedLock's five round trips overlap and it should cost about what one lock costs.

The contenders take turns of a few cycles in a rotating order (so load from other
programs falls on all alike); turns make blocks, and a contender's ratio is the median
over blocks of its median latency divided by its yardstick's median in the same block.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import time
from typing import Any

from benchmarks.contenders import Contender, Cycle, Server
from benchmarks.rtt_proxy import serve_delayed
from benchmarks.stats import distribution, median, paired_ratio

SINGLE = "ours-single"
FLOOR5 = "floor-5"
RTT_DELAY = 0.001
"""The round trip the delay proxies add (seconds)."""


def _contenders(servers: list[Server]) -> dict[str, Contender]:
    return {
        "floor-1": Contender("floor", servers[:1]),
        FLOOR5: Contender("floor-many", servers[:5]),
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


def _interleaved(
    contenders: dict[str, Contender], prefix: str, blocks: int, turns: int, turn_cycles: int
) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """Every contender's cycle latencies, and its median per block (see the module)."""
    try:
        cycles = {kind: c.lock(f"{prefix}:{kind}") for kind, c in contenders.items()}
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
    return samples, block_medians


def run(
    servers: list[Server], *, blocks: int = 7, turns: int = 5, turn_cycles: int = 20
) -> dict[str, Any]:
    """Latencies in seconds per acquire+release cycle, on loopback."""
    samples, block_medians = _interleaved(
        _contenders(servers), "bench:redlock", blocks, turns, turn_cycles
    )
    return _summary(samples, block_medians, single=SINGLE, floor5=FLOOR5)


def _summary(
    samples: dict[str, list[float]], block_medians: dict[str, list[float]], **yardsticks: str
) -> dict[str, Any]:
    """Samples, their distributions, and each contender's ratio to each yardstick
    (``ratio_p50_vs_<name>``: median over blocks of p50 / the yardstick's p50)."""
    result: dict[str, Any] = {
        "unit": "seconds",
        "baseline": SINGLE,
        "samples": samples,
        "summary": {kind: distribution(values) for kind, values in samples.items()},
    }
    for label, yardstick in yardsticks.items():
        result[f"ratio_p50_vs_{label}"] = {
            kind: paired_ratio(values, block_medians[yardstick])
            for kind, values in block_medians.items()
        }
    return result


def _ping_seconds(server: Server, count: int = 200) -> float:
    """Median PING round trip to ``server`` (seconds)."""
    client = server.redis()
    try:
        client.ping()
        times = []
        for _ in range(count):
            start = time.perf_counter()
            client.ping()
            times.append(time.perf_counter() - start)
        return median(times)
    finally:
        client.close()


def run_rtt(
    servers: list[Server],
    *,
    delay: float = RTT_DELAY,
    blocks: int = 5,
    turns: int = 4,
    turn_cycles: int = 10,
) -> dict[str, Any]:
    """Latencies in seconds per cycle with every master behind a proxy adding ``delay``
    of round trip: redisson-py's single lock, RedLock(5), and the 5-master floor."""
    context = multiprocessing.get_context("spawn")
    ours, theirs = context.Pipe()
    ports = [server.port for server in servers[:5]]
    process = context.Process(target=serve_delayed, args=(theirs, ports, delay), daemon=True)
    process.start()
    try:
        if not ours.poll(60):
            raise RuntimeError("the delay proxies did not start")
        proxied = [Server(port) for port in ours.recv()]
        added = _ping_seconds(proxied[0]) - _ping_seconds(servers[0])
        contenders = {
            SINGLE: Contender("ours", proxied[:1]),
            "ours-redlock-5": Contender("ours-redlock", proxied[:5]),
            FLOOR5: Contender("floor-many", proxied[:5]),
        }
        samples, block_medians = _interleaved(
            contenders, "bench:redlock-rtt", blocks, turns, turn_cycles
        )
    finally:
        with contextlib.suppress(OSError):  # the proxy process is gone already
            ours.send("stop")
        process.join(10)
        if process.is_alive():
            process.kill()
            process.join()
    return {
        **_summary(samples, block_medians, single=SINGLE),
        "delay_seconds": delay,
        "measured_added_round_trip": added,
    }
