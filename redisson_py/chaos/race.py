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

MODES = ("sync-off", "sync-on", "redlock")


@dataclass
class RaceRun:
    """What one run saw."""

    topology: str
    mode: str
    a_acquired: bool
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


def run_replicated(kind: str, mode: str, backend: str) -> RaceRun:
    """One run on a sentinel or cluster topology, replica sync off or on."""
    with fresh_topology(kind, backend) as topology:
        name = unique("race")
        [config] = client_configs(topology, sync=mode == "sync-on")
        a = Redisson.create(config)
        try:
            master = master_of(topology, name)
            [replica, *_] = topology.replicas_of(master)
            run = RaceRun(kind, mode, a_acquired=False)
            replica.pause()
            try:
                master.command("CLIENT", "KILL", "TYPE", "replica")
                try:
                    run.a_acquired = a.get_lock(name).try_lock(0.0)
                except NoSyncedReplicasError as refusal:
                    run.a_refusal = str(refusal)
                master.kill()
                killed = time.monotonic()
            finally:
                replica.resume()
            promote_replica_of(topology, master)
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


def run_once(kind: str, mode: str, backend: str) -> RaceRun:
    if mode == "redlock":
        return run_redlock(backend)
    return run_replicated(kind, mode, backend)
