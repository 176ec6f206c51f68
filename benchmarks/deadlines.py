"""``python -m benchmarks.deadlines``: how long a wait really takes when its server fails.

For each topology (single, sentinel, cluster), fault (the lock's master frozen with
SIGSTOP, killed, or killed and restarted at once) and API (sync, asyncio), on a topology
started for the case and used at once: another client holds the lock, the fault is
applied, and ``try_lock(wait_time=2)`` is timed. The promise is the wait plus one command
timeout (``timeout: 1000`` here, with Redisson's default retry delay of 1.5 s); the
table gives each elapsed time, the outcome, and the ratio to the promise. The same cases
are asserted by ``integration/lock/test_stalls_and_deadlines.py``; this prints figures.

Writes ``benchmarks/results/deadlines.md`` (and prints it). About 2 minutes on the
process backend.
"""

from __future__ import annotations

import argparse
import asyncio
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from redis.crc import key_slot

from redisson_py import Config, RedissonError
from redisson_py import Redisson as SyncRedisson
from redisson_py.asyncio import Redisson as AsyncRedisson
from redisson_py.config import ConstantDelay
from redisson_py.testing import start_topology
from redisson_py.testing.topologies.node import Node
from redisson_py.testing.topologies.topology import Topology

WAIT = 2.0
TIMEOUT = 1.0
NAME = "bench:deadline"
RESULTS = Path(__file__).parent / "results" / "deadlines.md"


def _config(topology: Topology) -> Config:
    config = Config.from_yaml(topology.redisson_yaml())
    config.server_config.timeout = TIMEOUT
    config.server_config.retry_delay = ConstantDelay(1.5)
    return config


def _master(topology: Topology) -> Node:
    if topology.kind == "cluster":
        return topology.master_for_slot(key_slot(NAME.encode()))
    return topology.master()


def _apply(fault: str, master: Node) -> Callable[[], None]:
    """Break ``master``; return what undoes it after the measurement."""
    if fault == "frozen":
        master.pause()
        return master.resume
    master.kill()
    if fault == "killed":
        return lambda: None
    thread = threading.Thread(target=master.restart, daemon=True)
    thread.start()
    return lambda: thread.join(60)


def _sync_case(topology: Topology, fault: str) -> tuple[float, str]:
    holder, client = SyncRedisson.create(_config(topology)), SyncRedisson.create(_config(topology))
    try:
        assert holder.get_lock(NAME).try_lock(0.0, 60.0)
        lock = client.get_lock(NAME)
        lock.is_locked()
        undo = _apply(fault, _master(topology))
        started = time.monotonic()
        try:
            outcome = repr(lock.try_lock(WAIT, 10.0))
        except RedissonError as error:
            outcome = type(error).__name__
        elapsed = time.monotonic() - started
        undo()
        return elapsed, outcome
    finally:
        holder.shutdown()
        client.shutdown()


async def _async_case(topology: Topology, fault: str) -> tuple[float, str]:
    holder = await AsyncRedisson.create(_config(topology))
    client = await AsyncRedisson.create(_config(topology))
    try:
        assert await holder.get_lock(NAME).try_lock(0.0, 60.0)
        lock = client.get_lock(NAME)
        await lock.is_locked()
        undo = await asyncio.to_thread(_apply, fault, _master(topology))
        started = time.monotonic()
        try:
            outcome = repr(await lock.try_lock(WAIT, 10.0))
        except RedissonError as error:
            outcome = type(error).__name__
        elapsed = time.monotonic() - started
        await asyncio.to_thread(undo)
        return elapsed, outcome
    finally:
        await holder.shutdown()
        await client.shutdown()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.deadlines")
    parser.add_argument("--backend", default="process", choices=["process", "container"])
    args = parser.parse_args(argv)
    promise = WAIT + TIMEOUT
    rows = [
        f"try_lock(wait_time={WAIT:g}) with another holder and the lock's master broken;"
        f" promise: wait + one command timeout = {promise:g} s ({args.backend} backend,"
        f" {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}).",
        "",
        "| topology | fault | API | elapsed | outcome | vs promise |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for kind in ("single", "sentinel", "cluster"):
        for fault in ("frozen", "killed", "restarting"):
            for api in ("sync", "asyncio"):
                with start_topology(kind, backend=args.backend) as topology:
                    case: Any = (
                        _sync_case(topology, fault)
                        if api == "sync"
                        else asyncio.run(_async_case(topology, fault))
                    )
                elapsed, outcome = case
                rows.append(
                    f"| {kind} | {fault} | {api} | {elapsed:.2f} s | {outcome} |"
                    f" {elapsed / promise:.2f}x |"
                )
                print(rows[-1], flush=True)
    RESULTS.write_text("\n".join(rows) + "\n")
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
