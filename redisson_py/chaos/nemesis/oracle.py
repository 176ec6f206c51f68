"""The oracle: a redis-server that holds the run's fenced resources, which no fault
touches and both sides of every partition reach.

It runs inside the topology's network namespace on a client host of its own,
``oracle`` (started with ``topology.network.popen``, bound to that host's address).
Partitions are iptables rules between named nodes and hosts; the nemesis never names
``oracle`` in a cut (it never uses ``topology.isolate``, which would), and checks after
every cut that no cut names it. Killing, pausing or moving the clock of a node never
reaches it either: it is not a node of the topology.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from redisson_py import Config
from redisson_py.core import keyspace
from redisson_py.testing import Topology, wait_until
from redisson_py.testing.errors import TopologyError
from redisson_py.testing.network.cuts import Host
from redisson_py.testing.network.harness_connections import connect_in_namespace
from redisson_py.testing.topologies.waiting import NotYet

__all__ = ["ORACLE_HOST", "ORACLE_PORT", "Oracle", "start_oracle"]

ORACLE_HOST = "oracle"
"""The client host the oracle runs on."""

ORACLE_PORT = 6379
"""Its port on that host's address (the namespace is the topology's own: no clash)."""


@dataclass
class Oracle:
    """The running oracle: its host, its process, and a harness client of it (from
    127.0.0.1, which no cut names)."""

    host: Host
    process: subprocess.Popen[Any]
    client: redis.Redis

    @property
    def address(self) -> str:
        return f"redis://{self.host.address}:{ORACLE_PORT}"

    def client_config(self, *, timeout: float = 1.0) -> Config:
        """The workers' Redisson config of the oracle (a single server)."""
        millis = int(timeout * 1000)
        return Config.from_dict(
            {
                "singleServerConfig": {
                    "address": self.address,
                    "timeout": millis,
                    "connectTimeout": millis,
                }
            }
        )

    def highest_token(self, resource: str) -> int | None:
        """The highest token ``resource`` accepted (its fence record), None if none."""
        record = keyspace.fence_record(resource, by_slot=False)
        value = self.client.hget(record, "token")
        return None if value is None else int(value)

    def stop(self) -> None:
        self.client.close()
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


def start_oracle(topology: Topology, directory: Path) -> Oracle:
    """Start the oracle in ``topology``'s namespace (see the module docstring); its log
    and working files go to ``directory``. Raises
    [`TopologyError`][redisson_py.testing.TopologyError] if it does not answer within 10
    s."""
    binary = getattr(topology.backend_impl, "binary", None)
    if binary is None:
        raise TopologyError("the nemesis's oracle needs the process backend's redis-server.")
    host = topology.client_host(ORACLE_HOST)
    directory.mkdir(parents=True, exist_ok=True)
    argv = [
        str(binary.path),
        "--bind",
        host.address,
        "--port",
        str(ORACLE_PORT),
        "--save",
        "",
        "--appendonly",
        "no",
        "--dir",
        str(directory),
        # Protected mode lets in 127.0.0.1 only; the workers come from their hosts'
        # 127.0.0.x, inside a namespace nothing else can reach.
        "--protected-mode",
        "no",
    ]
    with (directory / "oracle.log").open("ab") as log:
        process = topology.network.popen(
            host, argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT
        )
    client = redis.Redis(
        host=host.address,
        port=ORACLE_PORT,
        decode_responses=True,
        socket_timeout=2.0,
        socket_connect_timeout=2.0,
        retry=Retry(NoBackoff(), 0),
    )
    connect_in_namespace(client, topology.network.namespace)
    oracle = Oracle(host, process, client)

    def answering() -> None:
        if process.poll() is not None:
            raise TopologyError(f"the oracle exited; see {directory / 'oracle.log'}")
        try:
            client.ping()
        except (redis.ConnectionError, redis.TimeoutError) as exc:
            raise NotYet(f"the oracle does not answer yet: {exc}") from None

    try:
        wait_until(answering, timeout=10.0, what="the oracle answering")
    except BaseException:
        oracle.stop()
        raise
    return oracle
