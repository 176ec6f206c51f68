"""The lock across processes: a holder killed with SIGKILL, and a non-atomic counter
incremented by owners in two processes."""

from __future__ import annotations

import json
import select
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from redisson_py import Config
from redisson_py.testing.owners import Flavor


def spawn(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "redisson_py.testing.faults.workloads", *args],
        stdout=subprocess.PIPE,
        text=True,
    )


def read_line(process: subprocess.Popen[str], timeout: float) -> str:
    assert process.stdout is not None
    ready, _, _ = select.select([process.stdout], [], [], timeout)
    assert ready, f"the worker printed nothing within {timeout} s"
    return process.stdout.readline().strip()


def test_a_killed_holders_lock_frees_within_the_watchdog_timeout(
    flavor: Flavor, make_config: Callable[..., Config], tmp_path: Path, lock_name: str
) -> None:
    config = make_config(lock_watchdog_timeout=3.0)
    path = tmp_path / "redisson.yaml"
    path.write_text(config.to_yaml())
    holder = spawn("hold", "--config", str(path), "--flavor", flavor.name, "--lock", lock_name)
    try:
        assert read_line(holder, 30) == "held"
        lock = flavor.create_client(config).get_lock(lock_name)
        bob = flavor.owner("bob")
        assert bob(lock.try_lock) is False
        holder.kill()
        killed = time.monotonic()
        holder.wait(timeout=10)
        assert bob(lock.try_lock, 10.0) is True
        assert time.monotonic() - killed <= 3.0 + 1.0
        bob(lock.unlock)
    finally:
        holder.kill()
        holder.wait(timeout=10)


def test_owners_in_two_processes_lose_no_increment(
    flavor: Flavor, make_config: Callable[..., Config], tmp_path: Path, lock_name: str
) -> None:
    config = make_config()
    path = tmp_path / "redisson.yaml"
    path.write_text(config.to_yaml())
    counter = f"{lock_name}:counter"
    args = [
        "counter",
        "--config",
        str(path),
        "--flavor",
        flavor.name,
        "--lock",
        lock_name,
        "--counter",
        counter,
        "--owners",
        "10",
        "--increments",
        "200",
    ]
    workers = [spawn(*args) for _ in range(2)]
    summaries = []
    for worker in workers:
        out, _ = worker.communicate(timeout=240)
        assert worker.returncode == 0
        summaries.append(json.loads(out))
    assert [sum(s["done"]) for s in summaries] == [2000, 2000]
    client = flavor.create_client(config)
    assert int(flavor.run(client.redis(counter).get(counter))) == 4000
