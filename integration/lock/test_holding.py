"""What a holder controls about its hold's end (issue 26, items 1, 2 and 5), on single and
cluster, in both APIs:

- ``shutdown()`` releases every hold of the client (every lock kind, MultiLock members,
  semaphore permits), so the next holder gets each at once instead of after the
  watchdog timeout; ``shutdown(release_locks=False)`` leaves them to expire; with the
  master frozen or killed, the shutdown ends within its deadline and warns, naming the
  lock;
- ``max_hold_time`` (and ``lockMaxHoldTime``) stops the watchdog's renewals: the hold
  expires, the loss is reported "held past max_hold_time", another client gets the lock;
- ``lock.acquired(wait_time)`` raises LockTimeoutError when the lock is not had in time,
  and a ``with`` block's exception is never replaced by a release error.
"""

from __future__ import annotations

import logging
import math
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

import pytest

from integration.every_kind import watchdog_kinds
from redisson_py import LockLost, Redisson
from redisson_py.core.routing.naming import key_slot
from redisson_py.errors import ArgumentError, LockNotOwnedError, LockTimeoutError
from redisson_py.testing import Topology
from redisson_py.testing.owners import Flavor, Owner

WATCHDOG = 3.0


@pytest.fixture(params=["single", "cluster"])
def topology(request: pytest.FixtureRequest) -> Topology:
    fixture: Topology = request.getfixturevalue(f"{request.param}_topology")
    return fixture


def _name() -> str:
    return f"test:holding:{uuid.uuid4().hex[:12]}"


def _with(flavor: Flavor, owner: Owner, manager: Callable[[], Any], body: Callable[[], Any]) -> Any:
    """Run ``with manager(): body()`` (``async with`` for the asyncio flavor) as ``owner``."""
    if flavor.name == "sync":

        def run() -> Any:
            with manager():
                return body()

        return owner(run)

    async def run_async() -> Any:
        async with manager():
            result = body()
            if hasattr(result, "__await__"):
                result = await result
            return result

    return owner(run_async)


# --- item 1: release on shutdown -------------------------------------------------------


def test_shutdown_releases_every_hold_at_once(
    flavor: Flavor, topology: Topology, topology_config: Any
) -> None:
    """A client that held one lock of every kind (a reentrant one twice), a leased lock,
    a MultiLock and semaphore permits shuts down: another client gets every one at
    once; a waiter already waiting gets its lock within milliseconds."""
    config = topology_config(topology, lock_watchdog_timeout=WATCHDOG)
    leaving, staying = flavor.create_client(config), flavor.create_client(config)
    name = _name()
    holder, waiter, other = flavor.owner("holder"), flavor.owner("waiter"), flavor.owner("o")
    locks = watchdog_kinds(leaving, name)
    locks["non-reentrant"] = leaving.get_non_reentrant_lock(f"{name}:nr")
    for lock in locks.values():
        assert holder(lock.try_lock) is True
    holder(locks["reentrant"].lock)  # entered twice: both holds go
    leased = leaving.get_lock(f"{name}:leased")
    holder(leased.lock, 30.0)
    multi = flavor.multilock(*(leaving.get_lock(f"{name}:m{i}") for i in range(2)))
    assert holder(multi.try_lock) is True
    semaphore = leaving.get_semaphore(f"{name}:sem")
    assert holder(semaphore.try_set_permits, 2) is True
    holder(semaphore.acquire, 2)
    holder(semaphore.release, 1)  # one given back already: one left to give back
    permits = leaving.get_permit_expirable_semaphore(f"{name}:pes")
    assert holder(permits.try_set_permits, 2) is True
    holder(permits.acquire)
    holder(permits.acquire, 60.0)

    waiting = staying.get_lock(f"{name}:reentrant")
    pending = waiter.start_timed(waiting.try_lock, 20.0)
    time.sleep(0.3)
    assert not pending.done()
    flavor.run(leaving.shutdown())
    shut_at = time.monotonic()
    acquired, at = pending.result(timeout=20)
    assert acquired is True
    handed_over = at - shut_at
    print(f"next holder waited {handed_over * 1000:.1f} ms after shutdown()")
    assert handed_over < 1.0  # WATCHDOG (3 s) without the release

    theirs = watchdog_kinds(staying, name)
    theirs["non-reentrant"] = staying.get_non_reentrant_lock(f"{name}:nr")
    del theirs["reentrant"]  # the waiter has it
    theirs["leased"] = staying.get_lock(f"{name}:leased")
    for i in range(2):
        theirs[f"member {i}"] = staying.get_lock(f"{name}:m{i}")
    for kind, lock in theirs.items():
        assert other(lock.try_lock) is True, kind
    assert other(staying.get_semaphore(f"{name}:sem").available_permits) == 2
    assert other(staying.get_permit_expirable_semaphore(f"{name}:pes").available_permits) == 2


