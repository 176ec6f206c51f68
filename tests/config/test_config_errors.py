"""Malformed configs: each raises ConfigError naming the key path and the YAML line, and
none of them lets the configured password into the message, the repr or the traceback."""

from __future__ import annotations

import traceback
import warnings
from dataclasses import dataclass

import pytest

from redisson_py.config import Config, ConfigError

PASSWORD = "Pa55-LEAK-CHECK-7f3a"


@dataclass(frozen=True)
class Case:
    id: str
    text: str
    path: str | None
    line: int | None
    fragment: str


def _case(id: str, text: str, path: str | None, line: int | None, fragment: str) -> Case:
    return Case(id, text.replace("PW", PASSWORD), path, line, fragment)


SINGLE = "singleServerConfig:\n  address: redis://127.0.0.1:6379\n  password: PW\n"

CASES = [
    _case(
        "unknown key with suggestion",
        "singleServerConfig:\n  password: PW\n  adress: redis://127.0.0.1:6379\n",
        "singleServerConfig.adress",
        3,
        "unknown key; did you mean 'address'?",
    ),
    _case(
        "unknown top-level key",
        "password: PW\nlockWatchdogTimout: 1000\n" + SINGLE,
        "lockWatchdogTimout",
        2,
        "did you mean 'lockWatchdogTimeout'?",
    ),
    _case(
        "snake_case key",
        SINGLE + "  connect_timeout: 1000\n",
        "singleServerConfig.connect_timeout",
        4,
        "did you mean 'connectTimeout'?",
    ),
    _case(
        "key of another section",
        "clusterServersConfig:\n  password: PW\n  nodeAddresses: [redis://127.0.0.1:7000]\n"
        "  masterName: mymaster\n",
        "clusterServersConfig.masterName",
        4,
        "belongs in sentinelServersConfig",
    ),
    _case(
        "top-level key inside a section",
        SINGLE + "  lockWatchdogTimeout: 1000\n",
        "singleServerConfig.lockWatchdogTimeout",
        4,
        "belongs at the top level",
    ),
    _case(
        "two topology sections",
        SINGLE + "clusterServersConfig:\n  nodeAddresses: [redis://127.0.0.1:7000]\n",
        "clusterServersConfig",
        4,
        "only one server section",
    ),
    _case(
        "no topology section",
        "password: PW\nlockWatchdogTimeout: 1000\n",
        None,
        1,
        "no server section",
    ),
    _case(
        "null topology section",
        "password: PW\nsingleServerConfig:\n",
        None,
        1,
        "no server section",
    ),
    _case(
        "section is not a mapping",
        "password: PW\nsingleServerConfig: redis://127.0.0.1:6379\n",
        "singleServerConfig",
        2,
        "expected a mapping of settings",
    ),
    _case(
        "proxy mode",
        "password: PW\nproxyServersConfig:\n  addresses: [redis://127.0.0.1:7000]\n",
        "proxyServersConfig",
        2,
        "not supported",
    ),
    _case(
        "wrong type: string for a time",
        SINGLE + "  timeout: soon\n",
        "singleServerConfig.timeout",
        4,
        "expected a number of milliseconds",
    ),
    _case(
        "wrong type: float for a pool size",
        SINGLE + "  connectionPoolSize: 1.5\n",
        "singleServerConfig.connectionPoolSize",
        4,
        "expected an integer",
    ),
    _case(
        "wrong type: bool",
        "clusterServersConfig:\n  password: PW\n  nodeAddresses: [redis://127.0.0.1:7000]\n"
        "  checkSlotsCoverage: maybe\n",
        "clusterServersConfig.checkSlotsCoverage",
        4,
        "expected true or false",
    ),
    _case(
        "wrong type: string for an address list",
        "clusterServersConfig:\n  password: PW\n  nodeAddresses: redis://127.0.0.1:7000\n",
        "clusterServersConfig.nodeAddresses",
        3,
        "expected a list of addresses",
    ),
    _case(
        "wrong type: list for a password",
        "singleServerConfig:\n  address: redis://127.0.0.1:6379\n  password: [PW]\n",
        "singleServerConfig.password",
        3,
        "expected a string, got a list",
    ),
    _case(
        "negative timeout",
        SINGLE + "  timeout: -5\n",
        "singleServerConfig.timeout",
        4,
        "must not be negative",
    ),
    _case(
        "zero scan interval",
        "clusterServersConfig:\n  password: PW\n  nodeAddresses: [redis://127.0.0.1:7000]\n"
        "  scanInterval: 0\n",
        "clusterServersConfig.scanInterval",
        4,
        "must be greater than 0",
    ),
    _case(
        "negative lock watchdog timeout",
        SINGLE + "lockWatchdogTimeout: -1\n",
        "lockWatchdogTimeout",
        4,
        "must not be negative",
    ),
    _case(
        "negative retry attempts",
        SINGLE + "  retryAttempts: -1\n",
        "singleServerConfig.retryAttempts",
        4,
        "must be at least 0",
    ),
    _case(
        "address without scheme",
        "singleServerConfig:\n  password: PW\n  address: 127.0.0.1:6379\n",
        "singleServerConfig.address",
        3,
        "has no scheme",
    ),
    _case(
        "address with unsupported scheme",
        "singleServerConfig:\n  password: PW\n  address: http://127.0.0.1:6379\n",
        "singleServerConfig.address",
        3,
        "unsupported scheme 'http'",
    ),
    _case(
        "address without port",
        "singleServerConfig:\n  password: PW\n  address: redis://127.0.0.1\n",
        "singleServerConfig.address",
        3,
        "has no port",
    ),
    _case(
        "address with port out of range",
        "clusterServersConfig:\n  password: PW\n  nodeAddresses:\n  - redis://127.0.0.1:7000\n"
        "  - redis://127.0.0.1:70000\n",
        "clusterServersConfig.nodeAddresses[1]",
        5,
        "bad port '70000'",
    ),
    _case(
        "address with a non-numeric port",
        "masterSlaveServersConfig:\n  password: PW\n  masterAddress: redis://127.0.0.1:6379\n"
        "  slaveAddresses:\n  - redis://127.0.0.1:six\n",
        "masterSlaveServersConfig.slaveAddresses[0]",
        5,
        "bad port 'six'",
    ),
    _case(
        "password inside a malformed address URL",
        "singleServerConfig:\n  address: redis://admin:PW@127.0.0.1\n",
        "singleServerConfig.address",
        2,
        "'redis://***@127.0.0.1' has no port",
    ),
    _case(
        "missing address",
        "singleServerConfig:\n  password: PW\n  timeout: 1000\n",
        "singleServerConfig.address",
        1,
        "is required",
    ),
    _case(
        "sentinel without masterName",
        "sentinelServersConfig:\n  password: PW\n  sentinelAddresses: [redis://127.0.0.1:26379]\n",
        "sentinelServersConfig.masterName",
        1,
        "is required",
    ),
    _case(
        "empty sentinel list",
        "sentinelServersConfig:\n  password: PW\n  masterName: mymaster\n  sentinelAddresses: []\n",
        "sentinelServersConfig.sentinelAddresses",
        4,
        "at least one address",
    ),
    _case(
        "empty cluster node list",
        "clusterServersConfig:\n  password: PW\n  nodeAddresses: []\n",
        "clusterServersConfig.nodeAddresses",
        3,
        "at least one address",
    ),
    _case(
        "unknown readMode",
        "sentinelServersConfig:\n  password: PW\n  masterName: m\n"
        "  sentinelAddresses: [redis://127.0.0.1:26379]\n  readMode: SLAVES\n",
        "sentinelServersConfig.readMode",
        5,
        "expected one of SLAVE, MASTER, MASTER_SLAVE",
    ),
    _case(
        "unknown sslVerificationMode",
        SINGLE + "  sslVerificationMode: LOOSE\n",
        "singleServerConfig.sslVerificationMode",
        4,
        "expected one of NONE, CA_ONLY, STRICT",
    ),
    _case(
        "unknown protocol",
        SINGLE + "protocol: RESP4\n",
        "protocol",
        4,
        "expected one of RESP2, RESP3",
    ),
    _case(
        "bad duration",
        SINGLE
        + "  retryDelay: !<org.redisson.config.EqualJitterDelay> {baseDelay: 1s, maxDelay: PT2S}\n",
        "singleServerConfig.retryDelay.baseDelay",
        4,
        "bad duration '1s'",
    ),
    _case(
        "delay with a missing bound",
        SINGLE + "  retryDelay: !<org.redisson.config.FullJitterDelay> {baseDelay: PT1S}\n",
        "singleServerConfig.retryDelay",
        4,
        "needs both baseDelay and maxDelay",
    ),
    _case(
        "delay without a tag",
        SINGLE + "  retryDelay: {baseDelay: PT1S, maxDelay: PT2S}\n",
        "singleServerConfig.retryDelay",
        4,
        "expected a tagged delay",
    ),
    _case(
        "unsupported delay class",
        SINGLE + "  reconnectionDelay: !<com.example.MyDelay> {}\n",
        "singleServerConfig.reconnectionDelay",
        4,
        "unsupported delay class 'com.example.MyDelay'",
    ),
    _case(
        "unsupported NAT mapper class",
        "clusterServersConfig:\n  password: PW\n  nodeAddresses: [redis://127.0.0.1:7000]\n"
        "  natMapper: !<com.example.MyNatMapper> {}\n",
        "clusterServersConfig.natMapper",
        4,
        "unsupported NAT mapper class",
    ),
    _case(
        "bad natMap target",
        "clusterServersConfig:\n  password: PW\n  nodeAddresses: [redis://127.0.0.1:7000]\n"
        "  natMap:\n    'node-1.internal:7000': nowhere\n",
        "clusterServersConfig.natMap['node-1.internal:7000']",
        5,
        "expected 'host:port'",
    ),
    _case(
        "unresolved environment variable",
        "singleServerConfig:\n  password: PW\n  address: redis://127.0.0.1:${NO_SUCH_PORT_VAR}\n",
        "singleServerConfig.address",
        3,
        "NO_SUCH_PORT_VAR is not set and has no default",
    ),
    _case(
        "bad YAML syntax (indentation)",
        "singleServerConfig:\n  address: redis://127.0.0.1:6379\n   password: PW\n",
        None,
        3,
        "invalid YAML",
    ),
    _case(
        "bad YAML syntax (unclosed quote around the password)",
        'singleServerConfig:\n  address: redis://127.0.0.1:6379\n  password: "PW\n',
        None,
        3,  # the line the quote opens on, not the end of the file where it is noticed
        "invalid YAML",
    ),
    _case(
        "two YAML documents",
        SINGLE + "---\n" + SINGLE,
        None,
        4,
        "invalid YAML",
    ),
    _case(
        "non-mapping document",
        "- singleServerConfig\n- PW\n",
        None,
        1,
        "expected a mapping of Redisson settings",
    ),
    _case(
        "!!python/object tag",
        "password: PW\nsingleServerConfig: !!python/object:os.system {}\n",
        "singleServerConfig",
        2,
        "unsupported YAML tag !!python/object:os.system",
    ),
    _case(
        "!!python/name tag on an ignored key",
        SINGLE + "codec: !!python/name:os.system ''\n",
        "codec",
        4,
        "unsupported YAML tag !!python/name:os.system",
    ),
    _case(
        "local non-Java tag",
        SINGLE + "  timeout: !seconds 3\n",
        "singleServerConfig.timeout",
        4,
        "unsupported YAML tag !seconds",
    ),
    _case(
        "duplicate key",
        "singleServerConfig:\n  password: PW\n  address: redis://127.0.0.1:6379\n"
        "  address: redis://127.0.0.1:6380\n",
        "singleServerConfig.address",
        4,
        "duplicate key",
    ),
    _case(
        "idle minimum above pool size",
        SINGLE + "  connectionPoolSize: 8\n",
        "singleServerConfig.connectionPoolSize",
        4,
        "must be at least connectionMinimumIdleSize",
    ),
    _case(
        "cluster database other than 0",
        "clusterServersConfig:\n  password: PW\n  nodeAddresses: [redis://127.0.0.1:7000]\n"
        "  database: 3\n",
        "clusterServersConfig.database",
        4,
        "must be 0",
    ),
    _case(
        "private key without certificate",
        SINGLE + "  sslPrivateKey: /etc/redis/client.key\n",
        "singleServerConfig.sslPrivateKey",
        4,
        "needs sslKeystore",
    ),
    _case(
        "remote truststore URL",
        SINGLE + "  sslTruststore: https://example.invalid/ca.pem\n",
        "singleServerConfig.sslTruststore",
        4,
        "only local files",
    ),
    _case(
        "recursive alias",
        "password: PW\nloop: &a [*a]\n",
        "loop[0][0][0]",
        2,
        "nested too deeply",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_malformed_config_names_path_and_line(case: Case) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ignored-key warnings are tested elsewhere
        with pytest.raises(ConfigError) as info:
            Config.from_yaml(case.text, env={})
    err = info.value
    message = str(err)
    assert isinstance(err, ValueError)
    assert case.fragment in message
    assert message.startswith("<string>, ")
    assert err.path == case.path
    if case.path is not None:
        assert f": {case.path}: " in message
    assert err.line == case.line
    if case.line is not None:
        assert f"line {case.line}:" in message
    rendered = "".join(traceback.format_exception(err))
    for text in (message, repr(err), repr(err.args), rendered):
        assert PASSWORD not in text


def test_there_are_at_least_30_cases() -> None:
    assert len(CASES) >= 30


def test_password_from_the_environment_does_not_leak() -> None:
    text = "singleServerConfig:\n  password: ${REDIS_PW}\n  address: localhost:6379\n"
    with pytest.raises(ConfigError) as info:
        Config.from_yaml(text, env={"REDIS_PW": PASSWORD})
    assert PASSWORD not in str(info.value)
    assert info.value.line == 3


def test_file_source_is_named(tmp_path: pytest.TempPathFactory) -> None:
    path = tmp_path / "broken.yaml"  # type: ignore[operator]
    path.write_text("singleServerConfig:\n  adress: redis://127.0.0.1:6379\n")
    with pytest.raises(ConfigError) as info:
        Config.from_yaml(path)
    assert str(info.value) == (
        f"{path}, line 2: singleServerConfig.adress: unknown key; did you mean 'address'?"
    )


def test_from_dict_errors_have_a_path_and_no_line() -> None:
    with pytest.raises(ConfigError) as info:
        Config.from_dict({"singleServerConfig": {"address": "redis://h:1", "timout": 5}})
    assert str(info.value) == "singleServerConfig.timout: unknown key; did you mean 'timeout'?"
    assert info.value.line is None


def test_code_built_config_errors_name_the_yaml_key() -> None:
    config = Config()
    config.use_sentinel_servers(sentinel_addresses=["redis://127.0.0.1:26379"])
    with pytest.raises(ConfigError, match=r"^sentinelServersConfig\.masterName: is required$"):
        config.validate()
