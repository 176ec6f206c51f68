"""RedLock over five independent masters: majority, validity, failures, watchdog."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from redisson_py import ArgumentError, LockLost, LockNotOwnedError, LockUnavailableError
from redisson_py.testing import Topology, wait_until
from redisson_py.testing.owners import Flavor
from redisson_py.testing.topologies.waiting import NotYet


def keys_on(topology: Topology, name: str) -> list[int]:
    """Per master: 1 if it holds the lock's key (dead masters count 0)."""
    found = []
    for node in topology.data_nodes:
        try:
            found.append(int(node.client().exists(name)))
        except Exception:
            found.append(0)
    return found


def test_redlock_is_reentrant_and_released_everywhere(
    flavor: Flavor,
    redlock_topology: Topology,
    redlock_clients: Callable[..., list[Any]],
    lock_name: str,
) -> None:
    clients = redlock_clients(redlock_topology)
    redlock = flavor.redlock.for_name(lock_name, clients)
    alice, bob = flavor.owner("alice"), flavor.owner("bob")
    alice(redlock.lock)
    alice(redlock.lock)
    assert keys_on(redlock_topology, lock_name) == [1, 1, 1, 1, 1]
    alice(redlock.unlock)
    assert bob(flavor.redlock.for_name(lock_name, clients).try_lock) is False
    alice(redlock.unlock)
    assert keys_on(redlock_topology, lock_name) == [0, 0, 0, 0, 0]
    with pytest.raises(LockNotOwnedError):
        alice(redlock.unlock)


def test_a_lease_shorter_than_the_round_is_refused(
    flavor: Flavor,
    redlock_topology: Topology,
    redlock_clients: Callable[..., list[Any]],
    lock_name: str,
) -> None:
    redlock = flavor.redlock.for_name(lock_name, redlock_clients(redlock_topology))
    alice = flavor.owner("alice")
    # 1 ms of lease cannot outlast a round (50 ms member timeout) plus the drift
    # allowance: refused at once with the reason, not after waiting out the wait.
    started = time.monotonic()
    with pytest.raises(ArgumentError, match="cannot outlast one round"):
        alice(redlock.try_lock, 5.0, 0.001)
    assert time.monotonic() - started < 1.0
    assert keys_on(redlock_topology, lock_name) == [0, 0, 0, 0, 0]
    assert alice(redlock.try_lock, 0.0, 10.0) is True
    alice(redlock.unlock)


def test_a_redlock_of_one_lock_repeated_is_refused(
    flavor: Flavor,
    redlock_topology: Topology,
    redlock_clients: Callable[..., list[Any]],
    lock_name: str,
) -> None:
    """Issue 15, finding 6: the same lock five times was granted on one master with hold
    count 3, a "majority" of one server."""
    client = redlock_clients(redlock_topology)[0]
    with pytest.raises(ArgumentError, match="twice"):
        flavor.redlock(*(client.get_lock(lock_name) for _ in range(5)))
    with pytest.raises(ArgumentError, match="twice"):
        flavor.multilock(client.get_lock(lock_name), client.get_lock(lock_name))
    assert keys_on(redlock_topology, lock_name) == [0, 0, 0, 0, 0]


def test_two_dead_masters_leave_a_quorum_three_do_not(
    flavor: Flavor,
    topology_factory: Callable[..., Topology],
    redlock_clients: Callable[..., list[Any]],
    lock_name: str,
) -> None:
    topology = topology_factory("redlock")
    clients = redlock_clients(topology)
    redlock = flavor.redlock.for_name(lock_name, clients)
    alice = flavor.owner("alice")
    masters = topology.data_nodes
    masters[0].kill()
    masters[1].kill()
    assert alice(redlock.try_lock, 1.0, 10.0) is True
    assert keys_on(topology, lock_name) == [0, 0, 1, 1, 1]
    alice(redlock.unlock)
    masters[2].kill()
    started = time.monotonic()
    with pytest.raises(LockUnavailableError) as caught:
        alice(redlock.try_lock, 1.0, 10.0)
    assert time.monotonic() - started <= 1.0 + 1.0
    assert len(caught.value.errors) == 3
    for node in masters[:3]:
        assert str(node.port) in str(caught.value)


