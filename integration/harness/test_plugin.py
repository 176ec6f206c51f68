"""The pytest plugin: shared fixtures are guarded and healthy; topology_factory tears down
after a failing test and shows the node logs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from redisson_py.testing import Topology, TopologyError


def test_redis_backend_is_resolved(redis_backend: str) -> None:
    assert redis_backend in ("container", "process")


def test_shared_topology_is_ready_and_guarded(
    single_topology: Topology, redis_backend: str
) -> None:
    assert single_topology.backend == redis_backend
    node = single_topology.nodes[0]
    assert node.client().ping()
    with pytest.raises(
        TopologyError, match=r"shared by every test of the session.*topology_factory"
    ):
        node.kill()
    with pytest.raises(TopologyError, match="shared"):
        node.pause()
    with pytest.raises(TopologyError, match="shared"):
        single_topology.stop()
    assert node.is_running()


def test_shared_topology_is_the_same_object(single_topology: Topology) -> None:
    # Started once per session (the previous test started it).
    assert single_topology.nodes[0].ping()


def test_factory_tears_down_a_failed_test(tmp_path: Path) -> None:
    (tmp_path / "test_fails.py").write_text(
        "import os\n"
        "def test_fails(topology_factory):\n"
        "    topology = topology_factory('single', backend='process')\n"
        "    open('port', 'w').write(str(topology.nodes[0].port))\n"
        "    assert False, 'on purpose'\n"
    )
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--redis-backend=process"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env=os.environ.copy(),
        check=False,
    )
    assert result.returncode == 1, result.stdout + result.stderr
    assert "on purpose" in result.stdout
    assert "node logs" in result.stdout and "Ready to accept connections" in result.stdout
    port = int((tmp_path / "port").read_text())
    with pytest.raises(redis.ConnectionError):
        redis.Redis(port=port, socket_connect_timeout=1, retry=Retry(NoBackoff(), 0)).ping()


def test_partition_tests_skip_with_the_reason_where_partitions_cannot_run(
    tmp_path: Path,
) -> None:
    # A redis-server older than 7.0 (no bind-source-addr): partitions cannot run.
    old_server = tmp_path / "redis-server"
    old_server.write_text("#!/bin/sh\necho 'Redis server v=6.2.14 sha=00000000:0'\n")
    old_server.chmod(0o755)
    (tmp_path / "test_needs_partitions.py").write_text(
        "import pytest\n"
        "def test_factory(topology_factory):\n"
        "    topology_factory('single', network='namespace')\n"
        "    raise AssertionError('started')\n"
        "@pytest.mark.usefixtures('partitions_supported')\n"
        "def test_fixture():\n"
        "    raise AssertionError('ran')\n"
    )
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-rs"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "REDISSON_PY_REDIS_SERVER": str(old_server)},
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 skipped" in result.stdout
    assert result.stdout.count("network partitions need") == 2, result.stdout
