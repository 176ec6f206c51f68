"""The upper bounds of the argument checks (issue 38, items 1 and 3): a lease, a
``max_hold_time`` or an extension above `MAX_LEASE`, and an ``acquire(timeout=...)``
above ``threading.TIMEOUT_MAX``, are refused with an error that names the value and the
limit, and is an ``OverflowError`` as well as an ``ArgumentError``; the bounds
themselves are accepted."""

from __future__ import annotations

import math
import sys
import threading

import pytest

from redisson_py import ArgumentError, ArgumentOverflowError, ArgumentTypeError, RedissonError
from redisson_py.core.handles import (
    MAX_LEASE,
    acquire_wait,
    check_lease,
    check_max_hold,
    check_wait,
)
from redisson_py.core.scripts import MAX_TTL_MS


@pytest.mark.parametrize("lease", [MAX_LEASE + 1, 1e10, 9.3e15, float(sys.maxsize), sys.maxsize])
def test_a_lease_above_max_lease_is_refused_naming_the_value_and_the_limit(lease: float) -> None:
    with pytest.raises(ArgumentOverflowError) as raised:
        check_lease("orders", lease)
    message = str(raised.value)
    assert "'orders'" in message and "lease_time" in message and repr(lease) in message
    assert "MAX_LEASE = 10**9 s" in message and "pass None" in message
    error = raised.value
    assert isinstance(error, ArgumentError | ValueError | OverflowError | RedissonError)
    assert isinstance(error, OverflowError) and isinstance(error, ValueError)


def test_max_lease_itself_is_a_lease_and_fits_every_bound_on_the_way() -> None:
    assert check_lease("orders", MAX_LEASE) == MAX_LEASE
    assert MAX_LEASE < threading.TIMEOUT_MAX  # the client's own timers
    assert MAX_LEASE * 1000 < MAX_TTL_MS  # the scripts' guard, hence Redis's PEXPIRE


def test_an_extension_and_a_semaphore_lease_have_the_same_limit() -> None:
    with pytest.raises(
        ArgumentOverflowError, match=r"seconds=10000000000.0 s .*MAX_LEASE"
    ) as raised:
        check_lease("orders", 1e10, none=None, argument="seconds")
    assert "pass None" not in str(raised.value)  # an extension has no "no lease"
    with pytest.raises(ArgumentOverflowError, match="pass None \\(no lease\\)"):
        check_lease("pool", 1e10, what="permit semaphore", none="no lease")


def test_max_hold_time_is_capped_but_infinity_still_means_no_cap() -> None:
    with pytest.raises(ArgumentOverflowError, match=r"max_hold_time=10000000000\.0 s .*math\.inf"):
        check_max_hold("orders", 1e10, None)
    assert check_max_hold("orders", MAX_LEASE, None) == MAX_LEASE
    assert check_max_hold("orders", math.inf, None) == math.inf


@pytest.mark.parametrize("timeout", [1e100, threading.TIMEOUT_MAX + 1, math.inf])
def test_acquire_refuses_a_timeout_above_timeout_max_as_threading_does(timeout: float) -> None:
    with pytest.raises(OverflowError):  # threading.Lock().acquire(timeout=...) raises it
        threading.Lock().acquire(timeout=timeout)
    with pytest.raises(ArgumentOverflowError, match=r"threading\.TIMEOUT_MAX"):
        acquire_wait("orders", True, timeout, threading.TIMEOUT_MAX)


def test_acquire_takes_timeout_max_itself_and_refuses_what_threading_refuses() -> None:
    # TIMEOUT_MAX (about 292 years) is taken: as a wait for ever, being above MAX_LEASE.
    assert acquire_wait("orders", True, threading.TIMEOUT_MAX, threading.TIMEOUT_MAX) is None
    assert acquire_wait("orders", True, 5, threading.TIMEOUT_MAX) == 5.0
    assert acquire_wait("orders", True, -1, threading.TIMEOUT_MAX) is None
    assert acquire_wait("orders", False, -1, threading.TIMEOUT_MAX) == 0.0
    for blocking, timeout in [(False, 1), (True, -100), (True, -0.5), (True, math.nan)]:
        with pytest.raises(ValueError):
            threading.Lock().acquire(blocking, timeout)
        with pytest.raises(ArgumentError):
            acquire_wait("orders", blocking, timeout, threading.TIMEOUT_MAX)
    with pytest.raises(ArgumentTypeError):  # a TypeError, as threading's
        acquire_wait("orders", True, "5", threading.TIMEOUT_MAX)  # type: ignore[arg-type]


@pytest.mark.parametrize("wait", [MAX_LEASE + 1, 1e100, 1e308, math.inf])
def test_a_wait_above_max_lease_is_a_wait_for_ever(wait: float) -> None:
    # Its milliseconds would overflow (1e308 s is infinite in ms): None waits for ever.
    assert check_wait("orders", wait) is None
    assert acquire_wait("orders", True, threading.TIMEOUT_MAX, threading.TIMEOUT_MAX) is None
    assert check_wait("orders", MAX_LEASE) == MAX_LEASE