def test_a_paused_master_costs_one_member_timeout(
    flavor: Flavor,
    topology_factory: Callable[..., Topology],
    redlock_clients: Callable[..., list[Any]],
    lock_name: str,
) -> None:
    topology = topology_factory("redlock")
    clients = redlock_clients(topology)
    redlock = flavor.redlock.for_name(lock_name, clients, member_timeout=0.2)
    alice = flavor.owner("alice")
    assert alice(redlock.try_lock, 0.0, 10.0) is True  # warm the connections
    alice(redlock.unlock)
    paused = topology.data_nodes[4]
    paused.pause()
    try:
        started = time.monotonic()
        assert alice(redlock.try_lock, 0.0, 10.0) is True
        elapsed = time.monotonic() - started
        assert elapsed < 0.2 * 2 + 0.1, f"took {elapsed:.3f} s"
        alice(redlock.unlock)
    finally:
        paused.resume()


def test_watchdog_keeps_a_redlock_and_reports_it_below_quorum(
    topology_factory: Callable[..., Topology],
    make_redlock_configs: Callable[..., list[Any]],
    lock_name: str,
) -> None:
    # Both APIs on one topology, so the waits are spent once.
    topology = topology_factory("redlock")
    flavors = [Flavor("sync"), Flavor("asyncio")]
    try:
        held = []
        for flavor in flavors:
            events: list[LockLost] = []
            configs = make_redlock_configs(topology, lock_watchdog_timeout=3.0)
            clients = [flavor.create_client(c) for c in configs]
            name = f"{lock_name}:{flavor.name}"
            # Every member taken in the first round, which also opens the connections: a
            # 1 s member reply timeout, not the 50 ms default of a 3 s lease, which a
            # loaded machine's first connect can outlast (a RedLock of 4 members holds).
            redlock = flavor.redlock.for_name(
                name, clients, on_lock_lost=events.append, member_timeout=1.0
            )
            holder = flavor.owner("holder")
            holder(redlock.lock)
            # All five taken: a key missing later was lost by the watchdog, not the round.
            assert all(node.client().pttl(name) > 0 for node in topology.data_nodes)
            held.append((flavor.name, name, redlock, holder, events))
        time.sleep(10)
        for _, name, _, _, _ in held:
            for node in topology.data_nodes:
                assert 1.5 < node.client().pttl(name) / 1000 <= 3.0
        for node in topology.data_nodes[:2]:
            node.kill()
        time.sleep(4)  # two lost members: still a quorum, nothing to report
        assert all(events == [] for *_, events in held)
        topology.data_nodes[2].kill()
        for flavor_name, _, redlock, holder, events in held:

            def told(events: list[LockLost] = events) -> None:
                if not events:
                    raise NotYet("no lost-lock report yet")

            wait_until(told, timeout=3.0 + 2.0, what=f"the {flavor_name} RedLock's lost report")
            assert len(events) == 1 and "RedLock" in events[0].name
            with pytest.raises(LockNotOwnedError):
                holder(redlock.unlock)
    finally:
        for flavor in flavors:
            flavor.close()


def test_redlock_excludes_across_processes(
    flavor: Flavor,
    redlock_topology: Topology,
    write_redlock_config: Callable[..., str],
    tmp_path: Path,
    lock_name: str,
) -> None:
    config = write_redlock_config(redlock_topology, tmp_path / "redlock.yaml")
    counter = f"{lock_name}:counter"
    command = [
        sys.executable,
        "-m",
        "redisson_py.testing.faults.workloads",
        "counter",
        "--config",
        config,
        "--flavor",
        flavor.name,
        "--lock",
        lock_name,
        "--counter",
        counter,
        "--owners",
        "4",
        "--increments",
        "100",
    ]
    workers = [subprocess.Popen(command, stdout=subprocess.PIPE, text=True) for _ in range(2)]
    try:
        for worker in workers:
            out, _ = worker.communicate(timeout=240)
            assert worker.returncode == 0
            assert sum(json.loads(out)["done"]) == 400
    finally:
        for worker in workers:  # never leave a worker behind when the test fails
            if worker.poll() is None:
                worker.kill()
                worker.wait()
    assert int(redlock_topology.data_nodes[0].client().get(counter)) == 800
