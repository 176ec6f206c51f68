"""The scale run's report (``python -m benchmarks --scale``): how cost grows with the
number of waiters, of locks held and of names, with a sentence per curve saying how it
grows, computed from the figures."""

from __future__ import annotations

import math
from typing import Any

from benchmarks.machine import describe
from benchmarks.report import _loads, _table, _targets
from benchmarks.targets import Verdict


def slope(points: list[tuple[float, float]]) -> float:
    """The log-log slope between the first and the last point (1: linear; 0: flat)."""
    (x0, y0), (x1, y1) = points[0], points[-1]
    if x0 <= 0 or x1 <= 0 or y0 <= 0 or y1 <= 0 or x0 == x1:
        return math.nan
    return math.log(y1 / y0) / math.log(x1 / x0)


def _ms(seconds: float) -> str:
    return "n/a" if seconds is None or math.isnan(seconds) else f"{seconds * 1000:.2f}"


def _kb(value: float | None) -> str:
    return "n/a" if value is None or math.isnan(value) else f"{value / 1024:.1f}"


def _waiter_label(case: dict[str, Any]) -> str:
    what = "threads" if case["kind"] == "threads" else "tasks"
    return f"{case['waiters']:,} {what} on {case['names']:,} names"


def waiters_sentence(runs: dict[str, Any]) -> str:
    parts = []
    for kind, result in runs.items():
        tasks = [c for c in result["cases"] if c["kind"] == "asyncio"]
        if len(tasks) < 2:
            continue
        first, last = tasks[0], tasks[-1]
        command = max(row["command"] for c in result["cases"] for row in c["connections"])
        parts.append(
            f"on {kind}, from {first['waiters']:,} to {last['waiters']:,} tasks the "
            f"wake-up p50 goes from {_ms(first['latency']['p50'])} to "
            f"{_ms(last['latency']['p50'])} ms (p99 {_ms(first['latency']['p99'])} to "
            f"{_ms(last['latency']['p99'])} ms), RSS per waiter from "
            f"{_kb(first['rss_bytes_per_waiter'])} to "
            f"{_kb(last['rss_bytes_per_waiter'])} KiB, pub/sub connections stay at "
            f"{max(c['pubsub_per_node_max'] for c in result['cases'])} per node and command "
            f"connections at most {command} per node (the pool's bound, reached by the "
            "burst of first attempts, not one per waiter)"
        )
    return ("Waiters: " + "; ".join(parts) + ".") if parts else ""


def held_sentence(runs: dict[str, Any]) -> str:
    parts = []
    for kind, result in runs.items():
        cases = result["cases"]
        if len(cases) < 2:
            continue
        cpu = slope([(c["locks"], c["cpu_seconds_per_round"]) for c in cases])
        calls = slope([(c["locks"], c["renew_calls_per_round"]) for c in cases])
        trips = max(c["max_round_trips_per_master_per_round"] for c in cases)
        parts.append(
            f"on {kind}, client CPU per round grows as locks^{cpu:.2f} "
            f"({cases[0]['cpu_seconds_per_round'] * 1000:,.1f} ms for {cases[0]['locks']:,} "
            f"to {cases[-1]['cpu_seconds_per_round'] * 1000:,.0f} ms for "
            f"{cases[-1]['locks']:,}), RENEW calls as locks^{calls:.2f}, and round trips "
            f"per node per round stay at {trips:.0f}"
        )
    return ("Held locks: " + "; ".join(parts) + ".") if parts else ""


def names_sentence(runs: dict[str, Any]) -> str:
    parts = [
        f"on {kind}, RSS moves {r['growth_mb']:+.1f} MB over {r['cycles']:,} names "
        f"({r['cycles_per_second']:,.0f} cycles/s) and {r['keys_left']:,} keys are left "
        "once the unlock latches expire"
        for kind, r in runs.items()
    ]
    return ("Names: " + "; ".join(parts) + ".") if parts else ""


def _waiters(runs: dict[str, Any]) -> list[str]:
    lines = [
        "## Waiters: N blocked in one client",
        "",
        "One process per row; the waiters block on names a holder client holds, then the "
        "names are released one after another and each woken waiter releases to the next "
        "(one hand-off at a time). Latency: from a release to the woken waiter's `lock()` "
        "returning. Memory: RSS growth per waiter while they block (the task or thread "
        "included: for threads, their stacks), and Python allocations held per waiter "
        "(tracemalloc, in the last round; not for 10,000 tasks, which tracing slows into "
        "timeouts). Warnings: the library's log warnings in the whole case (round trips "
        "timed out, waits going on through failures). Connections: the waiters' client's, "
        "counted on the servers (`CLIENT LIST`), per node: pub/sub / command.",
        "",
    ]
    for kind, result in runs.items():
        rows = []
        for case in result["cases"]:
            masters = [row for row in case["connections"] if row["channels"] or row["command"]]
            conns = " ".join(f"{row['pubsub']}/{row['command']}" for row in masters) or "n/a"
            rows.append(
                [
                    _waiter_label(case),
                    _ms(case["latency"]["p50"]),
                    _ms(case["latency"]["p99"]),
                    f"{case['latency']['count']:,}",
                    _kb(case["traced_bytes_per_waiter"]),
                    _kb(case["rss_bytes_per_waiter"]),
                    f"{case['block_seconds']:.2f}",
                    f"{case.get('warnings', 0):,}",
                    conns,
                ]
            )
        lines += [
            f"### {kind}",
            "",
            *_table(
                [
                    "waiters",
                    "wake-up p50 ms",
                    "p99 ms",
                    "hand-offs",
                    "KiB/waiter (traced)",
                    "KiB/waiter (RSS)",
                    "s to block all",
                    "warnings",
                    "connections per node (pub/sub / command)",
                ],
                rows,
            ),
            "",
        ]
    return lines


