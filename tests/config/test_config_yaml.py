"""Redisson's YAML as Redisson writes it: tags mapped or ignored (one warning), legacy keys,
environment substitution, safe loading, the sources from_yaml accepts, and the writer."""

from __future__ import annotations

import copy
import errno
import io
import warnings
from pathlib import Path

import pytest
import yaml

from redisson_py.config import (
    ClusterServersConfig,
    Config,
    ConfigError,
    ConfigWarning,
    ConstantDelay,
    DecorrelatedJitterDelay,
    EqualJitterDelay,
    FullJitterDelay,
    HostNatMapper,
    HostPortNatMapper,
    SslVerificationMode,
    TaggedValue,
)
from redisson_py.core.state.options import lock_settings
from redisson_py.errors import ConfigFileError

# A full dump in the shape Redisson's Config.toYAML() writes (cluster mode), with the Java
# runtime settings that redisson-py ignores.
REDISSON_CLUSTER_DUMP = """\
---
clusterServersConfig:
  idleConnectionTimeout: 10000
  connectTimeout: 10000
  timeout: 3000
  retryAttempts: 4
  retryDelay: !<org.redisson.config.EqualJitterDelay> {baseDelay: PT1S, maxDelay: PT2S}
  reconnectionDelay: !<org.redisson.config.EqualJitterDelay> {baseDelay: PT0.1S, maxDelay: PT10S}
  failedSlaveReconnectionInterval: 3000
  failedSlaveNodeDetector: !<org.redisson.client.FailedConnectionDetector> {}
  subscriptionsPerConnection: 5
  clientName: null
  loadBalancer: !<org.redisson.connection.balancer.RoundRobinLoadBalancer> {}
  subscriptionConnectionMinimumIdleSize: 1
  subscriptionConnectionPoolSize: 50
  slaveConnectionMinimumIdleSize: 24
  slaveConnectionPoolSize: 64
  masterConnectionMinimumIdleSize: 24
  masterConnectionPoolSize: 64
  readMode: "SLAVE"
  subscriptionMode: "SLAVE"
  nodeAddresses:
  - "redis://127.0.0.1:7004"
  - "redis://127.0.0.1:7001"
  - "redis://127.0.0.1:7000"
  scanInterval: 1000
  pingConnectionInterval: 30000
tcpKeepAlive: false
tcpNoDelay: true
password: null
username: null
threads: 16
nettyThreads: 32
codec: !<org.redisson.codec.Kryo5Codec> {}
transportMode: "NIO"
"""

REDISSON_SINGLE_DUMP = """\
---
singleServerConfig:
  idleConnectionTimeout: 10000
  connectTimeout: 10000
  timeout: 3000
  retryAttempts: 4
  retryDelay: !<org.redisson.config.EqualJitterDelay> {baseDelay: PT1S, maxDelay: PT2S}
  reconnectionDelay: !<org.redisson.config.EqualJitterDelay> {baseDelay: PT0.1S, maxDelay: PT10S}
  subscriptionsPerConnection: 5
  clientName: null
  address: "redis://127.0.0.1:6379"
  subscriptionConnectionMinimumIdleSize: 1
  subscriptionConnectionPoolSize: 50
  connectionMinimumIdleSize: 24
  connectionPoolSize: 64
  database: 0
  dnsMonitoringInterval: 5000
  dnsMonitoringTimes: 1
password: null
username: null
threads: 16
nettyThreads: 32
codec: !<org.redisson.codec.Kryo5Codec> {}
transportMode: "NIO"
"""


