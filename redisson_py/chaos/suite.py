"""Runs chaos scenarios several times and sums them up as `Summary` lines.

Used by ``redisson-py chaos`` and by the failover tests; every scenario starts its own
topology and tears it down, so runs are independent.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from redisson_py.chaos import holders, load, partition, partition_report, race, replies, waiters
from redisson_py.chaos.journal import Summary, percentile

Progress = Callable[[str], None]

SCENARIOS = ("race", "load", "crash", "lost-renewal", "waiters", "lost-replies", "partition")
MODES: dict[str, tuple[str, ...]] = {
    "race": race.MODES,
    "load": load.MODES,
    "crash": ("watchdog",),
    "lost-renewal": ("watchdog",),
    "waiters": ("sync-on",),
    "lost-replies": ("retry",),
    "partition": partition.MODES,
}


def _times(values: Sequence[float]) -> tuple[float, float]:
    return percentile(values, 0.5), (max(values) if values else math.nan)


def _race(
    topology: str, mode: str, runs: int, backend: str, progress: Progress, *, variant: str = "plain"
) -> Summary:
    outcomes = []
    label = mode if variant == "plain" or mode == "redlock" else f"{mode} --{variant}"
    for index in range(runs):
        outcome = race.run_once(topology, mode, backend, variant)
        outcomes.append(outcome)
        verdict = "DOUBLE HOLDER" if outcome.double_holder else "one holder"
        refused = f" (A refused: {outcome.a_refusal})" if outcome.a_refusal else ""
        if mode == "fencing":
            refused = f", tokens A {outcome.a_token} B {outcome.b_token}, " + (
                "no stale write"
                if outcome.stale_write is None
                else "STALE WRITE ACCEPTED"
                if outcome.stale_write
                else "stale write refused"
            )
        progress(f"race {outcome.topology} {label} run {index + 1}/{runs}: {verdict}{refused}")
    doubles = sum(o.double_holder for o in outcomes)
    p50, worst = _times([o.failover_seconds for o in outcomes if o.failover_seconds])
    if mode == "fencing":
        return _fencing_summary(outcomes, p50, worst)
    note = (
        f"race reproduced {doubles}/{runs}"
        if mode == "sync-off"
        else f"A granted {sum(o.a_acquired for o in outcomes)}/{runs}, B granted "
        f"{sum(o.b_acquired for o in outcomes)}/{runs}"
    )
    return Summary(
        "race",
        outcomes[0].topology,
        label,
        runs,
        doubles,
        sum(o.a_acquired for o in outcomes),
        p50,
        worst,
        note,
    )


def _fencing_summary(outcomes: Sequence[race.RaceRun], p50: float, worst: float) -> Summary:
    """The ``fencing`` row: violations are stale writes the resource accepted after the
    new holder's; operations, the stale writes tried (one per double grant)."""
    runs = len(outcomes)
    tried = [o for o in outcomes if o.stale_write is not None]
    ties = sum(o.a_token == o.b_token for o in tried)
    naive = sum(
        o.a_token is not None and o.b_token is not None and o.a_token >= o.b_token for o in tried
    )
    note = (
        f"double grant {sum(o.double_holder for o in outcomes)}/{runs}, same token {ties}/"
        f"{runs}; B's write accepted {sum(o.b_wrote for o in tried)}/{runs}, A's stale"
        f" write refused {sum(o.stale_write is False for o in tried)}/{runs}; unfenced,"
        f" A's write overwrote B's {sum(o.unfenced_stale_write for o in tried)}/{runs}, and"
        f" a `token >= highest` check would have taken it {naive}/{runs}"
    )
    return Summary(
        "race",
        outcomes[0].topology,
        "fencing",
        runs,
        sum(bool(o.stale_write) for o in tried),
        len(tried),
        p50,
        worst,
        note,
    )


def _load(
    topology: str, mode: str, runs: int, backend: str, *, duration: float, progress: Progress
) -> Summary:
    outcomes = []
    for index in range(runs):
        outcome = load.run_once(topology, mode, backend, duration, random.Random())
        outcomes.append(outcome)
        progress(
            f"load {outcome.topology} {mode} run {index + 1}/{runs}: {outcome.violations} "
            f"violations, {outcome.operations} sections, {outcome.acquire_errors} failed "
            f"acquires, {outcome.unlock_errors} failed unlocks, {outcome.lost} lost"
        )
    p50, worst = _times([o.window for o in outcomes])
    note = (
        f"{sum(o.lost for o in outcomes)} unlocks found the lock lost, "
        f"{sum(o.unlock_errors for o in outcomes)} failed"
    )
    return Summary(
        "load",
        outcomes[0].topology,
        mode,
        runs,
        sum(o.violations for o in outcomes),
        sum(o.operations for o in outcomes),
        p50,
        worst,
        note,
    )


