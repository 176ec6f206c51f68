"""Passwords never show: Secret, reprs of configs and addresses, warnings, errors."""

from __future__ import annotations

import warnings

import pytest

from redisson_py.config import Config, ConfigError, Secret, parse_address

PASSWORD = "Sup3r-S3cret-pw-91c2"


def test_secret_hides_its_value() -> None:
    secret = Secret(PASSWORD)
    assert secret.reveal() == PASSWORD
    for text in (repr(secret), str(secret), f"{secret}", f"{secret!r}", f"{secret:>30}"):
        assert PASSWORD not in text
        assert "*" in text
    assert len(repr(Secret("a"))) == len(repr(Secret("a much longer password")))


def test_secret_equality() -> None:
    assert Secret(PASSWORD) == Secret(PASSWORD)
    assert Secret(PASSWORD) != Secret("other")
    assert Secret(PASSWORD) != PASSWORD  # never equal to a plain string
    assert hash(Secret(PASSWORD)) == hash(Secret(PASSWORD))
    with pytest.raises(TypeError) as info:
        Secret(12345)  # type: ignore[arg-type]
    assert "12345" not in str(info.value)


def _config_with_every_password() -> Config:
    config = Config(password=PASSWORD, ssl_keystore_password=PASSWORD)  # type: ignore[arg-type]
    config.use_sentinel_servers(
        master_name="mymaster",
        sentinel_addresses=[f"redis://user:{PASSWORD}@127.0.0.1:26379"],
        password=PASSWORD,
        sentinel_password=PASSWORD,
        ssl_keystore_password=PASSWORD,
    )
    return config


def test_config_repr_never_shows_a_password() -> None:
    config = _config_with_every_password()
    config.validate()
    section = config.server_config
    assert isinstance(section.password, Secret)
    for text in (repr(config), str(config), repr(section), repr(config.effective_server_config())):
        assert PASSWORD not in text


def test_yaml_loaded_passwords_are_secrets() -> None:
    config = Config.from_yaml(
        f"sentinelServersConfig:\n"
        f"  masterName: m\n"
        f"  sentinelAddresses: [redis://127.0.0.1:26379]\n"
        f"  password: {PASSWORD}\n"
        f"  sentinelPassword: {PASSWORD}\n"
        f"password: {PASSWORD}\n"
    )
    assert PASSWORD not in repr(config)
    section = config.sentinel_servers_config
    assert section is not None
    assert section.sentinel_password == Secret(PASSWORD)
    # Serialization is the one place the password is written out, on purpose.
    assert PASSWORD in config.to_yaml()
    assert Config.from_yaml(config.to_yaml()) == config


def test_address_credentials_never_show() -> None:
    address = parse_address(f"rediss://app:{PASSWORD}@127.0.0.1:6380")
    assert address.username == "app"
    assert address.password == Secret(PASSWORD)
    for text in (str(address), repr(address), address.host_port):
        assert PASSWORD not in text
    with pytest.raises(ConfigError) as info:
        parse_address(f"rediss://app:{PASSWORD}@127.0.0.1:notaport", key_path="x")
    assert PASSWORD not in str(info.value)
    assert "***@" in str(info.value)


def test_warnings_never_show_a_password() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        Config.from_yaml(
            f"singleServerConfig:\n  address: redis://h:1\n  password: {PASSWORD}\n"
            f"sslTruststorePassword: {PASSWORD}\n"
        )
    assert len(caught) == 1
    assert "sslTruststorePassword" in str(caught[0].message)
    assert PASSWORD not in str(caught[0].message)


def test_validation_errors_never_show_a_password() -> None:
    config = _config_with_every_password()
    with pytest.raises(ConfigError) as info:
        config.server_config.timeout = -1  # range-checked as it is assigned
    assert PASSWORD not in str(info.value)
    config.server_config.retry_attempts = "x"  # type: ignore[assignment]
    with pytest.raises(ConfigError) as info:
        config.validate()
    assert PASSWORD not in str(info.value)
