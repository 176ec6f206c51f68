"""The nemesis's checker and verdict, on journals written by hand: what counts as an
overlap with an untold holder, a stale write accepted, and time without a holder."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from redisson_py.chaos.nemesis.checker import (
    Hold,
    Write,
    check,
    holds_of,
    no_holder,
    overlaps,
    stale_writes,
)
from redisson_py.chaos.nemesis.journal import Journal, Record, holding, read_journal, read_tail
from redisson_py.chaos.nemesis.report import RunReport, markdown_table
from redisson_py.chaos.nemesis.runner import fault_near
from redisson_py.chaos.nemesis.schedule import Schedule


def rec(op: str, t: float, **fields: Any) -> Record:
    return {"op": op, "t": t, "wall": 0.0, **fields}


def hold(worker: int, granted: float, ended: float, lock: str = "L", how: str = "unlock") -> Hold:
    return Hold(worker, lock, f"{worker}:{granted}", granted, ended, how)


# -- holds -----------------------------------------------------------------------------------


def test_a_hold_ends_at_its_release_or_when_its_holder_was_told_whichever_first() -> None:
    records = [
        rec("grant", 1.0, lock="L", hold="0:0", token=7),
        rec("write", 1.1, lock="L", hold="0:0", start=1.05, token=7, outcome="accepted"),
        rec("unlock", 2.0, lock="L", hold="0:0"),
        rec("unlocked", 2.1, lock="L", hold="0:0", outcome="released"),
        rec("grant", 3.0, lock="M", hold="0:1", token=8),
        rec("told", 4.0, lock="M", hold="0:1", reason="lost"),
        rec("unlock", 4.5, lock="M", hold="0:1"),
        rec("acquire", 5.0, lock="L", hold="0:2"),
        rec("told", 5.5, lock="L", hold="0:2", reason="found lost while granting"),
        rec("grant", 6.0, lock="L", hold="0:2", token=9),
        rec("unlock", 7.0, lock="L", hold="0:2"),
        rec("grant", 8.0, lock="M", hold="0:3", token=10),
        rec("write", 9.0, lock="M", hold="0:3", start=8.9, token=10, outcome="accepted"),
    ]
    assert holds_of(records, 0) == [
        Hold(0, "L", "0:0", 1.0, 2.0, "unlock", 7),
        Hold(0, "M", "0:1", 3.0, 4.0, "told", 8),
        Hold(0, "L", "0:2", 6.0, 6.0, "told", 9),  # told before its grant returned
        Hold(0, "M", "0:3", 8.0, 9.0, "open", 10),  # the journal ends inside it
    ]


def test_holding_looks_past_writes_to_the_last_grant_or_release() -> None:
    grant = rec("grant", 1.0, lock="L", hold="0:0")
    write = rec("write", 1.1, lock="L", hold="0:0", start=1.0, outcome="accepted")
    assert holding([rec("start", 0.0), grant, write, write])
    assert not holding([grant, write, rec("unlock", 2.0, lock="L", hold="0:0")])
    assert not holding([grant, rec("told", 1.5, lock="L", hold="0:0")])
    assert not holding([rec("acquire", 0.5, lock="L", hold="0:0")])
    assert not holding([])


def test_a_journal_reads_back_whole_and_by_its_tail(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "w.jsonl")
    for number in range(500):
        journal.record("write", t=float(number), lock="L", hold="0:0", start=0.0, n=number)
    journal.close()
    with (tmp_path / "w.jsonl").open("a") as file:
        file.write('{"op": "write", "t": 5')  # a writer killed mid-line
    records = read_journal(tmp_path / "w.jsonl")
    assert [r["n"] for r in records] == list(range(500))
    assert records[3]["t"] == 3.0 and isinstance(records[3]["wall"], float)
    tail = read_tail(tmp_path / "w.jsonl", size=1000)
    assert 5 < len(tail) < 30
    assert [r["n"] for r in tail] == list(range(500 - len(tail), 500))


# -- check 1: overlaps -------------------------------------------------------------------------


def test_a_grant_while_another_workers_hold_is_untold_is_an_overlap() -> None:
    earlier, later = hold(0, 0.0, 5.0), hold(1, 3.0, 6.0)
    [found] = overlaps([later, earlier])
    assert (found.earlier, found.later, found.lock, found.at) == (earlier, later, "L", 3.0)
    assert found.untold_for == pytest.approx(2.0)


@pytest.mark.parametrize(
    "holds",
    [
        [hold(0, 0.0, 5.0), hold(1, 5.0, 6.0)],  # granted as the other's release started
        [hold(0, 0.0, 2.0, how="told"), hold(1, 3.0, 6.0)],  # the earlier holder was told
        [hold(0, 0.0, 5.0), hold(0, 3.0, 6.0)],  # one worker (one owner)
        [hold(0, 0.0, 5.0, lock="L"), hold(1, 3.0, 6.0, lock="M")],  # two locks
    ],
)
def test_what_is_not_an_overlap(holds: list[Hold]) -> None:
    assert overlaps(holds) == []


def test_every_running_hold_of_another_worker_counts() -> None:
    found = overlaps([hold(0, 0.0, 10.0), hold(1, 1.0, 2.0), hold(2, 1.5, 3.0)])
    pairs = [(o.earlier.worker, o.later.worker) for o in found]
    assert pairs == [(0, 1), (0, 2), (1, 2)]


# -- check 2: stale writes ---------------------------------------------------------------------


def write(worker: int, token: int | None, start: float, end: float, outcome: str) -> Write:
    return Write(worker, "L", f"{worker}:x", token, start, end, outcome)


def test_a_write_accepted_after_a_larger_token_was_accepted_is_stale() -> None:
    newer = write(1, 5, 0.0, 1.0, "accepted")
    stale = write(0, 4, 2.0, 2.1, "accepted")
    found = stale_writes([newer, stale, write(0, 4, 3.0, 3.1, "refused")])
    assert found.accepted == (stale,)
    assert (found.refused, found.unordered, found.checked) == (1, 0, 2)


def test_writes_in_flight_together_with_inverted_tokens_are_unordered_not_stale() -> None:
    newer = write(1, 5, 0.4, 1.0, "accepted")
    older = write(0, 4, 0.5, 0.6, "accepted")  # may well have reached the server first
    found = stale_writes([newer, older])
    assert found.accepted == ()
    assert found.unordered == 1


def test_one_token_accepted_from_two_workers_is_a_lost_tie_accepted() -> None:
    first = write(0, 7, 0.0, 0.1, "accepted")
    second = write(1, 7, 0.2, 0.3, "accepted")
    assert stale_writes([second, first, write(0, 7, 0.4, 0.5, "accepted")]).accepted == (second,)


def test_growing_tokens_and_unfenced_writes_are_fine() -> None:
    writes = [write(0, 1, 0.0, 0.1, "accepted"), write(1, 2, 0.2, 0.3, "accepted")]
    writes += [write(2, None, 0.0, 5.0, "unfenced"), write(2, 1, 1.0, 1.1, "error")]
    found = stale_writes(writes)
    assert (found.accepted, found.refused, found.unordered, found.checked) == ((), 0, 0, 2)


# -- check 3: time without a holder ----------------------------------------------------------


def test_time_without_a_holder_is_the_gaps_between_holds_inside_the_window() -> None:
    holds = [hold(0, -5.0, 1.0), hold(1, 2.0, 4.0), hold(0, 3.0, 4.5), hold(2, 6.0, 20.0)]
    gaps = no_holder([*holds, hold(3, 0.0, 9.0, lock="M")], "L", 0.0, 10.0)
    assert (gaps.total, gaps.longest, gaps.window) == (2.5, 1.5, 10.0)
    assert gaps.share == pytest.approx(0.25)
    assert no_holder([], "L", 0.0, 10.0).longest == 10.0


# -- all checks, and the verdict ---------------------------------------------------------------


def journals_with_an_overlap_and_a_stale_write() -> list[list[Record]]:
    worker_0 = [
        rec("grant", 1.0, lock="L", hold="0:0", token=1),
        rec("write", 1.2, lock="L", hold="0:0", start=1.1, token=1, outcome="accepted"),
        rec("write", 4.2, lock="L", hold="0:0", start=4.1, token=1, outcome="accepted"),
        rec("told", 4.5, lock="L", hold="0:0", reason="expired"),
        rec("unlock", 4.6, lock="L", hold="0:0"),
        rec("unlocked", 4.7, lock="L", hold="0:0", outcome="not-owned"),
    ]
    worker_1 = [
        rec("acquire", 2.0, lock="L", hold="1:0"),
        rec("grant", 3.0, lock="L", hold="1:0", token=2),
        rec("write", 3.2, lock="L", hold="1:0", start=3.1, token=2, outcome="accepted"),
        rec("unlock", 5.0, lock="L", hold="1:0"),
        rec("unlocked", 5.1, lock="L", hold="1:0", outcome="released"),
        rec("acquire", 5.2, lock="L", hold="1:1"),
        rec("timeout", 7.2, lock="L", hold="1:1"),
    ]
    return [worker_0, worker_1]


def test_check_finds_all_three_and_counts_operations() -> None:
    verdict = check(journals_with_an_overlap_and_a_stale_write(), ["L"], 0.0, 10.0)
    assert verdict.holds == 2
    [overlap] = verdict.overlaps
    assert (overlap.earlier.worker, overlap.later.worker, overlap.at) == (0, 1, 3.0)
    assert [w.start for w in verdict.stale.accepted] == [4.1]  # token 1 after token 2
    [gaps] = verdict.no_holder
    assert gaps.total == pytest.approx(1.0 + 5.0)
    assert verdict.counts == {
        "grants": 2,
        "timeouts": 1,
        "errors": 0,
        "told": 1,
        "writes": 3,
        "refused": 0,
        "write_errors": 0,
        "released": 1,
        "not_owned": 1,
        "unlock_errors": 0,
        "writes_after_told": 0,
    }


def test_a_write_sent_after_its_holder_was_told_is_counted() -> None:
    journal = [
        rec("grant", 1.0, lock="L", hold="0:0", token=1),
        rec("told", 2.0, lock="L", hold="0:0", reason="expired"),
        rec("write", 2.6, lock="L", hold="0:0", start=2.5, token=1, outcome="accepted"),
        rec("unlock", 3.0, lock="L", hold="0:0"),
    ]
    assert check([journal], ["L"], 0.0, 4.0).counts["writes_after_told"] == 1


def report(mode: str, schedule: str) -> RunReport:
    topology = "redlock" if mode == "redlock" else "sentinel"
    verdict = check(journals_with_an_overlap_and_a_stale_write(), ["L"], 0.0, 10.0)
    plan = Schedule(seed=3, schedule=schedule, duration=10.0, faults=())
    injected = [{"op": "fault-start", "kind": "partition"}, {"op": "fault-start", "kind": "kill"}]
    return RunReport(topology, mode, plan, 10.0, 2, ["L"], verdict, injected=injected)


@pytest.mark.parametrize(
    ("mode", "schedule", "overlap_broken"),
    [
        ("sync-on", "network", True),
        ("redlock", "network", True),
        ("queued", "network", True),
        ("queued", "process", False),
        ("sync-off", "network", False),
        ("sync-on", "process", False),
        ("redlock", "process", False),
    ],
)
def test_which_runs_promise_no_overlap(mode: str, schedule: str, overlap_broken: bool) -> None:
    broken = report(mode, schedule).violations()
    assert ("1 overlapping hold with an untold holder" in broken) is overlap_broken
    assert "1 stale write accepted" in broken  # every run promises that


def test_the_table_row_and_the_json() -> None:
    fenced, redlock = report("sync-on", "network"), report("redlock", "process")
    table = markdown_table([fenced, redlock]).splitlines()
    assert table[0].startswith("| topology | mode | schedule | seed | duration |")
    assert "| 2 grants, 3 writes | 2 (kill 1, partition 1) | 1 | 1 / 0 |" in table[2]
    assert "**VIOLATION**" in table[2]
    assert "n/a (no token)" in table[3]
    document = fenced.to_json()
    assert document["overlaps"]["count"] == 1
    assert document["overlaps"]["first"][0]["untold_for"] == pytest.approx(1.5)
    assert document["stale_writes"]["accepted"] == 1
    assert redlock.to_json()["oracle"].startswith("journal only")


def test_a_queued_run_reports_no_fenced_oracle() -> None:
    # The queued lock's writes carry no token: "0 / 0" stale writes would claim a check
    # that never ran.
    queued = report("queued", "network")
    assert "| n/a (no token) |" in markdown_table([queued]).splitlines()[2]
    assert queued.to_json()["oracle"] == "journal only (the queued lock has no token)"


def test_fault_near_names_the_fault_in_force_or_the_last_healed() -> None:
    records = [
        rec("fault-start", 10.0, fault=0, kind="partition"),
        rec("fault-end", 15.0, fault=0, kind="partition"),
        rec("fault-start", 20.0, fault=1, kind="kill"),
    ]
    assert fault_near(5.0, records) == ""
    assert fault_near(12.0, records) == "during #0 partition"
    assert fault_near(16.5, records) == "1.5 s after #0 partition"
    assert fault_near(21.0, records) == "during #1 kill"
