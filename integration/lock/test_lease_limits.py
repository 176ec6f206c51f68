"""Leases Redis cannot store (issue 38, item 1).

- A lease, ``max_hold_time``, extension or semaphore lease above ``MAX_LEASE`` (10**9 s)
  is refused by every kind, in both APIs, with an
  [`ArgumentOverflowError`][redisson_py.errors.ArgumentOverflowError] naming the value
  and the limit, before anything is sent: no key appears. Before, ``lock(sys.maxsize)``
  left a lock hash with no TTL (the script's HINCRBY ran, its PEXPIRE failed), held for
  ever, and a lease of 1e10 s killed the sync client's loss-report thread.
- ``MAX_LEASE`` itself is a lease: taken, stored, released; a wait beyond it is a wait
  for ever (its milliseconds overflowed the client's arithmetic past 1e305 s).
- The scripts refuse a TTL Redis cannot store on their own, before any write: called
  directly (as an older client, or anything else, may), they leave no key behind.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import redis

from redisson_py import ArgumentOverflowError
from redisson_py.core.effects import Script
from redisson_py.core.handles import MAX_LEASE
from redisson_py.core.scripts import ACQUIRE, ACQUIRE_NON_REENTRANT, EXTEND, MAX_TTL_MS
from redisson_py.core.scripts.fair_lock import ACQUIRE_FAIR
from redisson_py.core.scripts.fenced_lock import ACQUIRE_FENCED
from redisson_py.core.scripts.read_write_lock import (
    ACQUIRE_READ,
    ACQUIRE_WRITE,
    EXTEND_READ,
    EXTEND_WRITE,
)
from redisson_py.testing import Topology
from redisson_py.testing.owners import Flavor

TOO_LONG = 1e10
"""Above MAX_LEASE; the lease that killed the sync client's loss-report thread."""

HUGE = sys.maxsize
"""A lease whose milliseconds overflow Redis's PEXPIRE."""


@pytest.fixture(params=["single", "cluster"])
def any_topology(request: pytest.FixtureRequest) -> Topology:
    fixture: Topology = request.getfixturevalue(f"{request.param}_topology")
    return fixture


def _admin(topology: Topology) -> Iterator[redis.Redis]:
    """A plain client on every master (a cluster's keys are spread over them)."""
    for node in topology.masters():
        yield redis.Redis(host=node.host, port=node.port, socket_timeout=5)


def _keys(topology: Topology, pattern: str) -> list[bytes]:
    found: list[bytes] = []
    for admin in _admin(topology):
        with admin:
            found += admin.keys(pattern)
    return found


def _lock_calls(lock: Any, lease: float) -> list[tuple[str, Callable[..., Any], tuple[Any, ...]]]:
    calls: list[tuple[str, Callable[..., Any], tuple[Any, ...]]] = [
        ("lock", lock.lock, (lease,)),
        ("try_lock", lock.try_lock, (0, lease)),
        ("acquired", lock.acquired, (1, lease)),
        ("extend", lock.extend, (lease,)),
    ]
    if hasattr(lock, "lock_and_get_token"):
        calls.append(("lock_and_get_token", lock.lock_and_get_token, (lease,)))
        calls.append(("try_lock_and_get_token", lock.try_lock_and_get_token, (0, lease)))
    return calls


def _refused(flavor: Flavor, call: Callable[..., Any], *args: Any, **kwargs: Any) -> str:
    with pytest.raises(ArgumentOverflowError) as raised:
        flavor.owner("caller")(call, *args, **kwargs)
    return str(raised.value)


@pytest.mark.parametrize("lease", [TOO_LONG, HUGE])
def test_every_kind_refuses_a_lease_above_max_lease_before_sending_anything(
    flavor: Flavor, any_topology: Topology, topology_config: Any, lock_name: str, lease: float
) -> None:
    client = flavor.create_client(topology_config(any_topology))
    rw = client.get_read_write_lock(f"{lock_name}:rw")
    locks = {
        "reentrant": client.get_lock(f"{lock_name}:reentrant"),
        "fair": client.get_fair_lock(f"{lock_name}:fair"),
        "spin": client.get_spin_lock(f"{lock_name}:spin"),
        "non-reentrant": client.get_non_reentrant_lock(f"{lock_name}:nr"),
        "non-reentrant fair": client.get_non_reentrant_fair_lock(f"{lock_name}:nrf"),
        "fenced": client.get_fenced_lock(f"{lock_name}:fenced"),
        "read": rw.read_lock(),
        "write": rw.write_lock(),
    }
    for kind, lock in locks.items():
        for label, call, args in _lock_calls(lock, lease):
            message = _refused(flavor, call, *args)
            assert repr(lease) in message and "MAX_LEASE = 10**9 s" in message, (kind, label)
        # A renewal cap beyond the limit too (math.inf stays "no cap").
        message = _refused(flavor, lock.lock, max_hold_time=lease)
        assert "max_hold_time" in message and "MAX_LEASE" in message, kind
        _refused(flavor, lock.try_lock, 1, max_hold_time=lease)
    group_members = [client.get_lock(f"{lock_name}:m{i}") for i in range(3)]
    for group in (flavor.multilock(*group_members), flavor.redlock(*group_members)):
        for label, call, args in _lock_calls(group, lease):
            assert "MAX_LEASE" in _refused(flavor, call, *args), label
    with pytest.raises(ArgumentOverflowError, match="MAX_LEASE"):
        client.synchronized(f"{lock_name}:sync", lease_time=lease)(lambda: None)
    semaphore = client.get_permit_expirable_semaphore(f"{lock_name}:sem")
    flavor.run(semaphore.try_set_permits(1))
    assert "MAX_LEASE" in _refused(flavor, semaphore.acquire, lease)
    assert "MAX_LEASE" in _refused(flavor, semaphore.try_acquire, 0, lease)
    assert "MAX_LEASE" in _refused(flavor, semaphore.try_acquire, 0, lease, permits=1)
    assert "MAX_LEASE" in _refused(flavor, semaphore.update_lease_time, "0" * 32, lease)
    assert flavor.run(semaphore.available_permits()) == 1  # no permit was taken
    # Nothing was sent: no lock key, no latch, no queue (only the semaphore's count).
    left = sorted(key for key in _keys(any_topology, f"*{lock_name}*") if b":sem" not in key)
    assert left == [], left


