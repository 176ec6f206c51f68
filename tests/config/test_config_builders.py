"""Building configs in code: use_* builders, coercing attributes, validation without YAML."""

from __future__ import annotations

import pytest

from redisson_py.config import (
    ClusterServersConfig,
    Config,
    ConfigError,
    ConstantDelay,
    MasterSlaveServersConfig,
    ReadMode,
    Secret,
    SentinelServersConfig,
    SingleServerConfig,
    SslVerificationMode,
)


def test_use_single_server_returns_its_section() -> None:
    config = Config()
    section = config.use_single_server(address="redis://127.0.0.1:6379", timeout=1.5)
    assert isinstance(section, SingleServerConfig)
    assert config.single_server_config is section
    assert config.server_config is section
    assert config.mode == "single"
    assert section.timeout == 1.5
    config.validate()


def test_each_builder_selects_its_mode() -> None:
    ms = Config()
    section = ms.use_master_slave_servers(
        master_address="redis://127.0.0.1:6379", slave_addresses=["redis://127.0.0.1:6380"]
    )
    assert isinstance(section, MasterSlaveServersConfig)
    assert ms.mode == "master_slave"
    sentinel = Config()
    s_section = sentinel.use_sentinel_servers(
        master_name="mymaster", sentinel_addresses=["redis://127.0.0.1:26379"]
    )
    assert isinstance(s_section, SentinelServersConfig)
    assert sentinel.mode == "sentinel"
    cluster = Config()
    c_section = cluster.use_cluster_servers(node_addresses=["redis://127.0.0.1:7000"])
    assert isinstance(c_section, ClusterServersConfig)
    assert cluster.mode == "cluster"
    for config in (ms, sentinel, cluster):
        config.validate()


def test_a_second_topology_is_refused() -> None:
    config = Config()
    config.use_single_server(address="redis://127.0.0.1:6379")
    with pytest.raises(ConfigError, match="singleServerConfig is already in use") as info:
        config.use_cluster_servers(node_addresses=["redis://127.0.0.1:7000"])
    assert info.value.path == "clusterServersConfig"
    assert config.cluster_servers_config is None


def test_the_same_topology_again_returns_the_same_section() -> None:
    config = Config()
    first = config.use_single_server(address="redis://127.0.0.1:6379")
    second = config.use_single_server(database=2)
    assert second is first
    assert first.database == 2
    assert first.address == "redis://127.0.0.1:6379"


def test_unknown_builder_field_suggests() -> None:
    with pytest.raises(
        ConfigError, match=r"singleServerConfig\.adress: unknown setting; did you mean 'address'\?"
    ):
        Config().use_single_server(adress="redis://127.0.0.1:6379")


def test_attributes_are_coerced() -> None:
    section = SingleServerConfig(address="redis://h:1", password="pw")  # type: ignore[arg-type]
    assert section.password == Secret("pw")
    section.ssl_verification_mode = "ca_only"  # type: ignore[assignment]
    assert section.ssl_verification_mode is SslVerificationMode.CA_ONLY
    cluster = ClusterServersConfig(node_addresses=("redis://h:1",))  # type: ignore[arg-type]
    assert cluster.node_addresses == ["redis://h:1"]
    cluster.read_mode = "MASTER"  # type: ignore[assignment]
    assert cluster.read_mode is ReadMode.MASTER


def test_a_typo_in_an_attribute_is_an_error() -> None:
    section = SingleServerConfig()
    with pytest.raises(AttributeError, match="did you mean 'address'"):
        section.adress = "redis://h:1"  # type: ignore[attr-defined]


def test_code_built_values_are_validated() -> None:
    config = Config()
    section = config.use_single_server(address="redis://h:1")
    # Numbers are range-checked as they are assigned (types at validation).
    with pytest.raises(ConfigError, match=r"^singleServerConfig\.timeout: must not be negative$"):
        section.timeout = -1.0
    with pytest.raises(ConfigError, match=r"^singleServerConfig\.timeout: must be greater than 0$"):
        section.timeout = 0.0
    assert section.timeout == 3.0
    cluster = Config()
    cluster.use_cluster_servers(node_addresses=["redis://h:1"]).read_mode = "NOPE"  # type: ignore[assignment]
    with pytest.raises(ConfigError, match="readMode: unknown value 'NOPE'; expected one of"):
        cluster.validate()


def test_code_built_type_errors() -> None:
    config = Config()
    section = config.use_single_server(address="redis://h:1")
    section.retry_attempts = "many"  # type: ignore[assignment]
    with pytest.raises(ConfigError, match="retryAttempts: expected an integer"):
        config.validate()
    section.retry_attempts = 4
    section.retry_delay = 1.5  # type: ignore[assignment]
    with pytest.raises(ConfigError, match="retryDelay: expected a DelayStrategy"):
        config.validate()
    section.retry_delay = ConstantDelay(1.5)
    config.validate()


def test_topology_errors_without_yaml() -> None:
    with pytest.raises(ConfigError, match=r"^no server section"):
        Config().validate()
    with pytest.raises(ConfigError):
        _ = Config().mode
    config = Config(
        single_server_config=SingleServerConfig(address="redis://h:1"),
        cluster_servers_config=ClusterServersConfig(node_addresses=["redis://h:2"]),
    )
    with pytest.raises(ConfigError, match="only one server section may be set"):
        config.validate()


def test_seed_addresses() -> None:
    config = Config()
    config.use_master_slave_servers(
        master_address="rediss://127.0.0.1:6379",
        slave_addresses=["redis://127.0.0.1:6380", "redis://[::1]:6381"],
    )
    addresses = config.server_config.seed_addresses()
    assert [str(a) for a in addresses] == [
        "rediss://127.0.0.1:6379",
        "redis://127.0.0.1:6380",
        "redis://[::1]:6381",
    ]
    assert addresses[0].tls
