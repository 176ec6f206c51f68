"""Topologies with a password, an ACL user, or TLS: what a spec's ``security`` asks for,
the secrets each start makes, and what they add to node configs, harness clients and the
Redisson configs the topology writes.

Secrets are made fresh for every start (random passwords; a throwaway CA and a server
certificate for 127.0.0.1, localhost and the nodes' own addresses in a topology with
``network="namespace"``, made with ``cryptography``) and kept in the
topology's directory, readable by its owner only. The Redisson YAML a topology writes
refers to the password by ``${REDISSON_PY_TOPOLOGY_PASSWORD}`` (and the ACL user's by the
same variable), never by value; `Secrets.environment` is what to export.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["ACL_USER", "PASSWORD_VARIABLE", "Secrets", "Security", "make_secrets"]

ACL_USER = "redisson-py"
"""The ACL user of an ``acl`` topology (the ``default`` user is switched off there)."""

PASSWORD_VARIABLE = "REDISSON_PY_TOPOLOGY_PASSWORD"
"""The environment variable the written Redisson YAML reads the password from."""


@dataclass(frozen=True)
class Security:
    """What a topology's nodes require: ``auth`` (``requirepass``), ``acl`` (a named ACL
    user with a password, the default user off) and ``tls`` (TLS only, no plain port).
    ``auth`` and ``acl`` exclude each other; either combines with ``tls``."""

    auth: bool = False
    acl: bool = False
    tls: bool = False

    @property
    def enabled(self) -> bool:
        return self.auth or self.acl or self.tls

    @property
    def password_protected(self) -> bool:
        return self.auth or self.acl


@dataclass(frozen=True, repr=False)
class Secrets:
    """One start's secrets. ``tls_dir`` holds ``ca.crt``, ``server.crt`` and
    ``server.key`` (None without TLS). The repr never shows the password."""

    security: Security
    password: str | None
    tls_dir: Path | None

    def __repr__(self) -> str:
        return f"Secrets({self.security}, password={'***' if self.password else None})"

    @property
    def username(self) -> str | None:
        return ACL_USER if self.security.acl else None

    @property
    def ca_file(self) -> Path | None:
        return None if self.tls_dir is None else self.tls_dir / "ca.crt"

    def environment(self) -> dict[str, str]:
        """The variables the written Redisson YAML refers to (empty without a password)."""
        return {PASSWORD_VARIABLE: self.password} if self.password else {}

    # -- harness clients (redis-py) ----------------------------------------------------

    def client_options(self) -> dict[str, Any]:
        """redis-py ``Redis(...)`` keyword arguments for the harness's own clients."""
        options: dict[str, Any] = {}
        if self.password:
            options["password"] = self.password
            if self.username:
                options["username"] = self.username
        if self.security.tls:
            options.update(ssl=True, ssl_ca_certs=str(self.ca_file), ssl_cert_reqs="required")
        return options

    # -- node configs --------------------------------------------------------------------

    def redis_directives(self, *, port: int, cluster: bool, files: Path) -> list[str]:
        """Lines for a data node's ``redis.conf`` (appended after its own); ``files`` is
        where the node finds its TLS files (see `copy_tls_to`)."""
        lines: list[str] = []
        if self.security.auth:
            lines += [f"requirepass {self.password}", f"masterauth {self.password}"]
        if self.security.acl:
            lines += [
                f"user {ACL_USER} on >{self.password} ~* &* +@all",
                "user default off",
                f"masteruser {ACL_USER}",
                f"masterauth {self.password}",
            ]
        if self.security.tls:
            lines += [*self._tls_lines(port, files), "tls-replication yes"]
            if cluster:
                lines.append("tls-cluster yes")
        return lines

    def sentinel_directives(self, *, port: int, master_name: str, files: Path) -> list[str]:
        """Lines for a sentinel's ``sentinel.conf``: how it authenticates to the data
        nodes, and TLS for itself and towards them. The sentinels need no password."""
        lines: list[str] = []
        if self.password:
            if self.username:
                lines.append(f"sentinel auth-user {master_name} {self.username}")
            lines.append(f"sentinel auth-pass {master_name} {self.password}")
        if self.security.tls:
            lines += [*self._tls_lines(port, files), "tls-replication yes"]
        return lines

    def copy_tls_to(self, node_directory: Path) -> Path:
        """Copy the TLS files into a node's own directory (the only one a container
        mounts) and return where they are."""
        target = node_directory / "tls"
        if self.tls_dir is not None:
            target.mkdir(mode=0o755, exist_ok=True)
            for name in ("ca.crt", "server.crt", "server.key"):
                data = (self.tls_dir / name).read_bytes()
                (target / name).write_bytes(data)
                os.chmod(target / name, 0o600 if name.endswith(".key") else 0o644)
        return target

    @staticmethod
    def _tls_lines(port: int, files: Path) -> list[str]:
        return [
            "port 0",
            f"tls-port {port}",
            f'tls-cert-file "{files / "server.crt"}"',
            f'tls-key-file "{files / "server.key"}"',
            f'tls-ca-cert-file "{files / "ca.crt"}"',
            # Clients show no certificate of their own: the server's is what is tested.
            "tls-auth-clients no",
        ]

    # -- Redisson configs ----------------------------------------------------------------

    def redisson_fields(self) -> dict[str, Any]:
        """Fields for the server section of a written Redisson config."""
        fields: dict[str, Any] = {}
        if self.password:
            fields["password"] = f"${{{PASSWORD_VARIABLE}}}"
            if self.username:
                fields["username"] = self.username
        if self.security.tls:
            fields["sslTruststore"] = f"file:{self.ca_file}"
        return fields


