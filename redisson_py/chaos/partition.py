"""Network partitions: the holder cut off with a master that still answers it.

Every scenario runs on a topology started with ``network="namespace"`` (process
backend, root, iptables, Redis 7.0+; see `redisson_py.testing.network`). Client A
holds a watchdog lock (no lease) in a process of its own on one side
(`partition_holder`); client B, made before the split in this
process on the other side, tries ``try_lock(wait_time=...)`` right after it. Splits
(``SPLITS``, per topology):

- ``old-master`` (sentinel, replicated): {A, master} | {B, replicas, sentinels};
- ``minority-master`` (cluster): {A, the lock's master} | everyone else;
- ``minority-redlock`` (redlock): A holds a RedLock over five independent masters;
  {A, two masters} | {B, three masters};
- ``one-way`` (sentinel, cluster, replicated): the lock's master's packets to everyone
  else dropped while it still hears them (A's commands arrive and run; no reply gets
  back);
- ``heal`` (sentinel, cluster, replicated): the ``old-master``/``minority-master`` split
  until B is
  granted, then healed; once the old master has rejoined as a replica, A's ``unlock()``
  must raise, B must still hold the lock, and the lock's key on every node of its shard
  must name B's owner only;
- ``late-contender`` (replicated): the ``old-master`` split with a third client C on
  A's side, the servers' ``repl-timeout`` 5 s; once B was granted and the old master
  lists no replica any more, C tries the lock: granted, it is a second holder beside B
  (what replica sync cannot count: replicas neither answering nor attached).

The ``replicated`` topology (one master, two replicas, no sentinel) has no failover of
its own: the scenario plays the managed service's. `SERVICE_DETECT` seconds after the
split it promotes a replica on B's side and points the other one at it; the old master,
which the service cannot reach, stays a master until the heal, when the service demotes
it (``REPLICAOF`` the new one). A's client, cut off with it, sees one master and no
replica answering: what replica sync then waits for is the old master's own count of
attached replicas (``ROLE``), which keeps the cut replicas until ``repl-timeout``.

Modes (``MODES``): ``sync-off``/``sync-on`` (``checkLockSyncedSlaves``),
``sync-on+min-replicas`` (sync on, servers with ``min-replicas-to-write 1`` and
``min-replicas-max-lag 2``, and two replicas per master, so the promoted one still has
one to write with), ``redlock`` (the redlock topology) and ``fencing`` (sync off, a
fenced lock, and a fenced resource on a server of its own that no cut touches: B
writes, then A; a stale write accepted is the violation). Watchdog timeout (TTL) 3 s,
``slavesSyncTimeout`` 0.5 s, command timeout 1 s, sentinel down-after 1 s, cluster node
timeout the spec's (1.5 s).

Each run measures, on ``time.monotonic()`` (one clock for every process of the machine),
seconds after the split: when A was told (its ``on_lock_lost``), when B was granted
(``try_lock`` returned True), and when the harness saw a replica promoted. Two holders:
B granted while A had not yet been told.
"""

from __future__ import annotations

import contextlib
import random
import threading
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from redisson_py import Config, Fence, LockLost, Redisson, RedLock
from redisson_py.chaos.common import (
    TOPOLOGY_OVERRIDES,
    client_configs,
    create_client,
    managed_failover,
    master_of,
)
from redisson_py.chaos.partition_checks import key_names_only, rejoined_shard
from redisson_py.chaos.partition_sides import RemoteHolder, sides, start_store, write_configs
from redisson_py.sync.lock import current_owner_id
from redisson_py.testing import HarnessTimeout, Host, Node, Topology, start_topology, wait_until
from redisson_py.testing.topologies.waiting import NotYet

SPLITS: dict[str, tuple[str, ...]] = {
    "sentinel": ("old-master", "one-way", "heal"),
    "cluster": ("minority-master", "one-way", "heal"),
    "replicated": ("old-master", "one-way", "heal", "late-contender"),
    "redlock": ("minority-redlock",),
}
"""The splits each topology runs."""

MODES = ("sync-off", "sync-on", "sync-on+min-replicas", "redlock", "fencing")
_REPLICATED = ("sync-off", "sync-on", "sync-on+min-replicas")
SPLIT_MODES: dict[str, tuple[str, ...]] = {
    "old-master": (*_REPLICATED, "fencing"),
    "minority-master": (*_REPLICATED, "fencing"),
    "minority-redlock": ("redlock",),
    "one-way": _REPLICATED,
    "heal": _REPLICATED,
    "late-contender": ("sync-on",),
}
"""The modes each split runs."""

