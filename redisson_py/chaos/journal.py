"""What a chaos run recorded, and what it shows: overlaps, throughput, unavailability.

Workers record each critical section as an (enter, exit) pair of ``time.monotonic()``
readings; on Linux that clock is one for all processes of the machine, so the journals
of several processes can be merged. Two sections that overlap in time were entered by
two owners at once: a violation of mutual exclusion. Pure functions, no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

Interval = tuple[float, float]


def overlaps(sections: Iterable[Interval]) -> list[tuple[Interval, Interval]]:
    """Pairs of critical sections that overlap in time (each later section paired with
    the earlier one still open the longest)."""
    found: list[tuple[Interval, Interval]] = []
    latest: Interval | None = None
    for section in sorted(sections):
        if latest is not None and section[0] < latest[1]:
            found.append((latest, section))
        if latest is None or section[1] > latest[1]:
            latest = section
    return found


def waits_after(event: float, entries_by_owner: Iterable[Sequence[float]]) -> list[float]:
    """For each owner, how long after ``event`` it next entered its critical section
    (owners that never entered again are left out)."""
    waits = []
    for entries in entries_by_owner:
        later = [t for t in entries if t >= event]
        if later:
            waits.append(min(later) - event)
    return waits


def percentile(values: Sequence[float], fraction: float) -> float:
    """The ``fraction`` quantile of ``values`` (nearest rank); NaN when empty."""
    if not values:
        return math.nan
    ordered = sorted(values)
    rank = max(1, math.ceil(fraction * len(ordered)))
    return ordered[rank - 1]


@dataclass(frozen=True)
class Summary:
    """One line of a chaos report: a scenario run ``runs`` times in one mode."""

    scenario: str
    topology: str
    mode: str
    runs: int
    violations: int
    operations: int
    unavailable_p50: float
    unavailable_max: float
    note: str = ""

    def row(self) -> list[str]:
        def seconds(value: float) -> str:
            return "-" if math.isnan(value) else f"{value:.2f} s"

        return [
            self.scenario,
            self.topology,
            self.mode,
            str(self.runs),
            str(self.violations),
            str(self.operations),
            seconds(self.unavailable_p50),
            seconds(self.unavailable_max),
            self.note,
        ]


HEADER = [
    "scenario",
    "topology",
    "mode",
    "runs",
    "violations",
    "operations",
    "unavailable p50",
    "unavailable max",
    "note",
]


def markdown_table(summaries: Sequence[Summary]) -> str:
    """The summaries as a markdown table (what the CLI prints and the README shows)."""
    rows = [HEADER, ["---"] * len(HEADER), *(s.row() for s in summaries)]
    return "\n".join("| " + " | ".join(row) + " |" for row in rows)
