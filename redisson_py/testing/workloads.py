"""Workloads run in separate processes by the tests, the chaos suite and the demo.

``python -m redisson_py.testing.workloads counter ...`` runs owners (threads or tasks)
that increment a shared counter without atomicity (GET, then SET) under one lock, and
prints a JSON summary; ``... hold ...`` takes a lock, prints ``held`` and waits to be
killed. The config comes as a Redisson YAML file, as a user's service would have it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import threading
import time
from collections.abc import Sequence
from typing import Any

from redisson_py.config import Config


def _sync_counter(config: Config, owners: int, increments: int, lock_name: str, counter: str,
                  lease: float | None) -> list[int]:
    from redisson_py import Redisson

    with Redisson.create(config) as client:
        lock, raw = client.get_lock(lock_name), client.redis(counter)
        done = [0] * owners

        def work(index: int) -> None:
            for _ in range(increments):
                lock.lock(lease)
                try:
                    value = int(raw.get(counter) or 0)
                    raw.set(counter, value + 1)
                finally:
                    lock.unlock()
                done[index] += 1

        threads = [threading.Thread(target=work, args=(i,)) for i in range(owners)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        return done


async def _async_counter(config: Config, owners: int, increments: int, lock_name: str,
                         counter: str, lease: float | None) -> list[int]:
    from redisson_py.asyncio import Redisson

    async with await Redisson.create(config) as client:
        lock, raw = client.get_lock(lock_name), client.redis(counter)
        done = [0] * owners

        async def work(index: int) -> None:
            for _ in range(increments):
                await lock.lock(lease)
                try:
                    value = int(await raw.get(counter) or 0)
                    await raw.set(counter, value + 1)
                finally:
                    await lock.unlock()
                done[index] += 1

        await asyncio.gather(*(work(i) for i in range(owners)))
        return done


def _hold(config: Config, flavor: str, lock_name: str) -> None:
    if flavor == "sync":
        from redisson_py import Redisson

        client = Redisson.create(config)
        client.get_lock(lock_name).lock()
        print("held", flush=True)
        while True:
            time.sleep(3600)

    async def hold() -> None:
        from redisson_py.asyncio import Redisson as AsyncRedisson

        client = await AsyncRedisson.create(config)
        await client.get_lock(lock_name).lock()
        print("held", flush=True)
        await asyncio.sleep(3600 * 24)

    asyncio.run(hold())


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m redisson_py.testing.workloads")
    commands = parser.add_subparsers(dest="command", required=True)
    counter = commands.add_parser("counter", help="increment a counter under a lock")
    hold = commands.add_parser("hold", help="take a lock and wait to be killed")
    for sub in (counter, hold):
        sub.add_argument("--config", required=True, help="a Redisson YAML file")
        sub.add_argument("--flavor", choices=("sync", "asyncio"), default="sync")
        sub.add_argument("--lock", required=True)
    counter.add_argument("--counter", required=True, help="the key to increment")
    counter.add_argument("--owners", type=int, default=4)
    counter.add_argument("--increments", type=int, default=100)
    counter.add_argument("--lease", type=float, default=None)
    args = parser.parse_args(argv)
    config = Config.from_yaml(args.config)
    if args.command == "hold":
        _hold(config, args.flavor, args.lock)
        return 0
    started = time.monotonic()
    run_args: tuple[Any, ...] = (
        config, args.owners, args.increments, args.lock, args.counter, args.lease
    )
    if args.flavor == "sync":
        done = _sync_counter(*run_args)
    else:
        done = asyncio.run(_async_counter(*run_args))
    json.dump({"done": done, "seconds": time.monotonic() - started}, sys.stdout)
    print(flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
