"""The operator commands' argument handling and offline checks: no Redis involved (each
case fails before a client would be created)."""

from __future__ import annotations

from pathlib import Path

import pytest

from redisson_py.cli import main


def test_lock_commands_without_config_name_both_ways(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("REDISSON_PY_CONFIG", raising=False)
    assert main(["lock", "status", "a"]) == 1
    err = capsys.readouterr().err
    assert "--config FILE" in err and "REDISSON_PY_CONFIG" in err


def test_config_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    missing = tmp_path / "nowhere.yaml"
    monkeypatch.setenv("REDISSON_PY_CONFIG", str(missing))
    assert main(["lock", "status", "a"]) == 1
    assert str(missing) in capsys.readouterr().err


def test_unlock_refuses_without_force_or_without_a_terminal(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("REDISSON_PY_CONFIG", "/nonexistent.yaml")
    assert main(["lock", "unlock", "a"]) == 2
    assert "--force" in capsys.readouterr().err
    monkeypatch.setattr("sys.stdin.isatty", lambda: False)
    assert main(["lock", "unlock", "--force", "a"]) == 2
    assert "--yes" in capsys.readouterr().err


def test_run_needs_a_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["lock", "run", "a", "--config", "/nonexistent.yaml", "--"]) == 2
    assert "command" in capsys.readouterr().err


def test_run_takes_options_between_name_and_double_dash(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # --config after NAME is read as ours (the missing file is reported), not run as CMD
    missing = tmp_path / "late.yaml"
    assert main(["lock", "run", "a", "--wait", "1", "--config", str(missing), "--", "true"]) == 1
    assert str(missing) in capsys.readouterr().err


def test_config_check_offline(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    good = tmp_path / "good.yaml"
    good.write_text("singleServerConfig:\n  address: redis://u:pw-secret@127.0.0.1:1\n")
    assert main(["config", "check", str(good)]) == 0
    assert "valid" in capsys.readouterr().out
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "singleServerConfig:\n  address: redis://u:pw-secret@127.0.0.1:1\n  connectTimeout: -5\n"
    )
    assert main(["config", "check", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "connectTimeout" in err and "line 3" in err and "pw-secret" not in err
    assert main(["config", "check", str(tmp_path / "absent.yaml"), "--json"]) == 2
    assert '"valid": false' in capsys.readouterr().out


def test_config_before_the_lock_command_is_accepted(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `redisson-py lock --help` shows --config FILE on `lock`: it is read there too
    monkeypatch.delenv("REDISSON_PY_CONFIG", raising=False)
    missing = tmp_path / "before.yaml"
    for argv in (
        ["lock", "--config", str(missing), "list"],
        ["lock", "--config", str(missing), "status", "a"],
        ["lock", "--config", "/elsewhere.yaml", "status", "a", "--config", str(missing)],
    ):
        assert main(argv) == 1, argv
        assert str(missing) in capsys.readouterr().err
