"""Defaults equal Redisson's (BaseConfig, BaseMasterSlaveServersConfig, the four sections,
Config), converted to seconds; and the YAML keys are Redisson's."""

from __future__ import annotations

from typing import Any

import pytest

from redisson_py.config import (
    ClusterServersConfig,
    Config,
    ConstantDelay,
    EqualJitterDelay,
    MasterSlaveServersConfig,
    Protocol,
    ReadMode,
    SentinelServersConfig,
    ShardedSubscriptionMode,
    SingleServerConfig,
    SslVerificationMode,
    SubscriptionMode,
)
from redisson_py.core.state.client_state import LockSettings
from redisson_py.core.state.options import lock_settings

# Redisson's BaseConfig field initializers (milliseconds there, seconds here).
BASE = {
    "idle_connection_timeout": 10.0,
    "connect_timeout": 10.0,
    "timeout": 3.0,
    "subscription_timeout": 7.5,
    "retry_attempts": 4,
    "retry_delay": EqualJitterDelay(1.0, 2.0),
    "reconnection_delay": EqualJitterDelay(0.1, 10.0),
    "username": None,
    "password": None,
    "subscriptions_per_connection": 5,
    "client_name": None,
    "ssl_verification_mode": SslVerificationMode.STRICT,
    "ssl_truststore": None,
    "ssl_keystore": None,
    "ssl_keystore_password": None,
    "ping_connection_interval": 30.0,
    "keep_alive": False,
    "tcp_keep_alive_count": 0,
    "tcp_keep_alive_idle": 0,
    "tcp_keep_alive_interval": 0,
    "tcp_user_timeout": 0.0,
    "tcp_no_delay": True,
    "database": 0,
}
MASTER_SLAVE = {
    **BASE,
    "slave_connection_minimum_idle_size": 24,
    "slave_connection_pool_size": 64,
    "failed_slave_reconnection_interval": 3.0,
    "master_connection_minimum_idle_size": 24,
    "master_connection_pool_size": 64,
    "read_mode": ReadMode.SLAVE,
    "subscription_mode": SubscriptionMode.MASTER,
    "subscription_connection_minimum_idle_size": 1,
    "subscription_connection_pool_size": 50,
    "dns_monitoring_interval": 5.0,
}
EXPECTED: dict[type[Any], dict[str, Any]] = {
    SingleServerConfig: {
        **BASE,
        "address": None,
        "subscription_connection_minimum_idle_size": 1,
        "subscription_connection_pool_size": 50,
        "connection_minimum_idle_size": 24,
        "connection_pool_size": 64,
        "dns_monitoring_interval": 5.0,
    },
    MasterSlaveServersConfig: {**MASTER_SLAVE, "master_address": None, "slave_addresses": []},
    SentinelServersConfig: {
        **MASTER_SLAVE,
        "sentinel_addresses": [],
        "master_name": None,
        "sentinel_username": None,
        "sentinel_password": None,
        "scan_interval": 1.0,
        "check_sentinels_list": True,
        "check_slave_status_with_syncing": True,
        "sentinels_discovery": True,
        "nat_mapper": None,
    },
    ClusterServersConfig: {
        **MASTER_SLAVE,
        "node_addresses": [],
        "scan_interval": 5.0,
        "check_slots_coverage": True,
        "check_master_link_status": False,
        "sharded_subscription_mode": ShardedSubscriptionMode.AUTO,
        "nat_mapper": None,
    },
}


@pytest.mark.parametrize("cls", list(EXPECTED), ids=lambda cls: cls.__name__)
def test_section_defaults_are_redissons(cls: type[Any]) -> None:
    section = cls()
    for attr, value in EXPECTED[cls].items():
        assert getattr(section, attr) == value, attr


def test_top_level_defaults_are_redissons() -> None:
    config = Config()
    assert config.lock_watchdog_timeout == 30.0
    assert config.lock_watchdog_batch_size == 100
    assert config.lock_max_hold_time == 0.0  # redisson-py's own key: no cap
    assert config.check_lock_synced_slaves is True
    assert config.slaves_sync_timeout == 1.0
    assert config.protocol is Protocol.RESP2
    assert config.tcp_keep_alive is True  # Config.tcpKeepAlive = true in Redisson's source
    assert config.single_server_config is None
    assert config.cluster_servers_config is None


def test_yaml_keys_are_redissons_camel_case() -> None:
    keys = set(SentinelServersConfig(master_name="m").__class__.__dataclass_fields__)
    assert "master_name" in keys
    section = Config.from_yaml(
        "sentinelServersConfig:\n"
        "  sentinelAddresses: ['redis://127.0.0.1:26379']\n"
        "  masterName: m\n"
        "  failedSlaveReconnectionInterval: 500\n"
        "  subscriptionConnectionMinimumIdleSize: 2\n"
        "  checkSlaveStatusWithSyncing: false\n"
        "  sentinelsDiscovery: false\n"
    ).sentinel_servers_config
    assert section is not None
    assert section.failed_slave_reconnection_interval == 0.5
    assert section.subscription_connection_minimum_idle_size == 2
    assert section.check_slave_status_with_syncing is False
    assert section.sentinels_discovery is False


def test_legacy_retry_interval_is_a_constant_delay() -> None:
    config = Config.from_yaml(
        "singleServerConfig:\n  address: redis://h:1\n  retryInterval: 1500\n"
    )
    assert config.server_config.retry_delay == ConstantDelay(1.5)


def test_minus_one_disables_dns_monitoring() -> None:
    config = Config.from_yaml(
        "singleServerConfig:\n  address: redis://h:1\n  dnsMonitoringInterval: -1\n"
    )
    assert config.server_config.dns_monitoring_interval is None
    assert "dnsMonitoringInterval: -1" in config.to_yaml()


@pytest.mark.parametrize(
    "section", [SingleServerConfig, MasterSlaveServersConfig, SentinelServersConfig]
)
def test_the_lock_settings_defaults_are_the_configs(section: type[Any]) -> None:
    """``LockSettings()`` (what the core's tests and any caller without a config get) is
    what a default config gives a client: its defaults are the config's, written once."""
    defaults, configured = LockSettings(), lock_settings(Config(), section())
    for name in LockSettings.__dataclass_fields__:
        if name != "latch_ttl":  # computed from a jittered delay's draw
            assert getattr(defaults, name) == getattr(configured, name), name
