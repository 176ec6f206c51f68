"""An ``async def`` lost-lock callback is awaited on the asyncio client's loop."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from redisson_py import LockLost, LockNotOwnedError
from redisson_py.asyncio import Redisson
from redisson_py.testing import Topology


async def test_an_async_callback_runs_on_the_loop(
    single_topology: Topology, topology_config: Any, lock_name: str
) -> None:
    told = asyncio.Event()
    events: list[tuple[LockLost, bool]] = []

    async def lost(event: LockLost) -> None:
        await asyncio.sleep(0)  # it is awaited, not just called
        events.append((event, asyncio.get_running_loop() is loop))
        told.set()

    loop = asyncio.get_running_loop()
    config = topology_config(single_topology, lock_watchdog_timeout=3.0)
    async with await Redisson.create(config, on_lock_lost=lost) as client:
        lock = client.get_lock(lock_name)
        await lock.lock()
        await client.redis(lock_name).delete(lock_name)
        await asyncio.wait_for(told.wait(), timeout=5)
        assert [(e.name, on_loop) for e, on_loop in events] == [(lock_name, True)]
        with pytest.raises(LockNotOwnedError):
            await lock.unlock()
