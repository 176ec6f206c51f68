"""Server addresses: ``redis://host:port`` and ``rediss://host:port`` (TLS).

Redisson's rules: a scheme and a port are required; ``valkey://`` and ``valkeys://`` are
synonyms of ``redis://`` and ``rediss://``; IPv6 hosts are written in brackets
(``redis://[::1]:6379``, the unbracketed ``redis://::1:6379`` is read too); credentials
may ride in the URL (``redis://user:pass@host:6379``, or ``redis://:pass@host:6379``; a
lone ``redis://pass@host:6379`` is a password, as redis-cli reads it) and win over the
section's ``username``/``password``.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from typing import Final, Literal
from urllib.parse import unquote

from redisson_py.config.secret import Secret
from redisson_py.errors import ConfigError

Scheme = Literal["redis", "rediss"]

_SCHEMES: Final[dict[str, Scheme]] = {
    "redis": "redis",
    "rediss": "rediss",
    "valkey": "redis",
    "valkeys": "rediss",
}
_HOSTNAME: Final = re.compile(r"[A-Za-z0-9_](?:[A-Za-z0-9_.-]*[A-Za-z0-9_])?")


@dataclass(frozen=True)
class Address:
    """One parsed server address. ``str()`` gives the URL without credentials."""

    scheme: Scheme
    host: str
    """Host name or IP literal; IPv6 without brackets."""
    port: int
    username: str | None = None
    """From the URL's user info, if any."""
    password: Secret | None = None
    """From the URL's user info, if any."""

    @property
    def tls(self) -> bool:
        """True for ``rediss://``: connect with TLS (redis-py's ``SSLConnection``)."""
        return self.scheme == "rediss"

    @property
    def host_port(self) -> str:
        """``host:port``, IPv6 in brackets: the key form NAT maps and logs use."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"

    def __post_init__(self) -> None:
        # Every call looks its node up in dicts (pools, replica counts): hash it once.
        fields = (self.scheme, self.host, self.port, self.username, self.password)
        object.__setattr__(self, "_hash", hash(fields))

    def __hash__(self) -> int:
        return self._hash  # type: ignore[attr-defined,no-any-return]

    def __reduce__(self) -> tuple[type[Address], tuple[object, ...]]:
        # Built anew when unpickled: a str's hash differs from one process to another.
        return (Address, (self.scheme, self.host, self.port, self.username, self.password))

    def with_endpoint(self, host: str, port: int) -> Address:
        """The same scheme and credentials at another endpoint (a NAT-mapped or discovered node)."""
        return Address(self.scheme, host, port, self.username, self.password)

    def __str__(self) -> str:
        return f"{self.scheme}://{self.host_port}"


def redact_address(text: str) -> str:
    """``text`` with any user info replaced by ``***``: safe to put in a message."""
    if "@" not in text:
        return text
    scheme, sep, rest = text.partition("://")
    if not sep:
        return "***@" + text.rpartition("@")[2]
    return f"{scheme}://***@{rest.rpartition('@')[2]}"


def _parse_host(host: str) -> str:
    if host.startswith("["):
        if not host.endswith("]"):
            raise ValueError("unclosed '[' around an IPv6 host")
        literal = host[1:-1]
        try:
            ipaddress.IPv6Address(literal)
        except ValueError:
            raise ValueError(f"bad IPv6 host [{literal}]") from None
        return literal
    if ":" in host:  # Redisson also reads an unbracketed IPv6 host
        try:
            ipaddress.IPv6Address(host)
        except ValueError:
            raise ValueError(f"bad host {host!r}") from None
        return host
    if not host:
        raise ValueError("the host is empty")
    if _HOSTNAME.fullmatch(host) is None:
        raise ValueError(f"bad host {host!r}")
    return host


def address_problem(text: object) -> tuple[Address | None, str | None]:
    """Parse ``text``; return ``(address, None)`` or ``(None, reason)``.

    The reason never contains credentials. Used by validation, which adds path and line.
    """
    if not isinstance(text, str):
        return None, f"expected an address string, got {type(text).__name__}"
    raw = text.strip()
    shown = redact_address(raw)
    try:
        return _parse_address(raw, shown), None
    except _AddressProblem as problem:
        return None, str(problem)


class _AddressProblem(Exception):
    """Why a text is no address; its message never contains credentials."""


def _parse_address(raw: str, shown: str) -> Address:
    """The address ``raw`` (shown as ``shown``, its credentials redacted), in its steps:
    scheme, credentials, host and port."""
    scheme_text, sep, rest = raw.partition("://")
    scheme = _scheme(scheme_text if sep else None, shown)
    userinfo, at, hostport = rest.rpartition("@")
    username, password = _credentials(userinfo) if at else (None, None)
    host, port = _host_and_port(hostport, scheme_text, shown)
    return Address(scheme, host, port, username, password)


def _scheme(scheme_text: str | None, shown: str) -> Scheme:
    if scheme_text is None:
        raise _AddressProblem(
            f"address {shown!r} has no scheme; write it as 'redis://host:port' "
            "(or 'rediss://host:port' for TLS)"
        )
    scheme = _SCHEMES.get(scheme_text.lower())
    if scheme is None:
        if scheme_text.lower().endswith("+uds"):
            raise _AddressProblem(f"address {shown!r}: Unix socket addresses are not supported")
        raise _AddressProblem(
            f"address {shown!r}: unsupported scheme {scheme_text!r}; expected redis:// or rediss://"
        )
    return scheme


def _credentials(userinfo: str) -> tuple[str | None, Secret]:
    """(username, password) of ``user:password`` or of a password alone."""
    user, colon, secret = userinfo.partition(":")
    if colon:
        return unquote(user) or None, Secret(unquote(secret))
    return None, Secret(unquote(user))


def _host_and_port(hostport: str, scheme_text: str, shown: str) -> tuple[str, int]:
    if hostport.endswith("/"):
        hostport = hostport[:-1]
    if "/" in hostport or "?" in hostport or "#" in hostport:
        raise _AddressProblem(
            f"address {shown!r}: a path or query is not allowed; use the 'database' setting"
        )
    host, colon, port_text = hostport.rpartition(":")
    if not colon or host.endswith(":") or (host.startswith("[") and not host.endswith("]")):
        raise _AddressProblem(
            f"address {shown!r} has no port; write it as '{scheme_text}://host:port'"
        )
    if not (port_text.isascii() and port_text.isdigit()) or not 0 < int(port_text) < 65536:
        raise _AddressProblem(
            f"address {shown!r}: bad port {port_text!r}; expected an integer in 1..65535"
        )
    try:
        return _parse_host(host), int(port_text)
    except ValueError as exc:
        raise _AddressProblem(f"address {shown!r}: {exc}") from None


def parse_address(text: str, *, key_path: str = "address") -> Address:
    """Parse one server address.

    Raises [`ConfigError`][redisson_py.errors.ConfigError] naming ``key_path`` when the
    scheme is missing or unknown, the port is missing or out of 1..65535, or the host is
    malformed. The message shows the address with its credentials replaced by ``***``.
    """
    address, problem = address_problem(text)
    if address is None:
        raise ConfigError(f"{key_path}: {problem}", path=key_path)
    return address