def _load_warnings(text: str) -> tuple[Config, list[warnings.WarningMessage]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        config = Config.from_yaml(text, env={})
    return config, list(caught)


def test_redisson_cluster_dump_loads_with_exactly_one_warning() -> None:
    config, caught = _load_warnings(REDISSON_CLUSTER_DUMP)
    assert len(caught) == 1
    assert issubclass(caught[0].category, ConfigWarning)
    message = str(caught[0].message)
    for key in (
        "clusterServersConfig.failedSlaveNodeDetector (line 10)",
        "clusterServersConfig.loadBalancer (line 13)",
        "threads (line 32)",
        "nettyThreads (line 33)",
        "codec (line 34)",
        "transportMode (line 35)",
    ):
        assert key in message
    assert message.startswith("<string>: ignored 6 Redisson setting(s)")
    assert caught[0].filename == __file__  # points at the caller, not the library
    cluster = config.cluster_servers_config
    assert isinstance(cluster, ClusterServersConfig)
    assert cluster.scan_interval == 1.0
    assert cluster.reconnection_delay == EqualJitterDelay(0.1, 10.0)
    assert config.tcp_keep_alive is False


def test_redisson_single_dump_loads_with_exactly_one_warning() -> None:
    config, caught = _load_warnings(REDISSON_SINGLE_DUMP)
    assert [w.category for w in caught] == [ConfigWarning]
    assert "singleServerConfig.dnsMonitoringTimes" in str(caught[0].message)
    assert config.mode == "single"


def test_mapped_tags_give_no_warning() -> None:
    _, caught = _load_warnings(
        "clusterServersConfig:\n"
        "  nodeAddresses: [redis://127.0.0.1:7000]\n"
        "  retryDelay: !<org.redisson.config.FullJitterDelay> {baseDelay: PT0.5S, maxDelay: PT4S}\n"
        "  natMapper: !<org.redisson.config.HostNatMapper> {hostsMap: {a: b}}\n"
    )
    assert caught == []


@pytest.mark.parametrize(
    ("yaml_value", "expected"),
    [
        ("!<org.redisson.config.ConstantDelay> {delay: PT0.25S}", ConstantDelay(0.25)),
        ("!<org.redisson.config.ConstantDelay> {}", ConstantDelay(0.1)),
        (
            "!<org.redisson.config.EqualJitterDelay> {baseDelay: PT1S, maxDelay: PT2S}",
            EqualJitterDelay(1.0, 2.0),
        ),
        (
            "!<org.redisson.config.FullJitterDelay> {baseDelay: PT0.1S, maxDelay: PT1M}",
            FullJitterDelay(0.1, 60.0),
        ),
        (
            "!<org.redisson.config.DecorrelatedJitterDelay> {baseDelay: PT0.01S, maxDelay: PT3S}",
            DecorrelatedJitterDelay(0.01, 3.0),
        ),
        ("!<org.redisson.config.EqualJitterDelay> {}", EqualJitterDelay(0.1, 1.0)),
        (
            "!!org.redisson.config.EqualJitterDelay {baseDelay: PT1S, maxDelay: PT2S}",
            EqualJitterDelay(1.0, 2.0),
        ),
    ],
)
def test_delay_tags_are_mapped(yaml_value: str, expected: object) -> None:
    config = Config.from_yaml(
        f"singleServerConfig:\n  address: redis://127.0.0.1:6379\n  retryDelay: {yaml_value}\n"
    )
    assert config.server_config.retry_delay == expected
    assert Config.from_yaml(config.to_yaml()) == config


@pytest.mark.parametrize("package", ["org.redisson.config", "org.redisson.api"])
def test_nat_mapper_tags_are_mapped(package: str) -> None:
    config = Config.from_yaml(
        "sentinelServersConfig:\n"
        "  masterName: mymaster\n"
        "  sentinelAddresses: [redis://127.0.0.1:26379]\n"
        f"  natMapper: !<{package}.HostPortNatMapper>\n"
        "    hostsPortMap: {'redis-master:6379': '127.0.0.1:16379'}\n"
    )
    section = config.sentinel_servers_config
    assert section is not None
    assert section.nat_mapper == HostPortNatMapper({"redis-master:6379": "127.0.0.1:16379"})
    hosts = Config.from_yaml(
        "clusterServersConfig:\n"
        "  nodeAddresses: [redis://127.0.0.1:7000]\n"
        f"  natMapper: !<{package}.HostNatMapper> {{hostsMap: {{'node-1.lan': '127.0.0.1'}}}}\n"
    ).cluster_servers_config
    assert hosts is not None
    assert hosts.nat_mapper == HostNatMapper({"node-1.lan": "127.0.0.1"})


def test_legacy_nat_map_and_default_mapper() -> None:
    cluster = Config.from_yaml(
        "clusterServersConfig:\n"
        "  nodeAddresses: [redis://127.0.0.1:7000]\n"
        "  natMap: {'node-1.internal:7000': '127.0.0.1:17000'}\n"
    ).cluster_servers_config
    assert cluster is not None
    assert cluster.nat_mapper == HostPortNatMapper({"node-1.internal:7000": "127.0.0.1:17000"})
    direct = Config.from_yaml(
        "clusterServersConfig:\n"
        "  nodeAddresses: [redis://127.0.0.1:7000]\n"
        "  natMapper: !<org.redisson.config.DefaultNatMapper> {}\n"
    ).cluster_servers_config
    assert direct is not None
    assert direct.nat_mapper is None


def test_legacy_ssl_endpoint_identification() -> None:
    config = Config.from_yaml(
        "singleServerConfig:\n  address: rediss://h:1\n  sslEnableEndpointIdentification: false\n"
    )
    assert config.server_config.ssl_verification_mode is SslVerificationMode.NONE


def test_legacy_subscription_pool_spelling() -> None:
    cluster = Config.from_yaml(
        "clusterServersConfig:\n"
        "  nodeAddresses: [redis://127.0.0.1:7000]\n"
        "  slaveSubscriptionConnectionPoolSize: 7\n"
    ).cluster_servers_config
    assert cluster is not None
    assert cluster.subscription_connection_pool_size == 7


def test_truststore_file_urls() -> None:
    for text, path in [
        ("file:/etc/ssl/ca.pem", "/etc/ssl/ca.pem"),
        ("file:///etc/ssl/ca.pem", "/etc/ssl/ca.pem"),
        ("file://localhost/etc/ssl/ca.pem", "/etc/ssl/ca.pem"),
        ("file:certs/ca.pem", "certs/ca.pem"),
        ("certs/ca.pem", "certs/ca.pem"),
    ]:
        config = Config.from_yaml(
            f"singleServerConfig:\n  address: rediss://h:1\n  sslTruststore: {text}\n"
        )
        assert config.server_config.ssl_truststore == path
        assert Config.from_yaml(config.to_yaml()) == config


def test_top_level_credentials_apply_where_the_section_leaves_them_unset() -> None:
    config = Config.from_yaml(
        "singleServerConfig:\n"
        "  address: rediss://h:1\n"
        "  sslTruststore: file:/section/ca.pem\n"
        "username: app\n"
        "password: top-secret\n"
        "sslTruststore: file:/top/ca.pem\n"
        "sslKeystore: file:/top/client.pem\n"
        "sslVerificationMode: CA_ONLY\n"
    )
    raw = config.server_config
    assert raw.password is None  # the section as written
    effective = config.effective_server_config()
    assert effective.username == "app"
    assert effective.password is not None
    assert effective.password.reveal() == "top-secret"
    assert effective.ssl_truststore == "/section/ca.pem"  # the section's own value wins
    assert effective.ssl_keystore == "/top/client.pem"
    assert effective.ssl_verification_mode is SslVerificationMode.CA_ONLY
    assert effective.keep_alive is True  # top-level tcpKeepAlive defaults to true
    assert Config.from_yaml(config.to_yaml()) == config


# -- safe loading -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "payload",
    [
        "!!python/object:os.system {}",
        "!!python/object/apply:os.system ['true']",
        "!!python/name:os.system ''",
        "!!python/tuple [1, 2]",
        "!<tag:yaml.org,2002:python/object/new:os.system> {}",
    ],
)
def test_python_tags_are_refused_anywhere(payload: str) -> None:
    text = f"singleServerConfig:\n  address: redis://h:1\nnettyHook: {payload}\n"
    with pytest.raises(ConfigError, match="unsupported YAML tag") as info:
        Config.from_yaml(text)
    assert info.value.path == "nettyHook"
    assert info.value.line == 3


