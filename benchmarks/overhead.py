"""Where redisson-py's client CPU goes: ``python -m benchmarks.overhead`` (about 1 minute).

Not part of the main run: a diagnosis of the uncontended and RedLock targets. It measures
client CPU per ``lock()`` + ``unlock()`` cycle (``time.process_time()``, one thread,
finely interleaved turns as in :mod:`benchmarks.bench_uncontended`, medians) for:

- the floor (:mod:`benchmarks.contenders`) and redisson-py as shipped;
- redisson-py with two costs removed *in this process only*, to price them: its node
  pools made redis-py's plain ``ConnectionPool`` instead of ``BlockingConnectionPool``
  (whose checkout and return go through ``queue.LifoQueue`` and its condition
  variables), and ``LockSettings.latch_ttl`` computed once instead of on every release;
- over five independent masters: a floor that sends the two scripts to all five on one
  connection each and then reads the replies (the least any Python RedLock can do), and
  redisson-py's ``RedLock``.

Nothing in the library is changed on disk; the variants patch objects of this process.
"""

from __future__ import annotations

import dataclasses
import statistics
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import redis

from benchmarks.contenders import Contender, Server, redisson_config
from redisson_py import Redisson, RedLock
from redisson_py.core.client_state import LockSettings
from redisson_py.testing import start_topology

BLOCKS = 9
TURNS = 25
TURN = 20


@dataclasses.dataclass(frozen=True, slots=True)
class _LatchOnce(LockSettings):
    """The same settings with ``latch_ttl`` computed once, at construction."""

    latch_value: float = 0.0

    @property
    def latch_ttl(self) -> float:
        return self.latch_value


def _cache_latch(client: Redisson) -> None:
    state: Any = client._state
    settings = state.settings
    values = {f.name: getattr(settings, f.name) for f in dataclasses.fields(LockSettings)}
    state.settings = _LatchOnce(**values, latch_value=settings.latch_ttl)


class _PlainPool(redis.ConnectionPool):
    """redis-py's non-blocking pool, accepting BlockingConnectionPool's arguments."""

    def __init__(
        self, max_connections: int | None = None, timeout: float | None = None, **kwargs: Any
    ):
        super().__init__(max_connections=max_connections, **kwargs)


@contextmanager
def _plain_pools() -> Iterator[None]:
    original = redis.BlockingConnectionPool
    redis.BlockingConnectionPool = _PlainPool  # type: ignore[misc,assignment]
    try:
        yield
    finally:
        redis.BlockingConnectionPool = original  # type: ignore[misc]


def _ours(server: Server, *, plain_pool: bool, latch_once: bool) -> Callable[[], None]:
    def build() -> Callable[[], None]:
        client = Redisson.create(redisson_config(server))
        if latch_once:
            _cache_latch(client)
        lock = client.get_lock(f"overhead:{plain_pool}:{latch_once}")
        lock.lock()  # creates the pools (lazily) while the patch is active
        lock.unlock()

        def cycle() -> None:
            lock.lock()
            lock.unlock()

        return cycle

    if plain_pool:
        with _plain_pools():
            return build()
    return build()


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
            "redisson-py": _ours(servers[0], plain_pool=False, latch_once=False),
            "  plain ConnectionPool": _ours(servers[0], plain_pool=True, latch_once=False),
            "  latch_ttl computed once": _ours(servers[0], plain_pool=False, latch_once=True),
            "  both": _ours(servers[0], plain_pool=True, latch_once=True),
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
