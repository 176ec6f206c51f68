"""``redisson-py config check`` on the files users have (issue 38, item 5): what has no
effect is printed as sentences with file, line and key, listed in ``--json``, and no
warnings filter (``PYTHONWARNINGS=error`` included) ends it in a traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

# A Redisson 3.12-era file: a removed key, a Java-only key, a setting without effect
# here, a likely unit slip, and a password that must never be echoed.
OLD_FILE = """\
singleServerConfig:
  address: "redis://127.0.0.1:6379"
  password: "pw-LEAK-7f3a"
  pingTimeout: 1000
  idleConnectionTimeout: 20000
  timeout: 3
threads: 16
"""
EXPECTED = [
    (4, "singleServerConfig.pingTimeout", "removed in Redisson 3.12.4"),
    (5, "singleServerConfig.idleConnectionTimeout", "has no effect in redisson-py"),
    (6, "singleServerConfig.timeout", "YAML times are milliseconds"),
    (7, "threads", "ignored"),
]


def _check(path: Path, *args: str, warnings_filter: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONWARNINGS": warnings_filter}
    return subprocess.run(
        [sys.executable, "-m", "redisson_py.cli", "config", "check", str(path), *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=env,
    )


@pytest.fixture
def old_file(tmp_path: Path) -> Path:
    path = tmp_path / "redisson.yaml"
    path.write_text(OLD_FILE, encoding="utf-8")
    return path


@pytest.mark.parametrize("warnings_filter", ["error", "default", "ignore", "always"])
def test_warnings_print_as_sentences_under_any_filter(old_file: Path, warnings_filter: str) -> None:
    result = _check(old_file, warnings_filter=warnings_filter)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    assert result.stdout.strip() == f"{old_file}: valid"
    lines = result.stderr.splitlines()
    assert len(lines) == len(EXPECTED)  # one sentence per key, nothing else
    for line, (number, key, what) in zip(lines, EXPECTED, strict=True):
        assert line.startswith(f"warning: {old_file}, line {number}: {key}: ")
        assert what in line
    assert "pw-LEAK" not in result.stderr + result.stdout
    assert ".py:" not in result.stderr  # not Python's "path:line: Category" form


def test_json_lists_the_warnings(old_file: Path) -> None:
    result = _check(old_file, "--json", warnings_filter="error")
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    document = json.loads(result.stdout)
    assert document["valid"] is True and document["error"] is None
    found = [(w["line"], w["key"]) for w in document["warnings"]]
    assert found == [(number, key) for number, key, _ in EXPECTED]
    for warning, (_, _, what) in zip(document["warnings"], EXPECTED, strict=True):
        assert warning["file"] == str(old_file)
        assert what in warning["message"]
        assert warning["category"] in ("ConfigWarning", "ConfigUnitWarning")
    assert "pw-LEAK" not in result.stdout


def test_an_invalid_file_still_exits_2_without_traceback(tmp_path: Path) -> None:
    path = tmp_path / "mapper.yaml"
    path.write_text(
        "nameMapper: !<com.example.PrefixNameMapper> {}\n"
        "singleServerConfig:\n  address: redis://127.0.0.1:6379\n",
        encoding="utf-8",
    )
    result = _check(path, "--json", warnings_filter="error")
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    document = json.loads(result.stdout)
    assert document["valid"] is False and "nameMapper" in document["error"]
    assert document["warnings"] == []


def test_the_lock_commands_print_the_warnings_as_sentences_too(tmp_path: Path) -> None:
    # A Java-only key ended `redisson-py lock ...` in a traceback under PYTHONWARNINGS=error.
    path = tmp_path / "java.yaml"
    path.write_text(
        "singleServerConfig:\n  address: redis://127.0.0.1:1\n  connectTimeout: 500\nthreads: 4\n",
        encoding="utf-8",
    )
    result = subprocess.run(
        [sys.executable, "-m", "redisson_py.cli", "lock", "status", "x", "--config", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "PYTHONWARNINGS": "error"},
    )
    assert "Traceback" not in result.stderr
    assert f"warning: {path}, line 4: threads: ignored" in result.stderr
    assert result.returncode == 1  # nothing listens on port 1: "cannot reach", said plainly
    assert "cannot reach" in result.stderr
