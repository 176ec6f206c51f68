"""Striking and healing the faults of a schedule on a live topology.

`Nemesis` turns a planned `Fault` into
what the harness does (``topology.partition``, ``node.pause``, ``node.kill``, SIGSTOP
to a worker, a libfaketime clock jump), journals what it struck (roles resolved to node
names at that moment), and undoes it when the fault's time is up. It never cuts the
oracle's host, and checks so after every cut.

On a ``replicated`` topology (no sentinel, no cluster bus) nothing fails over on its
own: the nemesis also plays the managed service. Its ``managed-failover`` promotes a
replica and demotes the old master when the fault ends; and when a fault takes the
master away from the service (``isolate-master``, a ``pause`` or ``kill`` of the
master), the service promotes a replica at once, as soon as the fault starts (the
harshest timing for a holder), and demotes the old master when it is back: re-pointed
after the heal or resume, restarted as a replica after a kill. Given ``move_name``
(a run whose workers reach the master by the service's primary endpoint), the service
also moves that name to the node it promoted, ``fault.dns_delay`` seconds after the
promotion (journaled as ``dns-move``); the fault's heal waits for the move, so the
next fault starts with the name on the master.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import redis

from redisson_py.chaos.common import managed_failover, master_of
from redisson_py.chaos.nemesis.journal import Journal, holding, read_tail
from redisson_py.chaos.nemesis.oracle import ORACLE_HOST
from redisson_py.chaos.nemesis.schedule import Fault
from redisson_py.testing import HarnessTimeout, Node, Topology, wait_until
from redisson_py.testing.backends.procinfo import process_state
from redisson_py.testing.errors import TopologyError
from redisson_py.testing.faults.faketime import FakeClock
from redisson_py.testing.topologies.readiness import (
    check_cluster,
    check_replication,
    check_standalone,
    sentinel_master_port,
)
from redisson_py.testing.topologies.waiting import NotYet

__all__ = ["Nemesis", "Struck", "serving"]

FAILOVER_TIMEOUT = 30.0
"""Seconds a killed master's topology gets to promote a replica before the node is
restarted anyway (restarted first, an empty master would lose every lock it held)."""

RECOVERY_TIMEOUT = 30.0
"""Seconds the topology gets to serve again after a fault is healed (then the next
fault comes all the same, and the report counts the run as not recovered once)."""

HOLD_WAIT = 10.0
"""Seconds to wait for a worker to hold a lock before pausing it (else skipped)."""


@dataclass
class Struck:
    """A fault in force: what it struck (for the journal), and how to undo it."""

    fault: Fault
    targets: dict[str, Any] = field(default_factory=dict)
    undo: Callable[[], None] = lambda: None
    skipped: str | None = None


class Nemesis:
    """Strikes and heals faults on ``topology`` (see the module docstring).

    ``locks`` are the run's lock names (``master-of:K`` means the master serving
    ``locks[K]``); ``workers`` the worker processes by host name, ``journals`` their
    journal files; ``clocks`` the fake clocks by node name (the process schedule);
    ``move_name`` points the primary endpoint's host name at a node (None: no name).
    """

    def __init__(
        self,
        topology: Topology,
        *,
        locks: Sequence[str],
        workers: Mapping[str, subprocess.Popen[Any]],
        journals: Mapping[str, Path],
        clocks: Mapping[str, FakeClock],
        journal: Journal,
        progress: Callable[[str], None],
        move_name: Callable[[Node], None] | None = None,
    ):
        self.topology = topology
        self.locks = list(locks)
        self.workers = dict(workers)
        self.journals = dict(journals)
        self.clocks = dict(clocks)
        self.journal = journal
        self.progress = progress
        self._paused_workers: set[int] = set()
        self.move_name = move_name
        self._moves: list[threading.Thread] = []

    # -- targets -------------------------------------------------------------------------

    def resolve(self, target: str) -> Node:
        """The node a target names now: ``master-of:K`` or a node's name."""
        if target.startswith("master-of:"):
            return master_of(self.topology, self.locks[int(target.split(":", 1)[1])])
        return self.topology.node(target)

    def _everyone_but(self, inside: Sequence[str]) -> list[str]:
        names = [n.name for n in self.topology.nodes] + list(self.workers)
        return [name for name in names if name not in inside]

    def _partition(self, side_a: Sequence[str], side_b: Sequence[str], one_way: bool) -> None:
        self.topology.partition(list(side_a), list(side_b), one_way=one_way)
        named = {name for cut in self.topology.cuts() for name in cut}
        if ORACLE_HOST in named:
            raise TopologyError("a cut names the oracle's host: the oracle must stay reachable")

    # -- striking ------------------------------------------------------------------------

    def strike(self, fault: Fault) -> Struck:
        """Start ``fault``; journal ``fault-start`` (or ``fault-error`` and a skip)."""
        try:
            struck = self._strike(fault)
        except (TopologyError, redis.RedisError, OSError, KeyError) as exc:
            struck = Struck(fault, skipped=f"{type(exc).__name__}: {exc}")
        if struck.skipped is not None:
            self.journal.record(
                "fault-error", fault=fault.index, kind=fault.kind, detail=struck.skipped
            )
            self.progress(f"nemesis: {fault.describe()}: skipped ({struck.skipped})")
        else:
            self.journal.record(
                "fault-start", fault=fault.index, kind=fault.kind, targets=struck.targets
            )
            self.progress(f"nemesis: {fault.describe()} {struck.targets}")
        return struck

    def _strike(self, fault: Fault) -> Struck:
        strikes: dict[str, Callable[[Fault], Struck]] = {
            "partition": self._cut,
            "one-way": self._cut,
            "isolate-master": self._isolate_master,
            "managed-failover": self._managed_failover,
            "replica-cut": self._replica_cut,
            "pause": self._pause,
            "kill": self._kill,
            "pause-worker": self._pause_worker,
            "clock-jump": self._clock_jump,
        }
        strike = strikes.get(fault.kind)
        if strike is None:
            raise TopologyError(f"unknown fault kind {fault.kind!r}")
        return strike(fault)

    def _cut(self, fault: Fault) -> Struck:
        self._partition(fault.side_a, fault.side_b, one_way=fault.kind == "one-way")
        sides = {"side_a": list(fault.side_a), "side_b": list(fault.side_b)}
        return Struck(fault, sides, self.topology.heal)

    def _isolate_master(self, fault: Fault) -> Struck:
        master = self.resolve(fault.target)
        inside = [master.name, *fault.side_a]
        self._partition(inside, self._everyone_but(inside), one_way=False)
        if self._managed() and master.role() == "master":
            new = managed_failover(self.topology, master, demote_old=False)
            self._move_later(fault, new)
            targets = {"side_a": inside, "promoted": new.name}
            return Struck(fault, targets, lambda: self._heal_then_demote(master, new))
        return Struck(fault, {"side_a": inside}, self.topology.heal)

    def _managed_failover(self, fault: Fault) -> Struck:
        master = self.resolve(fault.target)
        new = managed_failover(self.topology, master, demote_old=False)
        self._move_later(fault, new)
        targets = {"master": master.name, "promoted": new.name}
        return Struck(fault, targets, lambda: _demote(master, new))

    def _replica_cut(self, fault: Fault) -> Struck:
        master = self.resolve(fault.target)
        replicas = [r.name for r in self.topology.replicas_of(master)]
        if not replicas:
            return Struck(fault, skipped=f"{master.name} has no running replica")
        self._partition([master.name], replicas, one_way=False)
        return Struck(fault, {"master": master.name, "replicas": replicas}, self.topology.heal)

    def _pause(self, fault: Fault) -> Struck:
        node = self.resolve(fault.target)
        was_master = self._managed() and node.kind == "redis" and node.role() == "master"
        node.pause()
        if not was_master:
            return Struck(fault, {"node": node.name}, node.resume)
        new = managed_failover(self.topology, node, demote_old=False)
        self._move_later(fault, new)

        def resume_then_demote() -> None:
            node.resume()
            _demote(node, new)

        return Struck(fault, {"node": node.name, "promoted": new.name}, resume_then_demote)

    def _clock_jump(self, fault: Fault) -> Struck:
        node = self.resolve(fault.target)
        clock = self.clocks.get(node.name)
        if clock is None:
            return Struck(fault, skipped=f"{node.name} was not started on a fake clock")
        clock.jump(fault.jump)
        return Struck(fault, {"node": node.name, "jump": fault.jump}, clock.reset)

    def _move_later(self, fault: Fault, new: Node) -> None:
        """The service moves its primary endpoint's name to ``new``, ``fault.dns_delay``
        seconds from now (on a thread of its own: the fault goes on meanwhile)."""
        if self.move_name is None or not fault.dns_delay:
            return
        move = threading.Thread(
            target=self._move, args=(fault, new), name=f"nemesis-dns-{fault.index}"
        )
        self._moves.append(move)
        move.start()

    def _move(self, fault: Fault, new: Node) -> None:
        assert self.move_name is not None
        time.sleep(fault.dns_delay)
        try:
            self.move_name(new)
        except (TopologyError, OSError) as exc:
            self.journal.record("heal-error", fault=fault.index, detail=f"DNS move: {exc}")
            self.progress(f"nemesis: moving the name for #{fault.index} failed: {exc}")
            return
        self.journal.record("dns-move", fault=fault.index, node=new.name, delay=fault.dns_delay)
        self.progress(f"nemesis: #{fault.index} name moved to {new.name}")

    def _wait_for_moves(self) -> None:
        """Return once every DNS move started has happened (or failed, journaled)."""
        moves, self._moves = self._moves, []
        for move in moves:
            move.join()

    def _managed(self) -> bool:
        """Whether the nemesis plays the managed service's failovers (replicated)."""
        return self.topology.layout == "replication"

    def _heal_then_demote(self, old: Node, new: Node) -> None:
        self.topology.heal()
        _demote(old, new)

    def _kill(self, fault: Fault) -> Struck:
        node = self.resolve(fault.target)
        if self._managed():
            return self._kill_managed(fault, node)
        replicated = self.topology.layout in ("sentinel", "cluster")
        was_master = False
        if replicated and node.kind == "redis":
            with contextlib.suppress(redis.RedisError):
                was_master = node.role() == "master"
        node.kill()

        def restart() -> None:
            if was_master:
                try:
                    self.topology.wait_for_new_master(node, timeout=FAILOVER_TIMEOUT)
                except (HarnessTimeout, TopologyError) as exc:
                    self.journal.record("heal-error", fault=fault.index, detail=str(exc))
            node.restart()

        return Struck(fault, {"node": node.name, "failover_first": was_master}, restart)

    def _kill_managed(self, fault: Fault, node: Node) -> Struck:
        """Kill ``node``; a killed master is replaced by the service at once, and comes
        back as a replica of the node it promoted (no persistence: empty, then synced)."""
        was_master = node.role() == "master"
        if not was_master:
            # Restarted as a replica of the master (its config may predate the wiring).
            master = self.topology.master()
            node.kill()
            return Struck(fault, {"node": node.name}, lambda: node.restart(replica_of=master))
        node.kill()
        new = managed_failover(self.topology, node)
        self._move_later(fault, new)
        targets = {"node": node.name, "promoted": new.name}
        return Struck(fault, targets, lambda: node.restart(replica_of=new))

    def _pause_worker(self, fault: Fault) -> Struck:
        """Stop the worker on ``fault.target`` (SIGSTOP) while it holds a lock: its
        journal, read again once it is stopped, must say so (else it is let go and
        watched again), for at most `HOLD_WAIT` seconds."""
        host = fault.target
        process, journal = self.workers[host], self.journals[host]
        deadline = time.monotonic() + HOLD_WAIT
        while True:
            if holding(read_tail(journal)):
                os.kill(process.pid, signal.SIGSTOP)
                _wait_stopped(process.pid)
                records = read_tail(journal)  # final while it is stopped
                if holding(records):
                    break
                os.kill(process.pid, signal.SIGCONT)
            if time.monotonic() > deadline:
                return Struck(fault, skipped=f"{host} held no lock within {HOLD_WAIT:g} s")
            time.sleep(0.05)
        hold = next(r for r in reversed(records) if r.get("op") == "grant")
        self._paused_workers.add(process.pid)

        def resume() -> None:
            os.kill(process.pid, signal.SIGCONT)
            self._paused_workers.discard(process.pid)

        targets = {"worker": host, "pid": process.pid, "lock": hold["lock"], "hold": hold["hold"]}
        return Struck(fault, targets, resume)

    # -- healing ---------------------------------------------------------------------------

    def heal(self, struck: Struck) -> None:
        """Undo ``struck``; journal ``fault-end`` (and ``heal-error`` if undoing failed)."""
        if struck.skipped is not None:
            return
        try:
            struck.undo()
        except (TopologyError, redis.RedisError, OSError) as exc:
            self.journal.record("heal-error", fault=struck.fault.index, detail=str(exc))
            self.progress(f"nemesis: healing #{struck.fault.index} failed: {exc}")
        self._wait_for_moves()  # a late name move is part of the fault
        self.journal.record("fault-end", fault=struck.fault.index, kind=struck.fault.kind)

    def recover(self) -> None:
        """Wait until the topology serves again (bounded; see `serving`); journal
        how long it took."""
        started = time.monotonic()
        try:
            wait_until(lambda: serving(self.topology), timeout=RECOVERY_TIMEOUT, what="recovery")
            ok, detail = True, ""
        except (HarnessTimeout, TopologyError, redis.RedisError) as exc:
            ok, detail = False, str(exc)
        seconds = time.monotonic() - started
        self.journal.record("recovered", ok=ok, seconds=seconds, detail=detail)
        if not ok:
            self.progress(f"nemesis: not recovered after {seconds:.1f} s: {detail}")

    def heal_everything(self) -> None:
        """Leave nothing broken: cuts removed, nodes resumed and restarted, workers
        resumed, clocks back to the real time. Best effort (the run is ending)."""
        self._wait_for_moves()
        for pid in list(self._paused_workers):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGCONT)
        self._paused_workers.clear()
        for clock in self.clocks.values():
            clock.reset()
        with contextlib.suppress(TopologyError):
            self.topology.heal()
        for node in self.topology.nodes:
            with contextlib.suppress(TopologyError, redis.RedisError):
                if node.is_paused():
                    node.resume()
                elif not node.is_running():
                    node.restart()


