"""The wake-up check several suites make: a release wakes a blocked waiter at once."""

from __future__ import annotations

import time
from typing import Any

from redisson_py.testing.owners import Flavor


def release_wakes_waiter(flavor: Flavor, held: Any, wanted: Any, *, within: float) -> None:
    """An owner holds ``held`` with the watchdog (a 30 s TTL: a waiter not woken by the
    unlock message would sleep that long), another blocks in ``wanted.lock()``; the
    unlock must get it the lock within ``within`` seconds. Sync or asyncio locks alike
    (``flavor`` runs each owner)."""
    alice, bob = flavor.owner("alice"), flavor.owner("bob")
    alice(held.lock)
    waiting = bob.start_timed(wanted.lock)
    time.sleep(0.3)
    assert not waiting.done()
    _, released = alice.start_timed(held.unlock).result(timeout=10)
    _, acquired = waiting.result(timeout=10)
    assert acquired - released < within
    bob(wanted.unlock)
