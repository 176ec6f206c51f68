"""A DNS server the tests own, for host names whose address moves (issue 40).

`DnsServer` runs Debian's ``dnsmasq`` on one loopback address, port 53, answering only
from a hosts file the test rewrites (`DnsServer.point`: the file is rewritten, dnsmasq
re-reads it on ``SIGHUP``, and the call returns once the server answers the new
address). Nothing else is asked: no upstream server, no ``/etc/hosts``.

A client reaches it the way users' clients reach theirs, through the system resolver
(``getaddrinfo``, which reads ``/etc/resolv.conf``). The system file is never touched:
`DnsServer.client_argv` wraps a command so that it runs in a mount namespace of its own
(``unshare --mount``) where a ``resolv.conf`` naming this server is bind-mounted over
``/etc/resolv.conf``. The client process keeps the machine's network: the nodes it
connects to are the ones the test started.

A host name maps to an address, not a port, so two nodes behind one name need one port
on two addresses: `same_port_proxies` puts a `LoopbackProxy` in front of each node, all
on one port, each on an address of its own (127.x.y.1, 127.x.y.2, ...).

Requires root (``unshare --mount``, port 53) and ``dnsmasq`` (``apt-get install
dnsmasq-base``; ``scripts/setup-test-env`` installs it); `dns_support` says what is
missing. Traffic stays on 127.0.0.0/8.
"""

from __future__ import annotations

import contextlib
import functools
import os
import random
import shutil
import signal
import socket
import struct
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import Self

from redisson_py.testing.errors import TopologyError
from redisson_py.testing.faults.proxy import LoopbackProxy

__all__ = ["DnsServer", "dns_support", "query_a", "same_port_proxies"]

_START_TIMEOUT = 5.0
_ATTEMPTS = 5


def dns_support() -> str | None:
    """Why a `DnsServer` cannot run here (None: it can)."""
    if os.geteuid() != 0:
        return "the DNS tests need root (unshare --mount, port 53)"
    for program in ("dnsmasq", "unshare", "mount"):
        if shutil.which(program) is None:
            hint = " (apt-get install dnsmasq-base)" if program == "dnsmasq" else ""
            return f"{program} is not installed{hint}"
    return _mount_namespace_reason()


@functools.cache
def _mount_namespace_reason() -> str | None:
    """Why a mount namespace cannot be made here (a container without CAP_SYS_ADMIN)."""
    try:
        subprocess.run(
            ["unshare", "--mount", "--propagation", "private", "true"],
            check=True,
            capture_output=True,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError) as error:
        return f"unshare --mount fails here ({error})"
    return None


def _random_loopback(second: int) -> str:
    return f"127.{second}.{random.randint(1, 254)}.{random.randint(1, 254)}"


def query_a(server: str, name: str, *, port: int = 53, timeout: float = 1.0) -> list[str]:
    """Ask ``server`` (UDP) for the A records of ``name``: their addresses, [] for
    none. Raises OSError when the server does not answer within ``timeout``."""
    ident = random.randint(0, 0xFFFF)
    question = b"".join(bytes([len(part)]) + part.encode() for part in name.split(".")) + b"\0"
    packet = struct.pack(">HHHHHH", ident, 0x0100, 1, 0, 0, 0) + question + b"\0\x01\0\x01"
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.settimeout(timeout)
        sock.sendto(packet, (server, port))
        while True:
            reply, _ = sock.recvfrom(4096)
            if reply[:2] == packet[:2]:
                break
    answers = struct.unpack(">H", reply[6:8])[0]
    offset = 12 + len(question) + 4
    found: list[str] = []
    for _ in range(answers):
        offset = _skip_name(reply, offset)
        kind, _cls, _ttl, length = struct.unpack(">HHIH", reply[offset : offset + 10])
        offset += 10
        if kind == 1 and length == 4:
            found.append(socket.inet_ntoa(reply[offset : offset + 4]))
        offset += length
    return found


def _skip_name(reply: bytes, offset: int) -> int:
    while True:
        size = reply[offset]
        if size == 0:
            return offset + 1
        if size & 0xC0 == 0xC0:  # a pointer ends the name
            return offset + 2
        offset += 1 + size