TTL = 3.0
SYNC_TIMEOUT = 0.5
COMMAND_TIMEOUT = 1.0
SENTINEL_SCAN = 0.5
B_WAIT = 15.0
"""How long B tries for the lock after the split."""
OBSERVE = 3 * TTL
"""How long after the split A's report is waited for (its safe end is at most a TTL
after its last confirmed renewal, which a split stops)."""
SERVICE_DETECT = 1.0
"""Seconds after the split before the managed service (``replicated`` topology) promotes
a replica: as quick as sentinel's ``down-after`` here, the worst case for the holder."""
LATE_REPL_TIMEOUT = "5"
"""``late-contender``: the servers' ``repl-timeout`` (seconds; Redis's default is 60),
after which the old master drops the replicas it no longer hears from."""
LATE_WAIT = 10.0
"""``late-contender``: how long C tries for the lock."""
MIN_REPLICAS_CONF = {"min-replicas-to-write": "1", "min-replicas-max-lag": "2"}


@dataclass
class Outcome:
    """What one holder's split showed; times are seconds after the split, None: never."""

    split: str
    topology: str
    mode: str
    api: str = "sync"
    told: float | None = None
    """When A's ``on_lock_lost`` was called."""
    reason: str = ""
    granted: float | None = None
    """When B's ``try_lock`` returned True."""
    b_error: str = ""
    """The last error B's attempts raised (B keeps trying until its wait ends)."""
    promoted: float | None = None
    """When the harness saw the lock's slot or master served by another node."""
    held_after: bool | None = None
    """A's ``is_held_by_current_thread()`` at the end (after the heal, for ``heal``;
    None: it raised)."""
    unlock_raised: str | None = None
    """The exception A's ``unlock()`` raised at the end (``""``: none)."""
    a_token: int | None = None
    b_token: int | None = None
    b_wrote: bool | None = None
    stale_write: bool | None = None
    """``fencing``: the resource accepted A's write after B's (None: not tried)."""
    rejoined: float | None = None
    """``heal``: seconds from the heal until the old master replicated the new one."""
    keys_name_b: bool | None = None
    """``heal``: the lock's key on every node of its shard names B's owner only."""
    keys_problem: str = ""
    """``heal``: what a node had when `keys_name_b` is False."""
    b_still_holds: bool | None = None
    """``heal``: B's ``is_held_by_current_thread()`` after the heal."""
    b_told: float | None = None
    """When B's own ``on_lock_lost`` was called (it should never be)."""
    b_reason: str = ""
    late_granted: float | None = None
    """``late-contender``: when C, on A's side, was granted (None: refused)."""
    dropped: float | None = None
    """``late-contender``: when the harness saw the old master list no replica."""
    old_role: str = ""
    """The old master's role (``ROLE``, as the harness sees it) before any heal."""
    unlock_message: str = ""
    notes: list[str] = field(default_factory=list)

    @property
    def double_holder(self) -> bool:
        """B was granted while A had not been told: two holders as far as each knew."""
        if self.granted is not None and self.late_granted is not None:
            return True  # C granted beside B (late-contender)
        return self.granted is not None and (self.told is None or self.told > self.granted)

    @property
    def heal_checks_failed(self) -> bool:
        """``heal``: A's unlock did not raise, or B lost the lock without being told,
        or B still holds it and a node's key names someone else.

        B told that its hold is lost is safe, not a violation: on sentinel, the old
        master is listed as a replica of the new one for up to 10 s after the heal
        before the sentinels demote it, and replica sync waits for it (it could be
        promoted meanwhile, with none of B's writes), so with a TTL that short B's
        renewals go unconfirmed until its safe end (`b_lost_after_heal`)."""
        if self.split != "heal":
            return False
        if self.unlock_raised != "LockNotOwnedError":
            return True
        if self.b_still_holds:
            return self.keys_name_b is not True
        return self.b_told is None

    @property
    def b_lost_after_heal(self) -> bool:
        """``heal``: B was told its hold was lost after the heal (availability, not
        safety: see `heal_checks_failed`)."""
        return self.split == "heal" and self.b_told is not None and not self.b_still_holds


