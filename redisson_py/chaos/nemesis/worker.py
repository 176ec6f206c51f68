"""A nemesis worker: one process, on a client host of its own, that takes and releases
the run's shared locks in a loop and journals everything it does.

``python -m redisson_py.chaos.nemesis.worker --config FILE --oracle FILE --journal FILE
--index I --locks A,B --resources RA,RB --mode sync-on --seed N`` (the runner starts it
with ``topology.network.popen``, so its connections leave from its host's address).

Each round: pick a lock (random, from the seed and ``I``), acquire it within
`ACQUIRE_WAIT` seconds, hold it for a random while (with the watchdog: no lease),
writing the lock's fenced resource on the oracle server every `WRITE_INTERVAL`
seconds with the hold's fence, then release it. A worker stops writing as soon as
``on_lock_lost`` tells it the hold is lost (a write already sent goes on), and then
releases, which raises ``LockNotOwnedError`` as promised. It writes once more after
each pause before looking at the clock, as a process resuming from a stall finishes the
step it was in: that is the stale write a fenced resource must refuse.

``--mode redlock`` takes a RedLock over one client per document of ``--config`` (five
independent masters); a RedLock has no token, so its writes are plain ``SET``\\ s of the
oracle, journaled as ``unfenced``: the journal alone is the oracle then.
``--mode queued`` takes the queued lock (issue 42), replica sync on; it has no token
either, so its writes are ``unfenced`` too.

Prints ``ready`` once its clients are connected, works until a ``stop`` line (or the end
of its stdin), finishes the round it is in, and exits 0.
"""

from __future__ import annotations

import argparse
import logging
import os
import random
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from redis.exceptions import RedisError

from redisson_py import (
    Config,
    Fence,
    LockLost,
    LockNotOwnedError,
    Redisson,
    RedissonError,
    RedLock,
    StaleTokenError,
)
from redisson_py.chaos.nemesis.journal import Journal
from redisson_py.core.keyspace import owner_field
from redisson_py.sync.lock import current_owner_id

__all__ = ["ACQUIRE_WAIT", "LONG_HOLD", "SHORT_HOLD", "WRITE_INTERVAL", "main"]

ACQUIRE_WAIT = 2.0
"""Seconds an acquire may wait for the lock."""

SHORT_HOLD = (0.1, 1.0)
LONG_HOLD = (3.0, 8.0)
LONG_HOLDS = 0.2
"""Seconds a lock is held (uniform): mostly short holds, and a share of long ones, past
the 3 s watchdog timeout, so that faults strike holds that live on renewals (every 1 s)
and holders get told they lost them."""

WRITE_INTERVAL = 0.1
"""Seconds between two writes of a hold."""

THINK = (0.0, 0.2)
"""Seconds between a release and the next acquire (uniform)."""


@dataclass
class _Current:
    """The acquire or hold in progress (a worker has at most one), from the acquire's
    start to the release's end: a loss reported while an acquire is still returning
    belongs to the hold it returns."""

    lock: str = ""
    hold: str = ""
    told: bool = False


