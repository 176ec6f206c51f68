"""Watchdog cost: one client holds 10,000 locks without a lease; what does keeping them
alive cost per renewal interval?

The client runs in a process of its own, connected through a counting proxy
(:mod:`benchmarks.rtt_proxy`) to the redis-server, with a 3 s watchdog timeout (so it
renews every 1 s; the work per round does not depend on the interval). Once every lock
is held, the process measures its own CPU time (``time.process_time()``: every thread of
the process; the main thread only sleeps) over several intervals while the proxy logs
every flight. The process's CPU time is all renewal work: its main thread sleeps and
the topology scanner of a single-server client does no I/O (the proxy would show it).
Measuring starts 1.5 intervals after the last lock was taken, in the steady state (a
fresh server's first round also re-sends the script as EVAL after NOSCRIPT, once).
Renewal rounds are the bursts of flights that start with the RENEW script
(flights less than half an interval apart belong to one round); the figures are per
round: flights (round trips), RENEW commands, ``WAIT`` commands and connections used,
plus every other flight the client made meanwhile (its topology scan).

``replica`` runs the same on a master with one replica and replica sync on (a
master/slave config naming the proxy as master and the replica directly): each round's
renewals are then confirmed by one ``WAIT`` per node, pipelined behind them on the same
connection, so the round should still be one round trip (the WAIT's reply comes once the
replica acknowledged).
"""

from __future__ import annotations

import multiprocessing
import time
from multiprocessing.connection import Connection
from typing import Any

from benchmarks.contenders import Server, redisson_config
from benchmarks.rtt_proxy import CountingProxy
from redisson_py import Config, Redisson
from redisson_py.core import scripts

LOCKS = 10_000
WATCHDOG_TIMEOUT = 3.0
INTERVALS = 6


def _holder(conn: Connection, port: int, locks: int, intervals: int, replica: int | None) -> None:
    if replica is None:
        config = redisson_config(Server(port), lock_watchdog_timeout=WATCHDOG_TIMEOUT)
    else:
        config = Config()
        config.use_master_slave_servers(
            master_address=Server(port).address, slave_addresses=[Server(replica).address]
        )
        config.lock_watchdog_timeout = WATCHDOG_TIMEOUT
        config.check_lock_synced_slaves = True
    client = Redisson.create(config)
    interval = WATCHDOG_TIMEOUT / 3
    started = time.monotonic()
    for number in range(locks):
        client.get_lock(f"bench:watchdog:{number}").lock()
    acquired = time.monotonic() - started
    # Steady state: the first round may have to send the script itself (NOSCRIPT, then
    # EVAL); that one-time cost is not what an interval costs.
    time.sleep(1.5 * interval)
    conn.send(("held", acquired, client.config.lock_watchdog_batch_size))
    conn.recv()
    cpu, wall = time.process_time(), time.monotonic()
    time.sleep(intervals * interval)
    conn.send((time.process_time() - cpu, time.monotonic() - wall))
    conn.recv()
    client.shutdown()


def _rounds(flights: list[float], interval: float) -> list[list[float]]:
    bursts: list[list[float]] = []
    for start in sorted(flights):
        if bursts and start - bursts[-1][-1] < interval / 2:
            bursts[-1].append(start)
        else:
            bursts.append([start])
    return bursts


def run(
    server: Server,
    *,
    locks: int = LOCKS,
    intervals: int = INTERVALS,
    replica: Server | None = None,
) -> dict[str, Any]:
    """Round trips, RENEW and WAIT commands and client CPU per renewal interval (with
    ``replica``: ``server`` is a master replicated to it, replica sync on)."""
    proxy = CountingProxy(server.port, scripts.RENEW)
    context = multiprocessing.get_context("spawn")
    ours, theirs = context.Pipe()
    replica_port = None if replica is None else replica.port
    holder = context.Process(
        target=_holder, args=(theirs, proxy.port, locks, intervals, replica_port), daemon=True
    )
    holder.start()
    interval = WATCHDOG_TIMEOUT / 3
    try:
        if not ours.poll(600):
            raise RuntimeError("watchdog holder did not take its locks in time")
        _, acquire_seconds, batch_size = ours.recv()
        before = proxy.logs()
        start = time.monotonic()
        ours.send("measure")
        cpu_seconds, wall_seconds = ours.recv()
        end = time.monotonic()
        after = proxy.logs()
        ours.send("stop")
        holder.join(30)
    finally:
        if holder.is_alive():
            holder.kill()
            holder.join()
        proxy.close()
    renew_flights: list[float] = []
    others: dict[str, int] = {}
    renew_commands = renew_connections = wait_commands = 0
    for index, log in enumerate(after):
        old = before[index] if index < len(before) else None
        known = len(old.flights) if old else 0
        window = [(t, label) for t, label in log.flights[known:] if start <= t <= end]
        renew_flights += [t for t, label in window if label == "marked"]
        for _, label in window:
            if label != "marked":
                others[label] = others.get(label, 0) + 1
        renew_commands += log.marked_commands - (old.marked_commands if old else 0)
        if any(label == "marked" for _, label in window):
            wait_commands += log.wait_commands - (old.wait_commands if old else 0)
        renew_connections += any(label == "marked" for _, label in window)
    rounds = _rounds(renew_flights, interval)
    count = max(1, len(rounds))
    intervals_measured = wall_seconds / interval
    return {
        "locks": locks,
        "nodes": 1,
        "replicas": 0 if replica is None else 1,
        "replica_sync": replica is not None,
        "watchdog_timeout_seconds": WATCHDOG_TIMEOUT,
        "renew_interval_seconds": interval,
        "batch_size": batch_size,
        "acquire_seconds": acquire_seconds,
        "rounds_seen": len(rounds),
        "intervals_measured": intervals_measured,
        "round_trips_per_round": len(renew_flights) / count,
        "max_round_trips_in_a_round": max((len(r) for r in rounds), default=0),
        "renew_commands_per_round": renew_commands / count,
        "wait_commands_per_round": wait_commands / count,
        "connections_used_for_renewal": renew_connections,
        "other_round_trips_per_interval": sum(others.values()) / intervals_measured,
        "other_round_trips_by_command": others,
        # A round starts an interval after the previous one ended, so a window of n
        # intervals holds n or n - 1 rounds: CPU is given per round seen.
        "cpu_seconds_per_round": cpu_seconds / count,
        "cpu_share_of_wall_time": cpu_seconds / wall_seconds,
    }
