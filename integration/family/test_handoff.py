"""Handing a hold to another client or process: ``lock.export_hold()`` and
``client.adopt_hold(token)`` (docs/handoff.md), sync and asyncio, single and cluster.

What a user relies on: after adoption the adopter holds the lock (its watchdog renews
it past the watchdog timeout, its unlock frees it for others), the exporter neither
renews nor releases it, the hash field stays Redisson's ``<client id>:<owner id>``,
and whatever goes wrong (a token adopted twice, a hold gone, the server frozen between
export and adoption) ends in a typed error and never in two holders.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from redisson_py import HandOffError, LockNotOwnedError, RedissonError, current_owner_id
from redisson_py import asyncio as aio
from redisson_py.testing import Topology
from redisson_py.testing.owners import Flavor

WATCHDOG = 1.5


def _owner_id(flavor: Flavor) -> Callable[[], int]:
    """The function that gives the calling owner's id (thread or task)."""
    return current_owner_id if flavor.name == "sync" else aio.current_owner_id


def _fields(flavor: Flavor, client: Any, name: str) -> set[str]:
    """The lock hash's fields, read with a plain redis-py client."""
    raw = flavor.run(client.redis(name).hkeys(name))
    return {k.decode() if isinstance(k, bytes) else k for k in raw}


def test_adopter_holds_renews_and_releases_and_exporter_lets_go(
    flavor: Flavor, make_client: Callable[..., Any], lock_name: str
) -> None:
    exporter = make_client(lock_watchdog_timeout=WATCHDOG)
    adopter = make_client(lock_watchdog_timeout=WATCHDOG)
    lock = exporter.get_lock(lock_name)
    alice, bob, carol = flavor.owner("alice"), flavor.owner("bob"), flavor.owner("carol")
    alice(lock.lock)
    field = f"{exporter.id}:{alice(_owner_id(flavor))}"
    token = alice(lock.export_hold)
    data = json.loads(token)
    assert data["client"] == exporter.id and data["lock"] == lock_name
    assert data["kind"] == "reentrant" and data["lease"] is None
    assert f"{data['client']}:{data['owner']}" == field
    assert 0 < data["ttl_ms"] <= WATCHDOG * 1000
    assert "password" not in token.lower()

    adopted = bob(adopter.adopt_hold, token)
    # The adopter holds it past several watchdog timeouts: its watchdog renews it.
    time.sleep(2.5 * WATCHDOG)
    assert bob(adopted.is_held_by_current_thread) is True
    assert carol(exporter.get_lock(lock_name).try_lock) is False
    assert field in _fields(flavor, adopter, lock_name)  # Redisson's wire: the same field
    # The exporter forgot it: its owner's unlock raises, and touches nothing.
    with pytest.raises(LockNotOwnedError, match="exported"):
        alice(lock.unlock)
    with pytest.raises(HandOffError) as refused:
        alice(lock.try_lock)
    assert refused.value.reason == "exported"
    bob(adopted.unlock)
    assert carol(exporter.get_lock(lock_name).try_lock) is True
    carol(exporter.get_lock(lock_name).unlock)
    # Once released, the adopted view takes nothing anew; the exporter's owner may.
    with pytest.raises(HandOffError) as again:
        bob(adopted.try_lock)
    assert again.value.reason == "adopted-released"
    assert alice(lock.try_lock) is True
    alice(lock.unlock)