def start_for(kind: str, mode: str, backend: str = "process", split: str | None = None) -> Topology:
    """A fresh ``kind`` topology with partitions, set up for ``mode`` (and ``split``)."""
    overrides: dict[str, Any] = dict(TOPOLOGY_OVERRIDES.get(kind, {}))
    if split == "late-contender":
        overrides["redis_conf"] = {"repl-timeout": LATE_REPL_TIMEOUT}
    if mode == "sync-on+min-replicas":
        # With one replica, the promoted master would have none left and refuse every
        # write (NOREPLICAS) until the heal: two, so the majority side can grant.
        overrides["replicas_per_master"] = 2
        overrides["redis_conf"] = MIN_REPLICAS_CONF
    return start_topology(kind, backend=backend, network="namespace", **overrides)


def configs_for(topology: Topology, mode: str) -> list[Config]:
    """Client configs for ``mode`` (one per master for the redlock topology)."""
    configs = client_configs(
        topology, sync=mode.startswith("sync-on"), watchdog=TTL, timeout=COMMAND_TIMEOUT
    )
    for config in configs:
        config.slaves_sync_timeout = SYNC_TIMEOUT
        if topology.layout == "sentinel":
            config.server_config.scan_interval = SENTINEL_SCAN
    return configs


@dataclass
class _Contender:
    """B's attempt at one lock (run in a thread of its own on B's side)."""

    name: str
    lock: Any
    fenced: bool
    owner: int = 0
    granted_at: float | None = None
    fence: Fence | None = None
    error: str = ""
    lost_at: float | None = None
    lost_reason: str = ""

    def lost(self, event: LockLost) -> None:
        """B's ``on_lock_lost``: B is the rightful holder, it should never be called."""
        if self.lost_at is None:
            self.lost_at, self.lost_reason = time.monotonic(), event.reason

    def take(self, deadline: float) -> None:
        self.owner = current_owner_id()
        while (left := deadline - time.monotonic()) > 0:
            try:
                if self.fenced:
                    token = self.lock.try_lock_and_get_token(left)
                    granted = token is not None
                else:
                    granted = self.lock.try_lock(left)
                if granted:
                    self.granted_at = time.monotonic()
                    self.fence = self.lock.fence() if self.fenced else None
                    return
            except Exception as error:  # B keeps trying through the failover, as an app would
                self.error = f"{type(error).__name__}: {error}"
                time.sleep(0.2)


def _names(count: int) -> list[str]:
    # One hash tag: in a cluster every holder's lock lives on the same (isolated) master.
    tag = uuid.uuid4().hex[:10]
    return [f"chaos:partition:{{{tag}}}:{index}" for index in range(count)]


def _b_lock(clients: Sequence[Redisson], contender: _Contender, mode: str) -> Any:
    name, lost = contender.name, contender.lost
    if mode == "redlock":
        return RedLock.for_name(name, clients, on_lock_lost=lost)
    if mode == "fencing":
        return clients[0].get_fenced_lock(name, on_lock_lost=lost)
    return clients[0].get_lock(name, on_lock_lost=lost)


@dataclass
class _Pair:
    """One lock of a split: A holding it (in its process), B trying it, the outcome."""

    holder: RemoteHolder
    contender: _Contender
    outcome: Outcome


