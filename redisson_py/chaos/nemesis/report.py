"""A nemesis run, summed up: one markdown table row, a JSON document, and the verdict
(which promise the run's mode and schedule make, and whether it was kept).

What each run promises (an overlap: a hold granted while another worker's hold of the
same lock was neither released nor told lost; a stale write: one the fenced resource
accepted with a token older than one it had accepted):

- sync-on, network schedule: no overlap, no stale write;
- sync-off, network schedule: no stale write (overlaps are the documented hazard);
- redlock, network schedule: no overlap (a RedLock has no token: the journal alone is
  the oracle);
- sync-on and sync-off, process schedule: only fencing, no stale write (no lease
  survives a holder paused past it, or a server whose clock jumped);
- redlock, process schedule: nothing that can be checked; reported only.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from redisson_py.chaos.nemesis.checker import Hold, Verdict
from redisson_py.chaos.nemesis.schedule import Schedule

__all__ = ["HEADER", "RunReport", "markdown_table", "promise"]

HEADER = [
    "topology",
    "mode",
    "schedule",
    "seed",
    "duration",
    "operations",
    "faults",
    "overlaps (untold holder)",
    "stale writes accepted / refused",
    "no-holder time",
    "promised",
    "verdict",
]

_DETAILS = 50
"""Overlaps and stale writes listed one by one in the JSON, at most."""


def promises_no_overlap(mode: str, schedule: str) -> bool:
    """Whether a run of ``mode`` under ``schedule`` promises no overlapping holds."""
    return schedule == "network" and mode in ("sync-on", "redlock", "queued")


_UNFENCED = {"redlock": "RedLock", "queued": "queued lock"}
"""The modes whose lock has no token: the journal is the only oracle."""


def promise(mode: str, schedule: str) -> str:
    """What a run of ``mode`` under ``schedule`` promises, for the table."""
    if mode in _UNFENCED:
        if schedule == "network":
            return f"no overlap ({_UNFENCED[mode]}: no token, the journal is the oracle)"
        return f"nothing ({_UNFENCED[mode]}: no token; no lease survives a stall)"
    if schedule == "process":
        return "only fencing: no stale write accepted"
    if mode == "sync-on":
        return "no overlap, no stale write accepted"
    return "no stale write accepted (overlaps: the documented hazard)"


@dataclass
class RunReport:
    """One run: what was asked, what was struck, what the checker found."""

    topology: str
    mode: str
    schedule: Schedule
    elapsed: float
    workers: int
    locks: list[str]
    verdict: Verdict
    injected: list[dict[str, Any]] = field(default_factory=list)
    """The nemesis journal's ``fault-start`` records (what was struck, resolved)."""
    skipped: list[dict[str, Any]] = field(default_factory=list)
    """``fault-error`` records: faults not struck, and why."""
    heal_errors: list[dict[str, Any]] = field(default_factory=list)
    recoveries: list[float] = field(default_factory=list)
    unrecovered: int = 0
    highest_tokens: dict[str, int | None] = field(default_factory=dict)
    directory: str = ""
    faults_near: list[str] = field(default_factory=list)
    """For each overlap listed, the fault that was in force or last healed at its time."""

    @property
    def fenced(self) -> bool:
        """Whether the run's writes carry a token the fenced resource can check."""
        return self.mode not in _UNFENCED

    def fault_counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for record in self.injected:
            kind = str(record.get("kind"))
            out[kind] = out.get(kind, 0) + 1
        return out

    def violations(self) -> list[str]:
        """Why this run breaks its promise (empty: kept)."""
        found = []
        overlaps = len(self.verdict.overlaps)
        if overlaps and promises_no_overlap(self.mode, self.schedule.schedule):
            found.append(f"{_counted(overlaps, 'overlapping hold')} with an untold holder")
        if self.verdict.stale.accepted:
            found.append(f"{_counted(len(self.verdict.stale.accepted), 'stale write')} accepted")
        return found

    def row(self) -> list[str]:
        counts = self.verdict.counts
        faults = self.fault_counts()
        fault_text = f"{sum(faults.values())}" + (
            " (" + ", ".join(f"{k} {n}" for k, n in sorted(faults.items())) + ")" if faults else ""
        )
        stale = (
            f"{len(self.verdict.stale.accepted)} / {self.verdict.stale.refused}"
            if self.fenced
            else "n/a (no token)"
        )
        worst = max((n.longest for n in self.verdict.no_holder), default=0.0)
        shares = [n.share for n in self.verdict.no_holder]
        share = sum(shares) / len(shares) if shares else math.nan
        violations = self.violations()
        if violations:
            verdict = "**VIOLATION**: " + "; ".join(violations)
        elif self.verdict.overlaps:
            verdict = f"ok (overlaps not promised: {len(self.verdict.overlaps)} reproduced)"
        else:
            verdict = "ok"
        return [
            self.topology,
            self.mode,
            self.schedule.schedule,
            str(self.schedule.seed),
            f"{self.elapsed:.0f} s",
            f"{counts.get('grants', 0):,} grants, {counts.get('writes', 0):,} writes",
            fault_text,
            str(len(self.verdict.overlaps)),
            stale,
            f"longest {worst:.1f} s, {share:.1%} of the run",
            promise(self.mode, self.schedule.schedule),
            verdict,
        ]

    def to_json(self) -> dict[str, Any]:
        verdict = self.verdict
        return {
            "topology": self.topology,
            "mode": self.mode,
            "schedule": self.schedule.schedule,
            "seed": self.schedule.seed,
            "duration": self.schedule.duration,
            "elapsed": self.elapsed,
            "workers": self.workers,
            "locks": self.locks,
            "promised": promise(self.mode, self.schedule.schedule),
            "violations": self.violations(),
            "oracle": "fenced resource"
            if self.fenced
            else f"journal only (the {_UNFENCED[self.mode]} has no token)",
            "operations": verdict.counts,
            "holds": verdict.holds,
            "faults": {
                "planned": self.schedule.to_json()["faults"],
                "injected": self.injected,
                "skipped": self.skipped,
                "heal_errors": self.heal_errors,
                "by_kind": self.fault_counts(),
                "recovery_seconds": self.recoveries,
                "unrecovered": self.unrecovered,
            },
            "overlaps": {
                "count": len(verdict.overlaps),
                "first": [
                    {
                        "lock": o.lock,
                        "earlier": _hold(o.earlier),
                        "later": _hold(o.later),
                        "untold_for": o.untold_for,
                        "fault": self.faults_near[i] if i < len(self.faults_near) else "",
                    }
                    for i, o in enumerate(verdict.overlaps[:_DETAILS])
                ],
            },
            "stale_writes": {
                "accepted": len(verdict.stale.accepted),
                "refused": verdict.stale.refused,
                "unordered": verdict.stale.unordered,
                "checked": verdict.stale.checked,
                "first": [w.__dict__ for w in verdict.stale.accepted[:_DETAILS]],
            },
            "no_holder": [
                {"lock": n.lock, "total": n.total, "longest": n.longest, "share": n.share}
                for n in verdict.no_holder
            ],
            "oracle_highest_tokens": self.highest_tokens,
            "directory": self.directory,
        }


def _hold(hold: Hold) -> dict[str, Any]:
    return {
        "worker": hold.worker,
        "hold": hold.hold,
        "token": hold.token,
        "granted": hold.granted,
        "ended": hold.ended,
        "how": hold.how,
    }


def markdown_table(reports: Sequence[RunReport]) -> str:
    """One row per run under `HEADER`."""
    rows = [HEADER, ["---"] * len(HEADER), *(r.row() for r in reports)]
    return "\n".join("| " + " | ".join(row) + " |" for row in rows)


def _counted(count: int, noun: str) -> str:
    """``count`` and ``noun``, plural unless 1: "1 stale write", "2 stale writes"."""
    return f"{count} {noun}" + ("" if count == 1 else "s")
