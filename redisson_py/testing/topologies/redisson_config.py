"""Redisson-format client configs (the YAML Redisson's ``Config.fromYAML`` reads).

Pure functions of addresses, one per Redisson server mode. Only the keys that describe
where the servers are, plus the few a test topology needs different from Redisson's
defaults, are written; everything else is left to the defaults of whoever loads it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import yaml

__all__ = [
    "cluster_config",
    "dump_yaml",
    "master_slave_config",
    "replicated_config",
    "sentinel_config",
    "single_config",
]

# Topology refresh in tests: fast enough to follow a failover within a test's patience.
SCAN_INTERVAL_MS = 1000


def single_config(address: str) -> dict[str, Any]:
    return {"singleServerConfig": {"address": address}}


def master_slave_config(master: str, slaves: Sequence[str]) -> dict[str, Any]:
    return {"masterSlaveServersConfig": {"masterAddress": master, "slaveAddresses": list(slaves)}}


def replicated_config(nodes: Sequence[str]) -> dict[str, Any]:
    return {
        "replicatedServersConfig": {"nodeAddresses": list(nodes), "scanInterval": SCAN_INTERVAL_MS}
    }


def sentinel_config(sentinels: Sequence[str], master_name: str) -> dict[str, Any]:
    return {
        "sentinelServersConfig": {
            "sentinelAddresses": list(sentinels),
            "masterName": master_name,
            # Redisson refuses to start with fewer than two sentinels when this is on.
            "checkSentinelsList": len(sentinels) >= 2,
            "scanInterval": SCAN_INTERVAL_MS,
        }
    }


def cluster_config(nodes: Sequence[str]) -> dict[str, Any]:
    return {
        "clusterServersConfig": {"nodeAddresses": list(nodes), "scanInterval": SCAN_INTERVAL_MS}
    }


def dump_yaml(configs: Sequence[dict[str, Any]]) -> str:
    """One YAML document per config, separated by ``---`` when there are several."""
    documents = [yaml.safe_dump(c, sort_keys=False, default_flow_style=False) for c in configs]
    if len(documents) == 1:
        return documents[0]
    return "".join(f"---\n{doc}" for doc in documents)
