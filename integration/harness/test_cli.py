"""``redisson-py topology``: up prints the Redisson YAML at once and tears down on
SIGINT/SIGTERM; --detach, list and down."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable

import pytest
import redis
import yaml
from redis.backoff import NoBackoff
from redis.retry import Retry

from redisson_py.testing import sweep_leftovers

CLI = [sys.executable, "-c", "import sys; from redisson_py.cli import main; sys.exit(main())"]
Leftovers = Callable[[], tuple[set[int], set[str]]]


def redisson_py(*args: str) -> subprocess.Popen[str]:
    """``redisson-py ARGS`` running in the background."""
    return subprocess.Popen(
        [*CLI, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    """``redisson-py ARGS`` run to completion."""
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=120, check=False)


def read_lines(stream: object, count: int, timeout: float) -> list[str]:
    """The first ``count`` lines of a pipe, or fail after ``timeout`` seconds."""
    lines: list[str] = []

    def reader() -> None:
        for line in stream:  # type: ignore[attr-defined]
            lines.append(line)
            if len(lines) == count:
                return

    thread = threading.Thread(target=reader, daemon=True)
    thread.start()
    thread.join(timeout)
    assert len(lines) == count, f"got only {lines!r} within {timeout} s"
    return lines


def answers(address: str) -> bool:
    port = int(address.rsplit(":", 1)[1])
    try:
        client = redis.Redis(
            port=port, socket_timeout=1, socket_connect_timeout=1, retry=Retry(NoBackoff(), 0)
        )
        return bool(client.ping())
    except redis.RedisError:
        return False


@pytest.mark.parametrize("stop_signal", [signal.SIGTERM, signal.SIGINT])
def test_up_prints_yaml_then_stops_on_signal(
    backend: str, stop_signal: signal.Signals, leftovers: Leftovers
) -> None:
    before = leftovers()
    process = redisson_py("topology", "up", "single", "--backend", backend)
    try:
        lines = read_lines(process.stdout, 2, timeout=60)
        config = yaml.safe_load("".join(lines))
        address = config["singleServerConfig"]["address"]
        assert address.startswith("redis://127.0.0.1:")
        assert answers(address)
        process.send_signal(stop_signal)
        assert process.wait(30) == 0
        assert not answers(address)
        assert leftovers() == before
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_detach_list_down(backend: str, leftovers: Leftovers) -> None:
    before = leftovers()
    up = run_cli("topology", "up", "redlock", "--backend", backend, "--detach")
    assert up.returncode == 0, up.stderr
    addresses = [d["singleServerConfig"]["address"] for d in yaml.safe_load_all(up.stdout)]
    assert len(addresses) == 5
    try:
        # The process that started it is gone; the topology is not.
        assert all(answers(a) for a in addresses)
        listing = run_cli("topology", "list")
        assert listing.returncode == 0 and "redlock" in listing.stdout
    finally:
        down = run_cli("topology", "down", "redlock")
    assert down.returncode == 0, down.stderr
    assert "stopped redlock topology" in down.stdout
    assert not any(answers(a) for a in addresses)
    assert leftovers() == before


def test_owner_killed_by_sigterm_leaves_nothing(backend: str, leftovers: Leftovers) -> None:
    """A program using the library that gets SIGTERM (no handler of its own) stops its
    topologies on the way out."""
    before = leftovers()
    program = (
        "import sys, time\n"
        "from redisson_py.testing import start_topology\n"
        f"t = start_topology('master-replica', backend={backend!r})\n"
        "print(t.master().address, flush=True)\n"
        "time.sleep(600)\n"
    )
    process = subprocess.Popen(
        [sys.executable, "-c", program], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        address = read_lines(process.stdout, 1, timeout=60)[0].strip()
        assert answers(address)
        process.send_signal(signal.SIGTERM)
        assert process.wait(30) == -signal.SIGTERM
        assert not answers(address)
        assert leftovers() == before
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_owner_killed_by_sigkill_is_swept(backend: str, leftovers: Leftovers) -> None:
    """SIGKILL runs no handler: processes die with their parent (PR_SET_PDEATHSIG),
    containers are removed by the next sweep."""
    before = leftovers()
    program = (
        "import time\n"
        "from redisson_py.testing import start_topology\n"
        f"t = start_topology('single', backend={backend!r})\n"
        "print(t.nodes[0].address, flush=True)\n"
        "time.sleep(600)\n"
    )
    process = subprocess.Popen(
        [sys.executable, "-c", program], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        address = read_lines(process.stdout, 1, timeout=60)[0].strip()
        os.kill(process.pid, signal.SIGKILL)
        process.wait(10)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    swept = sweep_leftovers(force=True)
    assert any("single-" in line for line in swept) or backend == "process"
    deadline = time.monotonic() + 10
    while (answers(address) or leftovers() != before) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not answers(address)
    assert leftovers() == before
