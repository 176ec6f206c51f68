"""``redisson-py lock status|unlock|run`` and ``redisson-py config check`` against real
topologies, run as subprocesses the way an operator runs them."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from redisson_py import Config, Redisson
from redisson_py.cli.lock_command import EXIT_LOCK_LOST, EXIT_WAIT_TIMEOUT
from redisson_py.errors import RedissonError
from redisson_py.testing import Topology

CLI = [sys.executable, "-c", "import sys; from redisson_py.cli import main; sys.exit(main())"]


def cli(
    *args: str, env: dict[str, str] | None = None, timeout: float = 30
) -> subprocess.CompletedProcess[str]:
    """``redisson-py ARGS`` run to completion, stdin not a terminal."""
    return subprocess.run(
        [*CLI, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        stdin=subprocess.DEVNULL,
        env=env,
    )


def write_config(topology: Topology, path: Path, **extra: Any) -> str:
    """The topology's Redisson YAML (plus top-level ``extra`` settings) in ``path``."""
    document = yaml.safe_load(topology.redisson_yaml())
    document.update(extra)
    path.write_text(yaml.safe_dump(document))
    return str(path)


@pytest.fixture
def single_config(single_topology: Topology, tmp_path: Path) -> str:
    return write_config(single_topology, tmp_path / "single.yaml")


@pytest.fixture
def client(single_config: str) -> Iterator[Redisson]:
    with Redisson.create(Config.from_yaml(single_config)) as redisson:
        yield redisson


def lock_name(request: pytest.FixtureRequest) -> str:
    return f"cli-{request.node.name}-{os.getpid()}"


def hold_in_thread(client: Redisson, name: str) -> tuple[threading.Event, threading.Thread]:
    """Take ``name`` twice (reentrant) in a thread that keeps it until the event is set."""
    taken, release = threading.Event(), threading.Event()

    def holder() -> None:
        lock = client.get_lock(name)
        lock.lock()
        lock.lock()
        taken.set()
        release.wait(30)
        with contextlib.suppress(RedissonError):  # a test may have force-unlocked it
            lock.unlock()
            lock.unlock()

    thread = threading.Thread(target=holder, daemon=True)
    thread.start()
    assert taken.wait(10)
    return release, thread


# -- config ----------------------------------------------------------------------------------


def test_no_config_names_both_ways(request: pytest.FixtureRequest) -> None:
    env = {k: v for k, v in os.environ.items() if k != "REDISSON_PY_CONFIG"}
    result = cli("lock", "status", lock_name(request), env=env)
    assert result.returncode == 1
    assert "--config" in result.stderr and "REDISSON_PY_CONFIG" in result.stderr


def test_config_check_good_bad_and_connect(
    single_config: str, cluster_topology: Topology, tmp_path: Path
) -> None:
    good = cli("config", "check", single_config)
    assert good.returncode == 0, good.stderr
    assert "valid" in good.stdout

    bad = tmp_path / "bad.yaml"
    bad.write_text("singleServerConfig:\n  address: redis://127.0.0.1:1\n  timeout: soon\n")
    result = cli("config", "check", str(bad))
    assert result.returncode == 2
    assert "timeout" in result.stderr and "line 3" in result.stderr
    as_json = json.loads(cli("config", "check", str(bad), "--json").stdout)
    assert as_json["valid"] is False and "timeout" in as_json["error"]

    cluster = write_config(cluster_topology, tmp_path / "cluster.yaml")
    report = json.loads(cli("config", "check", cluster, "--connect", "--json").stdout)
    assert report["valid"] and report["connected"]
    assert report["topology"]["mode"] == "cluster"
    masters = report["topology"]["masters"]
    assert len(masters) == 3 and all(len(m["replicas"]) == 1 for m in masters)
    text = cli("config", "check", cluster, "--connect")
    assert text.returncode == 0 and "mode: cluster" in text.stdout


