"""pytest plugin: real Redis topologies as fixtures (registered through ``pytest11``).

Option ``--redis-backend=container|process|auto`` (default ``auto``, or
``$REDISSON_PY_REDIS_BACKEND``): ``auto`` runs containers when a Docker engine answers,
else processes. Asking for ``container`` with no engine stops the run at once with one
sentence saying so.

Fixtures:

``redis_backend`` (session)
    the backend in use, ``"container"`` or ``"process"``.
``single_topology``, ``master_replica_topology``, ``replicated_topology``,
``sentinel_topology``, ``cluster_topology``, ``redlock_topology`` (session)
    one shared topology of each kind, started on first use and stopped at the end of the
    session. They are *shared*: killing, pausing, restarting a node or failing over
    raises ``TopologyError``, and a topology found broken anyway (a node gone) is replaced
    before the next test gets it. Tests must use their own keys.
``topology_factory`` (function)
    ``topology_factory(kind, backend=None, **overrides) -> Topology`` for tests that
    break things: each topology it starts is the test's own and is stopped when the test
    ends, passed or failed; on failure the tail of every node's log is printed.
    ``network="namespace"`` (partitions) runs on the process backend whatever
    ``--redis-backend`` says, and skips the test, with the reason, where partitions
    cannot run.
``partitions_supported`` (session)
    skips the tests that use it, with the reason, where ``network="namespace"`` cannot
    run (not root, no iptables, Redis older than 7.0...); see
    [`redisson_py.testing.network.partition_support`][redisson_py.testing.partition_support].

This module imports nothing heavy at import time: the harness is imported on first use of
a fixture, so the plugin costs nothing to test runs that use none.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Generator, Iterator
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from redisson_py.testing.topologies.topology import Topology

__all__ = [
    "cluster_topology",
    "master_replica_topology",
    "partitions_supported",
    "redis_backend",
    "redlock_topology",
    "replicated_topology",
    "sentinel_topology",
    "single_topology",
    "topology_factory",
]

_BACKEND_CHOICES = ("container", "process", "auto")
_LOG_TAIL_LINES = 25
_reports = pytest.StashKey[dict[str, pytest.TestReport]]()
_used_backends = pytest.StashKey[set[str]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("redisson-py", "redisson-py test topologies")
    group.addoption(
        "--redis-backend",
        choices=_BACKEND_CHOICES,
        default=os.environ.get("REDISSON_PY_REDIS_BACKEND", "auto"),
        help="run test topologies as containers, as local redis-server processes, or "
        "auto: containers when a Docker engine answers, else processes (default: auto).",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.stash[_used_backends] = set()
    if config.getoption("--redis-backend", default="auto") == "container":
        from redisson_py.testing.backends.docker_engine import require_docker_engine  # noqa: PLC0415
        from redisson_py.testing.errors import TopologyError  # noqa: PLC0415

        try:
            require_docker_engine()
        except TopologyError as exc:
            raise pytest.UsageError(str(exc)) from None


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    # Keep each phase's report on the item, so topology_factory knows at teardown
    # whether the test failed.
    report = yield
    item.stash.setdefault(_reports, {})[report.when] = report
    return report


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    used = session.config.stash.get(_used_backends, set())
    if not used:
        return
    from redisson_py.testing.topologies.cleanup import stop_all, sweep_leftovers  # noqa: PLC0415

    # Whatever a test started by hand and did not stop, and whatever a dead earlier run
    # left behind.
    stop_all()
    for backend in used:
        sweep_leftovers(backend=backend, force=True)


@pytest.fixture(scope="session")
def redis_backend(pytestconfig: pytest.Config) -> str:
    """The backend test topologies run on: ``"container"`` or ``"process"``."""
    from redisson_py.testing.backends import resolve_backend  # noqa: PLC0415

    return resolve_backend(str(pytestconfig.getoption("--redis-backend")))


class _SharedTopologies:
    """The session's shared topologies, started lazily, replaced when found broken."""

    def __init__(self, backend: str, config: pytest.Config):
        self.backend = backend
        self.config = config
        self.started: dict[str, Topology] = {}

    def get(self, kind: str) -> Topology:
        topology = self.started.get(kind)
        if topology is not None and not self._healthy(topology):
            self._discard(kind)
            topology = None
        if topology is None:
            topology = _start(self.config, kind, self.backend)
            topology.share(
                f"the {kind} topology is shared by every test of the session; use "
                f"topology_factory({kind!r}) for a topology of your own to break"
            )
            self.started[kind] = topology
        return topology

    @staticmethod
    def _healthy(topology: Topology) -> bool:
        from redisson_py.testing.errors import TopologyError  # noqa: PLC0415

        if not all(node.is_running() and not node.is_paused() for node in topology.nodes):
            return False
        try:
            topology.wait_ready(timeout=20)
        except TopologyError:
            return False
        return True

    def _discard(self, kind: str) -> None:
        topology = self.started.pop(kind)
        topology.unshare()
        topology.stop()

    def stop(self) -> None:
        for kind in list(self.started):
            self._discard(kind)


