"""A holder hears of a lost hold soon, through the lost-lock path (issue 15, findings 3
and 5).

- After a server restart (persistence off: the key is gone), the holder of a watchdog
  lock is told within about a second of the server being back, not a renewal interval
  later: the renewal that meets the stale pooled connection is retried on a fresh one,
  and when the client's pub/sub saw the node's connection drop, the node is checked
  until it answers, with the default 30 s watchdog timeout too.
- A leased hold whose lease runs out while its owner still holds it is reported at that
  moment; one whose key is deleted (or flushed, or evicted) is reported within one
  renewal interval; ``unlock()`` of either says the hold expired (with its lease) or
  vanished, not that the lock "is not locked by this owner".
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
import redis

from redisson_py import LockLost, LockNotOwnedError
from redisson_py.core import keyspace
from redisson_py.core.flows.watchdog import REPORT_GAP
from redisson_py.core.state.holds import safety_margin
from redisson_py.testing import Topology, eventually
from redisson_py.testing.owners import Flavor

SLACK = 0.5
"""Allowance for thread hand-offs on a loaded 2-core box."""


class Told:
    """A lost-lock callback that records when, and what, it was told."""

    def __init__(self) -> None:
        self.events: list[tuple[LockLost, float]] = []
        self.seen = threading.Event()

    def __call__(self, event: LockLost) -> None:
        self.events.append((event, time.monotonic()))
        self.seen.set()

    def wait(self, timeout: float) -> tuple[LockLost, float]:
        assert self.seen.wait(timeout), f"no lost-lock report within {timeout} s"
        return self.events[0]


def _admin(topology: Topology) -> redis.Redis:
    master = topology.master()
    return redis.Redis(host=master.host, port=master.port, socket_timeout=2)


def _wait_for_renewal(admin: redis.Redis, name: str, timeout: float) -> None:
    """Return just after the watchdog renewed ``name`` (its PTTL jumped up)."""
    deadline = time.monotonic() + timeout
    last = admin.pttl(name)
    while time.monotonic() < deadline:
        time.sleep(0.01)
        now = admin.pttl(name)
        if now > last:
            return
        last = now
    raise AssertionError(f"{name!r} was not renewed within {timeout} s")


def test_holder_is_told_soon_after_a_server_restart(
    flavor: Flavor,
    topology_factory: Callable[..., Topology],
    topology_config: Any,
    lock_name: str,
) -> None:
    topology = topology_factory("single")
    told = Told()
    config = topology_config(topology, lock_watchdog_timeout=3.0)  # renewed every 1 s
    client = flavor.create_client(config, on_lock_lost=told)
    holder = flavor.owner("holder")
    lock = client.get_lock(lock_name)
    holder(lock.lock)
    admin = _admin(topology)
    # Restart just after a renewal, so the next one meets the stale pooled connection
    # (today's bug: that round fails, and the holder is told a whole interval later).
    _wait_for_renewal(admin, lock_name, timeout=3)
    node = topology.master()
    node.kill()
    node.restart()
    back = time.monotonic()
    assert admin.exists(lock_name) == 0  # persistence off: the restart lost the key
    event, at = told.wait(timeout=5)
    assert event.name == lock_name
    assert at - back < 1.0 + SLACK, f"told {at - back:.2f} s after the server was back"
    assert len(told.events) == 1
    with pytest.raises(LockNotOwnedError):
        holder(lock.unlock)


def test_a_restart_pubsub_saw_is_checked_at_once(
    flavor: Flavor,
    topology_factory: Callable[..., Topology],
    topology_config: Any,
    lock_name: str,
) -> None:
    # Default watchdog timeout: the next renewal round is 10 s away. A rival of the same
    # client waits for the lock, so the client's pub/sub sees the node go.
    topology = topology_factory("single")
    told = Told()
    client = flavor.create_client(topology_config(topology), on_lock_lost=told)
    holder, rival = flavor.owner("holder"), flavor.owner("rival")
    lock = client.get_lock(lock_name)
    holder(lock.lock)
    rival_got = rival.start(lock.try_lock, 30.0)
    admin = _admin(topology)
    channel = keyspace.lock_channel(lock_name, by_slot=True)
    deadline = time.monotonic() + 5
    while dict(admin.pubsub_numsub(channel)).get(channel.encode(), 0) == 0:
        assert time.monotonic() < deadline, "the rival never subscribed"
        time.sleep(0.02)
    node = topology.master()
    node.kill()
    node.restart()
    back = time.monotonic()
    event, at = told.wait(timeout=5)
    assert event.name == lock_name
    assert at - back < 1.0 + SLACK, f"told {at - back:.2f} s after the server was back"
    assert rival_got.result(timeout=10) is True  # the restart freed the lock for it
    rival(lock.unlock)


def test_an_expired_lease_is_reported_when_it_runs_out(
    flavor: Flavor, single_topology: Topology, topology_config: Any, lock_name: str
) -> None:
    told = Told()
    client = flavor.create_client(topology_config(single_topology), on_lock_lost=told)
    holder = flavor.owner("holder")
    lock = client.get_lock(lock_name)
    called = time.monotonic()
    holder(lock.lock, 1.0)
    taken = time.monotonic()
    event, at = told.wait(timeout=3)
    # The hold is safe until its lease's end counted from the acquire's send, less the
    # safety margin (1% + 50 ms); the report comes then, or up to one report gap early:
    # before the key can expire, never after.
    earliest = 1.0 - safety_margin(1.0) - REPORT_GAP
    assert at - called >= earliest, f"told {at - called:.4f} s after the call: too soon"
    assert at - taken < 1.0, f"told {at - taken:.4f} s after the acquire: not before expiry"
    assert event.name == lock_name
    assert "lease of 1 s expired" in event.reason, event.reason
    # The server's expiry is in whole milliseconds of its own clock, so the key can
    # outlive the client's lease clock by up to a millisecond; an unlock() in that gap
    # releases a live key and says "reported lost" instead.
    admin = _admin(single_topology)
    eventually(lambda: admin.exists(lock_name) == 0, timeout=1.0, what="the key to expire")
    with pytest.raises(LockNotOwnedError, match=r"expired \(lease 1 s\)"):
        holder(lock.unlock)
    assert len(told.events) == 1


def test_a_deleted_leased_key_is_reported_within_a_renewal_interval(
    flavor: Flavor, single_topology: Topology, topology_config: Any, lock_name: str
) -> None:
    told = Told()
    config = topology_config(single_topology, lock_watchdog_timeout=3.0)
    client = flavor.create_client(config, on_lock_lost=told)
    holder = flavor.owner("holder")
    lock = client.get_lock(lock_name)
    holder(lock.lock, 60.0)  # a lease: never renewed, but still watched
    admin = _admin(single_topology)
    admin.delete(lock_name)
    deleted = time.monotonic()
    event, at = told.wait(timeout=4)
    assert at - deleted < 1.0 + SLACK, f"told {at - deleted:.2f} s after the delete"
    assert "deleted or evicted" in event.reason, event.reason
    with pytest.raises(LockNotOwnedError, match="vanished"):
        holder(lock.unlock)
    assert admin.exists(lock_name) == 0  # the check never recreates or renews the key


def test_a_leased_hold_is_checked_without_being_renewed(
    flavor: Flavor, single_topology: Topology, topology_config: Any, lock_name: str
) -> None:
    told = Told()
    config = topology_config(single_topology, lock_watchdog_timeout=3.0)
    client = flavor.create_client(config, on_lock_lost=told)
    holder = flavor.owner("holder")
    lock = client.get_lock(lock_name)
    holder(lock.lock, 2.5)
    time.sleep(1.6)  # at least one watchdog round has looked at it
    assert holder(lock.remain_time_to_live) < 1.0  # not renewed
    holder(lock.unlock)
    assert told.events == []


def test_unlock_of_a_vanished_hold_says_so(
    flavor: Flavor, single_topology: Topology, topology_config: Any, lock_name: str
) -> None:
    # The key goes between two watchdog rounds: unlock() finds it gone first.
    client = flavor.create_client(topology_config(single_topology))  # rounds every 10 s
    holder = flavor.owner("holder")
    lock = client.get_lock(lock_name)
    holder(lock.lock, 30.0)
    _admin(single_topology).delete(lock_name)
    with pytest.raises(LockNotOwnedError) as raised:
        holder(lock.unlock)
    message = str(raised.value)
    assert "vanished" in message and "lease 30 s" in message, message
    assert "not locked by this owner" not in message
    with pytest.raises(LockNotOwnedError, match="not locked by this owner"):
        holder(lock.unlock)  # a second unlock: this owner truly holds nothing