def test_config_check_never_prints_the_password(single_topology: Topology, tmp_path: Path) -> None:
    port = single_topology.redisson_yaml().split("127.0.0.1:")[1].split()[0].strip("\"'")
    path = tmp_path / "secret.yaml"
    path.write_text(
        "singleServerConfig:\n"
        f"  address: redis://operator:hunter2secret@127.0.0.1:{port}\n"
        "  connectTimeout: 500\n"
    )
    for args in (("--connect",), ("--connect", "--json")):
        result = cli("config", "check", str(path), *args)
        assert "hunter2secret" not in result.stdout + result.stderr


# -- status ----------------------------------------------------------------------------------


def test_status_shows_holder_count_ttl_and_waiters(
    client: Redisson, single_config: str, request: pytest.FixtureRequest
) -> None:
    name = lock_name(request)
    assert (
        json.loads(cli("lock", "status", name, "--json", "--config", single_config).stdout)[
            "locks"
        ][0]["kind"]
        == "not locked"
    )
    release, holder = hold_in_thread(client, name)
    with Redisson.create(Config.from_yaml(single_config)) as other:
        waiter = threading.Thread(target=lambda: other.get_lock(name).try_lock(20), daemon=True)
        waiter.start()
        try:
            deadline = time.monotonic() + 10
            while True:
                entry = json.loads(
                    cli(
                        "lock",
                        "status",
                        name,
                        "--json",
                        env={**os.environ, "REDISSON_PY_CONFIG": single_config},
                    ).stdout
                )["locks"][0]
                if entry["waiters"] == 1 or time.monotonic() > deadline:
                    break
                time.sleep(0.1)
            assert entry["kind"] == "reentrant", entry
            assert [(h["client_id"], h["count"]) for h in entry["holders"]] == [(client.id, 2)]
            assert 0 < entry["ttl_ms"] <= 30_000
            assert entry["waiters"] == 1
            text = cli("lock", "status", name, "--config", single_config).stdout
            assert "reentrant lock" in text and "hold count 2" in text and "waiters: 1" in text
        finally:
            release.set()
            holder.join(10)
            waiter.join(20)
            other.get_lock(name).force_unlock()


def test_status_names_other_types(
    client: Redisson, single_config: str, request: pytest.FixtureRequest
) -> None:
    name = lock_name(request)
    client.redis(name).set(name, "x")
    try:
        entry = json.loads(cli("lock", "status", name, "--json", "--config", single_config).stdout)[
            "locks"
        ][0]
        assert entry["kind"] == "other" and entry["type"] == "string"
    finally:
        client.redis(name).delete(name)


def test_status_on_cluster(
    cluster_topology: Topology, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    config = write_config(cluster_topology, tmp_path / "cluster.yaml")
    name = lock_name(request)
    with (
        Redisson.create(Config.from_yaml(config)) as redisson,
        Redisson.create(Config.from_yaml(config)) as other,
    ):
        release, holder = hold_in_thread(redisson, name)
        waiter = threading.Thread(target=lambda: other.get_lock(name).try_lock(20), daemon=True)
        waiter.start()
        sharded = redisson.connection_manager.publish_command == "spublish"
        expected = 1 if sharded else None  # classic pub/sub on a cluster: unknowable
        try:
            deadline = time.monotonic() + 10
            while True:
                entry = json.loads(
                    cli("lock", "status", name, "--json", "--config", config).stdout
                )["locks"][0]
                if entry["waiters"] == expected or time.monotonic() > deadline:
                    break
                time.sleep(0.1)
            assert entry["kind"] == "reentrant" and entry["holders"][0]["count"] == 2
            assert entry["node"] == str(redisson.connection_manager.view.master_for(name))
            assert entry["waiters"] == expected
        finally:
            release.set()
            holder.join(10)
            waiter.join(20)
            other.get_lock(name).force_unlock()


# -- unlock ----------------------------------------------------------------------------------


def test_unlock_needs_force_and_confirmation(
    client: Redisson, single_config: str, request: pytest.FixtureRequest
) -> None:
    name = lock_name(request)
    release, holder = hold_in_thread(client, name)
    try:
        refused = cli("lock", "unlock", name, "--config", single_config)
        assert refused.returncode == 2 and "--force" in refused.stderr
        no_tty = cli("lock", "unlock", "--force", name, "--config", single_config)
        assert no_tty.returncode == 2 and "--yes" in no_tty.stderr
        assert client.get_lock(name).is_locked()
        done = cli("lock", "unlock", "--force", "--yes", name, "--json", "--config", single_config)
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout) == {"name": name, "unlocked": True}
        assert not client.get_lock(name).is_locked()
    finally:
        release.set()
        holder.join(10)


