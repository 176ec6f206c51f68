"""Which task owns an asyncio hold (issue 38, item 2), on real servers.

The owner of a hold is the task that *calls* the lock method, not the task that runs its
coroutine: ``asyncio.wait_for(lock.lock(), 5)`` on Python 3.11 (which runs the
coroutine in a task of its own), ``asyncio.shield``, ``asyncio.gather`` and
``asyncio.create_task(lock.lock())`` awaited by its creator all take the lock for the
caller, whose ``unlock()`` then releases it; for every kind the watchdog renews, a
MultiLock and a RedLock, in the ``lock()``/``unlock()``, ``acquire()``/``release()``,
``try_lock()`` and ``async with`` forms.

A hold whose owning task finished without releasing it is no longer renewed: its key
expires within the watchdog timeout and the loss is reported ("its owner task finished
without unlock()"). A task that handed its hold on (an ``owned_by`` view, an
``export_hold`` token adopted by another task) keeps it renewed.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from integration.every_kind import watchdog_kinds
from redisson_py import LockLost
from redisson_py.asyncio import Redisson, current_owner_id
from redisson_py.asyncio.multilock import MultiLock, RedLock
from redisson_py.core.state.holds import ORPHANED
from redisson_py.testing import Topology

WATCHDOG = 2.0
"""The watchdog timeout of these tests' clients (seconds): renewals every 2/3 s."""


@pytest.fixture(params=["single", "cluster"])
def owner_topology(request: pytest.FixtureRequest) -> Topology:
    topology: Topology = request.getfixturevalue(f"{request.param}_topology")
    return topology


KINDS = [
    "reentrant",
    "fair",
    "queued",
    "spin",
    "fenced",
    "read",
    "write",
    "non-reentrant",
    "multilock",
    "redlock",
]


def make_lock(client: Any, kind: str, name: str, on_lost: Any = None) -> Any:
    """One lock of ``kind`` named after ``name`` (a group of two or three locks for
    ``multilock`` and ``redlock``), reporting losses to ``on_lost``."""
    if kind == "multilock":
        members = [client.get_lock(f"{name}:m{i}") for i in range(2)]
        return MultiLock(*members, on_lock_lost=on_lost)
    if kind == "redlock":
        members = [client.get_lock(f"{name}:r{i}") for i in range(3)]
        return RedLock(*members, on_lock_lost=on_lost)
    if kind == "non-reentrant":
        lock = client.get_non_reentrant_lock(f"{name}:non-reentrant")
    else:
        lock = watchdog_kinds(client, name)[kind]
    lock.on_lock_lost = on_lost
    return lock


async def held_by_me(lock: Any) -> bool:
    """``is_held_by_current_task()`` (a coroutine on a lock, a plain call on a group)."""
    answer = lock.is_held_by_current_task()
    return bool(await answer) if inspect.isawaitable(answer) else bool(answer)


async def in_own_task(step: Awaitable[Any]) -> Any:
    """Await ``step`` in a task of its own, as ``asyncio.wait_for`` does on 3.11 (on
    3.12 and later ``wait_for`` runs it in the caller's task): the case the owner rule
    is for, whatever the interpreter."""
    return await asyncio.ensure_future(step)


async def gathered(step: Awaitable[Any]) -> Any:
    """Await ``step`` through ``asyncio.gather`` (which wraps it in a task)."""
    (result,) = await asyncio.gather(step)
    return result


