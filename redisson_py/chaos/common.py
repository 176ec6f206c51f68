"""Helpers the chaos scenarios share: topologies to break, client configs, promotion."""

from __future__ import annotations

import logging
import time
import uuid
from typing import Any

from redis.crc import key_slot

from redisson_py import Config, ConnectError, Redisson
from redisson_py.config import ConstantDelay
from redisson_py.testing import HarnessTimeout, Node, Topology, start_topology
from redisson_py.testing.errors import TopologyError

log = logging.getLogger("redisson_py.chaos")

TOPOLOGY_OVERRIDES: dict[str, dict[str, Any]] = {
    # The race: a master with exactly one replica (and three sentinels).
    "sentinel": {"replicas_per_master": 1},
    "cluster": {},
    # One master, two replicas, no sentinel: the managed service's failover is played by
    # `managed_failover` (a replica promoted, the others re-pointed at it).
    "replicated": {},
    "redlock": {},
    "single": {},
}


def fresh_topology(kind: str, backend: str) -> Topology:
    """A new topology of ``kind`` to break (never a shared one)."""
    return start_topology(kind, backend=backend, **TOPOLOGY_OVERRIDES.get(kind, {}))


def unique(prefix: str) -> str:
    return f"chaos:{prefix}:{uuid.uuid4().hex[:10]}"


def client_configs(
    topology: Topology,
    *,
    sync: bool = False,
    watchdog: float = 30.0,
    timeout: float = 1.0,
    retry_delay: float = 0.2,
) -> list[Config]:
    """Client configs for ``topology`` (one per master for redlock), with short command
    timeouts so a dead or paused node costs little, and replica sync on or off."""
    configs = []
    for mapping in topology.redisson_configs():
        config = Config.from_dict(mapping)
        section = config.server_config
        section.timeout = timeout
        section.connect_timeout = timeout
        section.retry_delay = ConstantDelay(retry_delay)
        config.check_lock_synced_slaves = sync
        config.lock_watchdog_timeout = watchdog
        configs.append(config)
    return configs


def master_of(topology: Topology, key: str) -> Node:
    """The node that serves ``key`` now."""
    if topology.layout == "cluster":
        return topology.master_for_slot(key_slot(key.encode()))
    return topology.master()


def promote_replica_of(topology: Topology, old: Node, timeout: float = 60.0) -> Node:
    """Let a replica of the dead ``old`` master take over, nudging the topology when it
    stalls (sentinel may wait for a replica it finds fit; a cluster replica whose link
    was cut may not stand for election on its own); on a ``replicated`` topology, the
    managed service's failover (`managed_failover`)."""
    if topology.layout == "cluster":
        return topology.failover(old, force=True, timeout=timeout)
    if topology.layout == "replication":
        # Nothing in the topology promotes on its own: the service's failover, at once.
        return managed_failover(topology, old)
    try:
        return topology.wait_for_new_master(old, timeout=min(10.0, timeout))
    except HarnessTimeout:
        log.info("sentinel promotion stalled; asking with SENTINEL FAILOVER")
        return topology.failover(timeout=timeout)


def managed_failover(
    topology: Topology, old: Node, new: Node | None = None, *, demote_old: bool = True
) -> Node:
    """A managed service's failover on a ``replicated`` topology (no sentinel): ``new``
    (default: the first running replica of ``old``) is promoted (``REPLICAOF NO ONE``),
    then every other running data node is pointed at it, ``old`` too unless
    ``demote_old`` is false (a service that cannot reach the old master, cut off by a
    partition, cannot demote it: it stays a master until the heal). Each node's config
    is rewritten so a restart keeps the new wiring. Returns ``new``; raises
    [`TopologyError`][redisson_py.testing.TopologyError] when ``old`` has no running
    replica."""
    if new is None:
        candidates = [n for n in topology.replicas_of(old) if n.expected_up]
        if not candidates:
            raise TopologyError(f"{old.name} has no running replica to promote")
        new = candidates[0]
    new.command("REPLICAOF", "NO", "ONE")
    new.command("CONFIG", "REWRITE")
    for node in topology.data_nodes:
        if node is new or not node.expected_up or (node is old and not demote_old):
            continue
        node.command("REPLICAOF", new.host, str(new.port))
        node.command("CONFIG", "REWRITE")
    return new


def create_client(config: Config, timeout: float = 20.0) -> Redisson:
    """A client, retried while the topology settles (right after a switch, sentinels may
    still name the old master, or the new one may refuse writes for a moment)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return Redisson.create(config)
        except ConnectError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)