def serving(topology: Topology) -> None:
    """Raise `NotYet` until ``topology`` serves again after a fault: sentinel:
    one master, every running replica linked to it, every running sentinel naming it
    (their cached view of the replicas may lag up to 10 s: not waited for, the library
    copes with it); replicated: one master, every running replica linked to it;
    cluster: ready as the harness means it (every slot served, one slot map, no failure
    flags); redlock: every master answers."""
    if topology.layout == "sentinel":
        assert topology.master_name is not None
        master = check_replication(topology)
        for sentinel in topology.sentinels:
            if sentinel.expected_up:
                port = sentinel_master_port(sentinel, topology.master_name)
                if port != master.port:
                    raise NotYet(f"{sentinel.name} still names port {port}")
    elif topology.layout == "cluster":
        check_cluster(topology)
    elif topology.layout == "replication":
        check_replication(topology)
    else:
        check_standalone(topology)


def _demote(old: Node, new: Node) -> None:
    """The managed service demotes ``old``: a replica of ``new``, its config rewritten."""
    old.command("REPLICAOF", new.host, str(new.port))
    old.command("CONFIG", "REWRITE")


def _wait_stopped(pid: int) -> None:
    """Return once ``pid`` is stopped (SIGSTOP is delivered asynchronously), or after
    a second: its journal is final only then."""
    deadline = time.monotonic() + 1.0
    while time.monotonic() < deadline:
        if process_state(pid) in ("T", "t", None):
            return
        time.sleep(0.002)
