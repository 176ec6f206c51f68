"""One demo worker process: ``python -m redisson_py.demo.worker ...`` (started by the demo).

It connects with the given Redisson YAML (several documents: a RedLock over those
masters), marks itself ready in the run's progress hash, blocks on the run's start list
until the demo starts every worker at once, then loops until the deadline it was given:
``lock()``, read the counter, write it back plus one, ``unlock()``, recording the times
of each step (see `redisson_py.demo.summary`). It reports its count to the progress
hash a few times a second and writes its records as JSON to ``--results`` at the end.

SIGINT or SIGTERM ends the loop after the current iteration (the lock is released, the
records written); a second SIGINT interrupts at once. Exit status 0, or 1 after an error
(also written to the results file, and as one line on stderr).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import sys
import time
from array import array
from collections.abc import Sequence
from pathlib import Path
from types import FrameType
from typing import Any

from redisson_py import Config, Redisson, RedLock
from redisson_py.demo.options import DemoKeys

PROGRESS_EVERY = 0.2
"""Seconds between two progress reports of a worker."""

START_TIMEOUT = 60.0
"""Seconds a ready worker waits for the start before giving up."""


class _Stop:
    """Signal handler: finish the iteration, then stop.

    A second SIGINT interrupts at once (a user's second Ctrl-C); SIGTERM never does,
    because the demo sends it right after the Ctrl-C the terminal already delivered.
    """

    def __init__(self) -> None:
        self.requested = False

    def __call__(self, signum: int, frame: FrameType | None) -> None:
        if self.requested and signum == signal.SIGINT:
            raise KeyboardInterrupt
        self.requested = True


class _Records:
    """Compact per-acquisition records (a 10 s run makes tens of thousands)."""

    def __init__(self) -> None:
        self.seq = array("q")
        self.called = array("d")
        self.acquired = array("d")
        self.released = array("d")

    def add(self, seq: int, called: float, acquired: float, released: float) -> None:
        self.seq.append(seq)
        self.called.append(called)
        self.acquired.append(acquired)
        self.released.append(released)

    def __len__(self) -> int:
        return len(self.seq)

    def as_json(self) -> dict[str, list[Any]]:
        return {
            "seq": self.seq.tolist(),
            "called": self.called.tolist(),
            "acquired": self.acquired.tolist(),
            "released": self.released.tolist(),
        }


def _connect(configs: list[Config], lock_name: str) -> tuple[list[Redisson], Any]:
    clients: list[Redisson] = []
    try:
        for config in configs:
            clients.append(Redisson.create(config))
    except BaseException:
        for client in clients:
            client.shutdown()
        raise
    if len(clients) > 1:
        return clients, RedLock.for_name(lock_name, clients)
    return clients, clients[0].get_lock(lock_name)


def _wait_for_start(client: Redisson, keys: DemoKeys, stop: _Stop) -> float | None:
    """Block on the start list; return the deadline it carries (None: stop or timeout)."""
    start = client.redis(keys.start)
    waited = 0.0
    while not stop.requested and waited < START_TIMEOUT:
        item = start.blpop([keys.start], timeout=1)
        if item is not None:
            return float(item[1])
        waited += 1.0
    return None


def work(
    lock: Any,
    client: Redisson,
    keys: DemoKeys,
    *,
    index: int,
    until: float,
    think: float,
    stop: _Stop,
    parent: int,
) -> _Records:
    """The contended loop; see the module docstring."""
    counter = client.redis(keys.counter)
    progress = client.redis(keys.progress)
    records = _Records()
    next_report = time.monotonic() + PROGRESS_EVERY
    clock = time.monotonic
    while not stop.requested:
        called = clock()
        if called >= until:
            break
        lock.lock()
        acquired = clock()
        try:
            # Deliberately not atomic: only the lock keeps two workers from reading the
            # same value and losing an increment.
            value = int(counter.get(keys.counter) or 0)
            counter.set(keys.counter, value + 1)
        finally:
            released = clock()
            lock.unlock()
        records.add(value, called, acquired, released)
        if released >= next_report:
            progress.hset(keys.progress, str(index), len(records))
            next_report = released + PROGRESS_EVERY
            if os.getppid() != parent:
                break  # the demo is gone: nobody will read the results
        if think > 0:
            time.sleep(think)
    progress.hset(keys.progress, str(index), len(records))
    return records


def _write(path: Path, payload: dict[str, Any]) -> None:
    partial = path.with_suffix(".part")
    partial.write_text(json.dumps(payload))
    partial.replace(path)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m redisson_py.demo.worker")
    parser.add_argument("--config", required=True, type=Path)
    parser.add_argument("--run-id", required=True)
    parser.add_argument("--index", required=True, type=int)
    parser.add_argument("--results", required=True, type=Path)
    parser.add_argument("--think", type=float, default=0.0)
    parser.add_argument("--parent", type=int, default=os.getppid())
    args = parser.parse_args(argv)

    stop = _Stop()
    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    keys = DemoKeys(args.run_id)
    payload: dict[str, Any] = {"index": args.index, "pid": os.getpid(), "error": None}
    clients: list[Redisson] = []
    status = 0
    try:
        clients, lock = _connect(Config.from_yaml_all(args.config), keys.lock)
        clients[0].redis(keys.progress).hset(keys.progress, str(args.index), 0)
        until = _wait_for_start(clients[0], keys, stop)
        records = _Records()
        if until is not None:
            records = work(
                lock,
                clients[0],
                keys,
                index=args.index,
                until=until,
                think=args.think,
                stop=stop,
                parent=args.parent,
            )
        payload.update(records.as_json())
    except KeyboardInterrupt:
        payload["error"] = "interrupted"
        status = 130
    except Exception as error:
        payload["error"] = f"{type(error).__name__}: {error}"
        print(f"demo worker {args.index}: {payload['error']}", file=sys.stderr, flush=True)
        status = 1
    finally:
        for client in clients:
            with contextlib.suppress(Exception):
                client.shutdown()
    _write(args.results, payload)
    return status


if __name__ == "__main__":
    raise SystemExit(main())