def test_max_lease_itself_is_taken_stored_and_released(
    flavor: Flavor, any_topology: Topology, topology_config: Any, lock_name: str
) -> None:
    client = flavor.create_client(topology_config(any_topology))
    lock = client.get_lock(lock_name)
    holder = flavor.owner("holder")
    holder(lock.lock, MAX_LEASE)
    admin = flavor.run(client.redis(lock_name))
    pttl = flavor.run(admin.pttl(lock_name))
    assert MAX_LEASE * 1000 - 60_000 < pttl <= MAX_LEASE * 1000
    holder(lock.extend, MAX_LEASE)
    holder(lock.unlock)
    assert flavor.run(admin.exists(lock_name)) == 0


@pytest.mark.parametrize("wait", [1e12, 1e308])
def test_a_wait_beyond_max_lease_waits_for_ever_and_takes_the_lock_when_released(
    flavor: Flavor, single_topology: Topology, topology_config: Any, lock_name: str, wait: float
) -> None:
    # 1e308 s is infinite in ms: the wait's arithmetic failed with an OverflowError.
    client = flavor.create_client(topology_config(single_topology))
    holder, waiter = flavor.owner("holder"), flavor.owner("waiter")
    for lock in (client.get_lock(lock_name), client.get_fair_lock(f"{lock_name}:fair")):
        holder(lock.lock)
        waiting = waiter.start(lock.try_lock, wait)
        time.sleep(0.3)
        assert not waiting.done()
        holder(lock.unlock)
        assert waiting.result(timeout=10) is True
        waiter(lock.unlock)


def _script_cases(name: str) -> list[tuple[Script, list[str], list[Any], bool]]:
    """(script, keys, arguments with the TTL first, whether the key exists before: an
    extension's) for each script that gives a key the caller's TTL."""
    field, latch, request = "client:1", "redisson_py_acquire:client:1", "r0"
    return [
        (ACQUIRE, [name], [field, latch, request], False),
        (ACQUIRE_NON_REENTRANT, [name], [field, latch, request], False),
        (ACQUIRE_FENCED, [name, f"{name}:token"], [field, latch, request], False),
        (
            ACQUIRE_FAIR,
            [name, f"{name}:queue", f"{name}:timeouts", f"{name}:alive"],
            [field, latch, request, 5000, 1_700_000_000_000, 1, 1, 0],
            False,
        ),
        (
            ACQUIRE_READ,
            [name, f"{name}:{field}:rwlock_timeout", f"{name}:latches"],
            [field, latch, request, f"{field}:write"],
            False,
        ),
        (ACQUIRE_WRITE, [name, f"{name}:latches"], [f"{field}:write", latch, request], False),
        (EXTEND, [name], [field], True),
        (EXTEND_WRITE, [name, f"{name}:latches"], [field], True),
        (
            EXTEND_READ,
            [name, f"{name}:{field}:rwlock_timeout", f"{name}:latches"],
            [field],
            True,
        ),
    ]


@pytest.mark.parametrize("ttl", [HUGE, 2**53, 10**30, -5, 0, "1e3", "007", "1.5", ""])
def test_the_scripts_refuse_a_ttl_redis_cannot_store_before_any_write(
    single_topology: Topology, lock_name: str, ttl: Any
) -> None:
    master = single_topology.master()
    with redis.Redis(host=master.host, port=master.port, socket_timeout=5) as admin:
        for index, (script, keys, args, exists) in enumerate(_script_cases(lock_name)):
            admin.delete(*keys)
            if exists:  # an extension: the owner's hold, with its TTL
                admin.hset(lock_name, mapping={"client:1": 1, "client:1:write": 1})
                admin.pexpire(lock_name, 60_000)
            with pytest.raises(
                redis.ResponseError, match=r"redisson-py: TTL .* nothing was written"
            ):
                admin.eval(script.source, len(keys), *keys, ttl, *args)
            for key in keys:
                pttl = admin.pttl(key)
                if exists and key == lock_name:
                    assert 0 < pttl <= 60_000, (index, script.name, pttl)
                else:
                    assert pttl == -2, (script.name, key, pttl)  # -1: a key with no TTL
            admin.delete(*keys)


def test_the_scripts_take_the_longest_ttl_they_allow(
    single_topology: Topology, lock_name: str
) -> None:
    master = single_topology.master()
    with redis.Redis(host=master.host, port=master.port, socket_timeout=5) as admin:
        keys = [lock_name]
        assert admin.eval(ACQUIRE.source, 1, *keys, MAX_TTL_MS, "c:1", "l", "r") == [1, 1]
        assert admin.pttl(lock_name) > MAX_TTL_MS - 60_000
        admin.delete(lock_name)
