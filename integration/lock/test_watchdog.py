"""The watchdog keeps a lease-less lock past its timeout, on every topology and in both
APIs, however the hold was taken: ``lock()``, ``try_lock()``, a fenced lock, a MultiLock.
Nothing but the client's hold table starts the watchdog (it is told of every recorded
hold), so this test is what shows the shells need no start of their own. One test holds
every lock at once, so the ten seconds are spent once."""

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
                client = flavor.create_client(config)
                name = f"test:watchdog:{uuid.uuid4().hex}"
                holder, rival = flavor.owner("holder"), flavor.owner("rival")
                lock = client.get_lock(name)
                holder(lock.lock)
                fenced = client.get_fenced_lock(name + ":fenced")
                assert holder(fenced.try_lock) is True
                members = [client.get_lock(f"{name}:m{i}") for i in range(2)]
                multi = flavor.multilock(*members)
                assert holder(multi.try_lock) is True
                held.append((kind, flavor.name, lock, holder, rival))
                held.append((kind, flavor.name + " fenced", fenced, holder, rival))
                held.append((kind, flavor.name + " multilock", multi, holder, rival))
        time.sleep(10)
        for kind, name, lock, holder, rival in held:
            where = f"{name} on {kind}"
            assert rival(lock.try_lock) is False, where
            assert holder(lock.is_held_by_current_thread) is True, where
            for member in getattr(lock, "locks", [lock]):
                # renewed every second to 3 s
                assert holder(member.remain_time_to_live) > 1.5, where
            holder(lock.unlock)
    finally:
        for flavor in flavors:
            flavor.close()
