"""The read-write lock as Redisson's own checks see it (issue 26, item 11), on single and
cluster, sync and asyncio: a redisson-py writer's hash is a Java writer's, so
``RReadLock.isLocked()`` reads false; redisson-py's request ids live in a hash of their
own that lives as long as the lock and goes with it; a forced unlock deletes the read
holds' timeout keys too."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest
from kind_helpers import by_slot, owner_field, raw_master
from test_read_write_lock import hash_of, timeout_key

from redisson_py.core.routing import naming
from redisson_py.testing import Topology
from redisson_py.testing.owners import Flavor

REDISSON_READ_IS_LOCKED = """
local mode = redis.call('hget', KEYS[1], 'mode')
if mode == 'read' or (mode == 'write' and redis.call('hlen', KEYS[1]) > 2) then
    return 1
end
return 0
"""
"""``RedissonReadLock.isLocked()`` as Redisson runs it (our Lua, from its rule: read mode,
or write mode with more fields than ``mode`` and the writer's)."""


def java_read_is_locked(topology: Topology, name: str) -> bool:
    with raw_master(topology, name) as raw:
        return bool(raw.eval(REDISSON_READ_IS_LOCKED, 1, name))


def latches_key(topology: Topology, name: str) -> str:
    return naming.prefixed_name("redisson_py_acquire", name, by_slot=by_slot(topology))


def pttl(topology: Topology, key: str) -> int:
    with raw_master(topology, key) as raw:
        return int(raw.pttl(key))


def test_redissons_read_is_locked_reads_false_for_a_redisson_py_writer(
    flavor: Flavor, make_client: Callable[..., Any], family_topology: Topology, lock_name: str
) -> None:
    client = make_client(lock_watchdog_timeout=3.0)
    rw = client.get_read_write_lock(lock_name)
    alice, bob = flavor.owner("alice"), flavor.owner("bob")
    field = owner_field(flavor, alice, client)
    latches = latches_key(family_topology, lock_name)
    alice(rw.write_lock().lock)
    alice(rw.write_lock().lock)  # reentrant: still one field
    # The hash a Java writer leaves: mode and the writer's count, nothing else.
    assert hash_of(family_topology, lock_name) == {"mode": "write", f"{field}:write": "2"}
    assert java_read_is_locked(family_topology, lock_name) is False
    assert bob(rw.read_lock().is_locked) is False
    # The request ids are kept beside it, as long as the lock lives, through renewals.
    assert pttl(family_topology, latches) >= pttl(family_topology, lock_name) > 0
    time.sleep(4.0)  # past the first TTL: the watchdog renewed both
    assert pttl(family_topology, latches) >= pttl(family_topology, lock_name) > 1000
    # The writer reads too: now it is read-locked, for Redisson as for us.
    alice(rw.read_lock().lock)
    assert java_read_is_locked(family_topology, lock_name) is True
    assert bob(rw.read_lock().is_locked) is True
    alice(rw.read_lock().unlock)
    assert java_read_is_locked(family_topology, lock_name) is False
    alice(rw.write_lock().unlock)
    alice(rw.write_lock().unlock)
    assert pttl(family_topology, lock_name) == -2
    assert pttl(family_topology, latches) == -2  # gone with the lock
    # Read-held by redisson-py: read-locked for Redisson too; the ids go with the lock.
    alice(rw.read_lock().lock)
    assert java_read_is_locked(family_topology, lock_name) is True
    assert set(hash_of(family_topology, lock_name)) == {"mode", field}
    alice(rw.read_lock().unlock)
    assert java_read_is_locked(family_topology, lock_name) is False
    assert pttl(family_topology, latches) == -2


def test_a_forced_unlock_deletes_the_read_holds_timeout_keys(
    flavor: Flavor, make_client: Callable[..., Any], family_topology: Topology, lock_name: str
) -> None:
    client = make_client()
    rw = client.get_read_write_lock(lock_name)
    alice, bob = flavor.owner("alice"), flavor.owner("bob")
    fields = {owner_field(flavor, o, client): o for o in (alice, bob)}
    alice(rw.read_lock().lock)
    alice(rw.read_lock().lock)
    bob(rw.read_lock().lock)
    keys = [
        timeout_key(family_topology, lock_name, field, hold)
        for field, owner in fields.items()
        for hold in range(1, owner(rw.read_lock().hold_count) + 1)
    ]
    assert len(keys) == 3
    assert all(pttl(family_topology, key) > 0 for key in keys)
    assert bob(rw.read_lock().force_unlock) is True
    assert [pttl(family_topology, key) for key in keys] == [-2, -2, -2]
    assert pttl(family_topology, latches_key(family_topology, lock_name)) == -2
    # Write mode: the writer's own read holds' keys go with the forced write unlock.
    field = owner_field(flavor, alice, client)
    alice(rw.write_lock().lock)
    alice(rw.read_lock().lock)
    own = timeout_key(family_topology, lock_name, field, 1)
    assert pttl(family_topology, own) > 0
    assert bob(rw.write_lock().force_unlock) is True
    assert pttl(family_topology, own) == -2
    assert pttl(family_topology, lock_name) == -2
    assert pttl(family_topology, latches_key(family_topology, lock_name)) == -2


@pytest.mark.parametrize("expired_first", [False, True], ids=["both-live", "short-expired"])
def test_a_read_relock_then_unlock_keeps_the_longest_lease_and_excludes_writers(
    flavor: Flavor,
    make_client: Callable[..., Any],
    family_topology: Topology,
    lock_name: str,
    expired_first: bool,
) -> None:
    # Alice reads with a short lease, then again with a long one, and releases one hold
    # (before or after the short lease ran out): the hold she keeps must run to the long
    # lease's end, as her client counts it. The release used to delete the newest hold's
    # timeout key (the long one) and keep the short one (or none): once that ran out,
    # the hash went, and a writer was granted while she still held.
    client = make_client()
    rw = client.get_read_write_lock(lock_name)
    alice, bob, carol = flavor.owner("alice"), flavor.owner("bob"), flavor.owner("carol")
    field = owner_field(flavor, alice, client)
    alice(rw.read_lock().lock, 2.0)
    alice(rw.read_lock().lock, 10.0)
    started = time.monotonic()
    if expired_first:
        time.sleep(2.5)
        assert pttl(family_topology, timeout_key(family_topology, lock_name, field, 1)) == -2
    alice(rw.read_lock().unlock)
    # The hold left has the long lease, under its own key, numbered 1.
    assert pttl(family_topology, timeout_key(family_topology, lock_name, field, 1)) > 6000
    assert pttl(family_topology, timeout_key(family_topology, lock_name, field, 2)) == -2
    if not expired_first:
        time.sleep(2.5)  # the short lease runs out
    carol(rw.read_lock().lock)
    carol(rw.read_lock().unlock)  # settles the hash from the holds left
    assert time.monotonic() - started < 8.0
    assert alice(rw.read_lock().is_held_by_current_thread) is True
    assert alice(rw.read_lock().hold_count) == 1
    assert bob(rw.write_lock().try_lock) is False  # alice's long lease still runs
    assert java_read_is_locked(family_topology, lock_name) is True
    alice(rw.read_lock().unlock)
    assert bob(rw.write_lock().try_lock) is True
    bob(rw.write_lock().unlock)
