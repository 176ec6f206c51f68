"""``redisson-py chaos partition`` without starting anything: which (split, mode) pairs a
command line runs, what it refuses, and how runs are summed up and tabled."""

from __future__ import annotations

import math

import pytest

from redisson_py.chaos.journal import HEADER, SPLIT_HEADER, Summary, markdown_table
from redisson_py.chaos.partition import Outcome
from redisson_py.chaos.partition_report import plan, summarize
from redisson_py.cli import main


def test_each_topology_runs_its_splits_in_their_modes() -> None:
    assert plan("redlock", None, None) == [("minority-redlock", "redlock")]
    sentinel = plan("sentinel", None, None)
    assert [s for s, _ in sentinel].count("old-master") == 4
    assert ("one-way", "fencing") not in sentinel
    assert ("heal", "sync-on") in sentinel
    assert plan("cluster", "minority-master", ["sync-on", "fencing"]) == [
        ("minority-master", "sync-on"),
        ("minority-master", "fencing"),
    ]
    # A mode that applies to some of the splits runs where it applies.
    assert plan("cluster", None, ["fencing"]) == [("minority-master", "fencing")]


@pytest.mark.parametrize(
    ("topology", "split", "modes", "message"),
    [
        ("single", None, None, "runs on sentinel, cluster, replicated, redlock"),
        ("sentinel", "minority-master", None, "has no partition scenario 'minority-master'"),
        ("sentinel", None, ["sync-maybe"], "has no mode 'sync-maybe'"),
        ("redlock", None, ["sync-on"], "does not apply to minority-redlock"),
        ("cluster", "heal", ["fencing"], "does not apply to heal"),
    ],
)
def test_bad_plans_are_refused(
    topology: str, split: str | None, modes: list[str] | None, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        plan(topology, split, modes)


@pytest.mark.parametrize(
    "argv",
    [
        ["partition", "--topology", "redlock", "--modes", "sync-on"],
        ["partition", "--topology", "sentinel", "--scenario", "minority-redlock"],
        ["race", "--topology", "redlock"],
        ["race", "--scenario", "heal"],
    ],
)
def test_the_cli_refuses_bad_combinations_with_status_2(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["chaos", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("redisson-py chaos: ") and err.count("\n") == 1


def test_partitions_on_containers_are_refused_before_anything_starts(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["chaos", "partition", "--topology", "cluster", "--backend", "container"]) == 1
    assert "needs the process backend" in capsys.readouterr().err


def _outcome(split: str = "old-master", mode: str = "sync-on", **fields: object) -> Outcome:
    outcome = Outcome(split, "sentinel", mode)
    for name, value in fields.items():
        setattr(outcome, name, value)
    return outcome


def test_two_holders_are_grants_before_the_holder_was_told() -> None:
    assert not _outcome(told=2.4, granted=4.9).double_holder
    assert _outcome(told=5.0, granted=4.9).double_holder
    assert _outcome(told=None, granted=3.6).double_holder
    assert not _outcome(told=None, granted=None).double_holder  # B never got it


def test_a_summary_counts_violations_per_mode() -> None:
    line = summarize(
        [
            _outcome(told=2.0, granted=4.0, promoted=3.0, unlock_raised="LockNotOwnedError"),
            _outcome(told=3.0, granted=5.0, promoted=2.0, unlock_raised="LockNotOwnedError"),
            _outcome(told=None, granted=3.5, promoted=2.5, unlock_raised=""),
        ]
    )
    assert (line.scenario, line.runs, line.violations, line.operations) == (
        "partition old-master",
        3,
        1,
        3,
    )
    assert (line.unavailable_p50, line.unavailable_max) == (2.5, 3.0)
    assert line.split is not None
    assert (line.split.told_p50, line.split.told_max) == (2.0, 3.0)
    assert (line.split.granted_p50, line.split.granted_max) == (4.0, 5.0)
    assert "two holders 1/3" in line.note

    # fencing: only a stale write accepted is a violation (two holders are expected).
    fencing = summarize(
        [
            _outcome(mode="fencing", granted=3.6, a_token=1, b_token=2, stale_write=False),
            _outcome(mode="fencing", granted=3.6, a_token=1, b_token=2, stale_write=True),
        ]
    )
    assert (fencing.violations, fencing.operations) == (1, 2)

    # heal: a run whose after-heal checks failed counts, though it had one holder.
    checked = {"unlock_raised": "LockNotOwnedError", "keys_name_b": True}
    heal = summarize(
        [
            _outcome("heal", told=2.0, granted=4.0, b_still_holds=True, **checked),
            _outcome("heal", told=2.0, granted=4.0, b_still_holds=False, **checked),
        ]
    )
    assert heal.violations == 1


def test_the_table_grows_the_split_columns_only_when_a_line_has_them() -> None:
    plain = Summary("race", "sentinel", "sync-on", 1, 0, 0, 2.2, 2.3, "A refused")
    assert markdown_table([plain]).splitlines()[0] == "| " + " | ".join(HEADER) + " |"
    split = summarize([_outcome(told=None, granted=None)])
    assert split.split is not None and math.isnan(split.split.told_p50)
    header, _, plain_row, split_row = markdown_table([plain, split]).splitlines()
    assert header.split(" | ")[8:12] == SPLIT_HEADER
    assert plain_row.split(" | ")[8:12] == ["-"] * 4
    assert split_row.split(" | ")[8:12] == ["-"] * 4  # never told, never granted
