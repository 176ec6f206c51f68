"""What the mixed-fleet tests share (the fixtures are in ``conftest.py``): the cells (a
topology and a Redisson version), the `Cell` a test gets, the YAML both clients read.

The cells: both Redisson versions on the single server, the newest on sentinel and
cluster (the full matrix costs a JVM start and a client per cell and module: the single
server is where the versions' wire differences show, the other topologies test routing,
which is the same code in both).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import redis
from java_peer import JAVA_PEER_VERSIONS, NEWEST, JavaClient

from redisson_py.core.routing import naming
from redisson_py.testing import Topology
from redisson_py.testing.owners import Flavor

WATCHDOG_MS = 3000
# How long a fair lock's queued waiter keeps its place beyond the one ahead of it (both
# clients read it from the YAML; Redisson's default is 5 minutes).
FAIR_WAIT_MS = 2000

CELLS = [
    *(("single", version) for version in JAVA_PEER_VERSIONS),
    ("sentinel", NEWEST),
    ("cluster", NEWEST),
]


def cells(keep: Any) -> Any:
    """``@cells(lambda kind, version: ...)``: run a test on the cells ``keep`` picks only."""
    chosen = [c for c in CELLS if keep(*c)]
    return pytest.mark.parametrize(
        "cell", chosen, ids=[f"{kind}-{version}" for kind, version in chosen], indirect=True
    )


@dataclass
class Cell:
    """One topology and Redisson version, with a client of each language on it."""

    topology: Topology
    version: str
    yaml_path: Path
    java: JavaClient
    py: Any  # a redisson-py client of the test's flavor
    flavor: Flavor

    @property
    def by_slot(self) -> bool:
        """True on a cluster: auxiliary names take the slot-safe form."""
        return self.topology.layout == "cluster"

    def aux(self, prefix: str, name: str) -> str:
        """Auxiliary key or channel ``prefix`` of ``name`` (Redisson's ``prefixName``)."""
        return naming.prefixed_name(prefix, name, by_slot=self.by_slot)

    def subscribers(self, channel: str) -> tuple[int, int]:
        """Connections subscribed to ``channel`` on any data node: by SUBSCRIBE, and by
        SSUBSCRIBE (sharded pub/sub, Redis 7)."""
        plain = sharded = 0
        for node in self.topology.data_nodes:
            if node.state != "running":
                continue
            client = node.client()
            try:
                plain += int(dict(client.pubsub_numsub(channel)).get(channel, 0))
                if self.by_slot:
                    reply = client.execute_command("PUBSUB", "SHARDNUMSUB", channel)
                    sharded += int(reply[1])
            finally:
                client.close()
        return plain, sharded

    @contextlib.contextmanager
    def raw(self, name: str) -> Iterator[redis.Redis]:
        """redis-py on the master serving ``name``, to look at the keys as they are."""
        if self.by_slot:
            node = self.topology.master_for_slot(naming.key_slot(name))
        else:
            node = self.topology.master()
        client = node.client()
        try:
            yield client
        finally:
            client.close()


def mixed_yaml(topology: Topology) -> str:
    """The topology's Redisson YAML with a short watchdog timeout (renewals every second)
    and fair-lock wait timeout."""
    return (
        topology.redisson_yaml()
        + f"lockWatchdogTimeout: {WATCHDOG_MS}\nfairLockWaitTimeout: {FAIR_WAIT_MS}\n"
    )