def test_shutdown_without_release_keeps_holds_to_expire(
    flavor: Flavor, topology: Topology, topology_config: Any
) -> None:
    config = topology_config(topology, lock_watchdog_timeout=WATCHDOG)
    leaving, staying = flavor.create_client(config), flavor.create_client(config)
    name = _name()
    holder, rival = flavor.owner("holder"), flavor.owner("rival")
    holder(leaving.get_lock(name).lock)
    flavor.run(leaving.shutdown(release_locks=False))
    lock = staying.get_lock(name)
    assert rival(lock.try_lock) is False
    assert rival(lock.try_lock, WATCHDOG + 2.0) is True  # once it expired


@pytest.mark.parametrize("kind", ["single", "cluster"])
@pytest.mark.parametrize("fault", ["freeze", "kill"])
def test_shutdown_is_bounded_when_the_master_is_frozen_or_dead(
    flavor: Flavor,
    topology_factory: Callable[..., Topology],
    topology_config: Any,
    caplog: pytest.LogCaptureFixture,
    kind: str,
    fault: str,
) -> None:
    """The master of a held lock freezes (or dies): shutdown() still ends within its
    deadline (one command timeout plus the retry delays), with a WARNING naming the
    lock and the node; the hold is left to expire."""
    topology = topology_factory(kind)
    config = topology_config(topology, lock_watchdog_timeout=WATCHDOG)
    config.server_config.timeout = 1.0
    client, other = flavor.create_client(config), flavor.create_client(config)
    name = _name()
    holder, rival = flavor.owner("holder"), flavor.owner("rival")
    holder(client.get_lock(name).lock)
    bound = client._state.settings.release_timeout  # 1.0 + 4 x 0.1
    node = topology.master() if kind == "single" else topology.master_for_slot(key_slot(name))
    elsewhere = None  # in a cluster, a lock on another master: released all the same
    if kind == "cluster":
        while elsewhere is None or topology.master_for_slot(key_slot(elsewhere)) == node:
            elsewhere = _name()
        holder(client.get_lock(elsewhere).lock)
    caplog.set_level(logging.WARNING, logger="redisson_py.lock")
    if fault == "freeze":
        node.pause()
    else:
        node.kill()
    try:
        started = time.monotonic()
        flavor.run(client.shutdown())
        took = time.monotonic() - started
    finally:
        if fault == "freeze":
            node.resume()
    print(f"shutdown with the master {fault}: {took:.3f} s (bound {bound:.2f} s)")
    assert took < bound + 1.5
    if elsewhere is not None:
        assert rival(other.get_lock(elsewhere).try_lock) is True
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any(name in m and "not released at shutdown" in m for m in warned), warned


# --- item 2: a cap on renewal ----------------------------------------------------------


CAP = 2.0
SHORT_WATCHDOG = 1.5
"""Renewed at 0.5 s with the full TTL, at 1.0 s with the TTL cut to the cap's 1 s left."""


