"""The read-write lock on single and cluster, sync and asyncio: readers share across
owners and clients, a writer excludes everyone else, the writer may also read and stays
a reader after its write unlock (waiting readers enter at once, woken by the ``1`` a
write unlock publishes); a killed reader's hold runs out with the watchdog timeout while
a live reader's (and its timeout keys) is renewed; leased read holds expire and can be
extended; ``is_locked`` and ``force_unlock`` of each half."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest
from kind_helpers import by_slot, kill, listening, owner_field, raw_master, reader, running

from integration.wake_ups import release_wakes_waiter
from redisson_py import LockLost, LockNotOwnedError
from redisson_py.core.routing import naming
from redisson_py.testing import Topology, eventually
from redisson_py.testing.owners import Flavor, Owner


def timeout_key(topology: Topology, name: str, field: str, hold: int) -> str:
    """The key that times read hold ``hold`` of owner ``field`` out."""
    prefix = naming.key_prefix(name, by_slot=by_slot(topology))
    return f"{prefix}:{field}:rwlock_timeout:{hold}"


def hash_of(topology: Topology, name: str) -> dict[str, str]:
    with raw_master(topology, name) as raw:
        return {str(k): str(v) for k, v in raw.hgetall(name).items()}


def test_readers_share_and_a_writer_waits_for_them(
    flavor: Flavor, make_client: Callable[..., Any], lock_name: str
) -> None:
    clients = [make_client(), make_client()]
    readers = [flavor.owner(f"reader-{i}") for i in range(4)]
    reads = [clients[i % 2].get_read_write_lock(lock_name).read_lock() for i in range(4)]
    for owner, read in zip(readers, reads, strict=True):
        assert owner(read.try_lock, 1.0) is True
    for owner, read in zip(readers, reads, strict=True):
        assert owner(read.hold_count) == 1
        assert owner(read.is_held_by_current_thread) is True
    writer = flavor.owner("writer")
    write = clients[0].get_read_write_lock(lock_name).write_lock()
    assert writer(write.try_lock) is False
    assert writer(write.try_lock, 0.3) is False
    waiting = writer.start_timed(write.lock)
    for owner, read in zip(readers, reads, strict=True):
        assert not waiting.done()
        owner(read.unlock)
    waiting.result(timeout=10)
    assert writer(write.is_locked) is True
    writer(write.unlock)


def test_a_writer_excludes_readers_and_other_writers(
    flavor: Flavor, make_client: Callable[..., Any], lock_name: str
) -> None:
    first, second = make_client(), make_client()
    alice, bob, carol = flavor.owner("alice"), flavor.owner("bob"), flavor.owner("carol")
    write_a = first.get_read_write_lock(lock_name).write_lock()
    alice(write_a.lock)
    assert alice(write_a.try_lock) is True  # reentrant
    assert alice(write_a.hold_count) == 2
    assert bob(second.get_read_write_lock(lock_name).read_lock().try_lock, 0.3) is False
    assert bob(first.get_read_write_lock(lock_name).read_lock().try_lock) is False
    assert carol(second.get_read_write_lock(lock_name).write_lock().try_lock, 0.3) is False
    assert carol(first.get_read_write_lock(lock_name).write_lock().try_lock) is False
    alice(write_a.unlock)
    assert carol(second.get_read_write_lock(lock_name).write_lock().try_lock) is False
    alice(write_a.unlock)
    assert carol(second.get_read_write_lock(lock_name).write_lock().try_lock) is True
    assert bob(second.get_read_write_lock(lock_name).read_lock().try_lock) is False
    with pytest.raises(LockNotOwnedError):
        alice(write_a.unlock)
    carol(second.get_read_write_lock(lock_name).write_lock().unlock)


def test_the_writer_may_read_and_its_write_unlock_lets_readers_in_at_once(
    flavor: Flavor,
    make_client: Callable[..., Any],
    family_topology: Topology,
    lock_name: str,
) -> None:
    first, second = make_client(), make_client()
    alice = flavor.owner("alice")
    rw = first.get_read_write_lock(lock_name)
    alice(rw.write_lock().lock)  # watchdog: a 30 s TTL
    assert alice(rw.read_lock().try_lock) is True  # the writer may read
    assert alice(rw.read_lock().hold_count) == 1
    assert alice(rw.write_lock().hold_count) == 1
    readers = [flavor.owner(f"reader-{i}") for i in range(3)]
    reads = [(first, second)[i % 2].get_read_write_lock(lock_name).read_lock() for i in range(3)]
    entering = [r.start_timed(read.lock) for r, read in zip(readers, reads, strict=True)]
    # The waiting writer has a client of its own. A client's waiters share one pool of
    # wake-up permits: in the sync shell a writer woken with them, refused, and back
    # waiting before a reader thread ran can take that reader's permit, and the reader
    # then sleeps until the holder's TTL (a known defect of the shared permits).
    third = make_client()
    writer = flavor.owner("writer")
    writing = writer.start(third.get_read_write_lock(lock_name).write_lock().lock)
    time.sleep(0.5)
    assert not any(e.done() for e in entering) and not writing.done()
    channel = naming.prefixed_name("redisson_rwlock", lock_name, by_slot=by_slot(family_topology))
    with raw_master(family_topology, lock_name) as raw, listening(raw, channel) as listener:
        _, released = alice.start_timed(rw.write_lock().unlock).result(timeout=10)
        assert listener.message(timeout=2) == "1"  # a write unlock wakes every waiter
    for future in entering:
        _, granted = future.result(timeout=10)
        assert granted - released < 1.0  # woken, far under the 30 s TTL
    assert hash_of(family_topology, lock_name)["mode"] == "read"
    assert alice(rw.read_lock().hold_count) == 1  # still a reader
    assert alice(rw.write_lock().is_locked) is False
    assert alice(rw.read_lock().is_locked) is True
    time.sleep(0.3)
    assert not writing.done()  # readers hold it
    for owner, read in zip(readers, reads, strict=True):
        owner(read.unlock)
    alice(rw.read_lock().unlock)
    writing.result(timeout=10)
    writer(third.get_read_write_lock(lock_name).write_lock().unlock)


def test_a_read_unlock_that_frees_the_lock_wakes_a_writer_at_once(
    flavor: Flavor, make_client: Callable[..., Any], lock_name: str
) -> None:
    first, second = make_client(), make_client()
    read = first.get_read_write_lock(lock_name).read_lock()
    write = second.get_read_write_lock(lock_name).write_lock()
    release_wakes_waiter(flavor, read, write, within=1.0)


def test_a_killed_readers_hold_runs_out_with_the_watchdog_timeout(
    flavor: Flavor,
    make_client: Callable[..., Any],
    family_topology: Topology,
    topology_config: Any,
    lock_name: str,
) -> None:
    process, ready = reader(topology_config(family_topology, lock_watchdog_timeout=3.0), lock_name)
    with running(process):
        assert ready.poll(30), "the reader process did not take the read lock"
        assert ready.recv() == "held"
        write = make_client().get_read_write_lock(lock_name).write_lock()
        bob = flavor.owner("bob")
        # The watchdog keeps the live reader's hold past its 3 s timeout.
        assert bob(write.try_lock, 4.0) is False
        kill(process)
        killed = time.monotonic()
        assert bob(write.try_lock, 10.0) is True
        assert time.monotonic() - killed <= 3.0 + 1.5
        bob(write.unlock)


def test_a_live_readers_holds_and_timeout_keys_are_renewed(
    flavor: Flavor,
    make_client: Callable[..., Any],
    family_topology: Topology,
    lock_name: str,
) -> None:
    client = make_client(lock_watchdog_timeout=3.0)
    read = client.get_read_write_lock(lock_name).read_lock()
    alice, bob = flavor.owner("alice"), flavor.owner("bob")
    field = owner_field(flavor, alice, client)
    alice(read.lock)
    alice(read.lock)
    keys = [timeout_key(family_topology, lock_name, field, hold) for hold in (1, 2)]
    time.sleep(2 * 3.0 + 0.5)
    with raw_master(family_topology, lock_name) as raw:
        assert raw.exists(*keys) == 2
        assert all(0 < raw.pttl(key) <= 3000 for key in keys)
        assert raw.pttl(lock_name) > 0
    assert alice(read.hold_count) == 2
    write = make_client().get_read_write_lock(lock_name).write_lock()
    assert bob(write.try_lock) is False
    alice(read.unlock)
    with raw_master(family_topology, lock_name) as raw:
        assert raw.exists(keys[0]) == 1 and raw.exists(keys[1]) == 0
    alice(read.unlock)
    with raw_master(family_topology, lock_name) as raw:
        assert raw.exists(lock_name, *keys) == 0
    assert bob(write.try_lock) is True
    bob(write.unlock)


def test_a_leased_read_hold_expires_by_itself_and_can_be_extended(
    flavor: Flavor,
    make_client: Callable[..., Any],
    family_topology: Topology,
    lock_name: str,
) -> None:
    client = make_client()
    rw = client.get_read_write_lock(lock_name)
    alice, bob = flavor.owner("alice"), flavor.owner("bob")
    alice(rw.read_lock().lock, 1.0)
    started = time.monotonic()
    assert bob(rw.write_lock().try_lock, 5.0) is True
    assert time.monotonic() - started <= 1.0 + 0.5
    with pytest.raises(LockNotOwnedError):
        alice(rw.read_lock().unlock)
    bob(rw.write_lock().unlock)

    field = owner_field(flavor, alice, client)
    key = timeout_key(family_topology, lock_name, field, 1)
    alice(rw.read_lock().lock, 1.0)
    alice(rw.read_lock().extend, 4.0)
    with raw_master(family_topology, lock_name) as raw:
        assert 3000 < raw.pttl(key) <= 4000
        assert raw.pttl(lock_name) > 3000
    time.sleep(1.5)  # past the first lease
    assert alice(rw.read_lock().hold_count) == 1
    assert bob(rw.write_lock().try_lock) is False
    alice(rw.read_lock().unlock)
    assert bob(rw.write_lock().try_lock) is True
    bob(rw.write_lock().unlock)


def _held_in(owner: Owner, rw: Any) -> tuple[bool, bool]:
    return owner(rw.read_lock().is_locked), owner(rw.write_lock().is_locked)


def test_is_locked_and_force_unlock_of_each_half(
    flavor: Flavor, make_client: Callable[..., Any], lock_name: str
) -> None:
    rw = make_client().get_read_write_lock(lock_name)
    alice, bob, carol = flavor.owner("alice"), flavor.owner("bob"), flavor.owner("carol")
    assert _held_in(bob, rw) == (False, False)
    alice(rw.read_lock().lock)
    assert _held_in(bob, rw) == (True, False)
    assert bob(rw.write_lock().force_unlock) is False  # not write-held: nothing done
    assert _held_in(bob, rw) == (True, False)
    waiting = carol.start_timed(rw.write_lock().lock)
    time.sleep(0.3)
    assert not waiting.done()
    forced = time.monotonic()
    assert bob(rw.read_lock().force_unlock) is True
    _, granted = waiting.result(timeout=10)
    assert granted - forced < 1.0  # the forced unlock woke the writer
    assert _held_in(bob, rw) == (False, True)
    with pytest.raises(LockNotOwnedError):
        alice(rw.read_lock().unlock)
    assert bob(rw.read_lock().force_unlock) is False  # not read-held
    assert _held_in(bob, rw) == (False, True)
    assert carol(rw.read_lock().try_lock) is True  # the writer reads too
    assert _held_in(bob, rw) == (True, True)
    assert bob(rw.write_lock().force_unlock) is True
    assert _held_in(bob, rw) == (False, False)
    with pytest.raises(LockNotOwnedError):
        carol(rw.write_lock().unlock)
    eventually(lambda: not bob(rw.read_lock().is_locked), timeout=5, what="lock gone")


def test_a_read_lease_that_ran_out_under_another_reader_leaves_no_hold_behind(
    flavor: Flavor, make_client: Callable[..., Any], lock_name: str
) -> None:
    # Another reader keeps the hash alive while alice's leased hold runs out: her field
    # then outlives her hold. It must count for nothing: not on her next acquire (one
    # hold, one unlock), not for the watchdog (no loss reported for a lock she let go).
    events: list[LockLost] = []
    client = make_client(lock_watchdog_timeout=3.0)
    client.on_lock_lost = events.append
    rw = client.get_read_write_lock(lock_name)
    alice, bob, carol = flavor.owner("alice"), flavor.owner("bob"), flavor.owner("carol")
    bob(rw.read_lock().lock)
    alice(rw.read_lock().lock, 0.5)
    eventually(lambda: events, timeout=5, what="the lease's end reported")
    assert [e.reason for e in events] == ["its lease of 0.5 s expired while held"]
    alice(rw.read_lock().lock)
    assert alice(rw.read_lock().hold_count) == 1
    alice(rw.read_lock().unlock)
    assert alice(rw.read_lock().hold_count) == 0
    assert alice(rw.read_lock().is_held_by_current_thread) is False
    bob(rw.read_lock().unlock)
    assert carol(rw.write_lock().try_lock, 1.0) is True
    time.sleep(3.0)  # a watchdog round or more: nothing more to report
    assert len(events) == 1, events
    carol(rw.write_lock().unlock)


def test_unlock_of_a_read_lease_that_ran_out_under_another_reader_raises(
    flavor: Flavor, make_client: Callable[..., Any], lock_name: str
) -> None:
    # As when the lease runs out alone (the hash expires): the hold is gone.
    rw = make_client().get_read_write_lock(lock_name)
    alice, bob = flavor.owner("alice"), flavor.owner("bob")
    bob(rw.read_lock().lock)
    alice(rw.read_lock().lock, 0.5)
    time.sleep(1.0)
    assert alice(rw.read_lock().hold_count) == 0  # her field is there; her hold is not
    assert alice(rw.read_lock().is_held_by_current_thread) is False
    with pytest.raises(LockNotOwnedError):
        alice(rw.read_lock().unlock)
    with pytest.raises(LockNotOwnedError):
        alice(rw.read_lock().extend, 5.0)
    assert bob(rw.read_lock().hold_count) == 1
    bob(rw.read_lock().unlock)
    assert bob(rw.read_lock().is_locked) is False


def test_a_reader_whose_timeout_key_vanished_is_told_while_another_reader_holds(
    flavor: Flavor,
    make_client: Callable[..., Any],
    family_topology: Topology,
    lock_name: str,
) -> None:
    # Its timeout key gone (a stall past the watchdog timeout looks the same), alice's
    # hold no longer counts: once bob leaves, a writer may enter. The watchdog must say
    # so at its next round, not only when the hash goes.
    events: list[LockLost] = []
    client = make_client(lock_watchdog_timeout=3.0)
    client.on_lock_lost = events.append
    rw = client.get_read_write_lock(lock_name)
    alice, bob = flavor.owner("alice"), flavor.owner("bob")
    field = owner_field(flavor, alice, client)
    alice(rw.read_lock().lock)
    bob(rw.read_lock().lock)
    with raw_master(family_topology, lock_name) as raw:
        assert raw.delete(timeout_key(family_topology, lock_name, field, 1)) == 1
    eventually(lambda: events, timeout=3.0, what="alice's loss reported")
    assert [e.owner for e in events] == [field]
    with pytest.raises(LockNotOwnedError):
        alice(rw.read_lock().unlock)
    assert bob(rw.read_lock().hold_count) == 1
    bob(rw.read_lock().unlock)
    assert bob(rw.read_lock().is_locked) is False
