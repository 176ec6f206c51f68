"""Scenario 1, the replication race: a master grants a lock and dies before its replica
has the key, so a second client is granted the same lock.

Made deterministic: the replica is paused and its replication link cut (``CLIENT KILL
TYPE replica`` on the master: pausing alone is not enough, bytes already sent would wait
in the paused replica's socket and arrive on resume), then client A takes lock X on the
master, the master is killed, the replica resumed and promoted, and client B (another
client instance) tries X.

- ``sync-off`` (``check_lock_synced_slaves=False``): B gets X while A still believes it
  holds it. The hazard, reproduced on purpose.
- ``sync-on``: A's grant waits (WAIT) for the replica the topology counts healthy; it is
  cut off, so A's acquire is undone and A is told (NoSyncedReplicasError): never two
  holders.
- ``redlock``: five independent masters, one of which loses A's key the same way (killed
  and restarted empty); B cannot reach a quorum: never two holders.

Variants of the replicated runs (the issue's stale views):

- ``plain``: as above, on a topology the harness has let settle.
- ``fresh``: no settle time: the sentinel the client reads replica health from is reset
  (``SENTINEL RESET``: it forgets the replica and learns it again from the master's INFO
  on its 10 s cycle, as a sentinel of a just-started deployment does); a cluster is used
  the moment the harness sees its slots served, before gossip has told every node which
  replica follows which master.
- ``rejoin``: an earlier failover first, then the old master rejoins as a replica (on
  sentinel: restarted as a master and demoted by the sentinels, as in production); that
  rejoined node is the replica frozen and cut (sentinel shows it ``master-link-status:
  err`` for up to 10 s after it re-attaches).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from redisson_py import NoSyncedReplicasError, Redisson, RedLock
from redisson_py.chaos.common import (
    client_configs,
    create_client,
    fresh_topology,
    master_of,
    promote_replica_of,
    unique,
)
from redisson_py.core.naming import owner_field
from redisson_py.sync.lock import current_owner_id
from redisson_py.testing import Node, Topology
from redisson_py.testing.topologies.waiting import NotYet, wait_until

MODES = ("sync-off", "sync-on", "redlock")
VARIANTS = ("plain", "fresh", "rejoin")


@dataclass
class RaceRun:
    """What one run saw."""

    topology: str
    mode: str
    a_acquired: bool
    variant: str = "plain"
    a_refusal: str = ""
    a_still_believes: bool = False
    b_acquired: bool = False
    failover_seconds: float = 0.0
    notes: list[str] = field(default_factory=list)

    @property
    def double_holder(self) -> bool:
        """A and B both hold X, as far as each knows: mutual exclusion broken."""
        return self.a_acquired and self.a_still_believes and self.b_acquired


def _believes(client: Redisson, name: str) -> bool:
    """Whether ``client`` still counts this thread as holding ``name`` (not told it is
    lost): what its user would believe."""
    holds = client._state.holds
    owner = owner_field(client.id, current_owner_id())
    return holds.count(name, owner, time.monotonic()) > 0 and not holds.was_lost(name, owner)


def _promote(topology: Topology, kind: str, old: Node, replica: Node) -> Node:
    """Let ``replica`` take over from the dead ``old`` master. On a cluster it is asked
    directly (TAKEOVER): on a fresh cluster, or after a rejoin, gossip may not yet have
    told every node whose replica it is, which the harness's own failover relies on."""
    if kind == "cluster":
        replica.command("CLUSTER", "FAILOVER", "TAKEOVER")
        return topology.wait_for_new_master(old, timeout=30.0)
    return promote_replica_of(topology, old)


def _rejoin(topology: Topology, kind: str, name: str) -> Node:
    """An earlier failover: kill the master serving ``name``, let a replica take over,
    restart the old master as a replica; return it (the rejoined node)."""
    old = master_of(topology, name)
    [heir, *_] = topology.replicas_of(old)
    old.kill()
    new = _promote(topology, kind, old, heir)
    if kind == "cluster":
        old.restart()  # its nodes.conf makes it a replica of the node that took over
        # The harness's slot map must name the new master (for the failover below); the
        # cluster's own gossip about the rejoined node is not waited for.
        topology.wait_ready()
    else:
        # It comes back as a master, as in production; sentinel demotes it (REPLICAOF)
        # and shows its link as err until its next INFO of it, up to 10 s later.
        old.restart()

        def demoted() -> None:
            info = old.info("replication")
            if info.get("role") != "slave" or info.get("master_port") != str(new.port):
                raise NotYet(f"{old.name} not demoted yet")
            if info.get("master_link_status") != "up":
                raise NotYet(f"{old.name} not in sync yet")

        wait_until(demoted, timeout=60.0, what=f"sentinel demoting {old.name}")
    return old


def run_replicated(kind: str, mode: str, backend: str, variant: str = "plain") -> RaceRun:
    """One run on a sentinel or cluster topology, replica sync off or on."""
    with fresh_topology(kind, backend) as topology:
        name = unique("race")
        rejoined = _rejoin(topology, kind, name) if variant == "rejoin" else None
        if variant == "fresh" and kind == "sentinel":
            assert topology.master_name is not None
            topology.sentinels[0].command("SENTINEL", "RESET", topology.master_name)
        [config] = client_configs(topology, sync=mode == "sync-on")
        a = Redisson.create(config)
        try:
            master = master_of(topology, name)
            replica = rejoined or topology.replicas_of(master)[0]
            run = RaceRun(kind, mode, a_acquired=False, variant=variant)
            replica.pause()
            try:
                master.command("CLIENT", "KILL", "TYPE", "replica")
                try:
                    run.a_acquired = a.get_lock(name).try_lock(0.0)
                except NoSyncedReplicasError as refusal:
                    run.a_refusal = str(refusal)
                if variant == "fresh" and kind == "sentinel":
                    # The reset sentinel cannot promote a replica it does not know yet;
                    # the two others (a majority of three) do the failover.
                    topology.sentinels[0].kill()
                master.kill()
                killed = time.monotonic()
            finally:
                replica.resume()
            _promote(topology, kind, master, replica)
            run.failover_seconds = time.monotonic() - killed
            with create_client(config) as b:
                run.b_acquired = b.get_lock(name).try_lock(5.0)
                run.a_still_believes = _believes(a, name)
            return run
        finally:
            a.shutdown()


def run_redlock(backend: str) -> RaceRun:
    """One run over five independent masters, one of which loses A's key."""
    with fresh_topology("redlock", backend) as topology:
        name = unique("race")
        configs = client_configs(topology)
        a_clients = [Redisson.create(c) for c in configs]
        try:
            acquired = RedLock.for_name(name, a_clients).try_lock(0.0)
            run = RaceRun("redlock", "redlock", a_acquired=acquired)
            faulty = topology.data_nodes[0]
            faulty.kill()
            faulty.restart()  # no persistence: it comes back without A's key
            b_clients = [create_client(c) for c in configs]
            try:
                run.b_acquired = RedLock.for_name(name, b_clients).try_lock(1.0)
                run.a_still_believes = _believes(a_clients[1], name)
            finally:
                for client in b_clients:
                    client.shutdown()
            return run
        finally:
            for client in a_clients:
                client.shutdown()


def run_once(kind: str, mode: str, backend: str, variant: str = "plain") -> RaceRun:
    """One run of ``mode``; ``variant`` (see the module docstring) applies to the
    replicated modes only."""
    if mode == "redlock":
        return run_redlock(backend)
    return run_replicated(kind, mode, backend, variant)
