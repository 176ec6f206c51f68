"""The chaos suite's ``old-master`` partition (``redisson_py.chaos.partition``) with a mixed
fleet, replica sync on (``checkLockSyncedSlaves``, both clients' default): on a sentinel
topology with one replica, holder A holds a watchdog lock (TTL 3 s) on the master; the
network splits into {A, master} | {B, replica, sentinels}, both sides stay alive; the
sentinels promote the replica and B tries the lock. A is Python and B Java, then the other
way round; each test counts the double grants (0 or 1: one lock, one split).

The Java peer runs inside the topology's network namespace with its connections leaving
from its client host's address (``JavaPeer(popen=..., source=...)``), so the cut applies to
it as to a Python client on that side. A double grant: B granted while A still believes it
holds the lock. A Python holder is told (``on_lock_lost``) when its renewals go
unconfirmed; Redisson tells its holder nothing, so a Java holder believes it holds as long
as its own ``isHeldByCurrentThread()`` says so. Process backend with
``network="namespace"`` whatever ``--redis-backend`` (partitions exist there only);
skipped, with the reason, where partitions cannot run.
"""

from __future__ import annotations

import contextlib
import functools
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from java_peer import NEWEST, JavaClient, JavaError, JavaPeer, build

from redisson_py import Config, LockLost
from redisson_py.chaos.common import TOPOLOGY_OVERRIDES, create_client, master_of
from redisson_py.chaos.partition import (
    B_WAIT,
    COMMAND_TIMEOUT,
    OBSERVE,
    SENTINEL_SCAN,
    SYNC_TIMEOUT,
    TTL,
)
from redisson_py.chaos.partition_sides import RemoteHolder, sides
from redisson_py.testing import Topology
from redisson_py.testing.topologies import redisson_config

pytestmark = pytest.mark.usefixtures("partitions_supported")

Factory = Callable[..., Topology]


@pytest.fixture
def split_topology(topology_factory: Factory) -> Topology:
    """A sentinel topology of its own in a network namespace (one replica)."""
    return topology_factory("sentinel", network="namespace", **TOPOLOGY_OVERRIDES["sentinel"])


@pytest.fixture
def yaml_path(split_topology: Topology) -> Path:
    """The one YAML file both languages read: the chaos suite's partition settings (sync
    on, TTL 3 s, slavesSyncTimeout 0.5 s, command timeout 1 s, sentinel scan 0.5 s)."""
    [mapping] = split_topology.redisson_configs()
    mapping["sentinelServersConfig"].update(
        timeout=int(COMMAND_TIMEOUT * 1000),
        connectTimeout=int(COMMAND_TIMEOUT * 1000),
        scanInterval=int(SENTINEL_SCAN * 1000),
    )
    mapping.update(
        checkLockSyncedSlaves=True,
        slavesSyncTimeout=int(SYNC_TIMEOUT * 1000),
        lockWatchdogTimeout=int(TTL * 1000),
    )
    path = Path(split_topology.directory) / f"mixed-{uuid.uuid4().hex[:8]}.yaml"
    path.write_text(redisson_config.dump_yaml([mapping]))
    return path


@contextlib.contextmanager
def java_on(topology: Topology, side: str, tmp_path: Path) -> Iterator[JavaPeer]:
    """The Java peer (newest Redisson) started on client host ``side``."""
    host = topology.client_host(side)
    peer = JavaPeer(
        NEWEST,
        build(NEWEST),
        tmp_path,
        popen=functools.partial(topology.network.popen, host),
        source=host.address,
    )
    try:
        yield peer
    finally:
        peer.close()


def connect(peer: JavaPeer, topology: Topology, yaml_path: Path, side: str) -> JavaClient:
    """A Redisson client in ``peer``; checks its connections leave from ``side``'s address
    (else the cut would not apply to it: 127.0.0.1 is in no cut)."""
    java = peer.fresh_client(yaml_path.read_text())
    address = topology.client_host(side).address
    clients = str(topology.master().command("CLIENT", "LIST"))
    assert f"addr={address}:" in clients, clients
    return java


def split(topology: Topology, name: str, a_side: str) -> float:
    """Cut {A's host, the lock's master} off from everyone else; when (monotonic)."""
    minority = [master_of(topology, name), topology.client_host(a_side)]
    side_a, side_b = sides(topology, minority)
    at = time.monotonic()
    topology.partition(side_a, side_b)
    return at


def epoch_to_monotonic(epoch: float) -> float:
    return epoch - (time.time() - time.monotonic())


