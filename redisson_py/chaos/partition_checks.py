"""What the ``heal`` split checks once the cut is gone: the old master has rejoined as a
replica of the new one, and the lock's key on every node of its shard names B only."""

from __future__ import annotations

import functools

from redisson_py.core.keyspace import ACQUIRE_FIELD_PREFIX, owner_field
from redisson_py.testing import HarnessTimeout, Node, Topology, wait_until
from redisson_py.testing.topologies.waiting import NotYet

__all__ = ["key_names_only", "rejoined_shard"]

REJOIN_TIMEOUT = 60.0
KEY_TIMEOUT = 15.0


def rejoined_shard(topology: Topology, old: Node, new: Node) -> list[Node]:
    """Wait until ``old`` replicates ``new`` with its link up (sentinel demotes it; a
    cluster node sees the newer epoch and follows); then the shard: ``new`` and every
    data node that replicates it, ``old`` among them. Raises
    `HarnessTimeout` after 60 s."""
    wait_until(
        functools.partial(_follows, old, new),
        timeout=REJOIN_TIMEOUT,
        what=f"{old.name} rejoining as a replica of {new.name}",
    )
    return [new, *(n for n in topology.data_nodes if n is not new and _is_replica_of(n, new))]


def key_names_only(shard: list[Node], name: str, client_id: str, owner: int) -> str | None:
    """None once the lock ``name`` on every node of ``shard`` is held once by
    ``owner`` of client ``client_id`` and names no one else (waited for up to 15 s:
    replicas catch up); else what a node had."""
    field = owner_field(client_id, owner)
    try:
        wait_until(
            functools.partial(_names_only, shard, name, field),
            timeout=KEY_TIMEOUT,
            what=f"{name} naming {field} only on every node",
        )
    except HarnessTimeout as error:
        return str(error)
    return None


def _follows(node: Node, master: Node) -> None:
    if not _is_replica_of(node, master):
        raise NotYet(f"{node.name} does not replicate {master.name} yet")
    if node.info("replication").get("master_link_status") != "up":
        raise NotYet(f"{node.name}'s link to {master.name} is not up yet")


def _is_replica_of(node: Node, master: Node) -> bool:
    try:
        info = node.info("replication")
    except Exception:  # a node that does not answer follows no one
        return False
    return (
        info.get("role") == "slave"
        and info.get("master_host") == master.host
        and info.get("master_port") == str(master.port)
    )


def _names_only(nodes: list[Node], name: str, field: str) -> None:
    for node in nodes:
        fields = _hgetall(node, name)
        # The hash holds one count per owner and redisson-py's acquire latch per owner
        # (``redisson_py_acquire:<owner>``): both must be B's alone.
        holds = {f: v for f, v in fields.items() if not f.startswith(ACQUIRE_FIELD_PREFIX)}
        latches = {f.removeprefix(ACQUIRE_FIELD_PREFIX) for f in fields if f not in holds}
        if holds != {field: "1"} or not latches <= {field}:
            raise NotYet(f"{node.name} has {name} = {fields}")


def _hgetall(node: Node, name: str) -> dict[str, str]:
    client = node.client()
    try:
        # READONLY first, on the same connection: a cluster replica serves reads of its
        # shard only then. Nodes without cluster support refuse it: errors are returned.
        pipe = client.pipeline(transaction=False)
        pipe.execute_command("READONLY")  # type: ignore[no-untyped-call]
        pipe.hgetall(name)
        reply = pipe.execute(raise_on_error=False)[1]
    finally:
        client.close()
    if isinstance(reply, Exception):
        raise NotYet(f"{node.name} answered {reply!r}")
    return {str(k): str(v) for k, v in dict(reply).items()}
