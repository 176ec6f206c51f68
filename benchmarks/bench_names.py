"""Names at scale: a million distinct lock names cycled through one client. Does the
client's memory stay flat, and does the server keep anything afterwards?

A fresh process, one thread, the sync client: ``get_lock(name)``, ``lock()``,
``unlock()`` on a new name every cycle, so anything the client kept per name (a
subscription, a channel, a script object, a handle) would grow with the cycles. RSS
(``/proc/self/status``, after ``gc.collect()``) at ten checkpoints. Then count-down
latches the same way (``try_set_count(1)``, ``count_down()``: the count reaching zero
deletes the key and publishes). Every master is flushed before; afterwards ``DBSIZE``
on every node at once (a release leaves an unlock latch key for the request's
lifetime, so that a retried release gets its first answer) and again once that
lifetime has passed: the target is no key left.
"""

from __future__ import annotations

import gc
import multiprocessing
import time
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any

from benchmarks.bench_memory import rss_mb
from benchmarks.contenders import latch_millis
from benchmarks.machine import load_average
from redisson_py import Config, Redisson
from redisson_py.testing import Topology

CYCLES = 1_000_000
LATCHES = 100_000
CHECKPOINTS = 10
CASE_TIMEOUT = 3600.0


def _cycler(conn: Connection, yaml: str, cycles: int, latches: int) -> None:
    client = Redisson.create(Config.from_yaml(yaml))
    # Warm-up: connections, scripts, code paths (not a name of the run).
    warm = client.get_lock("bench:names:warm-up")
    warm.lock()
    warm.unlock()
    gc.collect()
    points = [(0, rss_mb(), 0.0)]
    step = max(1, cycles // CHECKPOINTS)
    started = time.monotonic()
    for number in range(cycles):
        lock = client.get_lock(f"bench:names:{number}")
        lock.lock()
        lock.unlock()
        if (number + 1) % step == 0 or number + 1 == cycles:
            gc.collect()
            points.append((number + 1, rss_mb(), time.monotonic() - started))
    lock_seconds = time.monotonic() - started
    latch_points = []
    started = time.monotonic()
    step = max(1, latches // CHECKPOINTS)
    for number in range(latches):
        latch = client.get_count_down_latch(f"bench:names:latch:{number}")
        latch.try_set_count(1)
        latch.count_down()
        if (number + 1) % step == 0 or number + 1 == latches:
            gc.collect()
            latch_points.append((number + 1, rss_mb(), time.monotonic() - started))
    latch_seconds = time.monotonic() - started
    subscriptions = len(client.connection_manager.pubsub)
    holds = len(client._state.holds)
    latch_ms = latch_millis(client.config)
    client.shutdown()
    conn.send(
        {
            "points": [{"cycles": c, "rss_mb": r, "seconds": s} for c, r, s in points],
            "latch_points": [{"cycles": c, "rss_mb": r, "seconds": s} for c, r, s in latch_points],
            "lock_seconds": lock_seconds,
            "latch_seconds": latch_seconds,
            "subscriptions_left": subscriptions,
            "holds_left": holds,
            "unlock_latch_ttl_seconds": latch_ms / 1000,
        }
    )


def _keys(topology: Topology) -> dict[str, int]:
    """``DBSIZE`` per node: keys expired but not yet reclaimed count too."""
    return {
        f"{node.role()} :{node.port}": int(node.command("DBSIZE")) for node in topology.data_nodes
    }


def _live_keys(topology: Topology) -> dict[str, int]:
    """Keys a ``SCAN`` of every node returns (it skips expired keys)."""
    counts = {}
    for node in topology.data_nodes:
        cursor, seen = "0", 0
        while True:
            cursor, keys = node.command("SCAN", cursor, "COUNT", 10_000)
            seen += len(keys)
            if str(cursor) == "0":
                break
        counts[f"{node.role()} :{node.port}"] = seen
    return counts


def run(
    topology: Topology,
    *,
    cycles: int = CYCLES,
    latches: int = LATCHES,
    log: Callable[[str], None] = lambda text: None,
) -> dict[str, Any]:
    """RSS over ``cycles`` lock names and ``latches`` latch names; keys left after."""
    load = load_average()
    for node in topology.masters():
        node.command("FLUSHALL")
    log(f"  {cycles:,} lock names, then {latches:,} latch names")
    context = multiprocessing.get_context("spawn")
    ours, theirs = context.Pipe()
    process = context.Process(
        target=_cycler, args=(theirs, topology.redisson_yaml(), cycles, latches), daemon=True
    )
    started = time.monotonic()
    process.start()
    try:
        if not ours.poll(CASE_TIMEOUT):
            raise RuntimeError("names benchmark: the cycling process did not report")
        figures: dict[str, Any] = ours.recv()
        process.join(30)
    finally:
        if process.is_alive():
            process.kill()
            process.join()
    keys_at_end = _keys(topology)
    # Replicas apply the expiries their master sends: give them a moment past the TTL.
    wait = figures["unlock_latch_ttl_seconds"] + 2.0
    time.sleep(wait)
    live_after = _live_keys(topology)
    keys_after = _keys(topology)
    points = figures["points"]
    first_lock = points[1] if len(points) > 1 else points[0]
    return {
        "cycles": cycles,
        "latches": latches,
        **figures,
        "rss_start_mb": points[0]["rss_mb"],
        "rss_end_mb": points[-1]["rss_mb"],
        "growth_mb": points[-1]["rss_mb"] - first_lock["rss_mb"],
        "cycles_per_second": cycles / figures["lock_seconds"] if figures["lock_seconds"] else 0.0,
        "keys_at_end": keys_at_end,
        "keys_after_ttl": keys_after,
        "live_keys_after_ttl": live_after,
        "waited_seconds": wait,
        "keys_left": sum(live_after.values()),
        "seconds": time.monotonic() - started,
        "load_average_before": load,
    }
