"""Cluster throughput: many independent locks from 2 processes across a 3-master cluster.

Each of 2 processes runs 4 threads; each thread takes and releases its own lock names in
turn (16 names per thread, none shared, spread over the slots of the harness's
``cluster`` topology: three masters, one replica each), so nothing contends: this
measures the client's routing and per-call cost, not waiting. redisson-py is used as a
user writes it (``Redisson.create(config).get_lock(name)``, ``lock()``/``unlock()``),
with replica sync on (the harness's config: each acquire waits for the replica) and off
(``checkLockSyncedSlaves: false``). The peer is redis-py's own ``Lock`` on
``RedisCluster`` (``RedisCluster(...).lock(name, timeout=..., blocking_timeout=...)``,
``acquire()``/``release()``: one client per process, as ours), the lock a Python user
would otherwise pick; it has no replica sync, so it is compared with ours sync off.
The floor is the library's ACQUIRE and RELEASE scripts (the same keys and arguments,
and after ACQUIRE the same ``WAIT`` for the replicas the library waits for) sent the
plain way: one redis-py connection per node per thread, each command sent to the master
of its key's slot (read once from ``CLUSTER SLOTS``), then its replies read.

The contenders run in alternating rounds (the order rotates), each a window of a fixed
length with both processes at once; a contender's rate is the median over rounds, the
ratios the median over rounds of redisson-py's rate over the floor's (sync on, as the
floor) and over redis-py's (sync off, and on beside it).

Where the time goes: on this benchmark's machine the two client processes and the six
Redis servers share the cores, so each round also records the CPU spent per
acquisition by the client processes (their own ``getrusage``, user and system, threads
included) and by the rest of the machine (``/proc/stat``'s busy time less the clients':
the servers, and anything else running), and the cores left idle. A contender whose
client spends more per acquisition leaves the servers less, and its rate is lower by
that share.
"""

from __future__ import annotations

import os
import resource
import threading
import time
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any

import redis
import redis.cluster
from redis.crc import key_slot

from benchmarks.contenders import FloorScripts
from benchmarks.stats import median, paired_ratio
from benchmarks.workers import spawned
from redisson_py import Config, Redisson
from redisson_py.core import scripts
from redisson_py.core.state.options import lock_settings

PROCESSES = 2
OWNERS = 4
NAMES = 16
KINDS = ("floor", "ours", "ours-sync-off", "redis-py")
LABELS = {
    "floor": "floor: the 2 scripts sent per node by redis-py",
    "ours": "redisson-py (replica sync on)",
    "ours-sync-off": "redisson-py (replica sync off)",
    "redis-py": "redis-py Lock on RedisCluster",
}
PEER_TIMEOUT = 30.0
"""redis-py's lease, in seconds: as long as our watchdog's lease (it has no watchdog)."""
PEER_BLOCKING_TIMEOUT = 10.0


def _floor_owner(
    client: Any, names: list[str], nodes: dict[int, redis.Redis], slots: list[int]
) -> Callable[[int], None]:
    """One owner's floor: ``cycle(i)`` takes and releases its ``i``-th name."""
    settings = lock_settings(client.config, client._manager.mode.section)
    manager = client._manager
    latch_ms = max(1, round(settings.latch_ttl * 1000))
    wait_ms = max(1, round(settings.slaves_sync_timeout * 1000))
    connections = {port: node.connection_pool.get_connection() for port, node in nodes.items()}
    calls = []
    for name in names:
        port = slots[key_slot(name.encode())]
        master = next(a for a in manager.view.masters if a.port == port)
        replicas = (
            manager.view.replicas_to_wait_for(master) if settings.check_lock_synced_slaves else 0
        )
        floor = FloorScripts(name, latch_ms, by_slot=True, publish=manager.publish_command)
        calls.append((connections[port], floor, replicas))

    def cycle(index: int) -> None:
        connection, floor, replicas = calls[index]
        acquire = [("EVALSHA", *floor.acquire_args())]
        if replicas:
            acquire.append(("WAIT", replicas, wait_ms))
        connection.send_packed_command(connection.pack_commands(acquire))
        reply = connection.read_response()
        for _ in acquire[1:]:
            connection.read_response()
        if int(reply[0]) != 1:
            raise RuntimeError(f"floor: {floor.name!r} is held by someone else")
        connection.send_command("EVALSHA", *floor.release_args())
        connection.read_response()

    return cycle


def _ours_owner(client: Any, names: list[str]) -> Callable[[int], None]:
    locks = [client.get_lock(name) for name in names]

    def cycle(index: int) -> None:
        lock = locks[index]
        lock.lock()
        lock.unlock()

    return cycle


def _peer_owner(cluster: redis.cluster.RedisCluster, names: list[str]) -> Callable[[int], None]:
    locks = [
        cluster.lock(name, timeout=PEER_TIMEOUT, blocking_timeout=PEER_BLOCKING_TIMEOUT)
        for name in names
    ]

    def cycle(index: int) -> None:
        lock = locks[index]
        if not lock.acquire():
            raise RuntimeError(f"redis-py: {lock.name!r} is held by someone else")
        lock.release()

    return cycle


def _owner_run(
    cycle: Callable[[int], None], start: float, window: float, counts: list[int], owner: int
) -> None:
    """One owner thread of a round: cycle through its names from ``start`` for ``window``
    seconds; its count goes to ``counts[owner]``."""
    time.sleep(max(0.0, start - time.monotonic()))
    end, done = start + window, 0
    while time.monotonic() < end:
        cycle(done % NAMES)
        done += 1
    counts[owner] = done