def make_secrets(security: Security, directory: Path, addresses: Sequence[str] = ()) -> Secrets:
    """Fresh secrets for one start; TLS files are written under ``directory/tls``, the
    server certificate valid for 127.0.0.1, localhost and ``addresses``."""
    password = secrets.token_urlsafe(24) if security.password_protected else None
    tls_dir = None
    if security.tls:
        tls_dir = directory / "tls"
        tls_dir.mkdir(mode=0o755, exist_ok=True)
        _write_tls(tls_dir, addresses)
    return Secrets(security, password, tls_dir)


def _write_tls(directory: Path, addresses: Sequence[str]) -> None:
    # Imported here: only TLS topologies need cryptography (a test dependency).
    from cryptography import x509  # noqa: PLC0415
    from cryptography.hazmat.primitives import hashes, serialization  # noqa: PLC0415
    from cryptography.hazmat.primitives.asymmetric import ec  # noqa: PLC0415
    from cryptography.x509.oid import NameOID  # noqa: PLC0415

    now = datetime.datetime.now(datetime.UTC)

    def name(text: str) -> x509.Name:
        return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, text)])

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = (
        x509.CertificateBuilder()
        .subject_name(name("redisson-py test CA"))
        .issuer_name(name("redisson-py test CA"))
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=7))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    server = (
        x509.CertificateBuilder()
        .subject_name(name("127.0.0.1"))
        .issuer_name(ca.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=7))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.SubjectAlternativeName(
                [
                    *(
                        x509.IPAddress(ipaddress.ip_address(address))
                        for address in dict.fromkeys(["127.0.0.1", *addresses])
                    ),
                    x509.DNSName("localhost"),
                ]
            ),
            critical=False,
        )
        .sign(ca_key, hashes.SHA256())
    )
    pem = serialization.Encoding.PEM
    (directory / "ca.crt").write_bytes(ca.public_bytes(pem))
    (directory / "server.crt").write_bytes(server.public_bytes(pem))
    key_file = directory / "server.key"
    key_file.write_bytes(
        key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    # Readable by the server in a container running as this user, and by nobody else.
    os.chmod(key_file, 0o600)
