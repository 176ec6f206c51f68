"""Credentials that rotate: a provider asked for them on every new connection.

Managed services hand out tokens that expire (Azure Cache for Redis with Entra ID, AWS
ElastiCache with IAM): a password fixed in the config stops working at the first
rotation. Redisson takes a ``credentialsResolver`` (a Java class, which a YAML file cannot
bring here); redisson-py takes, in code, any object with redis-py's
``CredentialProvider`` protocol: ``get_credentials()`` returning ``(password,)`` or
``(username, password)``, and optionally ``async get_credentials_async()`` (see
[`Config.set_credential_provider`][redisson_py.config.Config.set_credential_provider]).

redis-py asks the provider for every connection it opens (lock calls, pub/sub, the
watchdog's renewals, the topology probes), so a rotation needs nothing but new
connections; those already open stay authenticated, as Redis keeps them. A connection
refused at ``AUTH`` is opened once more at once, asking the provider again (the
managers' ``_send``), before its call fails as a connection error (which the call
retries per ``retryAttempts``).
"""

from __future__ import annotations

import inspect
from typing import Any, Protocol, runtime_checkable

from redis.credentials import CredentialProvider

from redisson_py.errors import ConfigError


@runtime_checkable
class CredentialSource(Protocol):
    """What a credentials provider must have: redis-py's ``CredentialProvider``
    protocol (``get_credentials()`` returning ``(password,)`` or
    ``(username, password)``)."""

    def get_credentials(self) -> tuple[str] | tuple[str, str]: ...


class RotatingCredentials(CredentialProvider):
    """The user's provider as redis-py's connections take it: the sync call for the
    threaded client, the provider's own ``get_credentials_async`` for the asyncio one
    when it has one (else the sync call). Its repr names the provider's type, never what
    it returns."""

    def __init__(self, source: CredentialSource):
        self.source = source
        own_async = getattr(type(source), "get_credentials_async", None)
        # redis-py's base class has a get_credentials_async that only warns and calls
        # the sync one: use the provider's only when it wrote its own.
        self._async = (
            own_async is not None
            and own_async is not getattr(CredentialProvider, "get_credentials_async", None)
            and inspect.iscoroutinefunction(own_async)
        )

    def get_credentials(self) -> tuple[str] | tuple[str, str]:
        return _checked(self.source.get_credentials(), self.source)

    async def get_credentials_async(self) -> tuple[str] | tuple[str, str]:
        if self._async:
            source: Any = self.source
            return _checked(await source.get_credentials_async(), self.source)
        return self.get_credentials()

    def __repr__(self) -> str:
        return f"RotatingCredentials({type(self.source).__name__})"


def _checked(credentials: Any, source: object) -> tuple[str] | tuple[str, str]:
    """``credentials`` if it is ``(password,)`` or ``(username, password)`` of strings;
    else [`ConfigError`][redisson_py.errors.ConfigError] naming the provider's type
    (never the values)."""
    if (
        isinstance(credentials, tuple)
        and len(credentials) in (1, 2)
        and all(isinstance(part, str) for part in credentials)
    ):
        return credentials
    raise ConfigError(
        f"credential provider {type(source).__name__}: get_credentials() must return "
        f"(password,) or (username, password) as strings, not a {type(credentials).__name__}"
        + (f" of {len(credentials)}" if isinstance(credentials, tuple) else ""),
        path="credential_provider",
    )


def rotating(source: object) -> RotatingCredentials:
    """Wrap ``source`` for redis-py; [`ConfigError`][redisson_py.errors.ConfigError]
    when it has no ``get_credentials()``."""
    if not callable(getattr(source, "get_credentials", None)):
        raise ConfigError(
            f"credential provider: {type(source).__name__} has no get_credentials() method"
            " (redis-py's CredentialProvider protocol)",
            path="credential_provider",
        )
    assert isinstance(source, CredentialSource)
    return source if isinstance(source, RotatingCredentials) else RotatingCredentials(source)
