"""The demo's verdict from worker records, without Redis: hand-offs, lost increments."""

from __future__ import annotations

import pytest

from redisson_py.demo.summary import Acquisition, WorkerResult, format_summary, summarize


def acq(seq: int, called: float, acquired: float, released: float) -> Acquisition:
    return Acquisition(seq, called, acquired, released)


def test_handoffs_are_timed_from_unlock_to_the_waiting_others_lock() -> None:
    a = WorkerResult(0, 100, [acq(0, 0.0, 0.0, 1.0), acq(1, 1.1, 1.1, 2.0)])
    # Waiting since 0.5, got it 2.0025 after a's unlock at 2.0: a hand-off of 2.5 ms.
    b = WorkerResult(1, 101, [acq(2, 0.5, 2.0025, 3.0)])
    # Called only after b's unlock: nobody was waiting, not a hand-off.
    c = WorkerResult(2, 102, [acq(3, 3.5, 3.6, 4.0)])
    summary = summarize([a, b, c], counter=4, seconds=4.0)
    assert summary.handoffs.count == 1
    assert summary.handoffs.p50 == pytest.approx(0.0025)
    assert summary.reacquired == 1  # a took it back itself
    assert summary.unwaited == 1
    assert summary.expected == 4 and summary.lost == 0 and summary.complete
    assert summary.per_worker == ((0, 100, 2), (1, 101, 1), (2, 102, 1))
    assert "lost increments: 0  [OK]" in "\n".join(format_summary(summary, title="t"))


def test_overlapping_holders_show_as_lost_increments_and_duplicates() -> None:
    a = WorkerResult(0, 100, [acq(0, 0.0, 0.0, 1.0)])
    b = WorkerResult(1, 101, [acq(0, 0.0, 0.1, 1.1)])  # read the same value
    summary = summarize([a, b], counter=1, seconds=1.1)
    assert summary.lost == 1 and summary.duplicates == 1
    assert "MUTUAL EXCLUSION BROKEN" in "\n".join(format_summary(summary, title="t"))


def test_a_worker_that_did_not_report_makes_the_check_incomplete() -> None:
    a = WorkerResult(0, 100, [acq(0, 0.0, 0.0, 1.0)])
    b = WorkerResult(1, 101, [], error="interrupted")
    summary = summarize([a, b], counter=2, seconds=1.0, workers=2)
    assert not summary.complete
    assert "not checked" in "\n".join(format_summary(summary, title="t"))