class _Split:
    """One split on one topology: the state `run_split` goes through."""

    def __init__(self, topology: Topology, split: str, mode: str, b_wait: float):
        self.topology, self.split, self.mode, self.b_wait = topology, split, mode, b_wait
        self.configs = configs_for(topology, mode)
        self.master: Node | None = None
        self.new: Node | None = None
        self.pairs: list[_Pair] = []
        self.split_at = 0.0
        self.store: tuple[Host, Config] | None = None
        self.late_host: Host | None = None

    def minority(self) -> list[Any]:
        """The side cut off with A (one-way: the master alone; A stays with B)."""
        a_hosts = [pair.holder.host for pair in self.pairs]
        if self.split == "minority-redlock":
            return [*self.topology.data_nodes[:2], *a_hosts]
        if self.split == "one-way":
            return [self.master]
        if self.late_host is not None:
            return [self.master, *a_hosts, self.late_host]
        return [self.master, *a_hosts]

    def cut(self) -> None:
        """Split now (the fenced resource's server stays reachable from both sides)."""
        untouched = [self.store[0]] if self.store else []
        side_a, side_b = sides(self.topology, self.minority(), untouched)
        self.split_at = time.monotonic()
        self.topology.partition(side_a, side_b, one_way=self.split == "one-way")
        if self.topology.layout == "replication" and self.master is not None:
            service = threading.Timer(SERVICE_DETECT, self.service_failover)
            service.daemon = True
            service.start()

    def service_failover(self) -> None:
        """The managed service's failover (``replicated``): a replica promoted on the
        majority side, the other pointed at it; the old master, cut off, left alone."""
        assert self.master is not None
        managed_failover(self.topology, self.master, demote_old=False)

    def contend(self) -> None:
        """B tries every lock (a thread each) while the harness watches for the
        promotion (`new`: None when none was seen, or the topology has none)."""
        deadline = self.split_at + self.b_wait
        threads = [threading.Thread(target=p.contender.take, args=(deadline,)) for p in self.pairs]
        for thread in threads:
            thread.start()
        if self.master is not None:
            with contextlib.suppress(HarnessTimeout):
                self.new = self.topology.wait_for_new_master(self.master, timeout=self.b_wait + 5)
            promoted = time.monotonic() - self.split_at if self.new is not None else None
            for pair in self.pairs:
                pair.outcome.promoted = promoted
        for thread in threads:
            thread.join(self.b_wait + 30.0)
        for pair in self.pairs:
            contender, outcome = pair.contender, pair.outcome
            if contender.granted_at is not None:
                outcome.granted = contender.granted_at - self.split_at
                outcome.b_token = contender.fence.token if contender.fence else None
            outcome.b_error = contender.error

    def hear_a(self, observe: float) -> None:
        """Wait (until ``observe`` seconds after the split) for each A's report."""
        for pair in self.pairs:
            pair.holder.wait_told(self.split_at + observe)
            if pair.holder.told_at is not None:
                pair.outcome.told = pair.holder.told_at - self.split_at
                pair.outcome.reason = pair.holder.reason
        if self.master is not None:
            with contextlib.suppress(Exception):  # what the harness sees, if it answers
                role = self.master.role()
                for pair in self.pairs:
                    pair.outcome.old_role = role

    def late_contend(self, config: Path) -> None:
        """``late-contender``: once the old master lists no replica (its repl-timeout),
        C, on A's side, tries each lock for `LATE_WAIT` seconds (a holder process on
        its own host)."""
        master, host = self.master, self.late_host
        assert master is not None and host is not None

        def dropped() -> None:
            if master.command("ROLE")[2]:
                raise NotYet(f"{master.name} still lists replicas")

        try:
            wait_until(dropped, timeout=60.0, what=f"{master.name} dropping its replicas")
        except HarnessTimeout as error:
            for pair in self.pairs:
                pair.outcome.notes.append(str(error))
            return
        for pair in self.pairs:
            pair.outcome.dropped = time.monotonic() - self.split_at
            try:
                late = RemoteHolder.start(
                    self.topology, host, config, pair.contender.name, timeout=LATE_WAIT
                )
            except RuntimeError as error:
                refusal = "NoSyncedReplicasError" if "NoSyncedReplicas" in str(error) else "?"
                pair.outcome.notes.append(f"C refused ({refusal})")
                continue
            pair.outcome.late_granted = time.monotonic() - self.split_at
            late.stop()

    def write_after(self) -> None:
        """B writes the fenced resource with its fence, then A (the stale holder) with
        its own, each through its own client from its own side."""
        assert self.store is not None
        with Redisson.create(self.store[1]) as client:
            for pair in self.pairs:
                fence, outcome = pair.contender.fence, pair.outcome
                if fence is None:
                    continue
                resource = f"{pair.contender.name}:resource"
                try:
                    client.get_fenced_resource(resource).set("B", fence)
                    outcome.b_wrote = True
                except Exception as error:
                    outcome.b_wrote = False
                    outcome.notes.append(f"B's write failed: {error!r}")
                answer = pair.holder.ask(f"write {resource}")
                outcome.stale_write = answer.get("accepted")
                if answer.get("error"):
                    outcome.notes.append(f"A's write failed: {answer['error']}")

    def heal(self, b_client: Redisson) -> None:
        """Heal; once the old master replicates the new one, check every node of the
        shard names B only, and that B still holds each lock it was granted."""
        self.topology.heal()
        healed = time.monotonic()
        if self.topology.layout == "replication" and self.master and self.new:
            # The service reaches the old master again and demotes it (no sentinel will).
            self.master.command("REPLICAOF", self.new.host, str(self.new.port))
            self.master.command("CONFIG", "REWRITE")
        if self.master is None or self.new is None:
            for pair in self.pairs:
                pair.outcome.notes.append("no promotion seen: heal checks skipped")
            return
        try:
            shard = rejoined_shard(self.topology, self.master, self.new)
        except HarnessTimeout as error:
            for pair in self.pairs:
                pair.outcome.notes.append(str(error))
            return
        rejoined = time.monotonic() - healed
        for pair in self.pairs:
            contender, outcome = pair.contender, pair.outcome
            outcome.rejoined = rejoined
            if contender.granted_at is None:
                continue
            problem = key_names_only(shard, contender.name, b_client.id, contender.owner)
            outcome.keys_name_b = problem is None
            outcome.keys_problem = problem or ""
            view = contender.lock.owned_by(contender.owner)
            outcome.b_still_holds = bool(view.is_held_by_current_thread())

    def finish(self) -> None:
        """A checks and unlocks (after the heal, for ``heal``); B lets go of its grants
        (through its thread's owner: that thread has ended)."""
        for pair in self.pairs:
            if pair.contender.lost_at is not None:
                pair.outcome.b_told = pair.contender.lost_at - self.split_at
                pair.outcome.b_reason = pair.contender.lost_reason
            check = pair.holder.ask("check")
            pair.outcome.held_after = check.get("held")
            if check.get("error"):
                pair.outcome.notes.append(f"A's is_held raised {check['error']}")
            answer = pair.holder.ask("unlock")
            pair.outcome.unlock_raised = str(answer.get("raised", ""))
            pair.outcome.unlock_message = str(answer.get("message", ""))
            if pair.contender.granted_at is None:
                continue
            try:
                pair.contender.lock.owned_by(pair.contender.owner).unlock()
            except Exception as error:
                pair.outcome.notes.append(f"B's unlock raised {type(error).__name__}")


