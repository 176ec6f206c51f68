"""`Config.set_credential_provider`: redis-py's ``CredentialProvider`` protocol, checked
and wrapped; it replaces the data nodes' password in the connection arguments, never the
sentinels'; its values never show."""

from __future__ import annotations

import asyncio
import warnings

import pytest

from redisson_py.config import Config, ConfigError, ConfigWarning, parse_address
from redisson_py.config.credentials import RotatingCredentials
from redisson_py.core.state.options import connection_kwargs_for

SECRET = "s3cr3t-token"


class Provider:
    def __init__(self, value: object = ("app", SECRET)):
        self.value = value

    def get_credentials(self) -> object:
        return self.value


class AsyncProvider(Provider):
    async def get_credentials_async(self) -> object:
        return ("app", "from-async")


def test_the_provider_replaces_the_data_nodes_password() -> None:
    config = Config().set_credential_provider(Provider())
    section = config.use_single_server("redis://127.0.0.1:6379", password="fixed")
    kwargs = connection_kwargs_for(config, config.effective_server_config())(
        parse_address(section.address or ""), False
    )
    assert "password" not in kwargs and "username" not in kwargs
    provider = kwargs["credential_provider"]
    assert isinstance(provider, RotatingCredentials)
    assert provider.get_credentials() == ("app", SECRET)


def test_sentinels_keep_their_own_credentials() -> None:
    config = Config().set_credential_provider(Provider())
    config.use_sentinel_servers("m", ["redis://127.0.0.1:26379"], sentinel_password="sp")
    kwargs_for = connection_kwargs_for(config, config.effective_server_config())
    kwargs = kwargs_for(parse_address("redis://127.0.0.1:26379"), True)
    assert kwargs["password"] == "sp"
    assert "credential_provider" not in kwargs


def test_the_asyncio_client_uses_the_providers_own_async_method() -> None:
    assert asyncio.run(RotatingCredentials(AsyncProvider()).get_credentials_async()) == (
        "app",
        "from-async",
    )
    assert asyncio.run(RotatingCredentials(Provider()).get_credentials_async()) == ("app", SECRET)


def test_a_provider_without_get_credentials_is_refused() -> None:
    with pytest.raises(ConfigError, match="has no get_credentials"):
        Config().set_credential_provider(object())


@pytest.mark.parametrize("value", [SECRET, ("a", "b", SECRET), ("app", 42), None])
def test_a_bad_answer_is_refused_without_showing_it(value: object) -> None:
    provider = RotatingCredentials(Provider(value))  # type: ignore[arg-type]
    with pytest.raises(ConfigError) as raised:
        provider.get_credentials()
    assert SECRET not in str(raised.value)
    assert "(password,) or (username, password)" in str(raised.value)


def test_it_never_shows_and_never_goes_to_yaml() -> None:
    config = Config().set_credential_provider(Provider())
    config.use_single_server("redis://127.0.0.1:6379")
    assert SECRET not in repr(config)
    assert repr(config.credential_provider) == "RotatingCredentials(Provider)"
    assert SECRET not in config.to_yaml()
    assert Config.from_yaml(config.to_yaml()) == config  # not a setting: equal without it
    assert config.set_credential_provider(None).credential_provider is None


def test_the_yaml_resolver_points_to_the_code_hook() -> None:
    text = (
        "singleServerConfig:\n  address: redis://127.0.0.1:6379\n"
        "  credentialsResolver: !<com.example.TokenResolver> {}\n"
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        Config.from_yaml(text)
    said = " ".join(str(w.message) for w in caught if issubclass(w.category, ConfigWarning))
    assert "credentialsResolver" in said
    assert "set_credential_provider" in said