def test_java_tags_are_inert_data() -> None:
    # A Java class tag on an ignored key is never looked at, let alone constructed.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConfigWarning)
        config = Config.from_yaml(
            "singleServerConfig:\n  address: redis://h:1\n"
            "codec: !<java.lang.Runtime> {exec: 'rm -rf /'}\n"
        )
    assert config.mode == "single"


def test_alias_bomb_is_bounded() -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 9):
        prev = f"*a{i - 1}"
        lines.append(f"a{i}: &a{i} [{', '.join([prev] * 10)}]")
    with pytest.raises(ConfigError, match="too large"):
        Config.from_yaml("\n".join(lines) + "\n")


def test_merge_keys() -> None:
    merged = Config.from_yaml(
        "singleServerConfig:\n"
        "  <<: {timeout: 5000, retryAttempts: 2}\n"
        "  address: redis://h:1\n"
        "  retryAttempts: 7\n"
    )
    assert merged.server_config.timeout == 5.0
    assert merged.server_config.retry_attempts == 7  # explicit keys win over merged ones


# -- environment ----------------------------------------------------------------------------


def test_env_substitution_types_plain_scalars_again() -> None:
    config = Config.from_yaml(
        "singleServerConfig:\n"
        "  address: redis://${HOST}:${PORT:-6379}\n"
        "  database: ${DB}\n"
        "  timeout: ${TIMEOUT:-2500}\n"
        "  clientName: '${NAME:-app}'\n"
        "  keepAlive: ${KEEPALIVE}\n",
        env={"HOST": "127.0.0.1", "DB": "3", "KEEPALIVE": "true", "TIMEOUT": ""},
    )
    section = config.single_server_config
    assert section is not None
    assert section.address == "redis://127.0.0.1:6379"
    assert section.database == 3
    assert section.timeout == 2.5  # an empty variable takes the default, as in the shell
    assert section.client_name == "app"
    assert section.keep_alive is True


