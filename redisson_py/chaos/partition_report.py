"""Runs the partition scenarios of `redisson_py.chaos.partition` and sums each
(split, mode) up as one `Summary` line.

A line's columns: violations (two holders: B granted while A had not been told;
``fencing``: stale writes the resource accepted; ``heal``: also runs whose after-heal
checks failed), operations (B's grants; ``fencing``: stale writes tried), unavailable
p50/max (seconds from the split until the harness saw a replica promoted; none for
RedLock), and the A told / B granted columns (seconds after the split).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence

from redisson_py.chaos import partition
from redisson_py.chaos.journal import SplitTimes, Summary, percentile
from redisson_py.chaos.partition import MODES, SPLIT_MODES, SPLITS, Outcome
from redisson_py.testing.network import partition_support, require_partition_support

__all__ = ["plan", "run_partition", "summarize", "unavailable"]

Progress = Callable[[str], None]


def plan(topology: str, split: str | None, modes: Sequence[str] | None) -> list[tuple[str, str]]:
    """The (split, mode) pairs to run: ``split`` (default: every split of ``topology``)
    in each of ``modes`` that applies to it (default: all of its modes). Raises
    `ValueError` for an unknown topology, split or mode, or a mode that applies to
    none of the splits."""
    if topology not in SPLITS:
        raise ValueError(f"the partition scenario runs on {', '.join(SPLITS)}, not {topology!r}")
    known = SPLITS[topology]
    if split is not None and split not in known:
        raise ValueError(
            f"the {topology} topology has no partition scenario {split!r}; its scenarios: "
            + ", ".join(known)
        )
    splits = known if split is None else (split,)
    for mode in modes or ():
        if mode not in MODES:
            raise ValueError(f"partition has no mode {mode!r}; its modes: {', '.join(MODES)}")
        if not any(mode in SPLIT_MODES[s] for s in splits):
            raise ValueError(
                f"mode {mode} does not apply to {', '.join(splits)} (modes: "
                + "; ".join(f"{s}: {', '.join(SPLIT_MODES[s])}" for s in splits)
                + ")"
            )
    return [(s, m) for s in splits for m in (modes or SPLIT_MODES[s]) if m in SPLIT_MODES[s]]


def run_partition(
    topology: str,
    *,
    runs: int = 1,
    modes: Sequence[str] | None = None,
    split: str | None = None,
    backend: str = "auto",
    progress: Progress = lambda line: None,
) -> list[Summary]:
    """Run each planned (split, mode) ``runs`` times, each run on a fresh topology; one
    `Summary` per pair. Raises `ValueError` for a bad plan and
    [`NetworkUnavailableError`][redisson_py.testing.NetworkUnavailableError] where
    partitions cannot run."""
    pairs = plan(topology, split, modes)
    backend = "process" if backend == "auto" else backend  # partitions exist there only
    require_partition_support(backend)
    summaries = []
    for name, mode in pairs:
        outcomes = []
        for index in range(runs):
            outcome = partition.run_once(topology, name, mode, backend)
            outcomes.append(outcome)
            progress(progress_line(outcome, index, runs))
        summaries.append(summarize(outcomes))
    return summaries


def _at(value: float | None) -> str:
    return "never" if value is None else f"{value:.2f} s"


def progress_line(outcome: Outcome, index: int, runs: int) -> str:
    """One run's outcome, for stderr as it ends."""
    o = outcome
    promoted = "" if o.topology == "redlock" else f", promoted {_at(o.promoted)}"
    line = (
        f"partition {o.split} {o.topology} {o.mode} run {index + 1}/{runs}: A told "
        f"{_at(o.told)}, B granted {_at(o.granted)}{promoted}: "
        + ("TWO HOLDERS" if o.double_holder else "one holder")
    )
    if o.mode == "fencing":
        verdict = {True: "STALE WRITE ACCEPTED", False: "stale write refused", None: "no write"}
        line += f"; tokens A {o.a_token} B {o.b_token}, {verdict[o.stale_write]}"
    if o.split == "heal":
        line += (
            f"; rejoined {_at(o.rejoined)} after heal, A's unlock raised "
            f"{o.unlock_raised or 'nothing'}, B still holds: {o.b_still_holds}, keys name B "
            f"only: {o.keys_name_b}"
        )
    if o.split == "late-contender":
        line += f"; old master listed no replica {_at(o.dropped)}, C granted {_at(o.late_granted)}"
    if o.b_told is not None:
        line += f"; B TOLD LOST at {o.b_told:.2f} s ({o.b_reason})"
    return line + "".join(f"; {note}" for note in o.notes)


def _times(values: Sequence[float]) -> tuple[float, float]:
    return percentile(values, 0.5), (max(values) if values else math.nan)