def test_a_python_holder_cut_off_is_told_before_a_java_contender_is_granted(
    split_topology: Topology, yaml_path: Path, tmp_path: Path
) -> None:
    topology, name = split_topology, f"mixed:partition:{uuid.uuid4().hex[:10]}"
    holder = RemoteHolder.start(topology, topology.client_host("a"), yaml_path, name)
    try:
        with java_on(topology, "b", tmp_path) as peer:
            java = connect(peer, topology, yaml_path, "b")
            lock = java.get("lock", name)
            assert lock.call("tryLock", 0, -1, thread="b") is False  # A holds it
            split_at = split(topology, name, "a")
            granted_at = None
            errors: list[str] = []
            # B keeps trying through the failover, as an application would: Redisson's
            # tryLock raises while the old master does not answer.
            while granted_at is None and (left := split_at + B_WAIT - time.monotonic()) > 0:
                reply = lock.start("tryLock", int(left * 1000), -1, thread="b").result(left + 30)
                if reply.ok and reply.value is True:
                    granted_at = epoch_to_monotonic(reply.at)
                elif not reply.ok:
                    errors.append(str(reply.value))
                    time.sleep(0.2)
            told_at = holder.wait_told(split_at + OBSERVE)
            granted = None if granted_at is None else granted_at - split_at
            told = None if told_at is None else told_at - split_at
            overlaps = int(granted is not None and (told is None or told > granted))
            print(f"\nPython holder told {told}, Java contender granted {granted}: {overlaps}")
            assert granted is not None, f"the Java contender was never granted: {errors[-3:]}"
            assert told is not None, f"A was never told; B was granted {granted:.2f} s in"
            assert overlaps == 0, f"A told {told:.2f} s after the split, B granted {granted:.2f}"
            assert "not confirmed" in holder.reason
            assert holder.ask("unlock").get("raised") == "LockNotOwnedError"
            lock.call("unlock", thread="b")
            java.shutdown()
    finally:
        holder.stop()


class _PythonContender:
    """B: a redisson-py client on the majority side trying the lock from a thread."""

    def __init__(self, topology: Topology, yaml_path: Path, name: str):
        self.topology, self.yaml_path, self.name = topology, yaml_path, name
        self.granted_at: float | None = None
        self.lost_at: float | None = None
        self.error = ""
        self.ready = threading.Event()
        self.split_at = 0.0
        self.go = threading.Event()
        self.done = threading.Event()

    def _lost(self, event: LockLost) -> None:
        self.lost_at = self.lost_at or time.monotonic()

    def run(self) -> None:
        with self.topology.network.joined(self.topology.client_host("b")):
            client = create_client(Config.from_yaml(self.yaml_path))
            try:
                lock = client.get_lock(self.name, on_lock_lost=self._lost)
                self.ready.set()
                self.go.wait(30)
                while (left := self.split_at + B_WAIT - time.monotonic()) > 0:
                    try:
                        if lock.try_lock(left):
                            self.granted_at = time.monotonic()
                            break
                    except Exception as error:  # through the failover, as an app would
                        self.error = f"{type(error).__name__}: {error}"
                        time.sleep(0.2)
                self.done.wait(60)
                if self.granted_at is not None:
                    lock.unlock()
            finally:
                client.shutdown()


def test_a_java_holder_cut_off_is_not_told_and_a_python_contender_is_granted_too(
    split_topology: Topology, yaml_path: Path, tmp_path: Path
) -> None:
    """Redisson tells a holder nothing when its renewals go unconfirmed: the Java holder
    on the old master's side still sees itself holding when our client, after the
    failover, is granted the lock. redisson-py cannot protect a Java holder; the hazard
    is Redisson's (docs/migration/redisson.md, "Replica sync is stricter"), as in
    ``test_java_race.py``."""
    topology, name = split_topology, f"mixed:partition:{uuid.uuid4().hex[:10]}"
    with java_on(topology, "a", tmp_path) as peer:
        java = connect(peer, topology, yaml_path, "a")
        lock = java.get("lock", name)
        assert lock.call("tryLock", 0, -1, thread="a") is True
        contender = _PythonContender(topology, yaml_path, name)
        thread = threading.Thread(target=contender.run, name="python-contender")
        thread.start()
        try:
            assert contender.ready.wait(30)
            contender.split_at = split(topology, name, "a")
            contender.go.set()
            deadline = contender.split_at + B_WAIT
            while contender.granted_at is None and time.monotonic() < deadline:
                time.sleep(0.05)
            # What the Java holder believes right after B's grant.
            believes: Any = None
            if contender.granted_at is not None:
                try:
                    believes = lock.call("held", thread="a", timeout=15)
                except JavaError as error:
                    believes = f"raised {error}"
        finally:
            contender.done.set()
            thread.join(90)
        granted_at, split_at = contender.granted_at, contender.split_at
        granted = None if granted_at is None else granted_at - split_at
        overlaps = int(granted is not None and believes is True)
        print(f"\nJava holder still holding {believes}, Python contender granted {granted}")
        print(f"double grants: {overlaps}")
        assert granted is not None, f"the Python contender was never granted: {contender.error}"
        assert granted > TTL - 1.0  # not before the Java holder's last replicated renewal ran out
        assert contender.lost_at is None  # the rightful holder keeps it
        assert overlaps == 1, f"the Java holder's own check said {believes!r}"
