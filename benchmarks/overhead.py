"""Where redisson-py's client CPU goes: ``python -m benchmarks.overhead`` (about 15 s).

Not part of the main run: a diagnosis of the uncontended, cluster and RedLock targets.
It measures client CPU per ``lock()`` + ``unlock()`` cycle (``time.process_time()``, one
thread, finely interleaved turns as in :mod:`benchmarks.bench_uncontended`, medians) for
the floor (:mod:`benchmarks.contenders`), for redisson-py's I/O layer alone (its
connection manager sends the floor's two scripts: idle-connection stacks over redis-py's
pools, routing, its RESP writer and reader, and nothing of the lock's flows), and for
redisson-py; so ``redisson-py`` less ``I/O layer`` is what the flows cost (the hold
table, request ids, retries and deadlines, the effects and their driver). Then over five
independent masters, a floor that sends the two scripts to all five on one connection
each and then reads the replies (the least any Python RedLock can do), and
redisson-py's ``RedLock``.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

from benchmarks.contenders import Contender, FloorScripts, Server, latch_millis, redisson_config
from redisson_py import Redisson, RedLock
from redisson_py.testing import start_topology

BLOCKS = 9
TURNS = 25
TURN = 20


def _ours(server: Server) -> Callable[[], None]:
    client = Redisson.create(redisson_config(server))
    lock = client.get_lock("overhead:ours")

    def cycle() -> None:
        lock.lock()
        lock.unlock()

    return cycle


def _ours_io(server: Server) -> Callable[[], None]:
    """The floor's two scripts, sent and read by redisson-py's connection manager (a
    private API: this is a diagnosis, not a use)."""
    config = redisson_config(server)
    manager = Redisson.create(config)._manager
    name = "overhead:io"
    scripts = FloorScripts(name, latch_millis(config))
    key = (manager.master_address(name), None, False)

    def cycle() -> None:
        manager._send(key, [("EVALSHA", *scripts.acquire_args())], read=True)
        manager._send(key, [("EVALSHA", *scripts.release_args())], read=True)

    return cycle


def _cycle_of(contender: Contender) -> Callable[[], None]:
    cycle = contender.lock(f"overhead:{contender.kind}")

    def run() -> None:
        cycle.acquire()
        cycle.release()

    return run


def _redlock(servers: list[Server]) -> Callable[[], None]:
    clients = [Redisson.create(redisson_config(s)) for s in servers]
    red = RedLock.for_name("overhead:redlock", clients)

    def cycle() -> None:
        red.lock()
        red.unlock()

    return cycle


def _cpu_seconds(cycle: Callable[[], None], count: int) -> float:
    start = time.process_time()
    for _ in range(count):
        cycle()
    return time.process_time() - start


def measure(cycles: dict[str, Callable[[], None]]) -> dict[str, float]:
    """Median client CPU (microseconds) per cycle of each: turns of TURN cycles in a
    rotating order, TURNS turns a block, the median over BLOCKS blocks."""
    names = list(cycles)
    for name in names:
        _cpu_seconds(cycles[name], 10 * TURN)
    samples: dict[str, list[float]] = {name: [] for name in names}
    for _ in range(BLOCKS):
        spent = dict.fromkeys(names, 0.0)
        for turn in range(TURNS):
            shift = turn % len(names)
            for name in names[shift:] + names[:shift]:
                spent[name] += _cpu_seconds(cycles[name], TURN)
        for name in names:
            samples[name].append(spent[name] / (TURNS * TURN) * 1e6)
    return {name: statistics.median(values) for name, values in samples.items()}


def main() -> int:
    with start_topology("redlock", backend="process") as topology:
        servers = [Server(node.port) for node in topology.data_nodes]
        single = {
            "floor (1 master)": _cycle_of(Contender("floor", servers[:1])),
            "redisson-py's I/O layer alone": _ours_io(servers[0]),
            "redisson-py": _ours(servers[0]),
        }
        many = {
            "floor (5 masters, pipelined)": _cycle_of(Contender("floor-many", servers)),
            "redisson-py RedLock(5)": _redlock(servers),
        }
        results = {**measure(single), **measure(many)}
    base = results["floor (1 master)"]
    print("| cycle | client CPU us/cycle | vs floor (1 master) |")
    print("| --- | ---: | ---: |")
    for name, value in results.items():
        print(f"| {name} | {value:.0f} | {value / base:.2f}x |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
