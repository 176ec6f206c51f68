"""Harness tests run on both backends, whatever ``--redis-backend`` says: the harness is
what is under test. The container variant is skipped, with the reason, only when no Docker
engine answers."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import docker
import pytest

from redisson_py.testing.backends.docker_engine import docker_engine_answers, engine_location
from redisson_py.testing.topologies.paths import topologies_root

Snapshot = tuple[set[int], set[str]]


@pytest.fixture(params=["process", "container"])
def backend(request: pytest.FixtureRequest) -> str:
    """The backend a harness test runs on."""
    name = str(request.param)
    if name == "container" and not docker_engine_answers():
        pytest.skip(f"no Docker engine answers at {engine_location()}: container backend untested")
    return name


@pytest.fixture(autouse=True)
def private_run_root(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Each harness test keeps its topologies' files in a run root of its own (inherited
    by the programs it starts), so what it leaves behind can be told apart from the
    topologies other tests and other test runs on this machine have running. Set apart
    from the test's ``monkeypatch``, which a test may undo."""
    root = tmp_path_factory.mktemp("run")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("REDISSON_PY_RUN_DIR", str(root))
        yield root


def harness_processes() -> set[int]:
    """Live processes whose working directory is a node directory under this test's run root."""
    root = str(topologies_root())
    found: set[int] = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            cwd = os.readlink(entry / "cwd")
            state = (entry / "stat").read_text().rpartition(")")[2].split()[0]
            if cwd.startswith(root) and state != "Z":
                found.add(int(entry.name))
    return found


def harness_containers() -> set[str]:
    """Names of the containers (running or not) labelled as the harness's whose node
    directory (mounted at the same path) is under this test's run root: not those of
    tests running beside it (pytest-xdist's other workers, another test run)."""
    if not docker_engine_answers():
        return set()
    root = str(topologies_root())
    client = docker.from_env()
    try:
        return {
            c.name
            for c in client.containers.list(
                all=True, filters={"label": "org.redisson-py.harness=1"}, ignore_removed=True
            )
            if any(
                str(mount.get("Source", "")).startswith(root) for mount in c.attrs.get("Mounts", [])
            )
        }
    finally:
        client.close()


def snapshot() -> tuple[set[int], set[str]]:
    return harness_processes(), harness_containers()


@pytest.fixture
def leftovers() -> Callable[[], Snapshot]:
    """``leftovers()``: the harness's processes and containers alive right now."""
    return snapshot