def _start(config: pytest.Config, kind: str, backend: str, **overrides: Any) -> Topology:
    from redisson_py.testing.errors import TopologyError  # noqa: PLC0415
    from redisson_py.testing.network.support import NetworkUnavailableError  # noqa: PLC0415
    from redisson_py.testing.topologies.bootstrap import start_topology  # noqa: PLC0415

    config.stash[_used_backends].add(backend)
    try:
        return start_topology(kind, backend=backend, **overrides)
    except NetworkUnavailableError as exc:
        pytest.skip(f"network partitions unavailable: {exc}")
    except TopologyError as exc:
        # One sentence, not a traceback from inside the harness.
        pytest.fail(f"could not start the {kind} topology ({backend}): {exc}", pytrace=False)


@pytest.fixture(scope="session")
def _redisson_py_shared(
    redis_backend: str, pytestconfig: pytest.Config
) -> Iterator[_SharedTopologies]:
    shared = _SharedTopologies(redis_backend, pytestconfig)
    yield shared
    shared.stop()


@pytest.fixture
def single_topology(_redisson_py_shared: _SharedTopologies) -> Topology:
    """The session's shared ``single`` topology (one server)."""
    return _redisson_py_shared.get("single")


@pytest.fixture
def master_replica_topology(_redisson_py_shared: _SharedTopologies) -> Topology:
    """The session's shared ``master-replica`` topology (a master, two replicas)."""
    return _redisson_py_shared.get("master-replica")


@pytest.fixture
def replicated_topology(_redisson_py_shared: _SharedTopologies) -> Topology:
    """The session's shared ``replicated`` topology (a master, two replicas, no sentinel;
    its client config is ``replicatedServersConfig``)."""
    return _redisson_py_shared.get("replicated")


@pytest.fixture
def sentinel_topology(_redisson_py_shared: _SharedTopologies) -> Topology:
    """The session's shared ``sentinel`` topology (a master, two replicas, three sentinels)."""
    return _redisson_py_shared.get("sentinel")


@pytest.fixture
def cluster_topology(_redisson_py_shared: _SharedTopologies) -> Topology:
    """The session's shared ``cluster`` topology (three masters, a replica each)."""
    return _redisson_py_shared.get("cluster")


@pytest.fixture
def redlock_topology(_redisson_py_shared: _SharedTopologies) -> Topology:
    """The session's shared ``redlock`` topology (five independent masters)."""
    return _redisson_py_shared.get("redlock")


@pytest.fixture
def topology_factory(
    request: pytest.FixtureRequest, redis_backend: str
) -> Iterator[Callable[..., Topology]]:
    """Start topologies owned by this test: ``topology_factory(kind, backend=None,
    **overrides)``. All are stopped when the test ends, whatever its outcome."""
    created: list[Topology] = []

    def factory(kind: str, backend: str | None = None, **overrides: Any) -> Topology:
        if backend is None:
            # Partitions exist on the process backend only.
            backend = "process" if overrides.get("network") == "namespace" else redis_backend
        topology = _start(request.config, kind, backend, **overrides)
        created.append(topology)
        return topology

    yield factory

    reports = request.node.stash.get(_reports, {})
    failed = any(report.failed for report in reports.values())
    errors: list[str] = []
    for topology in created:
        if failed:
            _print_log_tails(topology)
        topology.unshare()
        try:
            topology.stop()
        except Exception as exc:
            errors.append(str(exc))
    if errors:
        pytest.fail(f"tearing down topologies failed: {'; '.join(errors)}", pytrace=False)


@pytest.fixture(scope="session")
def partitions_supported() -> None:
    """Skip the test, with the reason, unless ``network="namespace"`` topologies (network
    partitions) can run here."""
    from redisson_py.testing.network.support import partition_support  # noqa: PLC0415

    reason = partition_support()
    if reason is not None:
        pytest.skip(reason)


def _print_log_tails(topology: Topology) -> None:
    print(f"\n--- {topology.kind} topology {topology.id} ({topology.backend}) node logs ---")
    for node in topology.nodes:
        lines = node.log().strip().splitlines()[-_LOG_TAIL_LINES:]
        print(f"[{node.name} {node.address} state={node.state}]")
        for line in lines:
            print(f"  {line}")