class DnsServer:
    """dnsmasq on ``address``:53 (a random 127.53.x.y by default), answering from a
    hosts file in ``run_dir``; see the module docstring. A context manager."""

    def __init__(self, run_dir: Path, *, address: str | None = None):
        self.run_dir = Path(run_dir)
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.hosts_file = self.run_dir / "dns-hosts"
        self.resolv_conf = self.run_dir / "resolv.conf"
        self.log_file = self.run_dir / "dnsmasq.log"
        self._fixed = address
        self.address = address or _random_loopback(53)
        self._names: dict[str, str] = {}
        self._process: subprocess.Popen[bytes] | None = None

    def start(self) -> Self:
        """Start dnsmasq (another random address when the one picked is taken); raises
        [`TopologyError`][redisson_py.testing.TopologyError] naming what is missing or
        what dnsmasq said."""
        reason = dns_support()
        if reason is not None:
            raise TopologyError(f"cannot run a DNS server: {reason}.")
        self._write_hosts()
        said = ""
        for _ in range(1 if self._fixed else _ATTEMPTS):
            said = self._launch()
            if not said:
                # Short timeouts: a test that stops the server sees failures at once.
                self.resolv_conf.write_text(
                    f"nameserver {self.address}\noptions timeout:1 attempts:1\n"
                )
                return self
            self.address = _random_loopback(53)
        raise TopologyError(f"dnsmasq did not start: {said}")

    def _launch(self) -> str:
        """Start dnsmasq on ``self.address``; "" once it answers, else what it said."""
        argv = [
            "dnsmasq",
            "--keep-in-foreground",
            "--conf-file=/dev/null",
            "--no-resolv",
            "--no-hosts",
            f"--addn-hosts={self.hosts_file}",
            "--port=53",
            f"--listen-address={self.address}",
            "--bind-interfaces",
            "--pid-file=",
            "--user=root",
            "--group=root",
            "--local-ttl=0",
            "--no-negcache",
            f"--log-facility={self.log_file}",
        ]
        process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + _START_TIMEOUT
        while time.monotonic() < deadline:
            if process.poll() is not None:
                assert process.stderr is not None
                return process.stderr.read().decode(errors="replace").strip() or "it exited"
            with contextlib.suppress(OSError):
                query_a(self.address, "ready.invalid", timeout=0.2)
                self._process = process
                return ""
        process.kill()
        process.wait()
        return f"no answer on {self.address}:53 within {_START_TIMEOUT:g} s"

    def _write_hosts(self) -> None:
        text = "".join(f"{address} {name}\n" for name, address in self._names.items())
        temporary = self.hosts_file.with_suffix(".new")
        temporary.write_text(text)
        temporary.replace(self.hosts_file)  # dnsmasq never reads half a file

    def point(self, name: str, address: str, *, timeout: float = 5.0) -> None:
        """Make ``name`` resolve to ``address`` (IPv4), and return once the server
        answers so."""
        self._names[name] = address
        self._write_hosts()
        if self._process is None:
            return
        self._process.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + timeout
        while True:
            with contextlib.suppress(OSError):
                if query_a(self.address, name, timeout=0.2) == [address]:
                    return
            if time.monotonic() > deadline:
                raise TopologyError(f"dnsmasq still does not answer {name} -> {address}")
            time.sleep(0.02)

    def client_argv(self, argv: Sequence[str]) -> list[str]:
        """``argv`` run in a mount namespace where ``/etc/resolv.conf`` names this
        server (the machine's own file is untouched)."""
        script = 'mount --bind "$0" /etc/resolv.conf && exec "$@"'
        wrapper = ["unshare", "--mount", "--propagation", "private", "sh", "-c", script]
        return [*wrapper, str(self.resolv_conf), *argv]

    def close(self) -> None:
        """Stop dnsmasq; idempotent."""
        process, self._process = self._process, None
        if process is None:
            return
        process.terminate()
        try:
            process.wait(5.0)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stderr is not None:
            process.stderr.close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


def same_port_proxies(target_ports: Sequence[int]) -> list[LoopbackProxy]:
    """One `LoopbackProxy` per port of ``target_ports`` (nodes on 127.0.0.1), all
    listening on one port, the i-th on 127.x.y.(i+1): a host name can then be moved
    from one node to another by its address alone. Close them when done."""
    for _ in range(_ATTEMPTS):
        base = _random_loopback(54).rsplit(".", 1)[0]
        proxies: list[LoopbackProxy] = []
        try:
            first = LoopbackProxy(target_ports[0], listen=(f"{base}.1", 0))
            proxies.append(first)
            for index, port in enumerate(target_ports[1:], start=2):
                proxies.append(LoopbackProxy(port, listen=(f"{base}.{index}", first.port)))
            return proxies
        except OSError:
            for proxy in proxies:
                proxy.close()
    raise TopologyError("no port free on every proxy address")
