"""Config -> redis-py keyword arguments; redis-py's own constructors accept them."""

from __future__ import annotations

import socket
from typing import Any

import pytest
import redis
import redis.asyncio
import redis.asyncio.connection
import redis.connection

from redisson_py.config import (
    Config,
    Protocol,
    async_connection_class,
    client_kwargs,
    connection_class,
    connection_kwargs,
    needs_ssl,
    parse_address,
)


def _single(address: str, **fields: Any) -> Config:
    config = Config()
    config.use_single_server(address=address, **fields)
    config.validate()
    return config


def test_plain_connection_kwargs() -> None:
    config = _single(
        "redis://127.0.0.1:6379",
        database=2,
        username="app",
        password="pw",
        client_name="worker-1",
        timeout=2.5,
        connect_timeout=4.0,
        ping_connection_interval=15.0,
    )
    config.protocol = Protocol.RESP3
    address = config.server_config.seed_addresses()[0]
    kwargs = config.connection_kwargs(address)
    assert kwargs == {
        "host": "127.0.0.1",
        "port": 6379,
        "db": 2,
        "username": "app",
        "password": "pw",
        "socket_timeout": 2.5,
        "socket_connect_timeout": 4.0,
        "health_check_interval": 15.0,
        "socket_keepalive": True,  # Redisson's top-level tcpKeepAlive defaults to true
        "client_name": "worker-1",
        "protocol": 3,
    }
    assert not needs_ssl(address)
    assert connection_class(address) is redis.connection.Connection
    assert async_connection_class(address) is redis.asyncio.connection.Connection


def test_section_alone_uses_its_own_values() -> None:
    config = _single("redis://127.0.0.1:6379")
    kwargs = connection_kwargs(config.server_config, parse_address("redis://127.0.0.1:6379"))
    assert kwargs["socket_keepalive"] is False
    assert kwargs["protocol"] == 2
    assert "password" not in kwargs and "username" not in kwargs


def test_url_credentials_win() -> None:
    config = _single("redis://urluser:urlpw@127.0.0.1:6379", username="app", password="pw")
    kwargs = config.connection_kwargs(config.server_config.seed_addresses()[0])
    assert (kwargs["username"], kwargs["password"]) == ("urluser", "urlpw")


def test_top_level_password_applies() -> None:
    config = Config(password="top")  # type: ignore[arg-type]
    config.use_single_server(address="redis://127.0.0.1:6379")
    kwargs = config.connection_kwargs(config.server_config.seed_addresses()[0])
    assert kwargs["password"] == "top"


@pytest.mark.parametrize(
    ("mode", "cert_reqs", "check_hostname"),
    [("NONE", "none", False), ("CA_ONLY", "required", False), ("STRICT", "required", True)],
)
def test_tls_kwargs(mode: str, cert_reqs: str, check_hostname: bool) -> None:
    config = _single(
        "rediss://127.0.0.1:6380",
        ssl_verification_mode=mode,
        ssl_truststore="/certs/ca.pem",
        ssl_keystore="/certs/client.pem",
        ssl_private_key="/certs/client.key",
        ssl_keystore_password="keypw",
    )
    address = config.server_config.seed_addresses()[0]
    kwargs = config.connection_kwargs(address)
    assert needs_ssl(address)
    assert connection_class(address) is redis.connection.SSLConnection
    assert async_connection_class(address) is redis.asyncio.connection.SSLConnection
    assert kwargs["ssl_cert_reqs"] == cert_reqs
    assert kwargs["ssl_check_hostname"] is check_hostname
    assert kwargs["ssl_ca_certs"] == "/certs/ca.pem"
    assert kwargs["ssl_certfile"] == "/certs/client.pem"
    assert kwargs["ssl_keyfile"] == "/certs/client.key"
    assert kwargs["ssl_password"] == "keypw"


def test_tls_settings_are_not_passed_to_plain_connections() -> None:
    config = _single("redis://127.0.0.1:6379", ssl_truststore="/certs/ca.pem")
    kwargs = config.connection_kwargs(config.server_config.seed_addresses()[0])
    assert not any(key.startswith("ssl") for key in kwargs)


def test_sentinel_nodes_use_sentinel_credentials_and_db_0() -> None:
    config = Config()
    config.use_sentinel_servers(
        master_name="mymaster",
        sentinel_addresses=["redis://127.0.0.1:26379"],
        database=3,
        password="data-pw",
        sentinel_username="sentinel-user",
        sentinel_password="sentinel-pw",
    )
    address = config.server_config.seed_addresses()[0]
    sentinel = config.connection_kwargs(address, sentinel=True)
    assert (sentinel["db"], sentinel["username"], sentinel["password"]) == (
        0,
        "sentinel-user",
        "sentinel-pw",
    )
    data = config.connection_kwargs(parse_address("redis://127.0.0.1:6379"))
    assert (data["db"], data["password"]) == (3, "data-pw")
    single = _single("redis://127.0.0.1:6379")
    with pytest.raises(ValueError, match="SentinelServersConfig"):
        single.connection_kwargs(address, sentinel=True)


def test_keepalive_options() -> None:
    config = _single(
        "redis://127.0.0.1:6379",
        tcp_keep_alive_idle=30,
        tcp_keep_alive_interval=5,
        tcp_keep_alive_count=3,
    )
    kwargs = config.connection_kwargs(config.server_config.seed_addresses()[0])
    options = kwargs["socket_keepalive_options"]
    if hasattr(socket, "TCP_KEEPIDLE"):
        assert options[socket.TCP_KEEPIDLE] == 30
        assert options[socket.TCP_KEEPINTVL] == 5
        assert options[socket.TCP_KEEPCNT] == 3


@pytest.mark.parametrize("url", ["redis://127.0.0.1:6379", "rediss://127.0.0.1:6380"])
def test_redis_py_accepts_the_kwargs(url: str) -> None:
    # Constructing connections and clients opens no socket.
    config = _single(url, password="pw", client_name="c", ssl_verification_mode="CA_ONLY")
    address = config.server_config.seed_addresses()[0]
    kwargs = config.connection_kwargs(address)
    connection_class(address)(**kwargs)
    async_connection_class(address)(**kwargs)
    section = config.effective_server_config()
    client = redis.Redis(**client_kwargs(section, address, protocol=config.protocol))
    client.close()
    redis.asyncio.Redis(**client_kwargs(section, address, protocol=config.protocol))
