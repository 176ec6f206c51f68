"""parse_address: Redisson's address rules, and str() round-trips (property test)."""

from __future__ import annotations

import ipaddress
from urllib.parse import quote

import pytest
from hypothesis import given
from hypothesis import strategies as st

from redisson_py.config import Address, ConfigError, Secret, parse_address, redact_address


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("redis://127.0.0.1:6379", Address("redis", "127.0.0.1", 6379)),
        ("rediss://cache.example.com:6380", Address("rediss", "cache.example.com", 6380)),
        ("redis://[::1]:7000", Address("redis", "::1", 7000)),
        ("redis://::1:7000", Address("redis", "::1", 7000)),  # Redisson reads it too
        ("valkey://127.0.0.1:6379", Address("redis", "127.0.0.1", 6379)),
        ("valkeys://127.0.0.1:6379", Address("rediss", "127.0.0.1", 6379)),
        ("REDIS://127.0.0.1:6379/", Address("redis", "127.0.0.1", 6379)),
        ("  redis://localhost:1  ", Address("redis", "localhost", 1)),
        ("redis://u:p%40ss@h:1", Address("redis", "h", 1, "u", Secret("p@ss"))),
        ("redis://:pw@h:1", Address("redis", "h", 1, None, Secret("pw"))),
        ("redis://pw@h:1", Address("redis", "h", 1, None, Secret("pw"))),
    ],
)
def test_parse(text: str, expected: Address) -> None:
    assert parse_address(text) == expected


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("127.0.0.1:6379", "has no scheme"),
        ("redis//127.0.0.1:6379", "has no scheme"),
        ("tcp://127.0.0.1:6379", "unsupported scheme 'tcp'"),
        ("redis+uds:///tmp/redis.sock", "Unix socket"),
        ("redis://127.0.0.1", "has no port"),
        ("redis://127.0.0.1:", "bad port ''"),
        ("redis://127.0.0.1:0", "bad port '0'"),
        ("redis://127.0.0.1:65536", "bad port '65536'"),
        ("redis://127.0.0.1:-1", "bad port"),
        ("redis://:6379", "the host is empty"),
        ("redis://bad host:6379", "bad host"),
        ("redis://[::g]:6379", "bad IPv6 host"),
        ("redis://h:1/0", "a path or query is not allowed"),
    ],
)
def test_refused(text: str, fragment: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_address(text, key_path="clusterServersConfig.nodeAddresses[2]")
    assert info.value.path == "clusterServersConfig.nodeAddresses[2]"
    assert str(info.value).startswith("clusterServersConfig.nodeAddresses[2]: ")
    assert fragment in str(info.value)


def test_refused_non_string() -> None:
    with pytest.raises(ConfigError, match="expected an address string, got int"):
        parse_address(6379)  # type: ignore[arg-type]


def test_redact() -> None:
    assert redact_address("redis://u:p@h:1") == "redis://***@h:1"
    assert redact_address("u:p@h:1") == "***@h:1"
    assert redact_address("redis://h:1") == "redis://h:1"


def test_with_endpoint_keeps_scheme_and_credentials() -> None:
    seed = parse_address("rediss://u:pw@node-1.internal:7000")
    moved = seed.with_endpoint("127.0.0.1", 17000)
    assert moved == Address("rediss", "127.0.0.1", 17000, "u", Secret("pw"))
    assert moved.host_port == "127.0.0.1:17000"


_label = st.from_regex(r"[a-z0-9](?:[a-z0-9-]{0,10}[a-z0-9])?", fullmatch=True)
_hostnames = st.lists(_label, min_size=1, max_size=4).map(".".join)
_ipv4 = st.ip_addresses(v=4).map(str)
_ipv6 = st.ip_addresses(v=6).map(lambda ip: ipaddress.IPv6Address(ip).compressed)
_hosts = st.one_of(_hostnames, _ipv4, _ipv6)


@given(scheme=st.sampled_from(["redis", "rediss"]), host=_hosts, port=st.integers(1, 65535))
def test_str_round_trips(scheme: str, host: str, port: int) -> None:
    address = Address(scheme, host, port)  # type: ignore[arg-type]
    parsed = parse_address(str(address))
    assert parsed == address
    assert parsed.tls == (scheme == "rediss")
    assert str(parsed) == str(address)


@given(
    host=_hosts,
    port=st.integers(1, 65535),
    password=st.text(min_size=1, max_size=20).filter(lambda s: s.strip() == s),
)
def test_credentials_never_reach_str_or_repr(host: str, port: int, password: str) -> None:
    address = Address("redis", host, port)
    with_creds = f"redis://user:{quote(password, safe='')}@{address.host_port}"
    parsed = parse_address(with_creds)
    assert parsed.password == Secret(password)
    assert parsed.with_endpoint(host, port) == parsed
    assert "user" not in str(parsed)
    assert f"password={Secret(password)!r}" in repr(parsed)