WRAPPERS: dict[str, Callable[[Awaitable[Any]], Awaitable[Any]]] = {
    "wait_for": lambda step: asyncio.wait_for(step, 10),
    "create_task": in_own_task,
    "shield": asyncio.shield,
    "gather": gathered,
}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("form", ["lock", "acquire", "try_lock", "async_with"])
async def test_the_caller_owns_what_wait_for_takes(
    owner_topology: Topology, topology_config: Any, lock_name: str, kind: str, form: str
) -> None:
    """``asyncio.wait_for(lock.lock(), 5)`` then ``lock.unlock()`` in the same function
    works for every kind; so does ``acquire()``/``release()`` and ``try_lock()`` under
    ``wait_for``, and ``async with`` inside ``asyncio.timeout``. The hold is the
    caller's (``is_held_by_current_task``), another task's unlock would not release it,
    and after the caller's release nothing is left locked."""
    config = topology_config(owner_topology, lock_watchdog_timeout=WATCHDOG)
    async with await Redisson.create(config) as client:
        lock = make_lock(client, kind, lock_name)
        if form == "lock":
            await in_own_task(lock.lock())
            await asyncio.wait_for(lock.unlock(), 10)
            await asyncio.wait_for(lock.lock(), 10)
            assert await held_by_me(lock)
            await lock.unlock()
        elif form == "acquire":
            assert await in_own_task(lock.acquire())
            assert await held_by_me(lock)
            await asyncio.wait_for(lock.release(), 10)
            assert await asyncio.wait_for(lock.acquire(timeout=5), 10)
            await lock.release()
        elif form == "try_lock":
            assert await in_own_task(lock.try_lock(5))
            assert await held_by_me(lock)
            await lock.unlock()
        else:
            async with asyncio.timeout(10), lock:
                assert await held_by_me(lock)
            async with asyncio.timeout(10), lock.acquired(5):
                assert await held_by_me(lock)
        assert not await held_by_me(lock)
        assert not await lock.is_locked()


@pytest.mark.parametrize("wrapper", sorted(WRAPPERS))
async def test_every_way_of_awaiting_gives_the_caller_the_hold(
    single_topology: Topology, topology_config: Any, lock_name: str, wrapper: str
) -> None:
    """``wait_for``, ``shield``, ``gather`` and ``create_task`` awaited by the creator:
    the caller owns the hold, and one of its other tasks does not (it cannot take the
    lock while the caller holds it)."""
    wrap = WRAPPERS[wrapper]
    config = topology_config(single_topology, lock_watchdog_timeout=WATCHDOG)
    async with await Redisson.create(config) as client:
        lock = client.get_lock(lock_name)
        await wrap(lock.lock())
        assert await lock.hold_count() == 1
        assert await wrap(lock.try_lock())  # reentered by the same owner
        assert await wrap(lock.hold_count()) == 2

        async def other() -> bool:
            return await lock.try_lock()

        assert not await asyncio.create_task(other())
        await wrap(lock.unlock())
        await lock.unlock()
        assert not await lock.is_locked()


async def finished_holder(lock: Any) -> None:
    """A task that takes ``lock`` and ends without releasing it."""
    await lock.lock()


async def wait_unlocked(lock: Any, within: float) -> float:
    """Seconds until ``lock`` is no longer locked (fails after ``within``)."""
    started = time.monotonic()
    while await lock.is_locked():
        assert time.monotonic() - started < within, "still locked: the hold is renewed"
        await asyncio.sleep(0.1)
    return time.monotonic() - started


@pytest.mark.parametrize("kind", KINDS)
async def test_a_hold_whose_task_finished_expires_and_is_reported(
    owner_topology: Topology, topology_config: Any, lock_name: str, kind: str
) -> None:
    """A task that ends holding a lock: the watchdog stops renewing it at its next
    round, the key expires within the watchdog timeout (plus a round and a margin) and
    the loss is reported once, saying the owner task finished; another task can then
    take the lock."""
    lost: list[LockLost] = []
    told = asyncio.Event()

    def on_lost(event: LockLost) -> None:
        lost.append(event)
        told.set()

    config = topology_config(owner_topology, lock_watchdog_timeout=WATCHDOG)
    async with await Redisson.create(config) as client:
        lock = make_lock(client, kind, lock_name, on_lost)
        await asyncio.create_task(finished_holder(lock))
        assert await lock.is_locked()
        # A watchdog timeout since the last renewal (at most one round before the
        # task ended), the round that notices, and a margin for a busy machine.
        await wait_unlocked(lock, WATCHDOG + WATCHDOG / 3 + 1.5)
        await asyncio.wait_for(told.wait(), 3)
        assert lost and all(ORPHANED in event.reason for event in lost), lost
        assert len(lost) == 1  # once, for the group as for a single lock
        assert await lock.try_lock()
        await lock.unlock()