def _worker(conn: Connection, yaml: str, number: int) -> None:
    """A process: build both contenders' owners, then run the rounds it is told to."""
    client = Redisson.create(Config.from_yaml(yaml))
    unsynced_config = Config.from_yaml(yaml)
    unsynced_config.check_lock_synced_slaves = False
    unsynced = Redisson.create(unsynced_config)
    seeds = client._manager.view.masters
    nodes = {a.port: redis.Redis(host=a.host, port=a.port) for a in seeds}
    slots = [0] * 16384
    for start, end, master, *_ in next(iter(nodes.values())).execute_command("CLUSTER", "SLOTS"):
        slots[start : end + 1] = [int(master[1])] * (end - start + 1)
    for node in nodes.values():
        for script in (scripts.ACQUIRE, scripts.RELEASE):
            node.script_load(script.source)
    seed = seeds[0]
    peer = redis.cluster.RedisCluster(host=seed.host, port=seed.port)
    owners: dict[str, list[Callable[[int], None]]] = {kind: [] for kind in KINDS}
    for owner in range(OWNERS):
        names = [f"bench:cluster:{number}:{owner}:{i}" for i in range(NAMES)]
        owners["floor"].append(_floor_owner(client, names, nodes, slots))
        owners["ours"].append(_ours_owner(client, names))
        owners["ours-sync-off"].append(_ours_owner(unsynced, names))
        owners["redis-py"].append(_peer_owner(peer, names))
    for cycles in owners.values():  # warm-up: connections, script caches, code paths
        for cycle in cycles:
            for index in range(NAMES * 4):
                cycle(index % NAMES)
    conn.send("ready")
    try:
        while (order := conn.recv()) != "stop":
            kind, start, window = order
            counts = [0] * OWNERS
            threads = [
                threading.Thread(target=_owner_run, args=(cycle, start, window, counts, i))
                for i, cycle in enumerate(owners[kind])
            ]
            used = resource.getrusage(resource.RUSAGE_SELF)
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            after = resource.getrusage(resource.RUSAGE_SELF)
            cpu = after.ru_utime - used.ru_utime + after.ru_stime - used.ru_stime
            conn.send((counts, cpu))
    finally:
        client.shutdown()
        unsynced.shutdown()
        peer.close()
        for node in nodes.values():
            node.close()


def _machine_cpu() -> tuple[float, float] | None:
    """(busy, idle) CPU seconds of the whole machine so far (``/proc/stat``; None where
    there is none)."""
    try:
        with open("/proc/stat", encoding="ascii") as stat:
            fields = [int(x) for x in stat.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    ticks = os.sysconf("SC_CLK_TCK")
    idle = fields[3] + fields[4]  # idle, iowait
    return (sum(fields) - idle) / ticks, idle / ticks


def _split(
    acquisitions: int, clients: float, before: tuple[float, float] | None, elapsed: float
) -> dict[str, float]:
    """A round's CPU per acquisition (microseconds): the client processes', the rest of
    the machine's; and the cores left idle on average."""
    acquisitions = max(1, acquisitions)  # a round that got none still reports
    split = {"client_us": clients / acquisitions * 1e6}
    after = _machine_cpu()
    if before is not None and after is not None:
        busy, idle = after[0] - before[0], after[1] - before[1]
        split["rest_us"] = max(0.0, busy - clients) / acquisitions * 1e6
        split["idle_cores"] = idle / elapsed
    return split


def run(yaml: str, *, rounds: int = 3, window: float = 1.5) -> dict[str, Any]:
    """Acquisitions/s of the floor, redisson-py (replica sync on and off) and redis-py's
    ``Lock`` on the cluster that ``yaml`` (a
    Redisson config) names, and the CPU each spent per acquisition (see the module
    docstring)."""
    rates: dict[str, list[float]] = {kind: [] for kind in KINDS}
    cpu: dict[str, list[dict[str, float]]] = {kind: [] for kind in KINDS}
    arguments = [(yaml, number) for number in range(PROCESSES)]
    with spawned(_worker, arguments, what="cluster", ready_timeout=120) as pipes:
        for number in range(rounds):
            shift = number % len(KINDS)
            for kind in KINDS[shift:] + KINDS[:shift]:
                start = time.monotonic() + 0.2
                for pipe in pipes:
                    pipe.send((kind, start, window))
                time.sleep(max(0.0, start - time.monotonic()))
                machine, began = _machine_cpu(), time.monotonic()
                total, clients = 0, 0.0
                for pipe in pipes:
                    if not pipe.poll(window + 60):
                        raise RuntimeError("cluster: a worker process did not report")
                    counts, spent = pipe.recv()
                    total, clients = total + sum(counts), clients + spent
                rates[kind].append(total / window)
                cpu[kind].append(_split(total, clients, machine, time.monotonic() - began))
        for pipe in pipes:
            pipe.send("stop")
    return {
        "unit": "acquisitions/s",
        "layout": f"{PROCESSES} processes x {OWNERS} threads, {NAMES} names per thread",
        "rounds": rounds,
        "window_seconds": window,
        "rates": rates,
        "median": {kind: median(values) for kind, values in rates.items()},
        "ratio": paired_ratio(rates["ours"], rates["floor"]),
        "ratio_vs_redis_py": {
            kind: paired_ratio(rates[kind], rates["redis-py"]) for kind in ("ours-sync-off", "ours")
        },
        "cpu": {
            kind: {
                field: median(values)
                for field in ("client_us", "rest_us", "idle_cores")
                if (values := [split[field] for split in splits if field in split])
            }
            for kind, splits in cpu.items()
        },
    }
