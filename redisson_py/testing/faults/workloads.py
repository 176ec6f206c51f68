"""Workloads run in separate processes by the tests, the chaos suite and the demo.

``python -m redisson_py.testing.faults.workloads counter ...`` runs owners (threads or tasks)
that increment a shared counter without atomicity (GET, then SET) under one lock, and
prints a JSON summary; ``... hold ...`` takes a lock, prints ``held`` and waits to be
killed. The config comes as a Redisson YAML file, as a user's service would have it; a
file of several YAML documents (one single-server config per independent master) makes
the lock a RedLock over them, with the counter on the first master.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import redisson_py.asyncio
from redisson_py import Redisson, RedLock
from redisson_py.config import Config


@dataclass(frozen=True)
class CounterJob:
    """``owners`` owners each add 1 to ``counter`` ``increments`` times under ``lock``."""

    configs: list[Config]
    lock: str
    counter: str
    owners: int = 4
    increments: int = 100
    lease: float | None = None


def _sync_lock(configs: list[Config], name: str) -> tuple[list[Redisson], Any]:
    clients = [Redisson.create(config) for config in configs]
    lock = RedLock.for_name(name, clients) if len(clients) > 1 else clients[0].get_lock(name)
    return clients, lock


async def _async_lock(
    configs: list[Config], name: str
) -> tuple[list[redisson_py.asyncio.Redisson], Any]:
    clients = [await redisson_py.asyncio.Redisson.create(config) for config in configs]
    if len(clients) > 1:
        return clients, redisson_py.asyncio.RedLock.for_name(name, clients)
    return clients, clients[0].get_lock(name)


def run_counter(job: CounterJob) -> list[int]:
    """Run ``job`` with threads; return how many increments each owner made."""
    clients, lock = _sync_lock(job.configs, job.lock)
    raw = clients[0].redis(job.counter)
    done = [0] * job.owners

    def work(index: int) -> None:
        for _ in range(job.increments):
            lock.lock(job.lease)
            try:
                value = int(raw.get(job.counter) or 0)
                raw.set(job.counter, value + 1)
            finally:
                lock.unlock()
            done[index] += 1

    threads = [threading.Thread(target=work, args=(i,)) for i in range(job.owners)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for client in clients:
        client.shutdown()
    return done


async def run_counter_async(job: CounterJob) -> list[int]:
    """Run ``job`` with asyncio tasks; return how many increments each owner made."""
    clients, lock = await _async_lock(job.configs, job.lock)
    raw = clients[0].redis(job.counter)
    done = [0] * job.owners

    async def work(index: int) -> None:
        for _ in range(job.increments):
            await lock.lock(job.lease)
            try:
                value = int(await raw.get(job.counter) or 0)
                await raw.set(job.counter, value + 1)
            finally:
                await lock.unlock()
            done[index] += 1

    await asyncio.gather(*(work(i) for i in range(job.owners)))
    for client in clients:
        await client.shutdown()
    return done


def hold(configs: list[Config], flavor: str, lock_name: str) -> None:
    """Take the lock, print ``held``, and wait to be killed."""
    if flavor == "sync":
        _, lock = _sync_lock(configs, lock_name)
        lock.lock()
        print("held", flush=True)
        while True:
            time.sleep(3600)

    async def hold_async() -> None:
        _, lock = await _async_lock(configs, lock_name)
        await lock.lock()
        print("held", flush=True)
        await asyncio.sleep(3600 * 24)

    asyncio.run(hold_async())


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m redisson_py.testing.faults.workloads")
    commands = parser.add_subparsers(dest="command", required=True)
    counter = commands.add_parser("counter", help="increment a counter under a lock")
    holder = commands.add_parser("hold", help="take a lock and wait to be killed")
    for sub in (counter, holder):
        sub.add_argument("--config", required=True, help="a Redisson YAML file")
        sub.add_argument("--flavor", choices=("sync", "asyncio"), default="sync")
        sub.add_argument("--lock", required=True)
    counter.add_argument("--counter", required=True, help="the key to increment")
    counter.add_argument("--owners", type=int, default=4)
    counter.add_argument("--increments", type=int, default=100)
    counter.add_argument("--lease", type=float, default=None)
    args = parser.parse_args(argv)
    configs = Config.from_yaml_all(args.config)
    if args.command == "hold":
        hold(configs, args.flavor, args.lock)
        return 0
    job = CounterJob(configs, args.lock, args.counter, args.owners, args.increments, args.lease)
    started = time.monotonic()
    done = run_counter(job) if args.flavor == "sync" else asyncio.run(run_counter_async(job))
    json.dump({"done": done, "seconds": time.monotonic() - started}, sys.stdout)
    print(flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