# -- run -------------------------------------------------------------------------------------


def test_run_passes_the_exit_status_through(
    single_config: str, request: pytest.FixtureRequest
) -> None:
    name = lock_name(request)
    probe = (
        "import subprocess, sys, json; "
        f"print(json.dumps(json.loads(subprocess.run({CLI!r} + ['lock', 'status', '{name}', "
        f"'--json', '--config', {single_config!r}], capture_output=True, text=True)"
        ".stdout)['locks'][0]['kind'])); sys.exit(3)"
    )
    result = cli("lock", "run", name, "--config", single_config, "--", sys.executable, "-c", probe)
    assert result.returncode == 3, result.stderr
    assert result.stdout.strip() == '"reentrant"'  # held while the command ran
    killed = cli("lock", "run", name, "--config", single_config, "--", "sh", "-c", "kill -9 $$")
    assert killed.returncode == 128 + 9
    missing = cli("lock", "run", name, "--config", single_config, "--", "no-such-command-x")
    assert missing.returncode == 127
    after = json.loads(cli("lock", "status", name, "--json", "--config", single_config).stdout)
    assert after["locks"][0]["kind"] == "not locked"


def test_run_wait_timeout(
    client: Redisson, single_config: str, request: pytest.FixtureRequest
) -> None:
    name = lock_name(request)
    release, holder = hold_in_thread(client, name)
    try:
        started = time.monotonic()
        result = cli(
            "lock",
            "run",
            name,
            "--wait",
            "0.5",
            "--json",
            "--config",
            single_config,
            "--",
            "sh",
            "-c",
            "echo ran",
        )
        assert result.returncode == EXIT_WAIT_TIMEOUT
        assert time.monotonic() - started < 10
        assert "ran" not in result.stdout
        assert json.loads(result.stderr.strip().splitlines()[-1])["acquired"] is False
    finally:
        release.set()
        holder.join(10)


CHILD = (
    "import signal, sys, time\n"
    "def on_term(*_):\n"
    "    print('child got SIGTERM', flush=True)\n"
    "    sys.exit(7)\n"
    "signal.signal(signal.SIGTERM, on_term)\n"
    "print('ready', flush=True)\n"
    "time.sleep(30)\n"
    "sys.exit(0)\n"
)


def start_run(name: str, config: str, *extra: str) -> subprocess.Popen[str]:
    process = subprocess.Popen(
        [*CLI, "lock", "run", name, "--config", config, *extra, "--", sys.executable, "-c", CHILD],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
    )
    assert process.stdout is not None
    assert process.stdout.readline().strip() == "ready"
    return process


def test_run_forwards_sigterm_and_releases(
    single_config: str, client: Redisson, request: pytest.FixtureRequest
) -> None:
    name = lock_name(request)
    process = start_run(name, single_config)
    try:
        assert client.get_lock(name).is_locked()
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=20)
        assert "child got SIGTERM" in out
        assert process.returncode == 7, err
        assert not client.get_lock(name).is_locked()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_run_stops_the_command_when_the_lock_is_lost(
    single_topology: Topology, tmp_path: Path, client: Redisson, request: pytest.FixtureRequest
) -> None:
    config = write_config(single_topology, tmp_path / "short.yaml", lockWatchdogTimeout=1500)
    name = lock_name(request)
    process = start_run(name, config, "--json", "--grace", "2")
    try:
        assert client.redis(name).delete(name) == 1
        out, err = process.communicate(timeout=20)
        assert process.returncode == EXIT_LOCK_LOST, err
        assert "child got SIGTERM" in out
        assert "lost" in err
        report = json.loads(err.strip().splitlines()[-1])
        assert report == {"name": name, "acquired": True, "lost": True, "status": EXIT_LOCK_LOST}
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
