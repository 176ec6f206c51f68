"""Polling with a deadline: the only way the harness waits for a topology to change.

A check either returns a value (done) or raises `NotYet` saying what it still
waits for; connection errors from redis-py count as "not yet" too (a node that restarts
or fails over refuses connections for a while). When the deadline passes,
`HarnessTimeout` says what was awaited and the last reason it was not there yet.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

import redis

from redisson_py.testing.errors import TopologyError

__all__ = ["HarnessTimeout", "NotYet", "eventually", "wait_until"]

T = TypeVar("T")


class NotYet(Exception):
    """Raised by a check: the awaited state is not there yet (the message says why)."""


class HarnessTimeout(TopologyError, TimeoutError):
    """A topology did not reach the awaited state before the deadline."""


def wait_until(
    check: Callable[[], T],
    *,
    timeout: float,
    what: str,
    interval: float = 0.05,
) -> T:
    """Call ``check`` until it returns instead of raising `NotYet`; return its value.

    Raises `HarnessTimeout` after ``timeout`` seconds, naming ``what`` and the last
    reason. Other exceptions from ``check`` propagate at once.
    """
    deadline = time.monotonic() + timeout
    last = "no check completed"
    while True:
        try:
            return check()
        except NotYet as exc:
            last = str(exc)
        except (redis.ConnectionError, redis.TimeoutError) as exc:
            last = f"{type(exc).__name__}: {exc}"
        if time.monotonic() >= deadline:
            raise HarnessTimeout(f"{what} did not happen within {timeout:g} s; last seen: {last}.")
        time.sleep(interval)


def eventually(
    predicate: Callable[[], object], *, timeout: float, what: str, interval: float = 0.05
) -> None:
    """Wait until ``predicate()`` is true; `HarnessTimeout` naming ``what`` if not
    within ``timeout`` seconds."""

    def check() -> None:
        if not predicate():
            raise NotYet(f"{what}: not yet")

    wait_until(check, timeout=timeout, what=what, interval=interval)
