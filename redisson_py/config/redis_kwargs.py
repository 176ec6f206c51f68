"""Config -> redis-py keyword arguments. Pure functions; nothing here opens a socket.

`connection_kwargs` gives the arguments of ``redis.connection.Connection`` /
``SSLConnection`` (the ``redis.asyncio.connection`` twins take the same ones) for one node.
Pass the section from
[`Config.effective_server_config`][redisson_py.config.Config.effective_server_config]
(or call [`Config.connection_kwargs`][redisson_py.config.Config.connection_kwargs]) so
the top-level credentials, TLS and TCP settings apply. Retries are deliberately absent:
the executor owns them.

This is the only module that reveals passwords, and only into the returned dict.
"""

from __future__ import annotations

import socket
from typing import Any, Final

import redis.asyncio.connection as async_connection
import redis.connection as sync_connection

from redisson_py.config.addresses import Address
from redisson_py.config.enums import Protocol, SslVerificationMode
from redisson_py.config.sections import BaseConfig, SentinelServersConfig

# verification mode -> (ssl_cert_reqs, ssl_check_hostname)
_TLS_CHECKS: Final = {
    SslVerificationMode.NONE: ("none", False),
    SslVerificationMode.CA_ONLY: ("required", False),
    SslVerificationMode.STRICT: ("required", True),
}


def needs_ssl(address: Address) -> bool:
    """True when ``address`` is ``rediss://``: use the ``SSLConnection`` class."""
    return address.tls


def connection_class(address: Address) -> type[sync_connection.AbstractConnection]:
    """``redis.connection.SSLConnection`` for ``rediss://``, else ``Connection``."""
    return sync_connection.SSLConnection if address.tls else sync_connection.Connection


def async_connection_class(address: Address) -> type[async_connection.AbstractConnection]:
    """``redis.asyncio.connection.SSLConnection`` for ``rediss://``, else ``Connection``."""
    return async_connection.SSLConnection if address.tls else async_connection.Connection


def keepalive_options(section: BaseConfig) -> dict[int, int]:
    """``socket_keepalive_options`` from the ``tcp_*`` settings (zeros and options the
    platform lacks are left out). redis-py applies them only with ``socket_keepalive``."""
    wanted = (
        ("TCP_KEEPCNT", section.tcp_keep_alive_count),
        ("TCP_KEEPIDLE", section.tcp_keep_alive_idle),
        ("TCP_KEEPINTVL", section.tcp_keep_alive_interval),
        ("TCP_USER_TIMEOUT", round(section.tcp_user_timeout * 1000)),  # milliseconds
    )
    options: dict[int, int] = {}
    for name, value in wanted:
        option = getattr(socket, name, None)
        if value and option is not None:
            options[option] = int(value)
    return options


def connection_kwargs(
    section: BaseConfig,
    address: Address,
    *,
    protocol: Protocol | str = Protocol.RESP2,
    sentinel: bool = False,
) -> dict[str, Any]:
    """Keyword arguments for a redis-py connection to ``address``.

    Maps: ``host``/``port`` from the address; ``db`` from ``database`` (0 for a sentinel);
    ``username``/``password`` from the URL's user info when present, else the section's
    (the sentinel's own for ``sentinel=True``); ``socket_timeout`` = ``timeout``;
    ``socket_connect_timeout`` = ``connect_timeout``; ``health_check_interval`` =
    ``ping_connection_interval``; ``socket_keepalive`` = ``keep_alive`` (plus
    ``socket_keepalive_options``); ``client_name``; ``protocol`` (2 or 3). For ``rediss://``
    only: ``ssl_ca_certs``, ``ssl_certfile``, ``ssl_keyfile``, ``ssl_password`` and, per
    verification mode, ``ssl_cert_reqs``/``ssl_check_hostname`` (NONE: ``"none"``/False;
    CA_ONLY: ``"required"``/False; STRICT: ``"required"``/True). Unset values are left out.

    Raises `ValueError` for ``sentinel=True`` with a non-sentinel section.
    """
    if sentinel and not isinstance(section, SentinelServersConfig):
        raise ValueError("sentinel=True needs a SentinelServersConfig")
    if isinstance(section, SentinelServersConfig) and sentinel:
        username, password = section.sentinel_username, section.sentinel_password
    else:
        username, password = section.username, section.password
    username = address.username or username
    password = address.password or password
    kwargs: dict[str, Any] = {
        "host": address.host,
        "port": address.port,
        "db": 0 if sentinel else section.database,
        "username": username,
        "password": password.reveal() if password is not None else None,
        "socket_timeout": section.timeout,
        "socket_connect_timeout": section.connect_timeout,
        "health_check_interval": section.ping_connection_interval,
        "socket_keepalive": section.keep_alive,
        "client_name": section.client_name,
        "protocol": Protocol(protocol).version,
    }
    options = keepalive_options(section)
    if section.keep_alive and options:
        kwargs["socket_keepalive_options"] = options
    if address.tls:
        cert_reqs, check_hostname = _TLS_CHECKS[SslVerificationMode(section.ssl_verification_mode)]
        kwargs.update(
            ssl_cert_reqs=cert_reqs,
            ssl_check_hostname=check_hostname,
            ssl_ca_certs=section.ssl_truststore,
            ssl_certfile=section.ssl_keystore,
            ssl_keyfile=section.ssl_private_key,
            ssl_password=(
                section.ssl_keystore_password.reveal()
                if section.ssl_keystore_password is not None
                else None
            ),
        )
    return {key: value for key, value in kwargs.items() if value is not None}


def client_kwargs(
    section: BaseConfig,
    address: Address,
    *,
    protocol: Protocol | str = Protocol.RESP2,
    sentinel: bool = False,
) -> dict[str, Any]:
    """`connection_kwargs` plus ``ssl=True`` for TLS: the arguments of ``redis.Redis``
    (and its asyncio twin), which picks the connection class from ``ssl``."""
    kwargs = connection_kwargs(section, address, protocol=protocol, sentinel=sentinel)
    if address.tls:
        kwargs["ssl"] = True
    return kwargs
