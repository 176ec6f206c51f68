"""Where a redisson-py hand-off spends its time: ``python -m benchmarks.handoff_breakdown``.

Not part of the main run: a diagnosis of the hand-off targets (about 30 s). The waiter
process wraps some of the sync client's internals with timers, in that process only,
and prints the median of each stage over 200 hand-offs measured as in
:mod:`benchmarks.bench_handoff`. For the reentrant lock (the default): the pub/sub
reader thread's delivery of the unlock message, the waiter's wake-up, the ACQUIRE call,
and the unsubscribe that runs before ``lock()`` returns. ``--queued``: the queued lock
(issue 42), whose waiter holds the lock when the grant message arrives: the delivery,
the wake-up, the grant's bookkeeping, and anything the waiter sends before ``lock()``
returns (nothing, when the hand-off takes one trip). ``--delay MS`` puts every
connection behind a delay proxy adding that round trip
(`benchmarks.bench_handoff.behind_delay`), pub/sub included.
"""

from __future__ import annotations

import argparse
import multiprocessing
import random
import statistics
import time
from multiprocessing.connection import Connection
from typing import Any

from benchmarks.bench_handoff import behind_delay
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
QUEUED_STAGES = (
    ("release() called -> message read by the waiter's pub/sub thread", "delivered", "released"),
    ("pub/sub thread -> waiting thread awake", "woke", "delivered"),
    ("awake -> grant recorded", "granted", "woke"),
    ("grant -> lock() returned", "returned", "granted"),
    ("total", "returned", "released"),
)


def _instrument(marks: dict[str, float]) -> None:
    """Wrap the sync client's internals so each stage stamps ``marks`` (this process)."""
    from redisson_py.core.flows import queued_lock  # noqa: PLC0415
    from redisson_py.sync import manager, pubsub  # noqa: PLC0415

    deliver = pubsub.PubSubService._deliver
    wait = pubsub.Subscription.wait
    close = pubsub.Subscription.close
    execute = manager.ConnectionManager.execute
    passed_on = queued_lock.passed_on

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

    def timed_passed_on(*args: Any) -> Any:
        granted = passed_on(*args)
        marks["granted"] = time.monotonic()
        return granted

    pubsub.PubSubService._deliver = timed_deliver  # type: ignore[method-assign]
    pubsub.Subscription.wait = timed_wait  # type: ignore[method-assign]
    pubsub.Subscription.close = timed_close  # type: ignore[method-assign]
    manager.ConnectionManager.execute = timed_execute  # type: ignore[method-assign]
    queued_lock.passed_on = timed_passed_on  # type: ignore[assignment]


def _waiter(conn: Connection, port: int, kind: str) -> None:
    marks: dict[str, float] = {}
    _instrument(marks)
    contender = Contender(kind, [Server(port)])
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


def _measure(server: Server, kind: str, stages: tuple[tuple[str, str, str], ...]) -> list[Any]:
    rng = random.Random(7)
    context = multiprocessing.get_context("spawn")
    ours, theirs = context.Pipe()
    waiter = context.Process(target=_waiter, args=(theirs, server.port, kind), daemon=True)
    waiter.start()
    ours.recv()
    contender = Contender(kind, [server])
    cycle = contender.lock("breakdown")
    needed = {key for _, end, start in stages for key in (end, start)} - {"released"}
    rows: list[dict[str, float]] = []
    sent = 0  # hand-offs in which the waiter sent a command after its wake-up
    for number in range(WARMUP + COUNT):
        cycle.acquire()
        ours.send("go")
        ours.recv()
        time.sleep(0.005 + rng.random() * 0.1)
        released = time.monotonic()
        cycle.release()
        marks: dict[str, float] = ours.recv()
        if number < WARMUP:
            continue
        sent += "call" in marks and marks["call"] < marks["returned"]
        if needed <= marks.keys():
            rows.append({**marks, "released": released})
    ours.send("stop")
    waiter.join(10)
    contender.close()
    return [rows, sent]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.handoff_breakdown")
    parser.add_argument("--queued", action="store_true", help="the queued lock (issue 42)")
    parser.add_argument("--delay", type=float, default=0.0, help="round trip to add, in ms")
    args = parser.parse_args(argv)
    kind, stages = ("ours-queued", QUEUED_STAGES) if args.queued else ("ours", STAGES)
    with (
        start_topology("single", backend="process") as topology,
        behind_delay(Server(topology.master().port), args.delay / 1000) as server,
    ):
        rows, sent = _measure(server, kind, stages)
    print(f"{kind}, {args.delay:g} ms added round trip")
    print(f"| stage (median of {len(rows)} hand-offs) | ms |")
    print("| --- | ---: |")
    for label, end, start in stages:
        value = statistics.median(row[end] - row[start] for row in rows) * 1000
        print(f"| {label} | {value:.3f} |")
    if args.queued:
        print(f"hand-offs with a command sent before lock() returned: {sent}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
