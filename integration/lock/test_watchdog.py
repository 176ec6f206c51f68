"""The watchdog keeps a lease-less lock past its timeout, on every topology and in both
APIs. One test holds all six locks at once, so the ten seconds are spent once."""

from __future__ import annotations

import time
import uuid
from typing import Any

import pytest

from redisson_py.testing import Topology
from redisson_py.testing.owners import Flavor

TOPOLOGIES = ("single", "sentinel", "cluster")


def test_watchdog_keeps_locks_past_its_timeout(
    request: pytest.FixtureRequest, topology_config: Any
) -> None:
    flavors = [Flavor("sync"), Flavor("asyncio")]
    try:
        held = []
        for kind in TOPOLOGIES:
            topology: Topology = request.getfixturevalue(f"{kind}_topology")
            for flavor in flavors:
                config = topology_config(topology, lock_watchdog_timeout=3.0)
                lock = flavor.create_client(config).get_lock(f"test:watchdog:{uuid.uuid4().hex}")
                holder, rival = flavor.owner("holder"), flavor.owner("rival")
                holder(lock.lock)
                held.append((kind, flavor.name, lock, holder, rival))
        time.sleep(10)
        for kind, name, lock, holder, rival in held:
            where = f"{name} on {kind}"
            assert rival(lock.try_lock) is False, where
            assert holder(lock.is_held_by_current_thread) is True, where
            assert holder(lock.remain_time_to_live) > 1.5, where  # renewed every second to 3 s
            holder(lock.unlock)
    finally:
        for flavor in flavors:
            flavor.close()
