"""NAT mapping: rewrite the host (and port) the servers announce into one we can reach.

Sentinels and cluster nodes report their peers' addresses as the servers see them; behind
NAT or in containers those are not reachable from the client. A mapper turns each reported
``(host, port)`` into the one to dial. Redisson's YAML forms are accepted::

    natMapper: !<org.redisson.config.HostPortNatMapper>
      hostsPortMap: {"node-5.internal:6379": "127.0.0.1:16379"}
    natMapper: !<org.redisson.config.HostNatMapper> {hostsMap: {"node-5.internal": "127.0.0.1"}}
    natMap: {"node-5.internal:6379": "127.0.0.1:16379"}      # legacy, same as HostPortNatMapper

(older Redisson versions spelled the package ``org.redisson.api``; both are accepted.)
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import ClassVar

from redisson_py.config.addresses import redact_address


def split_host_port(text: str) -> tuple[str, int]:
    """Split ``host:port`` (IPv6 may be bracketed) at the last colon.

    Raises `ValueError` when there is no colon, the host is empty, or the port is
    not an integer in 1..65535.
    """
    host, sep, port_text = text.strip().rpartition(":")
    shown = redact_address(text) if "@" in text else text  # a URL with credentials
    if not sep or not host:
        raise ValueError(f"expected 'host:port', got {shown!r}")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if not (port_text.isascii() and port_text.isdigit()) or not 0 < int(port_text) < 65536:
        raise ValueError(f"bad port in {shown!r}: expected an integer in 1..65535")
    return host, int(port_text)


def _host_key(host: str, port: int) -> tuple[str, ...]:
    """The spellings a map key may use for one endpoint (IPv6 bracketed or not)."""
    keys = [f"{host}:{port}"]
    if ":" in host:
        keys.append(f"[{host}]:{port}")
    return tuple(keys)


class NatMapper(ABC):
    """Maps an announced endpoint to the endpoint to connect to. Pure; no I/O."""

    JAVA_CLASS: ClassVar[str]

    @abstractmethod
    def map(self, host: str, port: int) -> tuple[str, int]:
        """Return the endpoint to dial for ``(host, port)``; unmapped endpoints come back as is."""


@dataclass(frozen=True)
class HostNatMapper(NatMapper):
    """Replaces the host, keeps the port. YAML ``hostsMap: {from-host: to-host}``."""

    JAVA_CLASS: ClassVar[str] = "org.redisson.config.HostNatMapper"

    hosts_map: Mapping[str, str] = field(default_factory=dict, hash=False)

    def __post_init__(self) -> None:
        for source, target in self.hosts_map.items():
            if not isinstance(source, str) or not isinstance(target, str) or not target:
                raise ValueError("hostsMap maps host names to host names (strings)")
        object.__setattr__(self, "hosts_map", dict(self.hosts_map))

    def map(self, host: str, port: int) -> tuple[str, int]:
        return self.hosts_map.get(host, host), port


@dataclass(frozen=True)
class HostPortNatMapper(NatMapper):
    """Replaces host and port. YAML ``hostsPortMap: {"host:port": "host:port"}``."""

    JAVA_CLASS: ClassVar[str] = "org.redisson.config.HostPortNatMapper"

    hosts_port_map: Mapping[str, str] = field(default_factory=dict, hash=False)

    def __post_init__(self) -> None:
        for source, target in self.hosts_port_map.items():
            if not isinstance(source, str) or not isinstance(target, str):
                raise ValueError("hostsPortMap maps 'host:port' strings to 'host:port' strings")
            split_host_port(source)
            split_host_port(target)
        object.__setattr__(self, "hosts_port_map", dict(self.hosts_port_map))

    def map(self, host: str, port: int) -> tuple[str, int]:
        for key in _host_key(host, port):
            target = self.hosts_port_map.get(key)
            if target is not None:
                return split_host_port(target)
        return host, port
