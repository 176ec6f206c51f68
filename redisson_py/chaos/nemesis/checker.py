"""What the journals of a nemesis run show: pure functions over their records, no I/O.

Three checks, per lock name (a lock and its fenced resource share the name's index):

1. **Overlapping holds with an untold holder.** A hold runs from its grant's return to
   the first of its release starting (``unlock``) and its holder being told it is lost
   (``told``, from ``on_lock_lost``). Two holds of one lock by different workers that
   overlap mean the later one was granted while the earlier holder still held it and had
   not been told otherwise: mutual exclusion broken, as its users see it. (A holder told
   before the other's grant is no violation: that is the library keeping its promise.)
2. **Stale writes accepted by the fenced resource.** A write accepted with a token
   smaller than one the resource had already accepted, or with a token another worker
   had already written with (the first writer of a token keeps it). "Already" is known
   from the journal only when the earlier write had returned before the later one was
   sent; writes that were in flight together (their order at the server unknown) with
   inverted tokens are counted apart, as ``unordered``, not as violations. Refused
   writes (``StaleTokenError``) are counted: the resource doing its job.
3. **Time without a holder**, within the run: the gaps between holds, in total and the
   longest, and their share of the run.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from redisson_py.chaos.nemesis.journal import Record

__all__ = [
    "Hold",
    "NoHolder",
    "Overlap",
    "StaleWrites",
    "Verdict",
    "Write",
    "check",
    "holds_of",
    "no_holder",
    "overlaps",
    "stale_writes",
    "writes_of",
]


@dataclass(frozen=True)
class Hold:
    """One grant of ``lock`` to ``worker``: from ``granted`` (the grant's return) to
    ``ended`` (release started or holder told, whichever first). ``how`` says which:
    ``unlock``, ``told``, or ``open`` (the journal ends inside the hold: ``ended`` is its
    last record)."""

    worker: int
    lock: str
    hold: str
    granted: float
    ended: float
    how: str
    token: int | None = None


@dataclass(frozen=True)
class Overlap:
    """``later`` was granted while ``earlier`` (another worker's) was neither released
    nor told; ``untold_for``: how long after that grant the earlier holder went on
    believing it held the lock."""

    earlier: Hold
    later: Hold

    @property
    def lock(self) -> str:
        return self.later.lock

    @property
    def at(self) -> float:
        return self.later.granted

    @property
    def untold_for(self) -> float:
        return self.earlier.ended - self.later.granted


@dataclass(frozen=True)
class Write:
    """One write to ``lock``'s fenced resource: sent at ``start``, returned at ``end``."""

    worker: int
    lock: str
    hold: str
    token: int | None
    start: float
    end: float
    outcome: str


@dataclass(frozen=True)
class StaleWrites:
    """What check 2 found: ``accepted`` (the violations), ``refused`` (stale writes the
    resource turned away), ``unordered`` (accepted with a smaller token than a write in
    flight at the same time: order unknown), ``checked`` (accepted fenced writes)."""

    accepted: tuple[Write, ...] = ()
    refused: int = 0
    unordered: int = 0
    checked: int = 0


@dataclass(frozen=True)
class NoHolder:
    """Check 3 for one lock over a window of ``window`` seconds."""

    lock: str
    total: float
    longest: float
    window: float

    @property
    def share(self) -> float:
        return self.total / self.window if self.window > 0 else 0.0


@dataclass(frozen=True)
class Verdict:
    """Everything the checker found in one run."""

    holds: int
    overlaps: tuple[Overlap, ...]
    stale: StaleWrites
    no_holder: tuple[NoHolder, ...]
    counts: dict[str, int] = field(default_factory=dict)
    """Operations by kind: ``grants``, ``timeouts``, ``errors``, ``told``, ``writes``
    (accepted or unfenced), ``refused``, ``write_errors``, ``released``, ``not_owned``,
    ``unlock_errors``, ``writes_after_told`` (a worker bug: it must stop when told)."""


def holds_of(records: Sequence[Record], worker: int) -> list[Hold]:
    """The holds in one worker's records, in grant order. A hold told before its grant
    returned (a loss found while the acquire was finishing) ends at its grant."""
    grants: dict[str, tuple[str, float, int | None]] = {}
    ends: dict[str, list[tuple[float, str]]] = {}
    last = max((float(r["t"]) for r in records), default=0.0)
    for record in records:
        op, hold = record.get("op"), str(record.get("hold"))
        if op == "grant":
            grants[hold] = (str(record["lock"]), float(record["t"]), record.get("token"))
        elif op in ("told", "unlock") and record.get("hold") is not None:
            ends.setdefault(hold, []).append((float(record["t"]), str(op)))
    holds = []
    for hold, (lock, granted, token) in grants.items():
        ended, how = min(ends.get(hold, [(last, "open")]))
        holds.append(Hold(worker, lock, hold, granted, max(ended, granted), how, token))
    return sorted(holds, key=lambda h: h.granted)


def overlaps(holds: Iterable[Hold]) -> list[Overlap]:
    """Every pair of holds of one lock by different workers that overlap in time (check
    1), each as (the one granted first, the one granted while it still ran)."""
    found: list[Overlap] = []
    by_lock: dict[str, list[Hold]] = {}
    for hold in holds:
        by_lock.setdefault(hold.lock, []).append(hold)
    for members in by_lock.values():
        running: list[Hold] = []
        for hold in sorted(members, key=lambda h: (h.granted, h.ended)):
            running = [r for r in running if r.ended > hold.granted]
            found.extend(Overlap(r, hold) for r in running if r.worker != hold.worker)
            running.append(hold)
    return sorted(found, key=lambda o: o.at)


def writes_of(records: Sequence[Record], worker: int) -> list[Write]:
    """The writes in one worker's records."""
    return [
        Write(
            worker=worker,
            lock=str(r["lock"]),
            hold=str(r.get("hold")),
            token=r.get("token"),
            start=float(r["start"]),
            end=float(r["t"]),
            outcome=str(r["outcome"]),
        )
        for r in records
        if r.get("op") == "write"
    ]


def stale_writes(writes: Iterable[Write]) -> StaleWrites:
    """Check 2 over the writes of every worker (fenced ones: those with a token)."""
    fenced = [w for w in writes if w.token is not None]
    refused = sum(w.outcome == "refused" for w in fenced)
    accepted = [w for w in fenced if w.outcome == "accepted"]
    stale: list[Write] = []
    unordered = 0
    by_lock: dict[str, list[Write]] = {}
    for write in accepted:
        by_lock.setdefault(write.lock, []).append(write)
    for members in by_lock.values():
        stale_here, unordered_here = _stale_in(members)
        stale += stale_here
        unordered += unordered_here
    return StaleWrites(
        accepted=tuple(sorted(stale, key=lambda w: w.start)),
        refused=refused,
        unordered=unordered,
        checked=len(accepted),
    )


def _stale_in(accepted: list[Write]) -> tuple[list[Write], int]:
    """The stale ones among one resource's accepted writes, and how many more might be."""
    by_end = sorted(accepted, key=lambda w: w.end)
    ends = [w.end for w in by_end]
    highest_before: list[int] = []  # highest token among by_end[: i + 1]
    for write in by_end:
        assert write.token is not None
        highest_before.append(max(write.token, highest_before[-1] if highest_before else 0))
    first_writer = _first_writers(accepted)
    by_start = sorted(accepted, key=lambda w: w.start)
    starts = [w.start for w in by_start]
    longest = max((w.end - w.start for w in accepted), default=0.0)
    stale, unordered = [], 0
    for write in accepted:
        assert write.token is not None
        returned_before = bisect.bisect_left(ends, write.start)
        if returned_before and highest_before[returned_before - 1] > write.token:
            stale.append(write)
        elif first_writer[write.token] != write.worker:
            stale.append(write)  # a token another worker wrote first: a tie lost
        elif _inverted_in_flight(write, by_start, starts, longest):
            unordered += 1
    return stale, unordered


def _first_writers(accepted: Iterable[Write]) -> dict[int, int]:
    """Per token, the worker whose accepted write with it was sent first."""
    first: dict[int, Write] = {}
    for write in accepted:
        assert write.token is not None
        known = first.get(write.token)
        if known is None or write.start < known.start:
            first[write.token] = write
    return {token: write.worker for token, write in first.items()}


def _inverted_in_flight(
    write: Write, by_start: list[Write], starts: list[float], longest: float
) -> bool:
    """Whether a write with a larger token was in flight with ``write``."""
    low = bisect.bisect_left(starts, write.start - longest)
    high = bisect.bisect_right(starts, write.end)
    return any(
        other.token is not None
        and write.token is not None
        and other.token > write.token
        and other.end >= write.start
        for other in by_start[low:high]
    )


def no_holder(holds: Iterable[Hold], lock: str, start: float, end: float) -> NoHolder:
    """Check 3 for ``lock`` between ``start`` and ``end`` (monotonic seconds)."""
    spans = sorted(
        (max(h.granted, start), min(h.ended, end))
        for h in holds
        if h.lock == lock and h.ended > start and h.granted < end
    )
    total = longest = 0.0
    covered = start
    for begin, finish in spans:
        if begin > covered:
            total += begin - covered
            longest = max(longest, begin - covered)
        covered = max(covered, finish)
    if end > covered:
        total += end - covered
        longest = max(longest, end - covered)
    return NoHolder(lock=lock, total=total, longest=longest, window=max(0.0, end - start))


def _counts(journals: Sequence[Sequence[Record]], holds: Sequence[Hold]) -> dict[str, int]:
    ops = [r for records in journals for r in records]

    def count(op: str, outcome: str | None = None) -> int:
        return sum(
            r.get("op") == op and (outcome is None or r.get("outcome") == outcome) for r in ops
        )

    told_at = {(h.worker, h.hold): h.ended for h in holds if h.how == "told"}
    after_told = sum(
        r.get("op") == "write"
        and float(r["start"]) > told_at.get((w, str(r.get("hold"))), math.inf)
        for w, records in enumerate(journals)
        for r in records
    )
    return {
        "grants": count("grant"),
        "timeouts": count("timeout"),
        "errors": count("error"),
        "told": count("told"),
        "writes": count("write", "accepted") + count("write", "unfenced"),
        "refused": count("write", "refused"),
        "write_errors": count("write", "error"),
        "released": count("unlocked", "released"),
        "not_owned": count("unlocked", "not-owned"),
        "unlock_errors": count("unlocked", "error"),
        "writes_after_told": after_told,
    }


def check(
    journals: Sequence[Sequence[Record]], locks: Sequence[str], start: float, end: float
) -> Verdict:
    """All three checks over the workers' journals (``journals[i]``: worker ``i``'s
    records) for ``locks``, time without a holder counted between ``start`` and
    ``end``."""
    holds = [hold for worker, records in enumerate(journals) for hold in holds_of(records, worker)]
    writes = [w for worker, records in enumerate(journals) for w in writes_of(records, worker)]
    return Verdict(
        holds=len(holds),
        overlaps=tuple(overlaps(holds)),
        stale=stale_writes(writes),
        no_holder=tuple(no_holder(holds, lock, start, end) for lock in locks),
        counts=_counts(journals, holds),
    )
