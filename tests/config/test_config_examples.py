"""Every example under config/ loads, validates, and survives a YAML round trip."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from redisson_py.config import (
    Config,
    EqualJitterDelay,
    HostPortNatMapper,
    ShardedSubscriptionMode,
    SubscriptionMode,
)

CONFIG_DIR = Path(__file__).resolve().parents[2] / "config"
EXAMPLES = sorted(CONFIG_DIR.rglob("*.yaml"))

EXPECTED_MODES = {
    "single.yaml": "single",
    "master-slave.yaml": "master_slave",
    "sentinel.yaml": "sentinel",
    "cluster.yaml": "cluster",
    "replicated.yaml": "replicated",
    "redlock/node1.yaml": "single",
    "redlock/node2.yaml": "single",
    "redlock/node3.yaml": "single",
}


def _name(path: Path) -> str:
    return path.relative_to(CONFIG_DIR).as_posix()


def test_every_topology_has_an_example() -> None:
    assert {_name(p) for p in EXAMPLES} == set(EXPECTED_MODES)


@pytest.mark.parametrize("path", EXAMPLES, ids=_name)
def test_example_loads_without_warnings_and_round_trips(path: Path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the examples use only settings that mean something
        config = Config.from_yaml(path, env={})
    assert config.mode == EXPECTED_MODES[_name(path)]
    config.validate()
    again = Config.from_yaml(config.to_yaml(), env={})
    assert again == config
    assert Config.from_dict(config.to_dict()) == config
    assert Config.from_yaml(config.to_yaml(include_defaults=False), env={}) == config
    for address in config.server_config.seed_addresses():
        assert address.host == "127.0.0.1"  # examples never aim at another machine


def test_single_example_reads_the_port_from_the_environment() -> None:
    path = CONFIG_DIR / "single.yaml"
    assert Config.from_yaml(path, env={}).server_config.seed_addresses()[0].port == 6379
    config = Config.from_yaml(path, env={"REDIS_PORT": "16379"})
    assert config.single_server_config is not None
    assert config.single_server_config.address == "redis://127.0.0.1:16379"


def test_redlock_examples_are_independent_masters() -> None:
    ports = set()
    for index in (1, 2, 3):
        config = Config.from_yaml(CONFIG_DIR / "redlock" / f"node{index}.yaml", env={})
        ports.add(config.server_config.seed_addresses()[0].port)
    assert len(ports) == 3


def test_example_values_are_typed() -> None:
    sentinel = Config.from_yaml(CONFIG_DIR / "sentinel.yaml", env={}).sentinel_servers_config
    assert sentinel is not None
    assert sentinel.master_name == "mymaster"
    assert sentinel.subscription_mode is SubscriptionMode.MASTER
    assert sentinel.scan_interval == 1.0
    assert isinstance(sentinel.nat_mapper, HostPortNatMapper)
    assert sentinel.nat_mapper.map("redis-master", 6379) == ("127.0.0.1", 6379)
    cluster = Config.from_yaml(CONFIG_DIR / "cluster.yaml", env={}).cluster_servers_config
    assert cluster is not None
    assert cluster.sharded_subscription_mode is ShardedSubscriptionMode.AUTO
    assert cluster.retry_delay == EqualJitterDelay(1.0, 2.0)
    assert len(cluster.node_addresses) == 3
