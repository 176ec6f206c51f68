"""Helpers the chaos scenarios share: topologies to break, client configs, promotion."""

from __future__ import annotations

import logging
import time
import uuid
from typing import Any

from redisson_py import Config, ConnectError, Redisson
from redisson_py.config import ConstantDelay
from redisson_py.core.routing.naming import key_slot
from redisson_py.testing import HarnessTimeout, Node, Topology, start_topology

log = logging.getLogger("redisson_py.chaos")

TOPOLOGY_OVERRIDES: dict[str, dict[str, Any]] = {
    # The race: a master with exactly one replica (and three sentinels).
    "sentinel": {"replicas_per_master": 1},
    "cluster": {},
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
        return topology.master_for_slot(key_slot(key))
    return topology.master()


def promote_replica_of(topology: Topology, old: Node, timeout: float = 60.0) -> Node:
    """Let a replica of the dead ``old`` master take over, nudging the topology when it
    stalls (sentinel may wait for a replica it finds fit; a cluster replica whose link
    was cut may not stand for election on its own)."""
    if topology.layout == "cluster":
        return topology.failover(old, force=True, timeout=timeout)
    try:
        return topology.wait_for_new_master(old, timeout=min(10.0, timeout))
    except HarnessTimeout:
        log.info("sentinel promotion stalled; asking with SENTINEL FAILOVER")
        return topology.failover(timeout=timeout)


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
