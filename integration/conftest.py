"""Fixtures shared by the integration suites: the API flavor (sync or asyncio), unique
lock names, and client configs for the harness's topologies with test-friendly retries."""

from __future__ import annotations

import socket
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from redisson_py import Config
from redisson_py.config import ConstantDelay
from redisson_py.testing import Topology
from redisson_py.testing.owners import Flavor


@pytest.fixture(params=["sync", "asyncio"])
def flavor(request: pytest.FixtureRequest) -> Iterator[Flavor]:
    """The sync API (owners are threads) or the asyncio API (owners are tasks)."""
    flavor = Flavor(request.param)
    yield flavor
    flavor.close()


@pytest.fixture
def lock_name() -> str:
    return f"test:lock:{uuid.uuid4().hex[:12]}"


def config_for(topology: Topology, **settings: Any) -> Config:
    """The topology's Redisson config, retrying every 0.1 s, with top-level ``settings``
    (``lock_watchdog_timeout=3.0``...) applied."""
    # A protected topology's YAML names its password as ${VAR}: give it the value.
    config = Config.from_yaml(topology.redisson_yaml(), env=topology.environment())
    config.server_config.retry_delay = ConstantDelay(0.1)
    for name, value in settings.items():
        setattr(config, name, value)
    return config


@pytest.fixture
def topology_config() -> Any:
    """``topology_config(topology, **settings)``: see :func:`config_for`."""
    return config_for


@pytest.fixture
def unused_port() -> Callable[[], int]:
    """``unused_port()``: a 127.0.0.1 port nothing listens on (connections are refused)."""

    def pick() -> int:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port: int = probe.getsockname()[1]
            return port

    return pick
