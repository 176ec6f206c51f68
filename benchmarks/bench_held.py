"""Held locks at scale: one client holds 1,000, 10,000 or 100,000 locks without a lease;
what does a renewal round cost, in client CPU and in round trips per node?

The watchdog benchmark (:mod:`benchmarks.bench_watchdog`) at several sizes, on a single
server and on a cluster. The client runs in a process of its own and reaches every node
through a counting proxy (:class:`benchmarks.rtt_proxy.CountingProxy`; on a cluster, a
proxy per node and a NAT map from the addresses the nodes announce to their proxies), so
every round trip to every node is counted. It takes its locks from a few threads, waits
1.5 renewal intervals (the first round may re-send the script after NOSCRIPT), then
measures its own CPU time over several intervals while its main thread sleeps; the
runner splits the proxies' flights into rounds (bursts that start with the RENEW script).

Per round: client CPU; RENEW calls (a call carries up to ``lockWatchdogBatchSize`` locks,
all of one hash slot in a cluster, so there a call per occupied slot); round trips per
node (a pipeline sent before any reply is read is one). The watchdog timeout is 6 s (a
round every 2 s) so that the largest case's round fits in its interval.
"""

from __future__ import annotations

import multiprocessing
import threading
import time
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any

from benchmarks.bench_watchdog import _rounds
from benchmarks.machine import load_average
from benchmarks.rtt_proxy import CountingProxy
from redisson_py import Config, Redisson
from redisson_py.config import ClusterServersConfig, SingleServerConfig
from redisson_py.config.nat import HostPortNatMapper
from redisson_py.core import scripts
from redisson_py.testing import Topology

SIZES = (1_000, 10_000, 100_000)
WATCHDOG_TIMEOUT = 6.0
INTERVALS = 4
ACQUIRING_THREADS = 8
CASE_TIMEOUT = 1800.0


def _config(yaml: str, proxies: dict[str, str]) -> Config:
    """The topology's config, every node reached through its proxy."""
    config = Config.from_yaml(yaml)
    section = config.server_config
    if isinstance(section, SingleServerConfig):
        host_port = (section.address or "").split("://", 1)[-1]
        section.address = f"redis://{proxies[host_port]}"
    elif isinstance(section, ClusterServersConfig):
        section.node_addresses = [f"redis://{target}" for target in proxies.values()]
        section.nat_mapper = HostPortNatMapper(hosts_port_map=proxies)
    else:  # pragma: no cover - the runner passes single and cluster only
        raise ValueError(f"held-locks benchmark: no proxies for {type(section).__name__}")
    config.lock_watchdog_timeout = WATCHDOG_TIMEOUT
    return config


def _holder(conn: Connection, yaml: str, proxies: dict[str, str], locks: int) -> None:
    client = Redisson.create(_config(yaml, proxies))
    interval = WATCHDOG_TIMEOUT / 3
    started = time.monotonic()

    def take(first: int) -> None:
        for number in range(first, locks, ACQUIRING_THREADS):
            client.get_lock(f"bench:held:{number}").lock()

    threads = [threading.Thread(target=take, args=(i,)) for i in range(ACQUIRING_THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    acquired = time.monotonic() - started
    time.sleep(1.5 * interval)
    conn.send(("held", acquired, client.config.lock_watchdog_batch_size))
    conn.recv()
    cpu, wall = time.process_time(), time.monotonic()
    time.sleep(INTERVALS * interval)
    conn.send((time.process_time() - cpu, time.monotonic() - wall))
    conn.recv()
    client.shutdown()


def case(topology: Topology, locks: int) -> dict[str, Any]:
    """One size: the client holds ``locks`` locks; its renewal rounds' figures."""
    load = load_average()
    proxies = {node.port: CountingProxy(node.port, scripts.RENEW) for node in topology.data_nodes}
    mapping = {f"127.0.0.1:{port}": f"127.0.0.1:{p.port}" for port, p in proxies.items()}
    masters = {node.port for node in topology.masters()}
    context = multiprocessing.get_context("spawn")
    ours, theirs = context.Pipe()
    holder = context.Process(
        target=_holder, args=(theirs, topology.redisson_yaml(), mapping, locks), daemon=True
    )
    started_case = time.monotonic()
    holder.start()
    interval = WATCHDOG_TIMEOUT / 3
    try:
        if not ours.poll(CASE_TIMEOUT):
            raise RuntimeError(f"held-locks benchmark: {locks:,} locks not taken in time")
        _, acquire_seconds, batch_size = ours.recv()
        before = {port: proxy.logs() for port, proxy in proxies.items()}
        start = time.monotonic()
        ours.send("measure")
        cpu_seconds, wall_seconds = ours.recv()
        end = time.monotonic()
        after = {port: proxy.logs() for port, proxy in proxies.items()}
        ours.send("stop")
        holder.join(60)
    finally:
        if holder.is_alive():
            holder.kill()
            holder.join()
        for proxy in proxies.values():
            proxy.close()
    renew_flights: dict[int, list[float]] = {}
    renew_calls: dict[int, int] = {}
    others = 0
    for port, logs in after.items():
        old_logs = before[port]
        flights: list[float] = []
        calls = 0
        for index, log in enumerate(logs):
            old = old_logs[index] if index < len(old_logs) else None
            known = len(old.flights) if old else 0
            window = [(t, label) for t, label in log.flights[known:] if start <= t <= end]
            flights += [t for t, label in window if label == "marked"]
            others += sum(1 for _, label in window if label != "marked")
            calls += log.marked_commands - (old.marked_commands if old else 0)
        renew_flights[port], renew_calls[port] = flights, calls
    rounds = _rounds([t for flights in renew_flights.values() for t in flights], interval)
    count = max(1, len(rounds))
    per_node = {
        port: {
            "role": "master" if port in masters else "replica",
            "round_trips_per_round": len(renew_flights[port]) / count,
            "renew_calls_per_round": renew_calls[port] / count,
        }
        for port in proxies
    }
    master_rows = [row for row in per_node.values() if row["role"] == "master"]
    return {
        "locks": locks,
        "masters": len(masters),
        "batch_size": batch_size,
        "watchdog_timeout_seconds": WATCHDOG_TIMEOUT,
        "renew_interval_seconds": interval,
        "acquire_seconds": acquire_seconds,
        "rounds_seen": len(rounds),
        "intervals_measured": wall_seconds / interval,
        "cpu_seconds_per_round": cpu_seconds / count,
        "cpu_share_of_wall_time": cpu_seconds / wall_seconds,
        "renew_calls_per_round": sum(renew_calls.values()) / count,
        "round_trips_per_round": sum(len(f) for f in renew_flights.values()) / count,
        "max_round_trips_per_master_per_round": max(
            (row["round_trips_per_round"] for row in master_rows), default=0.0
        ),
        "max_renew_calls_per_master_per_round": max(
            (row["renew_calls_per_round"] for row in master_rows), default=0.0
        ),
        "other_round_trips_per_interval": others / (wall_seconds / interval),
        "per_node": {str(port): row for port, row in per_node.items()},
        "seconds": time.monotonic() - started_case,
        "load_average_before": load,
    }


def run(
    topology: Topology,
    *,
    sizes: tuple[int, ...] = SIZES,
    log: Callable[[str], None] = lambda text: None,
) -> dict[str, Any]:
    """Every size on ``topology``, smallest first."""
    cases = []
    for locks in sizes:
        log(f"  {locks:,} locks held")
        cases.append(case(topology, locks))
    return {"nodes": len(topology.data_nodes), "cases": cases}
