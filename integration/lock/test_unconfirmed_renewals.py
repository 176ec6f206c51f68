"""With replica sync on, a renewal counts only when the replicas acknowledged it.

The partition's mechanism, without a partition: the replica is frozen (SIGSTOP), so the
master still applies every renewal but no ``WAIT`` after one is acknowledged. A holder
must then be told, at the safe end of its last acknowledged renewal (sent + TTL - the
margin), before the key could expire on the replica a failover would promote: the
``on_lock_lost`` callback, the ``lost`` event, ``unlock()`` raising and
``is_held_by_current_thread()`` turning False, for every kind with a watchdog or a lease,
in both APIs. On a master/slave topology the frozen replica stays counted (the master
lists it for ``repl-timeout``): nothing flags it down, as in a partition. The same
happening under a real network partition is tested in integration/failover/.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from every_kind import watchdog_kinds

from redisson_py import LockLost, LockNotOwnedError, NoSyncedReplicasError, PermitNotHeldError
from redisson_py.core.flows.watchdog import REPORT_GAP
from redisson_py.core.state.holds import safety_margin
from redisson_py.events import LockEvent
from redisson_py.testing import Node, Topology, eventually
from redisson_py.testing.owners import Flavor

WATCHDOG = 1.5
SYNC = {
    "check_lock_synced_slaves": True,
    "slaves_sync_timeout": 0.2,
    "lock_watchdog_timeout": WATCHDOG,
}


class Told:
    """Collects on_lock_lost calls with their times (any thread or task)."""

    def __init__(self) -> None:
        self.events: list[tuple[float, LockLost]] = []

    def __call__(self, event: LockLost) -> None:
        self.events.append((time.monotonic(), event))

    def names(self) -> set[str]:
        return {event.name for _, event in self.events}


@dataclass
class Setup:
    """A master with one replica, a client of the flavor with replica sync on (and the
    given settings), its lost-lock reports and its events."""

    master: Node
    replica: Node
    client: Any
    told: Told
    seen: list[LockEvent]


@pytest.fixture
def make_setup(
    flavor: Flavor, topology_factory: Callable[..., Topology], topology_config: Any
) -> Callable[..., Setup]:
    def make(**settings: Any) -> Setup:
        topology = topology_factory("master-replica", replicas_per_master=1)
        master = topology.master()
        [replica] = [n for n in topology.data_nodes if n is not master]
        told = Told()
        config = topology_config(topology, **{**SYNC, **settings})
        client = flavor.create_client(config, on_lock_lost=told)
        seen: list[LockEvent] = []
        client.add_listener(seen.append)
        return Setup(master, replica, client, told, seen)

    return make


def test_every_kind_is_told_when_its_renewals_go_unacknowledged(
    flavor: Flavor, make_setup: Callable[..., Setup], lock_name: str
) -> None:
    setup = make_setup()
    client, told, seen, master, replica = (
        setup.client,
        setup.told,
        setup.seen,
        setup.master,
        setup.replica,
    )
    holder = flavor.owner("holder")
    locks = watchdog_kinds(client, lock_name)
    for lock in locks.values():
        holder(lock.lock)
    group = flavor.multilock(client.get_lock(f"{lock_name}:m1"), client.get_lock(f"{lock_name}:m2"))
    holder(group.lock)
    time.sleep(WATCHDOG / 3 + 0.3)  # one confirmed renewal round first
    assert told.events == []
    replica.pause()
    paused = time.monotonic()
    try:
        expected = {lock.name for lock in locks.values()} | {group_label(group)}
        eventually(lambda: told.names() >= expected, timeout=WATCHDOG + 2, what="every holder told")
        # Told before the key could expire on the replica: its last acknowledged renewal
        # was sent before the pause, and the key lives WATCHDOG from that send.
        latest = max(at for at, _ in told.events)
        assert latest - paused < WATCHDOG - safety_margin(WATCHDOG) + 0.05
        for _, event in told.events:
            assert "not confirmed" in event.reason or "not acknowledged" in event.reason, event
        # The old master still has every key, renewed: only the client knows better.
        for lock in locks.values():
            assert master.command("EXISTS", lock.name) == 1
            assert holder(lock.is_held_by_current_thread) is False
            with pytest.raises(LockNotOwnedError, match="reported lost"):
                holder(lock.unlock)
        with pytest.raises(LockNotOwnedError):
            holder(group.unlock)
        failed = {e.name for e in seen if e.kind == "renewal_failed"}
        lost = {e.name for e in seen if e.kind == "lost"}
        assert {lock.name for lock in locks.values()} <= failed & lost
    finally:
        replica.resume()


def group_label(group: Any) -> str:
    return str(group._group.label)


def test_a_replica_back_within_the_ttl_keeps_the_hold(
    flavor: Flavor, make_setup: Callable[..., Setup], lock_name: str
) -> None:
    setup = make_setup(lock_watchdog_timeout=3.0)
    holder = flavor.owner("holder")
    lock = setup.client.get_lock(lock_name)
    holder(lock.lock)
    setup.replica.pause()
    time.sleep(1.5)  # a renewal round or more goes unacknowledged...
    setup.replica.resume()
    time.sleep(3.0)  # ...then the probes' next acknowledged renewal counts again
    assert setup.told.events == []
    assert holder(lock.is_held_by_current_thread) is True
    holder(lock.unlock)


def test_a_leased_permit_is_told_at_its_safe_end(
    flavor: Flavor, make_setup: Callable[..., Setup], lock_name: str
) -> None:
    setup = make_setup()
    told, seen = setup.told, setup.seen
    semaphore = setup.client.get_permit_expirable_semaphore(lock_name)
    flavor.run(semaphore.try_set_permits(1))
    called = time.monotonic()
    permit = flavor.run(semaphore.acquire(lease_time=1.0))
    returned = time.monotonic()
    eventually(lambda: told.events, timeout=3, what="the permit's holder told")
    [(at, event)] = told.events
    # The lease counts from the granting attempt's send, between the call and its return
    # (a fresh replica may make the first grant's WAIT fail, and the acquire retry).
    assert at - called >= 1.0 - safety_margin(1.0) - REPORT_GAP, "told too soon"
    assert at - returned < 1.0, "told after the permit could expire"
    assert (event.name, event.owner) == (lock_name, permit)
    assert "lease of 1 s expired" in event.reason, event.reason
    assert [e.kind for e in seen if e.owner == permit] == ["lost"]
    with pytest.raises(PermitNotHeldError, match="reported lost"):
        flavor.run(semaphore.release(permit))
    # A permit released before its safe end is not watched any more.
    other = flavor.run(semaphore.acquire(lease_time=1.0))
    flavor.run(semaphore.release(other))
    time.sleep(1.1)
    assert len(told.events) == 1


def test_an_unacknowledged_extension_keeps_the_old_safe_end(
    flavor: Flavor, make_setup: Callable[..., Setup], lock_name: str
) -> None:
    setup = make_setup()
    client, told, replica = setup.client, setup.told, setup.replica
    holder = flavor.owner("holder")
    lock = client.get_lock(lock_name)
    holder(lock.lock, 1.5)
    returned = time.monotonic()
    replica.pause()
    try:
        with pytest.raises(NoSyncedReplicasError, match="earlier of its old and new lease end"):
            holder(lock.extend, 30.0)
        eventually(lambda: told.events, timeout=3, what="the holder told at the old end")
        [(at, _)] = told.events
        assert at - returned < 1.5  # the old lease's end, not the extension's
    finally:
        replica.resume()
