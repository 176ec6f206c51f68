"""``acquire``/``release``/``locked``: :class:`threading.Lock`'s protocol on the threaded
lock and :class:`asyncio.Lock`'s on the asyncio one (each awaited there), with the same
arguments, results and errors in both shells."""

from __future__ import annotations

import math
import threading
import time
from typing import Any

import pytest

import redisson_py
import redisson_py.asyncio
from redisson_py import ArgumentError, ArgumentOverflowError
from redisson_py.testing.owners import Flavor


def test_acquire_with_no_arguments_waits_and_returns_true(
    flavor: Flavor, make_client: Any, lock_name: str
) -> None:
    lock = make_client().get_lock(lock_name)
    alice, bob = flavor.owner("alice"), flavor.owner("bob")
    assert alice(lock.acquire) is True
    assert alice(lock.hold_count) == 1
    assert bob(lock.locked) is True
    waiting = bob.start(lock.acquire)  # blocks: held by alice
    time.sleep(0.3)
    assert not waiting.done()
    alice(lock.release)
    assert waiting.result(timeout=10) is True
    assert bob(lock.is_held_by_current_thread) is True
    bob(lock.release)
    assert alice(lock.locked) is False


def test_non_blocking_and_timed_acquires_give_up(
    flavor: Flavor, make_client: Any, lock_name: str
) -> None:
    lock = make_client().get_lock(lock_name)
    alice, bob = flavor.owner("alice"), flavor.owner("bob")
    alice(lock.acquire)
    started = time.monotonic()
    assert bob(lock.acquire, False) is False
    assert bob(lock.acquire, blocking=False) is False
    assert time.monotonic() - started < 1.0
    started = time.monotonic()
    assert bob(lock.acquire, True, 0.5) is False
    assert bob(lock.acquire, timeout=0.3) is False
    assert 0.8 <= time.monotonic() - started < 3.0
    alice(lock.release)
    assert bob(lock.acquire, timeout=0.5) is True
    bob(lock.release)


def test_acquire_refuses_the_arguments_threading_lock_refuses(
    flavor: Flavor, make_client: Any, lock_name: str
) -> None:
    lock = make_client().get_lock(lock_name)
    alice = flavor.owner("alice")
    with pytest.raises(ArgumentError, match="non-blocking acquire cannot have a timeout"):
        alice(lock.acquire, False, 1.0)
    with pytest.raises(ArgumentError, match="timeout must be -1"):
        alice(lock.acquire, True, -2)
    # threading's bound, with its exception type (OverflowError), in both APIs.
    for too_long in (1e100, threading.TIMEOUT_MAX + 1, math.inf):
        with pytest.raises(ArgumentOverflowError, match=r"threading\.TIMEOUT_MAX"):
            alice(lock.acquire, timeout=too_long)
    with pytest.raises(ValueError, match="timeout must be -1"):
        alice(lock.acquire, timeout=-100)
    assert alice(lock.locked) is False  # a refused call took nothing
    assert alice(lock.acquire, timeout=threading.TIMEOUT_MAX) is True  # the bound itself
    alice(lock.release)


def test_owner_ids_are_ints_in_both_shells(flavor: Flavor) -> None:
    current = (
        redisson_py.current_owner_id
        if flavor.name == "sync"
        else redisson_py.asyncio.current_owner_id
    )
    alice, bob = flavor.owner("alice"), flavor.owner("bob")
    alice_id, bob_id = alice(current), bob(current)
    assert type(alice_id) is int and type(bob_id) is int and alice_id != bob_id
    assert alice(current) == alice_id  # stable for one owner