@pytest.mark.parametrize("how", ["argument", "config", "synchronized"])
def test_max_hold_time_stops_renewal_and_reports_the_loss(
    flavor: Flavor, topology: Topology, topology_config: Any, how: str
) -> None:
    """A hold capped at CAP s is renewed until then only: its key expires at the cap
    (the last renewal's TTL is cut to it), its holder hears "held past max_hold_time" (callback, and
    ``unlock()`` raises LockNotOwnedError), and another client gets the lock."""
    settings: dict[str, Any] = {"lock_watchdog_timeout": SHORT_WATCHDOG}
    if how == "config":
        settings["lock_max_hold_time"] = CAP
    config = topology_config(topology, **settings)
    heard: list[LockLost] = []
    got = threading.Event()

    def lost(event: LockLost) -> None:
        heard.append(event)
        got.set()

    capped = flavor.create_client(config, on_lock_lost=lost)
    rival_client = flavor.create_client(topology_config(topology))
    name = _name()
    holder, rival = flavor.owner("holder"), flavor.owner("rival")
    lock = capped.get_lock(name)
    started = time.monotonic()
    if how == "argument":
        holder(lock.lock, max_hold_time=CAP)
    elif how == "config":
        assert holder(lock.try_lock) is True
    else:
        release = threading.Event()
        if flavor.name == "sync":

            @capped.synchronized(name, max_hold_time=CAP)
            def body() -> None:
                release.wait(20)

        else:

            @capped.synchronized(name, max_hold_time=CAP)
            async def body() -> None:
                while not release.is_set():
                    await __import__("asyncio").sleep(0.05)

        running = holder.start(body)
        time.sleep(0.2)
    acquired, at = rival.start_timed(rival_client.get_lock(name).try_lock, 20.0).result(30)
    assert acquired is True
    held = at - started
    print(f"capped at {CAP} s (watchdog {SHORT_WATCHDOG} s): hold ended after {held:.3f} s")
    assert CAP - 0.1 <= held <= CAP + 1.0  # the key expires at the cap
    assert got.wait(5)
    assert "held past max_hold_time" in heard[0].reason
    if how == "synchronized":
        release.set()
        with pytest.raises(LockNotOwnedError, match="held past max_hold_time"):
            running.result(timeout=10)
    else:
        with pytest.raises(LockNotOwnedError, match="held past max_hold_time"):
            holder(lock.unlock)


def test_max_hold_time_bad_values_are_refused(
    flavor: Flavor, single_topology: Topology, topology_config: Any
) -> None:
    client = flavor.create_client(topology_config(single_topology))
    lock = client.get_lock("test:holding:bad")
    owner = flavor.owner("o")
    for bad in (-1.0, 0, math.nan, "5"):
        with pytest.raises(ArgumentError, match=r"test:holding:bad.*max_hold_time"):
            owner(lock.try_lock, 0.0, max_hold_time=bad)
    with pytest.raises(ArgumentError, match=r"test:holding:bad.*never renewed"):
        owner(lock.lock, 5.0, max_hold_time=10.0)
    with pytest.raises(ArgumentError, match="max_hold_time"):
        client.synchronized("test:holding:bad", max_hold_time=-2)(print)  # checked here
    with pytest.raises(ArgumentError, match="max_hold_time"):
        lock.acquired(1.0, 5.0, max_hold_time=3.0)
    # math.inf: no cap, whatever the config says
    assert owner(lock.try_lock, 0.0, max_hold_time=math.inf) is True
    owner(lock.unlock)


# --- item 5: timeouts with `with`, and the body's exception kept -----------------------


def test_acquired_takes_the_lock_in_time_or_raises_lock_timeout_error(
    flavor: Flavor, topology: Topology, topology_config: Any
) -> None:
    client = flavor.create_client(topology_config(topology))
    name = _name()
    lock = client.get_lock(name)
    alice, bob = flavor.owner("alice"), flavor.owner("bob")
    inside = _with(flavor, alice, lambda: lock.acquired(1.0), lock.is_held_by_current_thread)
    assert inside is True
    assert alice(lock.is_locked) is False  # released at the block's end
    alice(lock.lock)
    ran = []
    started = time.monotonic()
    with pytest.raises(LockTimeoutError) as raised:
        _with(flavor, bob, lambda: lock.acquired(0.3), lambda: ran.append(1))
    assert 0.3 <= time.monotonic() - started < 3.0
    assert ran == []
    assert raised.value.lock_name == name and name in str(raised.value)
    assert client.connection_manager.describe(name) in str(raised.value)  # the node
    alice(lock.unlock)


