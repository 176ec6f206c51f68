"""Fixtures for MultiLock and RedLock: clients on the five independent masters of the
``redlock`` topology, one per master, of the test's flavor."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from redisson_py import Config
from redisson_py.config import ConstantDelay
from redisson_py.testing import Topology
from redisson_py.testing.owners import Flavor


def redlock_configs(topology: Topology, **settings: Any) -> list[Config]:
    """One single-server config per master, with quick retries and ``settings``."""
    configs = []
    for mapping in topology.redisson_configs():
        config = Config.from_dict(mapping)
        config.server_config.retry_delay = ConstantDelay(0.05)
        config.server_config.retry_attempts = 1
        for name, value in settings.items():
            setattr(config, name, value)
        configs.append(config)
    return configs


@pytest.fixture
def redlock_clients(flavor: Flavor) -> Callable[..., list[Any]]:
    """``redlock_clients(topology, **settings)``: one client per master."""

    def make(topology: Topology, **settings: Any) -> list[Any]:
        return [flavor.create_client(c) for c in redlock_configs(topology, **settings)]

    return make


@pytest.fixture
def write_redlock_config() -> Callable[..., str]:
    """``write_redlock_config(topology, path)``: the five configs as one multi-document
    YAML file (what the workload processes read)."""

    def write(topology: Topology, path: Any) -> str:
        # Each document starts with its own "---".
        path.write_text("".join(c.to_yaml() for c in redlock_configs(topology)))
        return str(path)

    return write


@pytest.fixture
def make_redlock_configs() -> Callable[..., list[Config]]:
    """``make_redlock_configs(topology, **settings)``: see :func:`redlock_configs`."""
    return redlock_configs
