"""What the demo's workers report and what it concludes from them, with no I/O.

Every worker records one `Acquisition` per critical section: the counter value it
read (the number of increments before its own, so a sequence number), when it called
``lock()``, when ``lock()`` returned and when it called ``unlock()``, all on
``time.monotonic()`` (CLOCK_MONOTONIC, one clock for every process of a machine).

A hand-off is acquisition ``n + 1`` taken by another worker than ``n`` that was already
waiting (it called ``lock()`` before ``n``'s ``unlock()``); its latency is the time from
``n``'s ``unlock()`` call to ``n + 1``'s ``lock()`` return. Re-acquisitions by the same
worker and acquisitions of a lock nobody waited for are not hand-offs and are counted apart.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Acquisition:
    """One critical section of one worker; times are ``time.monotonic()`` seconds."""

    seq: int
    called: float
    acquired: float
    released: float


@dataclass(slots=True)
class WorkerResult:
    """What one worker process reports when it ends."""

    index: int
    pid: int
    acquisitions: list[Acquisition] = field(default_factory=list)
    error: str | None = None

    @property
    def count(self) -> int:
        return len(self.acquisitions)


@dataclass(frozen=True, slots=True)
class Latencies:
    """Order statistics of a sample of durations, in seconds (all 0.0 when empty)."""

    count: int
    p50: float
    p99: float
    max: float

    @classmethod
    def of(cls, samples: Sequence[float]) -> Latencies:
        ordered = sorted(samples)
        if not ordered:
            return cls(0, 0.0, 0.0, 0.0)
        return cls(len(ordered), percentile(ordered, 50), percentile(ordered, 99), ordered[-1])


@dataclass(frozen=True, slots=True)
class Summary:
    """The demo's verdict.

    ``expected`` is the number of acquisitions every worker recorded; ``actual`` the
    counter's final value; ``lost`` their difference (0 when the lock excluded every
    other holder), meaningful only when ``complete`` (every worker reported all of its
    records). ``duplicates`` counts counter values read by more than one critical
    section, which only overlapping holders can produce.
    """

    per_worker: tuple[tuple[int, int, int], ...]
    """(index, pid, acquisitions), by index."""
    seconds: float
    expected: int
    actual: int
    duplicates: int
    handoffs: Latencies
    reacquired: int
    """Acquisitions that followed the same worker's release."""
    unwaited: int
    """Acquisitions by another worker that was not waiting when the lock was released."""
    complete: bool = True

    @property
    def lost(self) -> int:
        return self.expected - self.actual

    @property
    def rate(self) -> float:
        return self.expected / self.seconds if self.seconds > 0 else 0.0


def percentile(ordered: Sequence[float], pct: float) -> float:
    """The ``pct`` percentile of an ascending, non-empty sample (linear interpolation)."""
    if not ordered:
        raise ValueError("percentile of an empty sample")
    rank = (len(ordered) - 1) * pct / 100
    low = math.floor(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def summarize(
    results: Sequence[WorkerResult], counter: int, seconds: float, *, workers: int | None = None
) -> Summary:
    """Merge the workers' records (see the module docstring) with the counter's value.

    ``workers`` is how many were started (default: as many as reported); the summary is
    ``complete`` when each of them reported its records without an error.
    """
    started = len(results) if workers is None else workers
    complete = len(results) == started and all(r.error is None for r in results)
    owned: list[tuple[Acquisition, int]] = sorted(
        ((a, r.index) for r in results for a in r.acquisitions),
        key=lambda pair: (pair[0].seq, pair[0].acquired),
    )
    seen: set[int] = set()
    duplicates = 0
    for acquisition, _ in owned:
        if acquisition.seq in seen:
            duplicates += 1
        seen.add(acquisition.seq)
    latencies: list[float] = []
    reacquired = unwaited = 0
    for (before, holder), (after, taker) in itertools.pairwise(owned):
        if after.seq != before.seq + 1:
            continue  # a gap (a worker's records are missing) or a duplicate: no pair
        if taker == holder:
            reacquired += 1
        elif after.called > before.released:
            unwaited += 1
        else:
            latencies.append(after.acquired - before.released)
    return Summary(
        per_worker=tuple((r.index, r.pid, r.count) for r in sorted(results, key=lambda r: r.index)),
        seconds=seconds,
        expected=sum(r.count for r in results),
        actual=counter,
        duplicates=duplicates,
        handoffs=Latencies.of(latencies),
        reacquired=reacquired,
        unwaited=unwaited,
        complete=complete,
    )


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.2f} ms"


def format_summary(summary: Summary, *, title: str) -> list[str]:
    """The summary as lines of plain text (no colour, no terminal control)."""
    total = max(1, summary.expected)
    lines = [title, "", f"  {'worker':<8}{'pid':>8}{'acquisitions':>15}{'share':>9}"]
    for index, pid, count in summary.per_worker:
        lines.append(f"  {index:<8}{pid:>8}{count:>15,}{count / total:>9.1%}")
    lines.append(
        f"  {'total':<16}{summary.expected:>15,}   {summary.rate:,.0f}/s over "
        f"{summary.seconds:.1f} s"
    )
    lines.append("")
    handoffs = summary.handoffs
    lines.append(
        "  hand-off latency (unlock() by one worker -> lock() returning in a waiting other):"
    )
    if handoffs.count:
        lines.append(
            f"    p50 {_ms(handoffs.p50)}   p99 {_ms(handoffs.p99)}   max {_ms(handoffs.max)}"
            f"   over {handoffs.count:,} hand-offs"
        )
    else:
        lines.append("    no hand-off happened (was only one worker running?)")
    lines.append(
        f"    (not hand-offs: {summary.reacquired:,} re-acquisitions by the releasing worker,"
        f" {summary.unwaited:,} acquisitions of a lock nobody was waiting for)"
    )
    lines.append("")
    lines.append(
        f"  counter: expected {summary.expected:,} (one increment per acquisition), "
        f"actual {summary.actual:,}"
    )
    if summary.complete:
        broken = summary.lost != 0 or summary.duplicates != 0
        verdict = "MUTUAL EXCLUSION BROKEN" if broken else "OK"
        lines.append(f"  lost increments: {summary.lost:,}  [{verdict}]")
    else:
        lines.append(
            "  lost increments: not checked (a worker stopped without reporting its records)"
        )
    if summary.duplicates:
        lines.append(
            f"  {summary.duplicates:,} critical sections read a value another one also read"
        )
    return lines
