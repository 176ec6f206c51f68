"""What "ready" means per layout, as checks for
[`wait_until`][redisson_py.testing.wait_until].

Each check looks only at the nodes the harness last left running (``Node.expected_up``):
a node killed or paused on purpose is not waited for. A check returns when the state
holds and raises `NotYet` saying what is missing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from redisson_py.testing.topologies.node import Node
from redisson_py.testing.topologies.replies import (
    SlotRange,
    parse_cluster_nodes,
    parse_cluster_slots,
    parse_info,
    parse_pairs,
    parse_replica_entries,
)
from redisson_py.testing.topologies.waiting import NotYet

if TYPE_CHECKING:
    from redisson_py.testing.topologies.topology import Topology

__all__ = [
    "check_cluster",
    "check_replication",
    "check_sentinels",
    "check_standalone",
    "sentinel_master_port",
]

CLUSTER_SLOTS = 16384


def _up(nodes: Sequence[Node]) -> list[Node]:
    return [n for n in nodes if n.expected_up]


def check_standalone(topology: Topology) -> None:
    """Every running node answers PING."""
    for node in _up(topology.data_nodes):
        if not node.ping():
            raise NotYet(f"{node.name} does not answer PING")


def check_replication(topology: Topology) -> Node:
    """Exactly one running data node is a master, every other running one replicates it
    with its link up, and the master lists them all online. Returns the master."""
    up = _up(topology.data_nodes)
    infos = {node.name: node.info("replication") for node in up}
    masters = [n for n in up if infos[n.name].get("role") == "master"]
    if len(masters) != 1:
        names = ", ".join(n.name for n in masters) or "none"
        raise NotYet(f"{len(masters)} running data nodes report role master ({names})")
    master = masters[0]
    online = {
        int(entry.get("port", 0))
        for entry in parse_replica_entries(infos[master.name])
        if entry.get("state") == "online"
    }
    for node in up:
        if node is master:
            continue
        info = infos[node.name]
        if info.get("role") != "slave" or info.get("master_port") != str(master.port):
            raise NotYet(f"{node.name} does not replicate {master.name} yet")
        if info.get("master_link_status") != "up":
            raise NotYet(f"{node.name}'s link to {master.name} is not up yet")
        if node.port not in online:
            raise NotYet(f"{master.name} does not list {node.name} as an online replica yet")
    return master


def sentinel_master_port(sentinel: Node, master_name: str) -> int:
    """The master's port per one sentinel (``SENTINEL GET-MASTER-ADDR-BY-NAME``)."""
    reply = sentinel.command("SENTINEL", "GET-MASTER-ADDR-BY-NAME", master_name)
    if not reply:
        raise NotYet(f"{sentinel.name} does not know master {master_name!r}")
    return int(reply[1])


def check_sentinels(topology: Topology, master: Node) -> None:
    """Every running sentinel names ``master``, sees it up, knows every running replica
    as healthy and every other running sentinel as connected."""
    name = topology.master_name
    assert name is not None
    sentinels = _up(topology.sentinels)
    replicas = {n.port: n for n in _up(topology.data_nodes) if n is not master}
    for sentinel in sentinels:
        port = sentinel_master_port(sentinel, name)
        if port != master.port:
            raise NotYet(f"{sentinel.name} names port {port} as master, not {master.name}")
        state = parse_pairs(sentinel.command("SENTINEL", "MASTER", name))
        flags = set(state.get("flags", "").split(","))
        if flags & {"s_down", "o_down", "disconnected", "failover_in_progress"}:
            raise NotYet(f"{sentinel.name} flags the master {sorted(flags)}")
        known = {
            int(entry.get("port", 0)): entry
            for entry in (
                parse_pairs(item) for item in sentinel.command("SENTINEL", "REPLICAS", name)
            )
        }
        for port, replica in replicas.items():
            entry = known.get(port)
            if entry is None:
                raise NotYet(f"{sentinel.name} does not know {replica.name} yet")
            replica_flags = set(entry.get("flags", "").split(","))
            if replica_flags & {"s_down", "o_down", "disconnected"}:
                raise NotYet(f"{sentinel.name} flags {replica.name} {sorted(replica_flags)}")
            if entry.get("master-link-status") != "ok" or entry.get("master-port") != str(
                master.port
            ):
                raise NotYet(f"{sentinel.name} does not see {replica.name} in sync yet")
        peers = {
            int(entry.get("port", 0)): set(entry.get("flags", "").split(","))
            for entry in (
                parse_pairs(item) for item in sentinel.command("SENTINEL", "SENTINELS", name)
            )
        }
        for other in sentinels:
            if other is sentinel:
                continue
            peer_flags = peers.get(other.port)
            if peer_flags is None:
                raise NotYet(f"{sentinel.name} does not know {other.name} yet")
            if peer_flags & {"s_down", "o_down", "disconnected"}:
                raise NotYet(f"{sentinel.name} flags {other.name} {sorted(peer_flags)}")


def check_cluster(topology: Topology) -> list[SlotRange]:
    """Every running node says cluster_state ok with all 16384 slots served, knows every
    node, and reports the same slot map, whose masters all run; every running replica's
    link is up. Returns the agreed slot map."""
    up = _up(topology.data_nodes)
    total = len(topology.data_nodes)
    agreed: list[tuple[int, int, int]] | None = None
    agreed_map: list[SlotRange] = []
    for node in up:
        _check_cluster_info(node, total)
        slot_map = parse_cluster_slots(node.command("CLUSTER", "SLOTS"))
        shape = [(r.start, r.end, r.master_port) for r in slot_map]
        if agreed is None:
            agreed, agreed_map = shape, slot_map
        elif shape != agreed:
            raise NotYet(f"{node.name} disagrees with {up[0].name} on the slot map")
    if agreed is None:
        raise NotYet("no cluster node is running")
    if sum(end - start + 1 for start, end, _ in agreed) != CLUSTER_SLOTS:
        raise NotYet("the slot map does not cover all 16384 slots")
    up_ports = {n.port for n in up}
    for _, _, port in agreed:
        if port not in up_ports:
            raise NotYet(f"slots are still served by port {port}, which is not running")
    for node in up:
        _check_cluster_links(node, up_ports)
    return agreed_map


def _check_cluster_info(node: Node, total: int) -> None:
    """``node`` says cluster_state ok, all slots ok, and knows ``total`` nodes."""
    info = parse_info(str(node.command("CLUSTER", "INFO")))
    if info.get("cluster_state") != "ok":
        raise NotYet(f"{node.name} reports cluster_state {info.get('cluster_state')}")
    if info.get("cluster_slots_ok") != str(CLUSTER_SLOTS):
        raise NotYet(f"{node.name} sees {info.get('cluster_slots_ok')} slots ok")
    if info.get("cluster_known_nodes") != str(total):
        raise NotYet(f"{node.name} knows {info.get('cluster_known_nodes')} of {total} nodes")


def _check_cluster_links(node: Node, up_ports: set[int]) -> None:
    """``node``'s link to its master is up (a replica), and it flags no running node."""
    info = node.info("replication")
    if info.get("role") == "slave" and info.get("master_link_status") != "up":
        raise NotYet(f"{node.name}'s link to its master is not up yet")
    # A node that came back (restart, resume) keeps a fail flag in others' views until
    # gossip clears it; such a cluster may refuse a manual failover.
    for entry in parse_cluster_nodes(str(node.command("CLUSTER", "NODES"))):
        if entry.port in up_ports and (entry.failed or not entry.connected):
            raise NotYet(f"{node.name} still flags port {entry.port} {sorted(entry.flags)}")
