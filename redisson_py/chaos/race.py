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
- ``fencing``: the ``sync-off`` race on a fenced lock, with a fenced resource on a
  separate single Redis server (where the lock's failover cannot roll it back). A takes
  the lock and its fence on the old master; B gets the lock on the promoted replica and
  writes the resource with its fence; then A, the stale holder, writes. The race gives
  both holders one token (A's increment of the counter died with the old master), so a
  resource that accepts ``token >= highest`` would take A's write; the fenced resource
  refuses it (the first writer of a token keeps it). A stale write accepted is a
  violation.

On the ``replicated`` topology (one master, two replicas, no sentinel: a managed
service) the harness plays the service's failover: the frozen replica is the one
promoted, and the other replica is pointed at it. With sync on, A's grant waits for
both replicas, the frozen one among them, so it is refused as on sentinel.

Variants of the replicated runs (the issue's stale views; sentinel and cluster only):

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

import contextlib
import time
from dataclasses import dataclass, field

from redisson_py import Fence, NoSyncedReplicasError, Redisson, RedLock, StaleTokenError
from redisson_py.chaos.common import (
    client_configs,
    create_client,
    fresh_topology,
    managed_failover,
    master_of,
    promote_replica_of,
    unique,
)
from redisson_py.core.keyspace import owner_field
from redisson_py.sync.lock import current_owner_id
from redisson_py.testing import Node, Topology
from redisson_py.testing.topologies.waiting import HarnessTimeout, NotYet, wait_until

MODES = ("sync-off", "sync-on", "redlock", "fencing")
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
    a_token: int | None = None
    """``fencing``: A's token, from the old master."""
    b_token: int | None = None
    """``fencing``: B's token, from the promoted replica."""
    b_wrote: bool = False
    """``fencing``: the resource accepted B's write."""
    stale_write: bool | None = None
    """``fencing``: the resource accepted A's write after B's (None: A did not write)."""
    unfenced_stale_write: bool = False
    """``fencing``: A's plain SET after B's overwrote B's value (an unfenced resource)."""

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
    told every node whose replica it is, which the harness's own failover relies on. On
    a ``replicated`` topology the managed service's failover promotes ``replica`` itself
    (the one cut off: a service that promotes a replica which had fallen behind)."""
    if topology.layout == "replication":
        return managed_failover(topology, old, replica)
    if kind == "cluster":
        replica.command("CLUSTER", "FAILOVER", "TAKEOVER")
        return topology.wait_for_new_master(old, timeout=30.0)
    return promote_replica_of(topology, old)


def _take(client: Redisson, name: str, wait: float, fenced: bool) -> Fence | bool:
    """Take ``name`` within ``wait`` seconds: a fenced lock's fence (its token and owner)
    or False; a plain lock's outcome."""
    if not fenced:
        return client.get_lock(name).try_lock(wait)
    lock = client.get_fenced_lock(name)
    return lock.fence() if lock.try_lock_and_get_token(wait) is not None else False


def _write_after(run: RaceRun, store: Topology, name: str, a: Fence, b: Fence) -> None:
    """B writes, then A (stale) does: to a fenced resource, and to a plain key as an
    unfenced resource would be written; record what each accepted. Each writes through
    its own client, as two processes would."""
    [config] = client_configs(store)
    fenced, plain = f"{name}:fenced", f"{name}:plain"
    accepted = {}
    for writer, fence in (("B", b), ("A", a)):
        with Redisson.create(config) as client:
            client.redis(plain).set(plain, writer)
            try:
                client.get_fenced_resource(fenced).set(writer, fence)
                accepted[writer] = True
            except StaleTokenError:
                accepted[writer] = False
            if writer == "A":
                run.unfenced_stale_write = client.redis(plain).get(plain) == b"A"
    run.b_wrote, run.stale_write = accepted["B"], accepted["A"]


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

        try:
            # Two minutes: usually 10-20 s, but a sentinel whose timer was held up past
            # 2 s (a loaded machine) enters TILT mode and acts on nothing for 30 s.
            wait_until(demoted, timeout=120.0, what=f"sentinel demoting {old.name}")
        except HarnessTimeout as timeout:
            raise HarnessTimeout(f"{timeout}\n{_sentinel_log_tails(topology)}") from None
    return old


def _sentinel_log_tails(topology: Topology, lines: int = 15) -> str:
    """The last lines of every sentinel's log (+tilt, +convert-to-slave...), to tell why
    a demotion did not come."""
    tails = []
    for sentinel in topology.sentinels:
        tail = "\n".join(sentinel.log().strip().splitlines()[-lines:])
        tails.append(f"--- {sentinel.name} ({sentinel.address}) ---\n{tail}")
    return "\n".join(tails)


def run_replicated(kind: str, mode: str, backend: str, variant: str = "plain") -> RaceRun:
    """One run on a sentinel, cluster or replicated topology, replica sync off or on
    (``fencing``: off, on a fenced lock, with the fenced resource on a single server of
    its own)."""
    if variant != "plain" and kind == "replicated":
        raise ValueError("the replicated topology runs the plain race only (no --fresh, --rejoin)")
    fenced = mode == "fencing"
    with fresh_topology(kind, backend) as topology, contextlib.ExitStack() as stack:
        store = stack.enter_context(fresh_topology("single", backend)) if fenced else None
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
            a_grant: Fence | bool = False
            replica.pause()
            try:
                master.command("CLIENT", "KILL", "TYPE", "replica")
                try:
                    a_grant = _take(a, name, 0.0, fenced)
                    run.a_acquired = bool(a_grant)
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
                b_grant = _take(b, name, 5.0, fenced)
                run.b_acquired = bool(b_grant)
                run.a_still_believes = _believes(a, name)
            if isinstance(a_grant, Fence) and isinstance(b_grant, Fence):
                assert store is not None
                run.a_token, run.b_token = a_grant.token, b_grant.token
                _write_after(run, store, name, a_grant, b_grant)
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
