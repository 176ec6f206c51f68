"""Bad input that used to escape or leak (issue 15, findings 7-9; issue 10, section 4).

Each test states what a user relies on: every malformed config is a ConfigError naming
the key path and line, no message quotes a secret or a value from ``${VAR}``, absurd
values are refused at load, and likely unit slips warn.
"""

from __future__ import annotations

import warnings

import pytest

from redisson_py.config import (
    Config,
    ConfigUnitWarning,
    ConstantDelay,
    EqualJitterDelay,
)
from redisson_py.errors import ConfigError

SECRET = "hunter2-Zq9"


def _load(text: str, env: dict[str, str] | None = None) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        Config.from_yaml(text, env=env or {})
    return info.value


# -- 15.7: no password, no environment value in a message --------------------------------


def test_address_string_where_a_list_belongs_hides_its_password() -> None:
    error = _load(
        f'clusterServersConfig:\n  nodeAddresses: "redis://default:{SECRET}@node-1:6379"\n'
    )
    assert SECRET not in str(error)
    assert error.path == "clusterServersConfig.nodeAddresses" and error.line == 2
    assert "redis://***@node-1:6379" in str(error)


@pytest.mark.parametrize("tag", ["!!int", "!!float", "!!bool"])
def test_tagged_password_is_not_echoed(tag: str) -> None:
    error = _load(f"singleServerConfig:\n  address: redis://h:1\n  password: {tag} {SECRET}\n")
    assert SECRET not in str(error)
    assert error.path == "singleServerConfig.password" and error.line == 3


@pytest.mark.parametrize(
    ("yaml_line", "path"),
    [
        ("protocol: ${LEAK}", "protocol"),
        (
            "singleServerConfig: {address: 'redis://h:1', timeout: '${LEAK}'}",
            "singleServerConfig.timeout",
        ),
        (
            "singleServerConfig: {address: 'redis://h:1', sslVerificationMode: '${LEAK}'}",
            "singleServerConfig.sslVerificationMode",
        ),
        (
            "singleServerConfig: {address: 'redis://h:1', retryAttempts: '${LEAK}'}",
            "singleServerConfig.retryAttempts",
        ),
        ("singleServerConfig: {address: 'redis://${LEAK}:6379'}", "singleServerConfig.address"),
        (
            "singleServerConfig: {address: 'redis://h:1', retryDelay: "
            "!<org.redisson.config.ConstantDelay> {delay: '${LEAK}'}}",
            "singleServerConfig.retryDelay.delay",
        ),
    ],
)
def test_values_from_the_environment_are_named_not_echoed(yaml_line: str, path: str) -> None:
    error = _load(yaml_line + "\n", env={"LEAK": SECRET + " !"})  # valid nowhere
    assert SECRET not in str(error)
    assert "${LEAK}" in str(error)
    assert error.path == path and error.line == 1


def test_number_from_the_environment_out_of_range_is_named() -> None:
    error = _load(
        "singleServerConfig: {address: 'redis://h:1', timeout: '${T}'}\n", env={"T": "987654321"}
    )
    assert "987654321" not in str(error) and "${T}" in str(error)


# -- 15.8: every malformed document is a ConfigError with key and line --------------------


def test_self_referencing_merge_key() -> None:
    error = _load("x: &a {<<: *a}\n")
    assert "nested too deeply" in str(error) or "too large" in str(error)


def test_five_thousand_nested_brackets() -> None:
    error = _load("singleServerConfig: " + "[" * 5000 + "\n")
    assert error.line == 1 and "nested" in str(error)


@pytest.mark.parametrize("digit", ["\u00b9", "\u0663", "\uff11"])  # superscript, Arabic, full-width
def test_unicode_digit_port(digit: str) -> None:
    error = _load(f"singleServerConfig:\n  address: redis://h:{digit}\n")
    assert error.path == "singleServerConfig.address" and error.line == 2
    assert "bad port" in str(error)


@pytest.mark.parametrize("digit", ["\u00b9", "\u0663"])
def test_unicode_digit_numbers(digit: str) -> None:
    error = _load(f"singleServerConfig:\n  address: redis://h:1\n  retryAttempts: '{digit}'\n")
    assert error.path == "singleServerConfig.retryAttempts" and error.line == 3


def test_bytes_are_read_as_utf8() -> None:
    config = Config.from_yaml(b"singleServerConfig:\n  address: redis://h:1\n", env={})
    assert config.server_config.address == "redis://h:1"
    config = Config.from_yaml(bytearray(b"\xef\xbb\xbfsingleServerConfig: {address: redis://h:1}"))
    assert config.server_config.address == "redis://h:1"
    with pytest.raises(ConfigError, match="not UTF-8"):
        Config.from_yaml(b"singleServerConfig:\n  address: redis://h:\xff\n", env={})