def run_split(
    topology: Topology,
    split: str,
    mode: str,
    *,
    apis: Sequence[str] = ("sync",),
    b_wait: float = B_WAIT,
    observe: float = OBSERVE,
    settle: float | None = None,
    rng: random.Random | None = None,
) -> list[Outcome]:
    """Run ``split`` once on ``topology`` (started by `start_for` for ``mode``):
    one holder A per entry of ``apis`` (``"sync"``, ``"asyncio"``), each in its own
    process on its own client host (``a-<api>``) holding a lock of its own; one B client
    (host ``b``) tries each lock in a thread of its own. Returns one `Outcome`
    per holder, in the order of ``apis``.

    ``settle`` (seconds between B's client and the split; default a random 0.5-1.5 s, so
    the split lands anywhere in A's 1 s renewal cycle) and ``observe`` (how long after
    the split A's report is waited for) trade run time for coverage. The topology is left
    partitioned, except after ``heal``; run one split per topology.
    """
    rng = rng or random.Random()
    run = _Split(topology, split, mode, b_wait)
    names = _names(len(apis))
    directory = Path(topology.directory)
    a_config = write_configs(directory / f"a-{uuid.uuid4().hex[:8]}.yaml", run.configs)
    store_path = None
    if mode == "fencing":
        host = topology.client_host("store")
        run.store = (host, start_store(topology, host))
        store_path = write_configs(directory / "store.yaml", [run.store[1]])
    if split != "minority-redlock":
        run.master = master_of(topology, names[0])
    if split == "late-contender":
        run.late_host = topology.client_host("c")
    with contextlib.ExitStack() as stack:
        for api, name in zip(apis, names, strict=True):
            holder = RemoteHolder.start(
                topology,
                topology.client_host(f"a-{api}"),
                a_config,
                name,
                api=api,
                fenced=mode == "fencing",
                store=store_path,
            )
            stack.callback(holder.stop)
            outcome = Outcome(split, topology.kind, mode, api, a_token=holder.token)
            run.pairs.append(_Pair(holder, _Contender(name, None, mode == "fencing"), outcome))
        with topology.network.joined(topology.client_host("b")):
            b_clients = [create_client(config) for config in run.configs]
            try:
                for pair in run.pairs:
                    pair.contender.lock = _b_lock(b_clients, pair.contender, mode)
                time.sleep(rng.uniform(0.5, 1.5) if settle is None else settle)
                run.cut()
                run.contend()
                run.hear_a(observe)
                if run.late_host is not None:
                    run.late_contend(a_config)
                if run.store is not None:
                    run.write_after()
                if split == "heal":
                    run.heal(b_clients[0])
                run.finish()
            finally:
                for client in b_clients:
                    client.shutdown()
    return [pair.outcome for pair in run.pairs]


def run_once(kind: str, split: str, mode: str, backend: str = "process") -> Outcome:
    """One run of ``split`` in ``mode`` on a fresh ``kind`` topology (sync API)."""
    with start_for(kind, mode, backend, split) as topology:
        [outcome] = run_split(topology, split, mode)
        return outcome
