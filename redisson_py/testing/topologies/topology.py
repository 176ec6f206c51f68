"""A started topology: its nodes, live queries about them, failover helpers, teardown.

Obtained from
[`redisson_py.testing.start_topology`][redisson_py.testing.start_topology]. Queries that
say "live" ask the nodes now; the node lists (``nodes``, ``data_nodes``, ``sentinels``)
are fixed at start and never change. All waits poll with a deadline and raise
`HarnessTimeout` (a ``TopologyError`` and a ``TimeoutError``) saying what did not
happen.

A topology started with ``network="namespace"`` can also be partitioned while every node
keeps running ([`Topology.partition`][redisson_py.testing.Topology.partition],
[`Topology.isolate`][redisson_py.testing.Topology.isolate],
[`Topology.heal`][redisson_py.testing.Topology.heal]); the harness's own queries still
reach every node then.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import TracebackType
from typing import Any

import redis

from redisson_py.testing.backends.base import Backend, Owner
from redisson_py.testing.errors import TopologyError
from redisson_py.testing.network.cuts import Host
from redisson_py.testing.network.topology_network import Member, Side, TopologyNetwork
from redisson_py.testing.topologies import cleanup, redisson_config
from redisson_py.testing.topologies.node import Node
from redisson_py.testing.topologies.ports import release_ports
from redisson_py.testing.topologies.readiness import (
    check_cluster,
    check_replication,
    check_sentinels,
    check_standalone,
    sentinel_master_port,
)
from redisson_py.testing.topologies.replies import (
    SlotRange,
    parse_cluster_nodes,
    parse_cluster_slots,
)
from redisson_py.testing.topologies.security import Secrets
from redisson_py.testing.topologies.spec import TopologySpec
from redisson_py.testing.topologies.state import remove_state_dir, write_state
from redisson_py.testing.topologies.waiting import HarnessTimeout, NotYet, wait_until

__all__ = ["Topology"]

DEFAULT_TIMEOUT = 60.0


class Topology:
    """A running topology of one spec on one backend.

    Attributes: ``kind`` (the spec's name: ``"sentinel"``), ``layout``, ``spec``,
    ``backend`` (``"process"`` or ``"container"``), ``id`` (unique, names its directory
    and containers), ``directory``, ``nodes`` (data nodes first, then sentinels),
    ``master_name`` (sentinel layout; else None), ``detached``, ``network_mode``
    (``"host"`` or ``"namespace"``).

    Usable as a context manager: leaving the block stops it.
    """

    def __init__(
        self,
        spec: TopologySpec,
        backend: Backend,
        *,
        topology_id: str,
        directory: Path,
        owner: Owner,
        detached: bool = False,
        explicit_ports: bool = False,
        network: TopologyNetwork | None = None,
    ):
        self.spec = spec
        self.kind = spec.name
        self.layout = spec.layout
        self.backend = backend.name
        self.backend_impl = backend
        self.id = topology_id
        self.directory = directory
        self.owner = owner
        self.detached = detached
        self.explicit_ports = explicit_ports
        self.master_name = spec.sentinel.master_name if spec.sentinel else None
        self.nodes: list[Node] = []
        self.created = time.time()
        self._shared_reason: str | None = None
        self._stopped = False
        self._slot_map: list[SlotRange] = []
        self.secrets: Secrets | None = None
        """The start's password and TLS files, for a spec with ``security`` (else None)."""
        self._network = network
        self.network_mode = "host" if network is None else "namespace"

    def __repr__(self) -> str:
        return f"<Topology {self.kind} {self.backend} {self.id} nodes={len(self.nodes)}>"

    def __enter__(self) -> Topology:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # -- sharing guard ---------------------------------------------------------------------

    def share(self, reason: str) -> None:
        """Mark the topology shared: destructive calls on it or its nodes raise
        [`TopologyError`][redisson_py.testing.TopologyError] quoting ``reason`` until
        [`unshare`][redisson_py.testing.Topology.unshare]."""
        self._shared_reason = reason

    def unshare(self) -> None:
        """Allow destructive calls again (see [`share`][redisson_py.testing.Topology.share])."""
        self._shared_reason = None

    @property
    def shared(self) -> bool:
        """Whether destructive calls are refused now (see
        [`share`][redisson_py.testing.Topology.share])."""
        return self._shared_reason is not None

    def guard(self, action: str) -> None:
        """Raise if the topology is shared (used by nodes before destructive actions)."""
        if self._shared_reason is not None:
            raise TopologyError(f"refusing to {action}: {self._shared_reason}")

    # -- the nodes ---------------------------------------------------------------------------

    @property
    def data_nodes(self) -> list[Node]:
        """The redis-server nodes (masters and replicas as started), in start order."""
        return [n for n in self.nodes if n.kind == "redis"]

    @property
    def sentinels(self) -> list[Node]:
        """The sentinel nodes (empty unless the layout is sentinel)."""
        return [n for n in self.nodes if n.kind == "sentinel"]

    def node(self, name: str) -> Node:
        """The node called ``name`` (``"replica-0-1"``); raises ``KeyError`` if none."""
        for node in self.nodes:
            if node.name == name:
                return node
        raise KeyError(f"topology {self.kind} has no node {name!r}")

    def node_at(self, port: int) -> Node | None:
        """The node listening on ``port``, or None."""
        for node in self.nodes:
            if node.port == port:
                return node
        return None

    def _answering(self, nodes: list[Node]) -> list[tuple[Node, str]]:
        out = []
        for node in nodes:
            if node.state != "running":
                continue
            try:
                out.append((node, node.role()))
            except (redis.ConnectionError, redis.TimeoutError):
                continue
        return out

    def masters(self) -> list[Node]:
        """Live: the data nodes that answer and report role master."""
        return [n for n, role in self._answering(self.data_nodes) if role == "master"]

    def replicas(self) -> list[Node]:
        """Live: the data nodes that answer and report role slave."""
        return [n for n, role in self._answering(self.data_nodes) if role == "slave"]

    def master(self) -> Node:
        """The current master of a one-master topology (single, master-replica,
        replicated, sentinel).

        For the sentinel layout, the node the sentinels name (the first answering
        sentinel is asked); otherwise the data node that reports role master. Raises
        [`TopologyError`][redisson_py.testing.TopologyError] for multi-master topologies
        or when no master is found.
        """
        if self.layout == "sentinel":
            assert self.master_name is not None
            for sentinel in self.sentinels:
                if sentinel.state != "running":
                    continue
                with contextlib.suppress(redis.RedisError, NotYet):
                    node = self.node_at(sentinel_master_port(sentinel, self.master_name))
                    if node is not None:
                        return node
        if self.spec.masters != 1:
            raise TopologyError(
                f"topology {self.kind} has {self.spec.masters} masters; use masters()"
                + (" or master_for_slot()" if self.layout == "cluster" else "")
                + "."
            )
        masters = self.masters()
        if len(masters) == 1:
            return masters[0]
        if not masters:
            raise TopologyError(f"no running node of topology {self.kind} reports role master.")
        raise TopologyError(
            f"{len(masters)} nodes of topology {self.kind} report role master "
            f"({', '.join(m.name for m in masters)}); wait_ready() after a failover."
        )

    def replicas_of(self, master: Node) -> list[Node]:
        """Live: the answering data nodes that replicate ``master`` (by INFO replication)."""
        out = []
        for node in self.data_nodes:
            if node is master or node.state != "running":
                continue
            try:
                info = node.info("replication")
            except (redis.ConnectionError, redis.TimeoutError):
                continue
            if info.get("role") == "slave" and info.get("master_port") == str(master.port):
                out.append(node)
        return out

    # -- cluster slots -----------------------------------------------------------------------

    def _require_layout(self, layout: str, what: str) -> None:
        if self.layout != layout:
            raise TopologyError(f"{what} needs a {layout} topology; {self.kind} is {self.layout}.")

    def slot_map(self) -> list[SlotRange]:
        """Live: ``CLUSTER SLOTS`` from the first answering node (cluster only)."""
        self._require_layout("cluster", "slot_map()")
        last: Exception | None = None
        for node in self.data_nodes:
            if node.state != "running":
                continue
            try:
                return parse_cluster_slots(node.command("CLUSTER", "SLOTS"))
            except (redis.ConnectionError, redis.TimeoutError) as exc:
                last = exc
        raise TopologyError(f"no node of cluster {self.id} answers CLUSTER SLOTS ({last}).")

    def master_for_slot(self, slot: int) -> Node:
        """Live: the master serving hash slot ``slot`` (0..16383), per ``CLUSTER SLOTS``."""
        if not 0 <= slot < 16384:
            raise ValueError(f"slot must be in 0..16383, not {slot}")
        for entry in self.slot_map():
            if entry.start <= slot <= entry.end:
                node = self.node_at(entry.master_port)
                if node is not None:
                    return node
        raise TopologyError(f"no master serves slot {slot} in cluster {self.id}.")

    def slots_of(self, master: Node) -> list[tuple[int, int]]:
        """The slot ranges ``master`` served when the harness last saw the cluster ready."""
        return [(r.start, r.end) for r in self._slot_map if r.master_port == master.port]

    # -- network partitions (network="namespace") -------------------------------------------

    @property
    def network(self) -> TopologyNetwork:
        """The topology's network namespace: clients on a side (``popen``, ``joined``).

        Raises [`TopologyError`][redisson_py.testing.TopologyError] unless started with
        ``network="namespace"``.
        """
        if self._network is None:
            raise TopologyError(
                f"topology {self.id} runs on the host's network; start it with "
                'network="namespace" to partition it.'
            )
        return self._network

    def client_host(self, name: str) -> Host:
        """An endpoint for a client (the test process in ``network.joined``, a program
        from ``network.popen``) with an address of its own, after the nodes'. The same
        name gives the same host."""
        return self.network.client_host(name)

    def partition(self, side_a: Side, side_b: Side, *, one_way: bool = False) -> None:
        """Cut the network between ``side_a`` and ``side_b``; every node keeps running.

        A side is a member or an iterable of members:
        [`Node`][redisson_py.testing.Node], [`Host`][redisson_py.testing.Host] (from
        [`client_host`][redisson_py.testing.Topology.client_host]) or the name of
        either. Both ways by default: no packet passes between a member of ``side_a``
        and one of ``side_b``. ``one_way=True``: packets from ``side_a`` to ``side_b``
        are dropped, those from ``side_b`` to ``side_a`` still pass (so a request
        arrives and its reply is lost). Packets are dropped, not refused: senders see
        timeouts. Cuts add up until [`heal`][redisson_py.testing.Topology.heal]. The
        harness's own connections (from 127.0.0.1) are never cut. Raises
        [`TopologyError`][redisson_py.testing.TopologyError] for a member on both sides,
        an unknown member, or a topology not started with ``network="namespace"``.
        """
        self.guard("partition the network")
        self.network.partition(side_a, side_b, one_way=one_way)

    def isolate(self, *members: Member) -> None:
        """Cut ``members`` off, both ways, from every other node and every client host
        made so far; the members still reach each other (see
        [`partition`][redisson_py.testing.Topology.partition])."""
        self.guard("isolate nodes")
        self.network.isolate(*members)

    def heal(self) -> None:
        """Remove every cut; connections that waited through the partition carry on."""
        self.network.heal()

    def cuts(self) -> list[tuple[str, str]]:
        """The one-way cuts in force, as ``(from, to)`` pairs of node or host names."""
        return self.network.cuts()

    # -- waiting ---------------------------------------------------------------------------

    def _ready_check(self) -> None:
        if self.layout == "standalone":
            check_standalone(self)
        elif self.layout == "replication":
            check_replication(self)
        elif self.layout == "sentinel":
            master = check_replication(self)
            check_sentinels(self, master)
        else:
            self._slot_map = check_cluster(self)

    def wait_ready(self, timeout: float = DEFAULT_TIMEOUT) -> Topology:
        """Wait until the topology is usable; return it.

        Ready means, for the nodes the harness left running: standalone: they answer;
        replication: one master, every replica's link up; sentinel: that, plus every
        sentinel names the master, knows the replicas healthy and the other sentinels;
        cluster: every node says cluster_state ok with all 16384 slots, they agree on the
        slot map, every replica's link is up.
        """
        wait_until(self._ready_check, timeout=timeout, what=f"{self.kind} topology {self.id} ready")
        return self

    def wait_for_new_master(self, old: Node, timeout: float = DEFAULT_TIMEOUT) -> Node:
        """Wait until a failover away from ``old`` has completed; return the new master.

        sentinel: every running sentinel names one node other than ``old`` and that node
        reports role master. cluster: every slot ``old`` served is served by one other
        node that reports role master, and the running nodes say cluster_state ok.
        master-replica: another node reports role master (after
        [`failover`][redisson_py.testing.Topology.failover]). Raises
        [`TopologyError`][redisson_py.testing.TopologyError] for layouts with no
        failover.
        """
        if self.layout == "sentinel":
            return wait_until(
                lambda: self._sentinel_moved(old),
                timeout=timeout,
                what=f"sentinels promoting a new master instead of {old.name}",
            )
        if self.layout == "cluster":
            ranges = self.slots_of(old)
            if not ranges:
                raise TopologyError(
                    f"{old.name} served no slots when the cluster was last ready; pass a master."
                )
            return wait_until(
                lambda: self._cluster_moved(old, ranges),
                timeout=timeout,
                what=f"a replica of {old.name} taking over its slots",
            )
        if self.layout == "replication":

            def promoted() -> Node:
                for node, role in self._answering(self.data_nodes):
                    if node is not old and role == "master":
                        return node
                raise NotYet("no other node reports role master")

            return wait_until(promoted, timeout=timeout, what=f"a new master instead of {old.name}")
        raise TopologyError(
            f"topology {self.kind} has no replicas, so no master can replace another."
        )

    def _sentinel_moved(self, old: Node) -> Node:
        assert self.master_name is not None
        named: set[int] = set()
        for sentinel in self.sentinels:
            if sentinel.state == "running":
                named.add(sentinel_master_port(sentinel, self.master_name))
        if len(named) != 1:
            raise NotYet(f"the sentinels name different masters: ports {sorted(named)}")
        port = named.pop()
        if port == old.port:
            raise NotYet(f"the sentinels still name {old.name}")
        new = self.node_at(port)
        if new is None:
            raise NotYet(f"the sentinels name port {port}, which is not ours")
        if new.role() != "master":
            raise NotYet(f"{new.name} is named master but does not report role master yet")
        return new

    def _cluster_moved(self, old: Node, ranges: list[tuple[int, int]]) -> Node:
        owners: set[int] = set()
        for node in self.data_nodes:
            if node is old or node.state != "running":
                continue
            info = node.command("CLUSTER", "INFO")
            if "cluster_state:ok" not in str(info):
                raise NotYet(f"{node.name} does not report cluster_state ok")
            slots = parse_cluster_slots(node.command("CLUSTER", "SLOTS"))
            for start, end in ranges:
                serving = [r.master_port for r in slots if r.start <= start and end <= r.end]
                if not serving:
                    raise NotYet(f"{node.name} sees slots {start}-{end} split or unserved")
                owners.add(serving[0])
        if len(owners) != 1:
            raise NotYet(f"the nodes disagree on who serves {old.name}'s slots: {sorted(owners)}")
        port = owners.pop()
        if port == old.port:
            raise NotYet(f"{old.name} still serves its slots")
        new = self.node_at(port)
        if new is None or new.role() != "master":
            raise NotYet(f"port {port} does not report role master yet")
        with contextlib.suppress(redis.RedisError):
            self._slot_map = self.slot_map()
        return new

    # -- failover ----------------------------------------------------------------------------

    def failover(
        self, master: Node | None = None, *, force: bool = False, timeout: float = DEFAULT_TIMEOUT
    ) -> Node:
        """Move mastership away from ``master`` (default: the current master, or for a
        cluster the master of slot 0) and return the node that took over, once it has.

        sentinel: ``SENTINEL FAILOVER`` (always forced; ``force`` is ignored).
        cluster: ``CLUSTER FAILOVER`` on a running replica of ``master``; ``TAKEOVER``
        when ``force`` is true or ``master`` does not answer (killed or paused).
        master-replica: a replica is promoted (``REPLICAOF NO ONE``) and the other nodes
        are pointed at it, each config rewritten so restarts keep the new wiring.
        Raises [`TopologyError`][redisson_py.testing.TopologyError] for topologies without replicas.
        """
        self.guard("fail over")
        if self.layout == "sentinel":
            return self._sentinel_failover(master, timeout)
        if self.layout == "cluster":
            return self._cluster_failover(master, force, timeout)
        if self.layout == "replication":
            return self._manual_failover(master, timeout)
        raise TopologyError(f"topology {self.kind} has no replicas to fail over to.")

    def _sentinel_failover(self, master: Node | None, timeout: float) -> Node:
        assert self.master_name is not None
        old = self.master()
        if master is not None and master is not old:
            raise TopologyError(f"{master.name} is not the current master ({old.name} is).")
        name = self.master_name

        def requested() -> None:
            for sentinel in self.sentinels:
                if sentinel.state != "running":
                    continue
                try:
                    sentinel.command("SENTINEL", "FAILOVER", name)
                    return
                except redis.ResponseError as exc:
                    if "INPROG" in str(exc):
                        return
                    # NOGOODSLAVE: the sentinel has not yet seen a replica fit to promote.
                    raise NotYet(f"{sentinel.name} refused the failover: {exc}") from None
                except (redis.ConnectionError, redis.TimeoutError):
                    continue
            raise NotYet("no sentinel answers")

        deadline = time.monotonic() + timeout
        wait_until(requested, timeout=timeout, what="a sentinel accepting SENTINEL FAILOVER")
        return self.wait_for_new_master(old, max(1.0, deadline - time.monotonic()))

    def _cluster_failover(self, master: Node | None, force: bool, timeout: float) -> Node:
        if master is None:
            master = self.master_for_slot(0)
        if not self.slots_of(master):
            with contextlib.suppress(TopologyError):
                self._slot_map = self.slot_map()
        if not self.slots_of(master):
            raise TopologyError(f"{master.name} serves no slots; pass a master of the cluster.")
        candidates = self._cluster_replicas_of(master)
        if not candidates:
            raise TopologyError(f"{master.name} has no running replica to fail over to.")
        replica = candidates[0]
        dead = master.state != "running" or not master.ping()
        args = ["CLUSTER", "FAILOVER"] + (["TAKEOVER"] if force or dead else [])
        deadline = time.monotonic() + timeout
        # A manual failover the master does not cooperate with times out inside Redis
        # after 5 s and is dropped silently; ask again until the deadline.
        attempt_window = (
            5.0 + 2 * self.spec.cluster.node_timeout_ms / 1000 if self.spec.cluster else 8.0
        )
        while True:
            replica.command(*args)
            left = deadline - time.monotonic()
            try:
                return self.wait_for_new_master(master, max(1.0, min(attempt_window, left)))
            except HarnessTimeout:
                if time.monotonic() >= deadline:
                    raise

    def _cluster_replicas_of(self, master: Node) -> list[Node]:
        """Running replicas of ``master`` as the cluster sees them (works with ``master``
        dead: asked of other nodes, by node id). Every running node is asked and the
        answers merged: on a fresh cluster one node's gossip may not yet know which
        replicas follow which master, while each replica knows its own master."""
        found: dict[int, Node] = {}
        for node in self.data_nodes:
            if node is master or node.state != "running":
                continue
            try:
                entries = parse_cluster_nodes(str(node.command("CLUSTER", "NODES")))
            except (redis.ConnectionError, redis.TimeoutError):
                continue
            for entry in entries:
                if not entry.master_id or entry.master_id != master.cluster_id:
                    continue
                replica = self.node_at(entry.port)
                if replica is not None and replica.state == "running":
                    found[replica.port] = replica
        return sorted(found.values(), key=lambda n: n.name)

    def _manual_failover(self, master: Node | None, timeout: float) -> Node:
        old = master or self.master()
        # Replicas keep naming their master (link down) when it is dead, so this works
        # for a killed master too.
        candidates = self.replicas_of(old)
        if not candidates:
            raise TopologyError(f"{old.name} has no running replica to promote.")
        new = candidates[0]
        new.command("REPLICAOF", "NO", "ONE")
        new.command("CONFIG", "REWRITE")
        for node in self.data_nodes:
            if node is new or node.state != "running":
                continue
            node.command("REPLICAOF", new.host, new.port)
            node.command("CONFIG", "REWRITE")
        self.wait_ready(timeout)
        return new

    # -- client configs --------------------------------------------------------------------

    def redisson_configs(self) -> list[dict[str, Any]]:
        """Redisson client configs for this topology, as mappings.

        One config for every layout except standalone with several masters (``redlock``),
        which gets one ``singleServerConfig`` per master: a RedLock is built from one
        client per independent master.
        """
        configs = self._open_configs()
        if self.secrets is not None:
            fields = self.secrets.redisson_fields()
            for config in configs:
                for section in config.values():
                    section.update(fields)
        return configs

    def environment(self) -> dict[str, str]:
        """What to export for
        [`redisson_yaml`][redisson_py.testing.Topology.redisson_yaml]'s ``${VAR}``
        references: the password of a topology with ``auth`` or ``acl`` (empty
        otherwise)."""
        return {} if self.secrets is None else self.secrets.environment()

    def _open_configs(self) -> list[dict[str, Any]]:
        if self.layout == "standalone":
            return [redisson_config.single_config(n.address) for n in self.data_nodes]
        if self.layout == "replication" and self.spec.client == "replicated":
            return [redisson_config.replicated_config([n.address for n in self.data_nodes])]
        if self.layout == "replication":
            master = self._master_or_first()
            return [
                redisson_config.master_slave_config(
                    master.address, [n.address for n in self.data_nodes if n is not master]
                )
            ]
        if self.layout == "sentinel":
            assert self.master_name is not None
            return [
                redisson_config.sentinel_config(
                    [s.address for s in self.sentinels], self.master_name
                )
            ]
        return [redisson_config.cluster_config([n.address for n in self.data_nodes])]

    def _master_or_first(self) -> Node:
        try:
            return self.master()
        except TopologyError:
            return self.data_nodes[0]

    def redisson_config(self) -> dict[str, Any]:
        """The Redisson client config for this topology, as a mapping.

        Raises [`TopologyError`][redisson_py.testing.TopologyError] for a topology of
        several independent masters; use
        [`redisson_configs`][redisson_py.testing.Topology.redisson_configs] there.
        """
        configs = self.redisson_configs()
        if len(configs) != 1:
            raise TopologyError(
                f"topology {self.kind} has {len(configs)} independent masters and so "
                f"{len(configs)} client configs; use redisson_configs()."
            )
        return configs[0]

    def redisson_yaml(self) -> str:
        """The Redisson client config as YAML; for several independent masters, one YAML
        document per master, separated by ``---``."""
        return redisson_config.dump_yaml(self.redisson_configs())

    # -- state and teardown ------------------------------------------------------------------

    def state(self) -> dict[str, Any]:
        """What another process needs to find and stop this topology (the state file)."""
        nodes = []
        for node in self.nodes:
            entry: dict[str, Any] = {
                "name": node.name,
                "kind": node.kind,
                "host": node.host,
                "port": node.port,
            }
            if node.has_runtime:
                entry.update(node.runtime.record())
            nodes.append(entry)
        return {
            "id": self.id,
            "kind": self.kind,
            "layout": self.layout,
            "backend": self.backend,
            "owner": {"pid": self.owner.pid, "start_time": self.owner.start_time},
            "detached": self.detached,
            "created": self.created,
            "directory": str(self.directory),
            "nodes": nodes,
            "network": {"mode": "host"} if self._network is None else self._network.record(),
        }

    def save_state(self) -> None:
        """Write the state file another process reads to find and stop this topology."""
        write_state(self.directory, self.state())

    def _remove_nodes(self) -> list[BaseException]:
        """Remove every node's process or container (at once, where the backend can);
        the errors met."""
        removers: list[Callable[[], None]] = [
            node.runtime.remove for node in self.nodes if node.has_runtime
        ]
        errors: list[BaseException] = []
        if self.backend_impl.parallel_launch and len(removers) > 1:
            with ThreadPoolExecutor(max_workers=min(8, len(removers))) as pool:
                for future in [pool.submit(r) for r in removers]:
                    try:
                        future.result()
                    except Exception as exc:
                        errors.append(exc)
        else:
            for remove in removers:
                try:
                    remove()
                except Exception as exc:
                    errors.append(exc)
        return errors

    def stop(self) -> None:
        """Remove every node (processes killed, containers removed), free the ports,
        delete the topology's directory; with ``network="namespace"`` also stop the
        clients ``network.popen`` started and delete the namespace (and its cuts).
        Idempotent; never leaves a node running.

        Raises [`TopologyError`][redisson_py.testing.TopologyError] on a shared topology
        (see [`share`][redisson_py.testing.Topology.share]).
        """
        self.guard("stop the topology")
        if self._stopped:
            return
        self._stopped = True
        cleanup.unregister(self)
        for node in self.nodes:
            node.close()
        errors = self._remove_nodes()
        for node in self.nodes:
            node.state = "removed"
        namespace_left = False
        if self._network is not None:
            try:
                self._network.close()
            except Exception as exc:
                errors.append(exc)
                namespace_left = True
        release_ports([n.port for n in self.nodes], with_bus=self.layout == "cluster")
        with contextlib.suppress(Exception):
            self.backend_impl.close()
        # A namespace that would not go keeps its state file: the sweep after this
        # process ends deletes it from there.
        if not os.environ.get("REDISSON_PY_KEEP_RUN_DIR") and not namespace_left:
            remove_state_dir(self.directory)
        if errors:
            raise TopologyError(
                f"stopping topology {self.id} failed ({len(errors)} problem(s)): {errors[0]}"
            )