# -- 15.9: absurd values refused at load, wherever they enter ------------------------------


@pytest.mark.parametrize(
    ("setting", "path", "allowed"),
    [
        ("timeout: 1e13", "singleServerConfig.timeout", "86400000 ms"),
        ("timeout: 0.5", "singleServerConfig.timeout", "1 ms"),
        (
            "connectTimeout: 10000000000000000000000000",
            "singleServerConfig.connectTimeout",
            "86400000 ms",
        ),
        ("retryAttempts: 5000", "singleServerConfig.retryAttempts", "1000"),
        ("connectionPoolSize: 1000000", "singleServerConfig.connectionPoolSize", "10000"),
        (
            "retryDelay: !<org.redisson.config.ConstantDelay> {delay: PT10000000000000H}",
            "singleServerConfig.retryDelay.delay",
            "PT24H",
        ),
        (
            "retryDelay: !<org.redisson.config.EqualJitterDelay>"
            " {baseDelay: PT1S, maxDelay: PT25H}",
            "singleServerConfig.retryDelay.maxDelay",
            "PT24H",
        ),
    ],
)
def test_absurd_yaml_values_are_refused_with_the_range(
    setting: str, path: str, allowed: str
) -> None:
    error = _load(f"singleServerConfig:\n  address: redis://h:1\n  {setting}\n")
    assert error.path == path and error.line == 3
    assert allowed in str(error)


def test_watchdog_below_100_ms_is_refused() -> None:
    for value in ("0.0001", "30"):
        error = _load(
            f"lockWatchdogTimeout: {value}\nsingleServerConfig: {{address: redis://h:1}}\n"
        )
        assert error.path == "lockWatchdogTimeout" and error.line == 1
        assert "100 ms" in str(error) and "milliseconds" in str(error)


def test_absurd_python_values_are_refused_where_they_are_set() -> None:
    config = Config()
    with pytest.raises(ConfigError, match=r"^singleServerConfig\.timeout: .*86400000 ms"):
        config.use_single_server(address="redis://h:1", timeout=1e13)
    section = config.use_single_server(address="redis://h:1")
    with pytest.raises(ConfigError, match=r"^singleServerConfig\.retryAttempts: must be at most"):
        section.retry_attempts = 10**6
    with pytest.raises(ConfigError, match=r"^lockWatchdogTimeout: .*100 ms"):
        config.lock_watchdog_timeout = 0.0001
    with pytest.raises(ConfigError, match="between 0 and 86400"):
        ConstantDelay(3.6e16)  # 10^13 hours
    with pytest.raises(ConfigError, match="between 0 and 86400"):
        EqualJitterDelay(1.0, float("inf"))
    config.validate()  # nothing bad was stored


# -- 10.4: unit slips warn once, naming the key and line or the parameter -----------------


def test_yaml_time_in_seconds_warns_with_key_and_line() -> None:
    with pytest.warns(ConfigUnitWarning) as caught:
        config = Config.from_yaml(
            "singleServerConfig:\n  address: redis://h:1\n  timeout: 3\n  connectTimeout: 10\n",
            env={},
        )
    assert config.server_config.timeout == 0.003  # accepted as written
    assert len(caught) == 1
    message = str(caught[0].message)
    assert "singleServerConfig.timeout (line 3)" in message
    assert "singleServerConfig.connectTimeout (line 4)" in message
    assert "milliseconds" in message


def test_python_time_in_milliseconds_warns_with_the_parameter() -> None:
    config = Config()
    with pytest.warns(ConfigUnitWarning, match=r"timeout=3000\b.*seconds") as caught:
        section = config.use_single_server(address="redis://h:1", timeout=3000)
    assert len(caught) == 1
    assert caught[0].filename == __file__  # points at the caller's line
    with pytest.warns(ConfigUnitWarning, match=r"ping_connection_interval=7200"):
        section.ping_connection_interval = 7200
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        section.timeout = 30.0  # plausible: no warning
        section.ping_connection_interval = 1800
        config.validate()
        Config.from_yaml(config.to_yaml(), env={})  # no warning when loading its own output


def test_a_negative_max_hold_time_is_refused_with_its_line() -> None:
    error = _load("singleServerConfig: {address: redis://h:1}\nlockMaxHoldTime: -5\n")
    assert error.path == "lockMaxHoldTime" and error.line == 2
    with pytest.raises(ConfigError, match=r"^lockMaxHoldTime: "):
        Config().lock_max_hold_time = -1.0