def _count(outcomes: Sequence[Outcome], test: Callable[[Outcome], object]) -> str:
    return f"{sum(bool(test(o)) for o in outcomes)}/{len(outcomes)}"


def _how_told(reason: str) -> str:
    """The kind of a lost-lock reason (see `redisson_py.core.state.losses.expiry_reason`)."""
    if "not confirmed" in reason:
        return "renewals not confirmed"
    if "refused" in reason:
        refusal = next(
            (code for code in ("CLUSTERDOWN", "NOREPLICAS", "READONLY") if code in reason), ""
        )
        return f"renewals refused {refusal}".rstrip()
    if "unreachable" in reason:
        return "unreachable"
    return "other"


def summarize(outcomes: Sequence[Outcome]) -> Summary:
    """One line for the runs of one (split, mode) (``outcomes`` non-empty)."""
    first = outcomes[0]
    split, mode, runs = first.split, first.mode, len(outcomes)
    told = [o.told for o in outcomes if o.told is not None]
    granted = [o.granted for o in outcomes if o.granted is not None]
    promoted = [o.promoted for o in outcomes if o.promoted is not None]
    if mode == "fencing":
        violations = sum(o.stale_write is True for o in outcomes)
        operations = sum(o.stale_write is not None for o in outcomes)
    else:
        violations = sum(o.double_holder or o.heal_checks_failed for o in outcomes)
        operations = len(granted)
    notes = [
        f"A told {len(told)}/{runs}, B granted {len(granted)}/{runs}, two holders "
        + _count(outcomes, lambda o: o.double_holder)
    ]
    how = Counter(_how_told(o.reason) for o in outcomes if o.told is not None)
    if how:
        notes.append("A told: " + ", ".join(f"{k} {v}" for k, v in sorted(how.items())))
    raised = Counter(o.unlock_raised or "nothing" for o in outcomes)
    notes.append("A's unlock raised " + ", ".join(f"{k} {v}" for k, v in sorted(raised.items())))
    if mode == "fencing":
        notes.append(
            f"tokens A < B {_count(outcomes, lambda o: (o.a_token or 0) < (o.b_token or 0))}, "
            f"B's write accepted {_count(outcomes, lambda o: o.b_wrote)}, A's stale write "
            f"refused {_count(outcomes, lambda o: o.stale_write is False)}"
        )
    if split == "heal":
        rejoined = [o.rejoined for o in outcomes if o.rejoined is not None]
        p50, worst = _times(rejoined)
        notes.append(
            f"after heal (old master a replica {p50:.2f} s p50, {worst:.2f} s max): B still"
            f" held {_count(outcomes, lambda o: o.b_still_holds)}, keys named B only "
            f"{_count(outcomes, lambda o: o.keys_name_b)}"
        )
    if split == "late-contender":
        dropped = [o.dropped for o in outcomes if o.dropped is not None]
        late = [o.late_granted for o in outcomes if o.late_granted is not None]
        notes.append(
            f"old master listed no replica {_times(dropped)[0]:.2f} s p50 after the split; "
            f"C granted beside B {len(late)}/{runs}"
            + (f" ({_times(late)[0]:.2f} s p50)" if late else "")
        )
    if split == "one-way":
        roles = Counter(o.old_role or "?" for o in outcomes)
        notes.append("old master then " + ", ".join(f"{k} {v}" for k, v in sorted(roles.items())))
    b_told = [o for o in outcomes if o.b_told is not None]
    if b_told:
        notes.append(f"B told lost {len(b_told)}/{runs} ({b_told[0].b_reason})")
    errors = Counter(o.b_error.split(":")[0] for o in outcomes if o.b_error)
    if errors:
        notes.append("B's tries raised " + ", ".join(f"{k} {v}" for k, v in errors.items()))
    if mode == "sync-on+min-replicas":
        notes.append("2 replicas per master")
    notes += sorted({note for o in outcomes for note in o.notes})
    # A key no longer naming B matters only while B holds the lock (once B was told it
    # lost it, its key expired as it should).
    notes += sorted({o.keys_problem for o in outcomes if o.keys_problem and o.b_still_holds})
    told_p50, told_max = _times(told)
    granted_p50, granted_max = _times(granted)
    p50, worst = _times(promoted)
    return Summary(
        f"partition {split}",
        first.topology,
        mode,
        runs,
        violations,
        operations,
        p50,
        worst,
        "; ".join(notes),
        SplitTimes(told_p50, told_max, granted_p50, granted_max),
    )


def unavailable(backend: str) -> str | None:
    """Why the partition scenario cannot run on ``backend`` here, or None."""
    if backend == "container":
        return "partitions need the process backend (the container backend leaves them out)"
    return partition_support()