def test_env_defaults_to_os_environ(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REDISSON_PY_TEST_PORT", "7777")
    config = Config.from_yaml(
        "singleServerConfig:\n  address: redis://127.0.0.1:${REDISSON_PY_TEST_PORT}\n"
    )
    assert config.server_config.seed_addresses()[0].port == 7777


def test_env_substituted_number_for_an_int_field_in_quotes_is_fine() -> None:
    config = Config.from_yaml(
        'singleServerConfig:\n  address: redis://h:1\n  connectionPoolSize: "${POOL}"\n',
        env={"POOL": "80"},
    )
    assert config.server_config.connection_pool_size == 80


# -- sources --------------------------------------------------------------------------------

TEXT = "singleServerConfig:\n  address: redis://127.0.0.1:6379\n"


def test_sources(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(TEXT)
    expected = Config.from_yaml(TEXT)
    assert Config.from_yaml(path) == expected
    assert Config.from_yaml(str(path)) == expected
    assert Config.from_yaml(io.StringIO(TEXT)) == expected
    assert Config.from_yaml(io.BytesIO(TEXT.encode())) == expected
    with path.open() as handle:
        assert Config.from_yaml(handle) == expected
    for missing in (tmp_path / "missing.yaml", str(tmp_path / "missing.yaml")):
        with pytest.raises(ConfigFileError, match=r"missing\.yaml: cannot read") as raised:
            Config.from_yaml(missing)
        assert isinstance(raised.value, OSError) and raised.value.errno == errno.ENOENT


def test_stream_errors_name_the_stream(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text("singleServerConfig:\n  address: nowhere\n")
    with path.open() as handle, pytest.raises(ConfigError) as info:
        Config.from_yaml(handle)
    assert str(info.value).startswith(f"{path}, line 2: singleServerConfig.address: ")
    with pytest.raises(ConfigError, match=r"^<stream>, line 2: "):
        Config.from_yaml(io.StringIO("singleServerConfig:\n  address: nowhere\n"))


# -- writing ----------------------------------------------------------------------------------


def test_to_yaml_looks_like_redissons() -> None:
    config = Config()
    config.use_cluster_servers(
        node_addresses=["redis://127.0.0.1:7000"],
        nat_mapper=HostPortNatMapper({"node-1.internal:7000": "127.0.0.1:7000"}),
    )
    text = config.to_yaml()
    assert text.startswith(
        '---\nclusterServersConfig:\n  nodeAddresses:\n  - "redis://127.0.0.1:7000"\n'
    )
    assert (
        "  retryDelay: !<org.redisson.config.EqualJitterDelay> {baseDelay: PT1S, maxDelay: PT2S}\n"
        in text
    )
    assert '  readMode: "SLAVE"\n' in text
    assert "  scanInterval: 5000\n" in text
    assert "lockWatchdogTimeout: 30000\n" in text
    assert "!<org.redisson.config.HostPortNatMapper>" in text
    # PyYAML's safe loader reads it too (tags aside), so other tools can.
    assert isinstance(yaml.compose(text, Loader=yaml.SafeLoader), yaml.MappingNode)


def test_to_dict_shape() -> None:
    config = Config(lock_watchdog_timeout=10.0)
    config.use_single_server(address="redis://h:1", retry_delay=ConstantDelay(0.5))
    data = config.to_dict(include_defaults=False)
    assert data == {
        "singleServerConfig": {
            "address": "redis://h:1",
            "retryDelay": TaggedValue("org.redisson.config.ConstantDelay", {"delay": "PT0.5S"}),
        },
        "lockWatchdogTimeout": 10000,
    }
    assert Config.from_dict(data) == config


def test_from_yaml_all_reads_one_config_per_document() -> None:
    text = (
        "singleServerConfig:\n  address: redis://127.0.0.1:6390\n"
        "---\n"
        "singleServerConfig:\n  address: redis://127.0.0.1:6391\n"
        "---\n"
        "singleServerConfig:\n  address: redis://127.0.0.1\n"
    )
    with pytest.raises(ConfigError) as info:
        Config.from_yaml_all(text, env={})
    assert info.value.line == 8  # lines count through the whole stream
    configs = Config.from_yaml_all(text.rsplit("---\n", 1)[0], env={})
    assert [c.server_config.seed_addresses()[0].port for c in configs] == [6390, 6391]


def test_text_settings_take_number_like_scalars_as_written() -> None:
    # Redisson reads these as strings; YAML would type them as numbers (0123 as octal 83).
    config = Config.from_yaml(
        "singleServerConfig:\n"
        "  address: redis://127.0.0.1:6379\n"
        "  password: 0123\n"
        "  clientName: 1e3\n"
        "username: true\n"
    )
    section = config.server_config
    assert section.password is not None
    assert section.password.reveal() == "0123"
    assert section.client_name == "1e3"
    assert config.username == "true"
    assert Config.from_yaml(config.to_yaml()) == config


def test_configs_copy() -> None:
    config = Config.from_yaml(TEXT)
    clone = copy.deepcopy(config)
    assert clone == config
    assert clone.server_config is not config.server_config


def test_lock_max_hold_time_is_milliseconds_in_yaml_and_reaches_the_lock_settings() -> None:
    text = "singleServerConfig:\n  address: redis://h:1\nlockMaxHoldTime: 90000\n"
    config = Config.from_yaml(text)
    assert config.lock_max_hold_time == 90.0
    assert "lockMaxHoldTime: 90000\n" in config.to_yaml()
    assert config.server_config is not None
    assert lock_settings(config, config.server_config).max_hold_time == 90.0
    config.lock_max_hold_time = 0.0  # no cap
    assert lock_settings(config, config.server_config).max_hold_time is None


def test_to_yaml_leaves_out_keys_redisson_3_lacks_at_their_default() -> None:
    """Redisson's YAML loader refuses a key it does not know: redisson-py's own keys and
    Redisson 4's top-level connection keys are written only when set (the real
    Redisson 3.52 and 4.7 read the rest: integration/interop/test_java_lock.py)."""
    config = Config()
    config.use_single_server().address = "redis://127.0.0.1:6379"
    written = config.to_dict()
    for key in ("lockMaxHoldTime", "lockSyncMode", "sslVerificationMode", "tcpKeepAlive"):
        assert key not in written
    assert "lockWatchdogTimeout" in written  # Redisson's own keys keep their defaults
    assert Config.from_yaml(config.to_yaml()) == config
    config.lock_max_hold_time = 60
    assert config.to_dict()["lockMaxHoldTime"] == 60000
    assert "lockMaxHoldTime: 60000" in config.to_yaml()
