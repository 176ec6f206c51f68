"""TLS and ACL users: the right CA connects, another is refused; a user with its password
connects, a wrong password fails clearly and never shows the password."""

from __future__ import annotations

import datetime
import ipaddress
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from integration.wake_ups import release_wakes_waiter
from redisson_py import AuthError, Config, ConnectError
from redisson_py.config import SslVerificationMode
from redisson_py.testing import Topology, find_redis_server, wait_until
from redisson_py.testing.backends.binaries import supports_tls
from redisson_py.testing.owners import Flavor


def _key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def _pem(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def _certificate(
    subject: str,
    key: ec.EllipticCurvePrivateKey,
    issuer: tuple[str, ec.EllipticCurvePrivateKey] | None,
    *,
    ca: bool,
) -> x509.Certificate:
    now = datetime.datetime.now(datetime.UTC)
    issuer_name, issuer_key = issuer or (subject, key)
    builder = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
        .issuer_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, issuer_name)]))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if not ca:
        builder = builder.add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
    return builder.sign(issuer_key, hashes.SHA256())


@pytest.fixture(scope="module")
def tls_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, object]]:
    """A redis-server with only a TLS port on 127.0.0.1 and certificates made here."""
    binary = find_redis_server()
    if not supports_tls(binary.path):
        pytest.skip(f"{binary.path} ({binary.version}) is not built with TLS")
    folder = tmp_path_factory.mktemp("tls")
    ca_key, other_key, server_key = _key(), _key(), _key()
    ca = _certificate("test CA", ca_key, None, ca=True)
    other = _certificate("another CA", other_key, None, ca=True)
    server = _certificate("127.0.0.1", server_key, ("test CA", ca_key), ca=False)
    pem = serialization.Encoding.PEM
    key_format = serialization.PrivateFormat.PKCS8
    ca_file = _pem(folder / "ca.pem", ca.public_bytes(pem))
    other_file = _pem(folder / "other-ca.pem", other.public_bytes(pem))
    cert_file = _pem(folder / "server.pem", server.public_bytes(pem))
    key_file = _pem(
        folder / "server.key",
        server_key.private_bytes(pem, key_format, serialization.NoEncryption()),
    )
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen(
        [
            str(binary.path),
            "--port",
            "0",
            "--tls-port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--tls-cert-file",
            str(cert_file),
            "--tls-key-file",
            str(key_file),
            "--tls-ca-cert-file",
            str(ca_file),
            "--tls-auth-clients",
            "no",
            "--save",
            "",
            "--dir",
            str(folder),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_until(lambda: _tls_ping(port, ca_file), timeout=10, what="the TLS server")
        yield {"port": port, "ca": ca_file, "other_ca": other_file}
    finally:
        process.terminate()
        process.wait(timeout=10)


def _tls_ping(port: int, ca_file: Path) -> bool:
    client = redis.Redis(
        host="127.0.0.1", port=port, ssl=True, ssl_ca_certs=str(ca_file), socket_timeout=1
    )
    return bool(client.ping())


def _tls_config(port: object, ca_file: object) -> Config:
    config = Config()
    section = config.use_single_server(address=f"rediss://127.0.0.1:{port}")
    section.ssl_truststore = str(ca_file)
    section.ssl_verification_mode = SslVerificationMode.STRICT
    section.retry_attempts = 0
    return config


def test_tls_with_the_right_ca_locks(
    flavor: Flavor, tls_server: dict[str, object], lock_name: str
) -> None:
    client = flavor.create_client(_tls_config(tls_server["port"], tls_server["ca"]))
    owner = flavor.owner("owner")
    lock = client.get_lock(lock_name)
    assert owner(lock.try_lock) is True
    assert owner(lock.is_held_by_current_thread) is True
    owner(lock.unlock)


def test_a_release_over_tls_wakes_a_waiter_at_once(
    flavor: Flavor, tls_server: dict[str, object], lock_name: str
) -> None:
    # The pub/sub message comes through TLS: read by redis-py in the threaded client
    # (its wait cannot poll a TLS socket), from the stream in the asyncio one.
    lock = flavor.create_client(_tls_config(tls_server["port"], tls_server["ca"])).get_lock(
        lock_name
    )
    release_wakes_waiter(flavor, lock, lock, within=0.05)


def test_tls_with_another_ca_is_refused(flavor: Flavor, tls_server: dict[str, object]) -> None:
    config = _tls_config(tls_server["port"], tls_server["other_ca"])
    with pytest.raises(ConnectError, match="certificate verify failed") as caught:
        flavor.create_client(config)
    assert f"rediss://127.0.0.1:{tls_server['port']}" in str(caught.value)


@pytest.fixture
def acl_user(single_topology: Topology) -> Iterator[tuple[str, str]]:
    node = single_topology.master().client()
    name, password = "locker", "s3cret-Pa55"
    node.execute_command("ACL", "SETUSER", name, "on", f">{password}", "~*", "&*", "+@all")
    yield name, password
    node.execute_command("ACL", "DELUSER", name)


def _acl_config(topology: Topology, user: str, password: str) -> Config:
    config = Config()
    section = config.use_single_server(
        address=topology.master().address, username=user, password=password
    )
    section.retry_attempts = 0
    return config


def test_an_acl_user_with_its_password_locks(
    flavor: Flavor, single_topology: Topology, acl_user: tuple[str, str], lock_name: str
) -> None:
    client = flavor.create_client(_acl_config(single_topology, *acl_user))
    owner = flavor.owner("owner")
    lock = client.get_lock(lock_name)
    assert owner(lock.try_lock) is True
    owner(lock.unlock)


def test_a_wrong_password_fails_clearly_and_stays_secret(
    flavor: Flavor, single_topology: Topology, acl_user: tuple[str, str]
) -> None:
    user, _ = acl_user
    wrong = "not-the-Pa55word"
    config = _acl_config(single_topology, user, wrong)
    with pytest.raises(AuthError) as caught:
        flavor.create_client(config)
    message = str(caught.value)
    assert "authentication failed" in message and repr(user) in message
    assert wrong not in message and wrong not in repr(caught.value)
    assert wrong not in repr(config)
