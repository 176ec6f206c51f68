"""Fixtures for the lock family's tests: each test runs for the sync and the asyncio API
(``flavor``) on the single and the cluster topology (``family_topology``)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from redisson_py.testing import Topology
from redisson_py.testing.faults.proxy import ReplyDropper
from redisson_py.testing.owners import Flavor


@pytest.fixture(params=["single", "cluster"])
def family_topology(request: pytest.FixtureRequest) -> Topology:
    topology: Topology = request.getfixturevalue(f"{request.param}_topology")
    return topology


@pytest.fixture
def make_client(
    flavor: Flavor, family_topology: Topology, topology_config: Any
) -> Callable[..., Any]:
    """``make_client(**settings)``: a client of the flavor on the topology (shut down by
    the flavor at the end of the test)."""
    return lambda **settings: flavor.create_client(topology_config(family_topology, **settings))


@pytest.fixture
def proxy(single_topology: Topology) -> Iterator[ReplyDropper]:
    """A loopback proxy to the single server that loses the replies it is told to (see
    ``object_helpers.client_through``)."""
    with ReplyDropper(single_topology.master().port) as dropper:
        yield dropper
