"""``replicatedServersConfig`` (Redisson's replicated mode): Redisson's keys and
defaults, the builder, YAML both ways, and the key without effect yet."""

from __future__ import annotations

import warnings

import pytest

from redisson_py.config import Config, ConfigError, ConfigWarning, ReplicatedServersConfig

YAML = """\
replicatedServersConfig:
  nodeAddresses:
  - "redis://127.0.0.1:6379"
  - "redis://127.0.0.1:6380"
  scanInterval: 2000
  database: 3
  timeout: 1500
"""


def test_redissons_defaults() -> None:
    section = ReplicatedServersConfig()
    assert section.node_addresses == []
    assert section.scan_interval == 1.0  # Redisson: 1000 ms
    assert section.monitor_ip_changes is False
    assert section.database == 0
    assert section.timeout == 3.0
    assert section.master_connection_pool_size == 64


def test_the_builder_selects_replicated_mode() -> None:
    config = Config()
    section = config.use_replicated_servers(
        ["redis://127.0.0.1:6379", "redis://127.0.0.1:6380"], scan_interval=0.5
    )
    assert isinstance(section, ReplicatedServersConfig)
    assert config.replicated_servers_config is section
    assert config.mode == "replicated"
    assert section.scan_interval == 0.5
    config.validate()
    with pytest.raises(ConfigError, match="already in use"):
        config.use_single_server("redis://127.0.0.1:6379")


def test_yaml_is_read_in_milliseconds_and_written_back() -> None:
    config = Config.from_yaml(YAML)
    section = config.server_config
    assert isinstance(section, ReplicatedServersConfig)
    assert section.node_addresses == ["redis://127.0.0.1:6379", "redis://127.0.0.1:6380"]
    assert (section.scan_interval, section.database, section.timeout) == (2.0, 3, 1.5)
    assert Config.from_yaml(config.to_yaml()) == config
    assert "scanInterval: 2000" in config.to_yaml()


def test_seed_addresses_name_their_key() -> None:
    config = Config.from_yaml(YAML)
    assert [a.port for a in config.server_config.seed_addresses()] == [6379, 6380]


def test_no_node_is_refused_with_its_line() -> None:
    with pytest.raises(ConfigError, match="nodeAddresses"):
        Config.from_yaml("replicatedServersConfig:\n  scanInterval: 1000\n")


def test_a_zero_scan_interval_is_refused() -> None:
    with pytest.raises(ConfigError, match="scanInterval"):
        Config.from_yaml(YAML.replace("scanInterval: 2000", "scanInterval: 0"))


def test_monitor_ip_changes_is_read_and_takes_effect_without_a_warning() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        config = Config.from_yaml(YAML + "  monitorIPChanges: true\n")
    assert config.server_config.monitor_ip_changes is True  # type: ignore[union-attr]


def test_dns_monitoring_interval_is_said_to_have_no_effect_in_replicated_mode() -> None:
    # Replicated mode re-resolves at each scan with monitorIPChanges, as Redisson's does.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        Config.from_yaml(YAML + "  dnsMonitoringInterval: 1000\n")
    said = [str(w.message) for w in caught if issubclass(w.category, ConfigWarning)]
    assert any("dnsMonitoringInterval" in text and "monitorIPChanges" in text for text in said)


def test_the_default_yaml_warns_of_nothing() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Config.from_yaml(YAML)