def run_scenario(
    scenario: str,
    *,
    topology: str = "sentinel",
    runs: int = 1,
    backend: str = "auto",
    duration: float = 20.0,
    modes: Sequence[str] | None = None,
    progress: Progress = lambda line: None,
    variant: str = "plain",
    split: str | None = None,
) -> list[Summary]:
    """Run ``scenario`` ``runs`` times per mode; one `Summary` per mode.
    ``variant`` (race only: ``plain``, ``fresh``, ``rejoin``) picks the stale view the
    replicated race runs on (see `redisson_py.chaos.race`). ``partition`` runs on
    ``topology`` sentinel, cluster or redlock, one line per (split, mode); ``split``
    picks one of the topology's splits (see `redisson_py.chaos.partition`)."""
    if variant not in race.VARIANTS:
        raise ValueError(f"unknown race variant {variant!r}; known: {', '.join(race.VARIANTS)}")
    if scenario not in SCENARIOS:
        raise ValueError(f"unknown scenario {scenario!r}; known: {', '.join(SCENARIOS)}")
    if scenario == "partition":
        return partition_report.run_partition(
            topology, runs=runs, modes=modes, split=split, backend=backend, progress=progress
        )
    if topology == "redlock":
        raise ValueError(
            "the redlock topology is for the partition scenario; the others run RedLock "
            "in their redlock mode"
        )
    chosen = tuple(modes) if modes else MODES[scenario]
    unknown = [m for m in chosen if m not in MODES[scenario]]
    if unknown:
        raise ValueError(
            f"scenario {scenario} has no mode {unknown[0]!r}; its modes: "
            + ", ".join(MODES[scenario])
        )
    if scenario == "race":
        return [_race(topology, mode, runs, backend, progress, variant=variant) for mode in chosen]
    if scenario == "load":
        return [
            _load(topology, mode, runs, backend, duration=duration, progress=progress)
            for mode in chosen
        ]
    return [_simple(scenario, topology, runs, backend, progress)]


@dataclass
class _Trial:
    """One run of a pass/fail scenario."""

    ok: bool
    operations: int
    seconds: list[float]
    topology: str
    note: str


def _crash(topology: str, backend: str) -> _Trial:
    run = holders.run_crash(topology, backend)
    note = f"freed within {holders.WATCHDOG:g} s watchdog + 1 s"
    return _Trial(run.ok, 1, [run.freed_after], topology, note)


def _lost_renewal(topology: str, backend: str) -> _Trial:
    run = holders.run_lost_renewal(backend)
    told = [run.told_after] if run.told_after is not None else []
    return _Trial(run.ok, 1, told, "single", "told before unlock; unlock raised")


def _waiters(topology: str, backend: str) -> _Trial:
    run = waiters.run_once(topology, backend)
    note = f"{waiters.WAITERS} waiters, lease {waiters.LEASE:g} s, budget TTL + failover"
    return _Trial(run.ok, len(run.acquired_after), run.acquired_after, topology, note)


def _lost_replies(topology: str, backend: str) -> _Trial:
    run = replies.run_once(backend)
    note = f"hold counts {run.counts}, released: {run.released}"
    return _Trial(run.ok, run.dropped, [], "single", note)


_TRIALS: dict[str, Callable[[str, str], _Trial]] = {
    "crash": _crash,
    "lost-renewal": _lost_renewal,
    "waiters": _waiters,
    "lost-replies": _lost_replies,
}


def _simple(scenario: str, topology: str, runs: int, backend: str, progress: Progress) -> Summary:
    trials = []
    for index in range(runs):
        trial = _TRIALS[scenario](topology, backend)
        trials.append(trial)
        verdict = "ok" if trial.ok else "FAILED"
        progress(f"{scenario} {trial.topology} run {index + 1}/{runs}: {verdict}")
    p50, worst = _times([t for trial in trials for t in trial.seconds])
    return Summary(
        scenario,
        trials[0].topology,
        MODES[scenario][0],
        runs,
        sum(not t.ok for t in trials),
        sum(t.operations for t in trials),
        p50,
        worst,
        trials[0].note,
    )