@pytest.mark.parametrize("form", ["with lock", "acquired", "synchronized", "multilock"])
def test_a_body_exception_is_never_replaced_by_a_release_error(
    flavor: Flavor, topology: Topology, topology_config: Any, form: str
) -> None:
    """The issue's case: a ``with lock:`` body raises KeyError after an operator
    force-unlocked the lock. The caller gets the KeyError, with the release failure
    (LockNotOwnedError) as a note; without an exception the release error is raised."""
    client = flavor.create_client(topology_config(topology))
    # The operator's own (threaded) client: callable from inside an asyncio block.
    operator = Redisson.create(topology_config(topology))
    name = _name()
    alice = flavor.owner("alice")
    lock = client.get_lock(name)

    def body() -> None:
        assert operator.get_lock(name).force_unlock() is True
        raise KeyError("missing")

    if form == "with lock":
        manager: Callable[[], Any] = lambda: lock  # noqa: E731
    elif form == "acquired":
        manager = lambda: lock.acquired(5.0)  # noqa: E731
    elif form == "multilock":
        multi = flavor.multilock(lock)
        manager = lambda: multi  # noqa: E731
    if form == "synchronized":
        if flavor.name == "sync":
            decorated = client.synchronized(name)(body)
        else:

            async def coro() -> None:
                body()

            decorated = client.synchronized(name)(coro)
        call: Callable[[], Any] = lambda: alice(decorated)  # noqa: E731
    else:
        call = lambda: _with(flavor, alice, manager, body)  # noqa: E731
    with pytest.raises(KeyError) as raised:
        call()
    notes = getattr(raised.value, "__notes__", [])
    assert any("LockNotOwnedError" in note for note in notes), notes

    # Without an exception from the block, the lost lock is still told.
    def quiet() -> None:
        operator.get_lock(name).force_unlock()

    try:
        if form == "with lock":
            with pytest.raises(LockNotOwnedError):
                _with(flavor, alice, lambda: lock, quiet)
    finally:
        operator.shutdown()


def test_a_body_exception_keeps_its_place_when_the_master_dies_in_the_block(
    flavor: Flavor, topology_factory: Callable[..., Topology], topology_config: Any
) -> None:
    """The release at the end of ``with semaphore:`` and ``with lock:`` fails because the
    master died in the block: the block's KeyError is what the caller gets, with the
    connection failure in a note."""
    topology = topology_factory("single")
    client = flavor.create_client(topology_config(topology))
    name = _name()
    alice = flavor.owner("alice")
    semaphore, lock = client.get_semaphore(name + ":sem"), client.get_lock(name)
    assert alice(semaphore.try_set_permits, 1) is True

    def body() -> None:
        topology.master().kill()
        raise KeyError("missing")

    with pytest.raises(KeyError) as raised:
        _with(flavor, alice, lambda: lock, lambda: _with_inner(flavor, semaphore, body))
    notes = getattr(raised.value, "__notes__", [])
    assert len(notes) == 2, notes  # the semaphore's release, then the lock's
    assert notes[0].startswith(f"releasing semaphore {name + ':sem'!r}"), notes
    assert notes[1].startswith(f"releasing lock {name!r}"), notes


def _with_inner(flavor: Flavor, manager: Any, body: Callable[[], Any]) -> Any:
    """``with manager: body()`` inside an owner's call (``async with`` for asyncio: a
    coroutine the outer block awaits)."""
    if flavor.name == "sync":
        with manager:
            return body()

    async def inner() -> Any:
        async with manager:
            return body()

    return inner()
