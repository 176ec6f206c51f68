"""Where a redisson-py hand-off spends its time: ``python -m benchmarks.handoff_breakdown``.

Not part of the main run: a diagnosis of the hand-off target (about 30 s). The waiter
process wraps four of the sync client's internals with timers, in that process only:
the pub/sub reader thread's delivery of the unlock message, the waiter's wake-up, the
ACQUIRE call, and the unsubscribe that runs before ``lock()`` returns. It prints the
median of each stage over 200 hand-offs measured as in :mod:`benchmarks.bench_handoff`.
"""

from __future__ import annotations

import multiprocessing
import random
import statistics
import time
from multiprocessing.connection import Connection
from typing import Any

from benchmarks.contenders import Contender, Server
from redisson_py.testing import start_topology

COUNT = 200
WARMUP = 10
STAGES = (
    ("release() called -> message read by the waiter's pub/sub thread", "delivered", "released"),
    ("pub/sub thread -> waiting thread awake", "woke", "delivered"),
    ("awake -> ACQUIRE sent", "call", "woke"),
    ("ACQUIRE round trip, through the library", "called", "call"),
    ("ACQUIRE done -> UNSUBSCRIBE sent", "unsubscribe", "called"),
    ("UNSUBSCRIBE (sent before lock() returns)", "unsubscribed", "unsubscribe"),
    ("-> lock() returned", "returned", "unsubscribed"),
    ("total", "returned", "released"),
)


def _instrument(marks: dict[str, float]) -> None:
    """Wrap the sync client's internals so each stage stamps ``marks`` (this process)."""
    from redisson_py.sync import manager, pubsub  # noqa: PLC0415

    deliver = pubsub.PubSubService._deliver
    wait = pubsub.Subscription.wait
    close = pubsub.Subscription.close
    execute = manager.ConnectionManager.execute

    def timed_deliver(self: Any, *args: Any) -> None:
        marks.setdefault("delivered", time.monotonic())
        deliver(self, *args)

    def timed_wait(self: Any, timeout: float) -> bool:
        woken = wait(self, timeout)
        marks["woke"] = time.monotonic()
        return woken

    def timed_close(self: Any) -> None:
        marks["unsubscribe"] = time.monotonic()
        close(self)
        marks["unsubscribed"] = time.monotonic()

    def timed_execute(self: Any, effect: Any) -> Any:
        started = time.monotonic()
        result = execute(self, effect)
        if "woke" in marks and "call" not in marks:
            marks["call"], marks["called"] = started, time.monotonic()
        return result

    pubsub.PubSubService._deliver = timed_deliver  # type: ignore[method-assign]
    pubsub.Subscription.wait = timed_wait  # type: ignore[method-assign]
    pubsub.Subscription.close = timed_close  # type: ignore[method-assign]
    manager.ConnectionManager.execute = timed_execute  # type: ignore[method-assign]


def _waiter(conn: Connection, port: int) -> None:
    marks: dict[str, float] = {}
    _instrument(marks)
    contender = Contender("ours", [Server(port)])
    cycle = contender.lock("breakdown")
    conn.send("ready")
    while conn.recv() == "go":
        marks.clear()
        conn.send("blocking")
        cycle.acquire()
        marks["returned"] = time.monotonic()
        cycle.release()
        conn.send(dict(marks))
    contender.close()


def main() -> int:
    rng = random.Random(7)
    with start_topology("single", backend="process") as topology:
        server = Server(topology.master().port)
        context = multiprocessing.get_context("spawn")
        ours, theirs = context.Pipe()
        waiter = context.Process(target=_waiter, args=(theirs, server.port), daemon=True)
        waiter.start()
        ours.recv()
        contender = Contender("ours", [server])
        cycle = contender.lock("breakdown")
        rows: list[dict[str, float]] = []
        for number in range(WARMUP + COUNT):
            cycle.acquire()
            ours.send("go")
            ours.recv()
            time.sleep(0.005 + rng.random() * 0.1)
            released = time.monotonic()
            cycle.release()
            marks: dict[str, float] = ours.recv()
            if number >= WARMUP and all(k in marks for _, k, _ in STAGES):
                rows.append({**marks, "released": released})
        ours.send("stop")
        waiter.join(10)
        contender.close()
    print(f"| stage (median of {len(rows)} hand-offs) | ms |")
    print("| --- | ---: |")
    for label, end, start in STAGES:
        value = statistics.median(row[end] - row[start] for row in rows) * 1000
        print(f"| {label} | {value:.3f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
