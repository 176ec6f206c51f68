"""``redisson-py chaos nemesis``: options that do not go together are refused with one
line and exit 2, before anything starts."""

from __future__ import annotations

import pytest

from redisson_py.cli import main


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--topology", "sentinel", "--mode", "redlock"], "mode redlock runs on the redlock"),
        (["--topology", "redlock", "--mode", "sync-on"], "mode redlock runs on the redlock"),
        (["--mode", "sync-on,sync-off"], "one --mode per run"),
        (["--mode", "fencing"], "unknown mode 'fencing'"),
        (
            ["--topology", "redlock", "--mode", "queued"],
            "cluster and replicated run sync-on, sync-off or queued",
        ),
        (["--workers", "1"], "at least 2 workers"),
        (["--duration", "0"], "the duration must be positive"),
        (["--backend", "container"], "needs the process backend"),
        (["--runs", "0"], "--runs must be 1 or more"),
        (["--topology", "sentinel", "--dns"], "--dns runs on the replicated topology only"),
    ],
)
def test_refused_before_anything_starts(
    arguments: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["chaos", "nemesis", "--seed", "1", *arguments]) == 2
    assert message in capsys.readouterr().err


def test_the_schedule_is_checked_by_the_parser(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["chaos", "nemesis", "--schedule", "weather"])
    assert exited.value.code == 2
    assert "invalid choice: 'weather'" in capsys.readouterr().err
