"""Hand-off latency: from the holder's ``release()`` call to a blocked waiter's
``acquire()`` returning, the waiter in another process.

One hand-off: this process takes the lock and tells the waiter process to go; the waiter
says it is about to call ``acquire()`` and calls it; this process keeps the lock for a
random 5-105 ms more (so the waiter is surely blocked, and a polling waiter is caught at
a random point of its sleep, as it would be in real use), reads ``time.monotonic()`` and
releases; the waiter reads ``time.monotonic()`` as soon as ``acquire()`` returns, releases
and reports it. CLOCK_MONOTONIC is one clock for every process on the machine.

The reference is the least any pub/sub wake-up can cost: this process PUBLISHes, the
waiter process, blocked reading its subscription, makes one round trip (the ACQUIRE
script) once the message arrives and reads the clock; measured the same way, same server.
Every kind has its waiter process running at once and the kinds take turns, one
hand-off each in a rotating order.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import random
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import Any

import redis

from benchmarks.contenders import (
    Contender,
    Cycle,
    FloorScripts,
    Server,
    latch_millis,
    redisson_config,
)
from benchmarks.rtt_proxy import serve_delayed
from benchmarks.stats import distribution
from redisson_py.core import scripts

KINDS = ("ours", "ours-queued", "redis-py", "python-redis-lock")
RTTS = (0.0, 0.0005, 0.001, 0.002)
"""Round trips added by delay proxies for the hand-off against round trip (issue 42)."""
REFERENCE = "reference"
HOLD_MIN, HOLD_SPREAD = 0.005, 0.100


def _waiter(conn: Connection, kind: str, port: int, name: str) -> None:
    """The waiter process: block in acquire() on each "go", report when it returned."""
    server = Server(port)
    if kind == REFERENCE:
        _reference_waiter(conn, server, name)
        return
    contender = Contender(kind, [server])
    cycle = contender.lock(name)
    conn.send("ready")
    try:
        while conn.recv() == "go":
            conn.send("blocking")
            cycle.acquire()
            acquired = time.monotonic()
            cycle.release()
            conn.send(acquired)
    finally:
        contender.close()


def _reference_waiter(conn: Connection, server: Server, channel: str) -> None:
    client: Any = server.redis()  # redis-py's pubsub() is untyped
    pubsub = client.pubsub(ignore_subscribe_messages=True)
    pubsub.subscribe(channel)
    while pubsub.get_message(timeout=0.1) is not None:
        pass  # drain the subscribe confirmation
    calls = FloorScripts(f"{channel}:lock", latch_millis(redisson_config(server)))
    for script in (scripts.ACQUIRE, scripts.RELEASE):
        client.script_load(script.source)
    conn.send("ready")
    while conn.recv() == "go":
        conn.send("blocking")
        while True:
            message = pubsub.get_message(timeout=5.0)
            if message is not None and message["type"] == "message":
                break
        client.evalsha(*calls.acquire_args())
        acquired = time.monotonic()
        client.evalsha(*calls.release_args())
        conn.send(acquired)
    pubsub.close()
    client.close()


@dataclass
class _Pair:
    """One kind's waiter process, and this process's side of its hand-offs."""

    kind: str
    pipe: Connection
    process: BaseProcess
    contender: Contender | None = None
    cycle: Cycle | None = None
    latencies: list[float] = field(default_factory=list)

    @property
    def name(self) -> str:
        return f"bench:handoff:{self.kind}"


def _start(kind: str, server: Server) -> _Pair:
    context = multiprocessing.get_context("spawn")
    ours, theirs = context.Pipe()
    name = f"bench:handoff:{kind}"
    process = context.Process(target=_waiter, args=(theirs, kind, server.port, name), daemon=True)
    process.start()
    return _Pair(kind, ours, process)


def _handoff(pair: _Pair, publisher: redis.Redis, hold: float) -> float:
    """One hand-off (see the module docstring); its latency in seconds."""
    if pair.cycle is not None:
        pair.cycle.acquire()
    pair.pipe.send("go")
    pair.pipe.recv()  # "blocking": the waiter is calling acquire() now
    time.sleep(hold)
    released = time.monotonic()
    if pair.cycle is None:
        publisher.publish(pair.name, "0")
    else:
        pair.cycle.release()
    acquired: float = pair.pipe.recv()
    return acquired - released


def run(server: Server, *, count: int = 220, warmup: int = 10, seed: int = 7) -> dict[str, Any]:
    """Hand-off latencies in seconds for each kind and the reference.

    The kinds take turns, one hand-off each in a rotating order, so that load from other
    programs on the machine falls on all of them alike.
    """
    rng = random.Random(seed)
    kinds = (REFERENCE, *KINDS)
    publisher = server.redis()
    pairs: list[_Pair] = []
    try:
        pairs = [_start(kind, server) for kind in kinds]
        for pair in pairs:
            if not pair.pipe.poll(60):
                raise RuntimeError(f"hand-off waiter for {pair.kind} did not start")
            pair.pipe.recv()
            if pair.kind != REFERENCE:
                pair.contender = Contender(pair.kind, [server])
                pair.cycle = pair.contender.lock(pair.name)
        for number in range(warmup + count):
            shift = number % len(pairs)
            for pair in pairs[shift:] + pairs[:shift]:
                latency = _handoff(pair, publisher, HOLD_MIN + rng.random() * HOLD_SPREAD)
                if number >= warmup:
                    pair.latencies.append(latency)
        for pair in pairs:
            pair.pipe.send("stop")
            pair.process.join(10)
    finally:
        for pair in pairs:
            if pair.process.is_alive():
                pair.process.kill()
                pair.process.join()
            if pair.contender is not None:
                pair.contender.close()
        publisher.close()
    samples = {pair.kind: pair.latencies for pair in pairs}
    summary = {kind: distribution(values) for kind, values in samples.items()}
    reference_p50 = summary[REFERENCE]["p50"]
    return {
        "unit": "seconds",
        "hold_seconds": [HOLD_MIN, HOLD_MIN + HOLD_SPREAD],
        "samples": samples,
        "summary": summary,
        "ratio_p50_vs_reference": {k: summary[k]["p50"] / reference_p50 for k in samples},
    }


@contextlib.contextmanager
def behind_delay(server: Server, delay: float) -> Iterator[Server]:
    """``server`` itself (``delay`` 0), or a proxy to it adding ``delay`` seconds of
    round trip, served by a process of its own (see `serve_delayed`)."""
    if delay <= 0:
        yield server
        return
    context = multiprocessing.get_context("spawn")
    ours, theirs = context.Pipe()
    process = context.Process(
        target=serve_delayed, args=(theirs, [server.port], delay), daemon=True
    )
    process.start()
    try:
        if not ours.poll(60):
            raise RuntimeError("the delay proxy did not start")
        [port] = ours.recv()
        yield Server(port)
    finally:
        with contextlib.suppress(OSError):  # the proxy process is gone already
            ours.send("stop")
        process.join(10)
        if process.is_alive():
            process.kill()
            process.join()


def run_rtt(
    server: Server, *, delays: tuple[float, ...] = RTTS, count: int = 60, warmup: int = 5
) -> dict[str, Any]:
    """The hand-off of every kind and the reference, with each of ``delays`` of round
    trip added between every process and the server (issue 42's plot)."""
    by_delay: dict[str, Any] = {}
    for delay in delays:
        with behind_delay(server, delay) as proxied:
            result = run(proxied, count=count, warmup=warmup)
        by_delay[f"{delay * 1000:g}"] = {"delay_seconds": delay, **result}
    return {"unit": "seconds", "delays_ms": [d * 1000 for d in delays], "by_delay": by_delay}