def _held(runs: dict[str, Any]) -> list[str]:
    lines = [
        "## Held locks: one client keeping N locks with the watchdog",
        "",
        "Every node behind a counting proxy; per renewal round: the client process's CPU "
        "(its main thread sleeps), RENEW calls (up to `lockWatchdogBatchSize` locks each, "
        "of one hash slot in a cluster) and round trips per node (a pipeline sent before "
        "any reply is read is one).",
        "",
    ]
    for kind, result in runs.items():
        rows = [
            [
                f"{c['locks']:,}",
                f"{c['cpu_seconds_per_round'] * 1000:,.1f}",
                f"{c['cpu_seconds_per_round'] / c['locks'] * 1e6:.1f}",
                f"{c['renew_calls_per_round']:,.0f}",
                f"{c['max_round_trips_per_master_per_round']:.2f}",
                f"{c['round_trips_per_round']:.2f}",
                str(c["rounds_seen"]),
                f"{c['acquire_seconds']:.0f}",
            ]
            for c in result["cases"]
        ]
        lines += [
            f"### {kind} ({result['cases'][0]['masters']} master(s))",
            "",
            *_table(
                [
                    "locks",
                    "CPU ms/round",
                    "CPU µs/lock/round",
                    "RENEW calls/round",
                    "round trips/master/round",
                    "round trips/round (all nodes)",
                    "rounds",
                    "s to take them",
                ],
                rows,
            ),
            "",
        ]
    return lines


def _names(runs: dict[str, Any]) -> list[str]:
    lines = [
        "## Names: distinct lock names cycled through one client",
        "",
        "A fresh process, one thread: `get_lock(new name)`, `lock()`, `unlock()`, then "
        "count-down latches the same way (`try_set_count(1)`, `count_down()`). Keys: "
        "`DBSIZE` per node right after the run (each release leaves an unlock latch for "
        "its request's lifetime), then the keys a `SCAN` of every node still returns "
        "once that lifetime has passed.",
        "",
    ]
    for kind, r in runs.items():
        rows = [[f"{p['cycles']:,}", f"{p['rss_mb']:.1f}"] for p in r["points"]]
        lines += [
            f"### {kind}",
            "",
            f"{r['cycles']:,} lock names at {r['cycles_per_second']:,.0f}/s "
            f"({r['lock_seconds']:.0f} s), then {r['latches']:,} latch names "
            f"({r['latch_seconds']:.0f} s, RSS {r['latch_points'][-1]['rss_mb']:.1f} MiB "
            f"at the end); subscriptions left {r['subscriptions_left']}, holds left "
            f"{r['holds_left']}; keys right after: {sum(r['keys_at_end'].values()):,}; "
            f"{r['waited_seconds']:.0f} s later: {r['keys_left']:,}.",
            "",
            *_table(["lock names cycled", "RSS MiB"], rows),
            "",
        ]
    return lines


def _loads_of(results: dict[str, Any]) -> dict[str, Any]:
    return {
        f"{name}, {kind}": result for name, runs in results.items() for kind, result in runs.items()
    }


def markdown(document: dict[str, Any], verdicts: list[Verdict]) -> str:
    """The scale report: run line, targets, how each curve grows, one section each."""
    results = document["results"]
    sentences = [
        text
        for text in (
            waiters_sentence(results.get("waiters", {})),
            held_sentence(results.get("held", {})),
            names_sentence(results.get("names", {})),
        )
        if text
    ]
    lines = [
        "# redisson-py benchmarks: how cost grows",
        "",
        f"Run: {describe(document['machine'])}.",
        "",
        f"Command: `{document['command']}`; took {document['seconds']:.0f} s.",
        "",
        *_targets(verdicts),
        "## How each curve grows",
        "",
        *[f"- {s}" for s in sentences],
        "",
    ]
    if results.get("waiters"):
        lines += _waiters(results["waiters"])
    if results.get("held"):
        lines += _held(results["held"])
    if results.get("names"):
        lines += _names(results["names"])
    lines += _loads(_loads_of(results))
    return "\n".join(lines)
