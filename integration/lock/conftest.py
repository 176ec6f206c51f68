"""Fixtures for the lock's behaviour tests: each test runs for the sync and the asyncio
API (``flavor``, from integration/conftest.py) on the single, sentinel and cluster
topologies (``topology``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from redisson_py import Config
from redisson_py.testing import Topology
from redisson_py.testing.owners import Flavor


@pytest.fixture(params=["single", "sentinel", "cluster"])
def topology(request: pytest.FixtureRequest) -> Topology:
    fixture: Topology = request.getfixturevalue(f"{request.param}_topology")
    return fixture


@pytest.fixture
def make_config(topology: Topology, topology_config: Any) -> Callable[..., Config]:
    """``make_config(**settings)``: the topology's config with ``settings`` applied."""
    return lambda **settings: topology_config(topology, **settings)


@pytest.fixture
def make_client(flavor: Flavor, make_config: Callable[..., Config]) -> Callable[..., Any]:
    """``make_client(**settings)``: a client of the flavor on the topology."""
    return lambda **settings: flavor.create_client(make_config(**settings))
