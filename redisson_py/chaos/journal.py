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
class SplitTimes:
    """A partition row's extra columns: seconds after the split until the holder cut off
    was told (A told) and until another client was granted (B granted), p50 and max over
    the runs where it happened (NaN: in none)."""

    told_p50: float
    told_max: float
    granted_p50: float
    granted_max: float


@dataclass(frozen=True)
class Summary:
    """One line of a chaos report: a scenario run ``runs`` times in one mode.

    ``split`` (partition scenarios only) adds the A told / B granted columns; a table
    with no such line looks as it always did."""

    scenario: str
    topology: str
    mode: str
    runs: int
    violations: int
    operations: int
    unavailable_p50: float
    unavailable_max: float
    note: str = ""
    split: SplitTimes | None = None

    def row(self, *, split_columns: bool = False) -> list[str]:
        """The table cells; ``split_columns`` inserts the four A told / B granted ones
        before the note ("-" for a line without them)."""
        cells = [
            self.scenario,
            self.topology,
            self.mode,
            str(self.runs),
            str(self.violations),
            str(self.operations),
            _seconds(self.unavailable_p50),
            _seconds(self.unavailable_max),
        ]
        if split_columns:
            times = self.split
            cells += (
                ["-"] * len(SPLIT_HEADER)
                if times is None
                else [
                    _seconds(times.told_p50),
                    _seconds(times.told_max),
                    _seconds(times.granted_p50),
                    _seconds(times.granted_max),
                ]
            )
        return [*cells, self.note]


def _seconds(value: float) -> str:
    return "-" if math.isnan(value) else f"{value:.2f} s"


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

SPLIT_HEADER = ["A told p50", "A told max", "B granted p50", "B granted max"]
"""The partition scenarios' extra columns, before the note."""


def markdown_table(summaries: Sequence[Summary]) -> str:
    """The summaries as a markdown table (what the CLI prints and the README shows); with
    the A told / B granted columns when any line has them."""
    split_columns = any(s.split is not None for s in summaries)
    header = [*HEADER[:-1], *SPLIT_HEADER, HEADER[-1]] if split_columns else HEADER
    rows = [header, ["---"] * len(header)]
    rows += [s.row(split_columns=split_columns) for s in summaries]
    return "\n".join("| " + " | ".join(row) + " |" for row in rows)
