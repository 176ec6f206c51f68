"""The pieces a partition scenario puts on each side: client A in its own process (seen
from the scenario), the two sides of a split, and a fenced resource's server no cut
touches.

Times are ``time.monotonic()``: one clock for every process of the machine, so A's
reports (made in its process) and B's grants (in the scenario's) compare directly.
"""

from __future__ import annotations

import contextlib
import json
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import IO, Any

import redis

from redisson_py import Config
from redisson_py.testing import Host, Topology, find_redis_server, wait_until
from redisson_py.testing.errors import TopologyError
from redisson_py.testing.network.harness_connections import connect_in_namespace
from redisson_py.testing.network.topology_network import Member
from redisson_py.testing.topologies.waiting import NotYet

__all__ = ["STORE_PORT", "RemoteHolder", "sides", "start_store", "write_configs"]

STORE_PORT = 6379
"""The fenced resource's server listens here, on an address of its own in the
topology's namespace (whose port space is its own: no clash with the host's)."""

_HOLDER = "redisson_py.chaos.partition_holder"


class RemoteHolder:
    """Client A: a `partition_holder` process on a client host,
    holding one lock, and what it reported.

    A reader thread collects its JSON lines: ``lost`` (once) is kept as
    `told_at`; answers to commands are handed to `ask` in order.
    """

    def __init__(self, host: Host, process: subprocess.Popen[str], log: Path):
        self.host = host
        self.process = process
        self.log = log
        self.held: dict[str, Any] | None = None
        """A's ``held`` message (None until it came)."""
        self.told_at: float | None = None
        """When ``on_lock_lost`` was called in A's process (monotonic), or None."""
        self.reason = ""
        self._told = threading.Event()
        self._answers: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self._reader = threading.Thread(target=self._read, name="holder-reader", daemon=True)
        self._reader.start()

    @classmethod
    def start(
        cls,
        topology: Topology,
        host: Host,
        config: Path,
        name: str,
        *,
        api: str = "sync",
        fenced: bool = False,
        store: Path | None = None,
        timeout: float = 30.0,
    ) -> RemoteHolder:
        """Start A on ``host`` and wait until it holds ``name`` (raises
        `RuntimeError`, with its stderr, if it does not within ``timeout``)."""
        argv = [sys.executable, "-m", _HOLDER, "--config", str(config), "--lock", name]
        argv += ["--api", api, "--wait", str(timeout)]
        if fenced:
            argv.append("--fenced")
        if store is not None:
            argv += ["--store", str(store)]
        log = topology.directory / f"holder-{host.name}.log"
        with log.open("w") as sink:
            process = topology.network.popen(
                host, argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=sink, text=True
            )
        holder = cls(host, process, log)
        holder.held = holder._next(timeout + 15.0)
        if holder.held is None or holder.held.get("event") != "held":
            holder.stop()
            raise RuntimeError(f"holder {host.name} did not take {name}: {holder.stderr()}")
        return holder

    @property
    def token(self) -> int | None:
        """A's fencing token (a fenced lock's holder), else None."""
        token = (self.held or {}).get("token")
        return None if token is None else int(token)

    def _read(self) -> None:
        stdout: IO[str] | None = self.process.stdout
        assert stdout is not None
        for line in stdout:
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if message.get("event") == "lost":
                self.told_at, self.reason = float(message["at"]), str(message["reason"])
                self._told.set()
            else:
                self._answers.put(message)
        self._answers.put(None)  # the process is gone

    def _next(self, timeout: float) -> dict[str, Any] | None:
        try:
            return self._answers.get(timeout=timeout)
        except queue.Empty:
            return None

    def wait_told(self, deadline: float) -> float | None:
        """Wait until A was told its lock is lost, or ``deadline`` (monotonic) passes;
        `told_at`."""
        self._told.wait(max(0.0, deadline - time.monotonic()))
        return self.told_at

    def ask(self, command: str, timeout: float = 20.0) -> dict[str, Any]:
        """Send one command (see `partition_holder`) and return
        its answer; raises `RuntimeError` if none comes within ``timeout``."""
        stdin = self.process.stdin
        assert stdin is not None
        try:
            stdin.write(command + "\n")
            stdin.flush()
        except OSError as error:
            raise RuntimeError(f"holder gone ({error}): {self.stderr()}") from None
        answer = self._next(timeout)
        if answer is None:
            raise RuntimeError(f"holder did not answer {command!r}: {self.stderr()}")
        return answer

    def stderr(self, lines: int = 15) -> str:
        """The tail of A's stderr (its log lines)."""
        with contextlib.suppress(OSError):
            return "\n".join(self.log.read_text().splitlines()[-lines:])
        return ""

    def stop(self) -> None:
        """Ask A to shut down and exit; kill it if it does not within 10 s."""
        with contextlib.suppress(OSError, ValueError):
            if self.process.stdin is not None:
                self.process.stdin.write("exit\n")
                self.process.stdin.close()
        try:
            self.process.wait(10.0)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def sides(
    topology: Topology, minority: Iterable[Member], untouched: Iterable[Host] = ()
) -> tuple[list[Host], list[Host]]:
    """The two sides of a split: ``minority``, and every other node and client host but
    ``untouched`` (a host both sides keep reaching, such as a fenced resource's server)."""
    network = topology.network
    inside = [network.resolve(member) for member in minority]
    left_out = {host.name for host in inside} | {host.name for host in untouched}
    return inside, [host for host in network.hosts() if host.name not in left_out]


def start_store(topology: Topology, host: Host) -> Config:
    """Start a redis-server on ``host`` (inside the topology's namespace; keep it out of
    every cut) for a fenced resource; returns a client config for it once it answers.
    It is stopped with the topology."""
    binary = getattr(topology.backend_impl, "binary", None) or find_redis_server()
    argv = [str(binary.path), "--bind", host.address, "--port", str(STORE_PORT)]
    argv += ["--save", "", "--appendonly", "no", "--protected-mode", "no"]
    process = topology.network.popen(
        host, argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    probe = connect_in_namespace(
        redis.Redis(host.address, STORE_PORT, socket_timeout=1.0, socket_connect_timeout=1.0),
        topology.network.namespace,
    )

    def answers() -> None:
        if process.poll() is not None:
            raise TopologyError(f"the fenced resource's server exited ({process.returncode}).")
        try:
            probe.ping()
        except redis.RedisError as error:
            raise NotYet(f"the fenced resource's server does not answer yet: {error}") from None

    try:
        wait_until(answers, timeout=15.0, what="the fenced resource's server")
    finally:
        probe.close()
    config = Config()
    section = config.use_single_server(address=f"redis://{host.address}:{STORE_PORT}")
    section.timeout = section.connect_timeout = 1.0
    return config


def write_configs(path: Path, configs: Sequence[Config]) -> Path:
    """``configs`` as one YAML file (several documents: a RedLock's clients)."""
    path.write_text("".join(config.to_yaml() for config in configs))
    return path