async def test_a_hold_handed_on_with_owned_by_stays_renewed(
    single_topology: Topology, topology_config: Any, lock_name: str
) -> None:
    """Task A takes the lock and hands an ``owned_by`` view to task B, then ends: the
    hold stays renewed past several watchdog timeouts, and B's unlock releases it."""
    config = topology_config(single_topology, lock_watchdog_timeout=WATCHDOG)
    async with await Redisson.create(config) as client:
        lock = client.get_lock(lock_name)

        async def take_and_hand_on() -> Any:
            await lock.lock()
            return lock.owned_by(current_owner_id())

        view = await asyncio.create_task(take_and_hand_on())
        await asyncio.sleep(WATCHDOG * 2)
        assert await view.hold_count() == 1
        assert await lock.is_locked()
        await view.unlock()
        assert not await lock.is_locked()


async def test_a_hold_exported_by_a_finished_task_stays_with_its_adopter(
    single_topology: Topology, topology_config: Any, lock_name: str
) -> None:
    """Task A exports its hold and ends; task B of the same client adopts it: the
    adopted hold stays renewed past several watchdog timeouts, and B releases it."""
    config = topology_config(single_topology, lock_watchdog_timeout=WATCHDOG)
    async with await Redisson.create(config) as client:
        lock = client.get_lock(lock_name)

        async def take_and_export() -> str:
            await lock.lock()
            return await lock.export_hold()

        token = await asyncio.create_task(take_and_export())

        async def adopt() -> Any:
            return await client.adopt_hold(token)

        adopted = await asyncio.create_task(adopt())
        await asyncio.sleep(WATCHDOG * 2)
        assert await adopted.hold_count() == 1
        await adopted.unlock()
        assert not await lock.is_locked()


async def test_a_live_owner_keeps_its_hold_renewed(
    single_topology: Topology, topology_config: Any, lock_name: str
) -> None:
    """The rule takes only finished owners: a task still running (here, waiting) keeps
    its hold past several watchdog timeouts, and releases it."""
    config = topology_config(single_topology, lock_watchdog_timeout=WATCHDOG)
    async with await Redisson.create(config) as client:
        lock = client.get_lock(lock_name)
        release = asyncio.Event()

        async def holder() -> None:
            await lock.lock()
            await release.wait()
            await lock.unlock()

        task = asyncio.create_task(holder())
        await asyncio.sleep(WATCHDOG * 2)
        assert await lock.is_locked()
        release.set()
        await task
        assert not await lock.is_locked()


async def test_a_fenced_resource_writes_for_the_caller(
    single_topology: Topology, topology_config: Any, lock_name: str
) -> None:
    """A bare token written twice through ``wait_for`` (a task of its own on 3.11) is
    the caller's both times: the fenced resource accepts the second write, as it does
    for two plain awaits (a token equal to the highest is its first writer's only)."""
    config = topology_config(single_topology, lock_watchdog_timeout=WATCHDOG)
    async with await Redisson.create(config) as client:
        lock = client.get_fenced_lock(lock_name)
        resource = client.get_fenced_resource(f"{lock_name}:resource")
        token = await in_own_task(lock.lock_and_get_token())
        await in_own_task(resource.set("first", token))
        await asyncio.wait_for(resource.set("second", token), 10)
        await in_own_task(resource.set("third", token))
        assert await resource.get() == b"third"
        await in_own_task(resource.delete(token))
        await in_own_task(lock.unlock())
        assert not await lock.is_locked()


async def test_the_finished_owner_rule_holds_with_the_watchdog_on_the_loop(
    single_topology: Topology, topology_config: Any, lock_name: str
) -> None:
    """``watchdog_thread=False`` (the rounds run as tasks on the loop): the same rule,
    the hold of a finished task expires and is reported."""
    lost: list[LockLost] = []
    config = topology_config(single_topology, lock_watchdog_timeout=WATCHDOG)
    async with await Redisson.create(config, watchdog_thread=False) as client:
        lock = client.get_lock(lock_name, on_lock_lost=lost.append)
        await asyncio.create_task(finished_holder(lock))
        await wait_unlocked(lock, WATCHDOG + WATCHDOG / 3 + 1.5)
        await asyncio.sleep(0.1)  # the report runs on the loop
        assert [ORPHANED in event.reason for event in lost] == [True], lost