class Worker:
    """The loop of one worker process (see the module docstring)."""

    def __init__(self, args: argparse.Namespace):
        self.index: int = args.index
        self.mode: str = args.mode
        self.locks: list[str] = args.locks.split(",")
        self.resources = dict(zip(self.locks, args.resources.split(","), strict=True))
        self.rng = random.Random(f"{args.seed}:{self.index}")
        self.journal = Journal(Path(args.journal))
        self.stop = threading.Event()
        self._current = _Current()
        self._guard = threading.Lock()
        self.clients = [Redisson.create(c) for c in Config.from_yaml_all(args.config)]
        [oracle_config] = Config.from_yaml_all(args.oracle)
        self.oracle = Redisson.create(oracle_config)
        self.handles: dict[str, Any] = {name: self._handle(name) for name in self.locks}
        self.rounds = 0

    def _handle(self, name: str) -> Any:
        if self.mode == "redlock":
            return RedLock.for_name(name, self.clients, on_lock_lost=self._told)
        if self.mode == "queued":
            return self.clients[0].get_queued_lock(name, on_lock_lost=self._told)
        return self.clients[0].get_fenced_lock(name, on_lock_lost=self._told)

    def _told(self, lost: LockLost) -> None:
        """``on_lock_lost`` (from the watchdog's thread): journal it, and stop writing."""
        with self._guard:
            # Timed under the guard: the worker may see the flag, stop and journal its
            # release before this record is written, but never with an earlier time.
            told_at = time.monotonic()
            current = self._current
            hold = current.hold if current.lock and not current.told else None
            current.told = current.told or hold is not None
        self.journal.record("told", t=told_at, lock=lost.name, hold=hold, reason=lost.reason)

    def _write_time(self) -> float | None:
        """Now, as a write's start, or None when the hold was told lost. Read under the
        guard `_told` times its record under, so a write journaled as started
        before the told record was checked before it, never after."""
        with self._guard:
            return None if self._current.told else time.monotonic()

    def run(self) -> None:
        self.journal.record("start", worker=self.index, pid=os.getpid(), mode=self.mode)
        try:
            while not self.stop.is_set():
                self._round()
                time.sleep(self.rng.uniform(*THINK))
        finally:
            self.journal.record("end", worker=self.index, rounds=self.rounds)

    def _round(self) -> None:
        name = self.rng.choice(self.locks)
        hold = f"{self.index}:{self.rounds}"
        self.rounds += 1
        lock = self.handles[name]
        self.journal.record("acquire", lock=name, hold=hold)
        with self._guard:
            self._current = _Current(name, hold)
        try:
            if self.mode in ("redlock", "queued"):
                token: int | None = None
                granted = bool(lock.try_lock(ACQUIRE_WAIT))
            else:
                token = lock.try_lock_and_get_token(ACQUIRE_WAIT)
                granted = token is not None
        except RedissonError as exc:
            with self._guard:
                self._current = _Current()
            self.journal.record("error", lock=name, hold=hold, **_error(exc))
            time.sleep(0.1)  # a failing topology: do not spin
            return
        if not granted:
            with self._guard:
                self._current = _Current()
            self.journal.record("timeout", lock=name, hold=hold)
            return
        owner = owner_field(self.clients[0].id, current_owner_id())
        self.journal.record("grant", lock=name, hold=hold, token=token, owner=owner)
        fence = Fence(token, owner) if token is not None else None
        span = LONG_HOLD if self.rng.random() < LONG_HOLDS else SHORT_HOLD
        self._hold(name, hold, fence, time.monotonic() + self.rng.uniform(*span))
        self.journal.record("unlock", lock=name, hold=hold)
        try:
            lock.unlock()
            outcome, extra = "released", {}
        except LockNotOwnedError as exc:
            outcome, extra = "not-owned", {"detail": str(exc)[:300]}
        except RedissonError as exc:
            outcome, extra = "error", _error(exc)
        with self._guard:
            self._current = _Current()
        self.journal.record("unlocked", lock=name, hold=hold, outcome=outcome, **extra)

    def _hold(self, name: str, hold: str, fence: Fence | None, until: float) -> None:
        """Write until ``until``, or until told, or stopped; at least once, and once
        more after every sleep before looking at the clock (see the module docstring)."""
        sequence = 0
        while True:
            started = self._write_time()
            if started is None:
                return
            self._write(name, hold, fence, sequence, started)
            sequence += 1
            if time.monotonic() >= until or self.stop.is_set():
                return
            time.sleep(WRITE_INTERVAL)

    def _write(
        self, name: str, hold: str, fence: Fence | None, sequence: int, started: float
    ) -> None:
        value = f"{hold}:{sequence}"
        resource = self.resources[name]
        fields: dict[str, Any] = {"token": None if fence is None else fence.token}
        try:
            if fence is None:
                self.oracle.redis(resource).set(resource, value)
                outcome = "unfenced"
            else:
                self.oracle.get_fenced_resource(resource).set(value, fence)
                outcome = "accepted"
        except StaleTokenError as exc:
            outcome = "refused"
            fields.update(highest=exc.highest, tie=exc.tie)
        except (RedissonError, RedisError, OSError) as exc:  # redis-py's: the unfenced SET
            outcome = "error"
            fields.update(_error(exc))
        self.journal.record("write", lock=name, hold=hold, start=started, outcome=outcome, **fields)

    def close(self) -> None:
        for client in (*self.clients, self.oracle):
            client.shutdown()
        self.journal.close()


def _error(exc: BaseException) -> dict[str, str]:
    return {"error": type(exc).__name__, "detail": str(exc)[:300]}


def _watch_stdin(stop: threading.Event) -> None:
    """Set ``stop`` at a ``stop`` line or at the end of stdin (the runner is gone)."""
    for line in sys.stdin:
        if line.strip() == "stop":
            break
    stop.set()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m redisson_py.chaos.nemesis.worker")
    parser.add_argument("--config", required=True, help="the locks' Redisson YAML")
    parser.add_argument("--oracle", required=True, help="the oracle server's Redisson YAML")
    parser.add_argument("--journal", required=True)
    parser.add_argument("--index", type=int, required=True)
    parser.add_argument("--locks", required=True, help="comma-separated lock names")
    parser.add_argument("--resources", required=True, help="their fenced resources")
    parser.add_argument(
        "--mode", choices=("sync-on", "sync-off", "redlock", "queued"), required=True
    )
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    logging.basicConfig(
        stream=sys.stderr, level=logging.WARNING, format="%(asctime)s %(name)s %(message)s"
    )
    worker = Worker(args)
    threading.Thread(target=_watch_stdin, args=(worker.stop,), daemon=True).start()
    print("ready", flush=True)
    try:
        worker.run()
    finally:
        worker.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
