"""The threaded shell's background work (`spawn`): what a queued lock's take-up, an
undo or a shutdown release runs after the call that started it has returned."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterator

import pytest

from redisson_py.sync._primitives import spawn


@pytest.fixture
def long_switch_interval() -> Iterator[None]:
    """A thread holding the GIL keeps it for 2 s unless it blocks."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(2.0)
    try:
        yield
    finally:
        sys.setswitchinterval(before)


def test_the_caller_goes_on_at_once_while_the_work_keeps_the_gil(
    long_switch_interval: None,
) -> None:
    # Thread.start() waited for the new thread, which then kept the GIL through the
    # work up to its first blocking call: a queued lock's waiter paid its take-up's
    # start (about 0.7 ms on a busy machine) before lock() returned.
    done = threading.Event()

    def busy() -> None:
        end = time.perf_counter() + 0.5
        while time.perf_counter() < end:
            pass  # never blocks: keeps the GIL
        done.set()

    started = time.perf_counter()
    spawn("redisson-py-test", busy)
    returned = time.perf_counter() - started
    assert done.wait(10)
    assert returned < 0.25, returned


def test_work_runs_and_its_thread_ends() -> None:
    done = threading.Event()
    ran_on: list[int] = []

    def work() -> None:
        ran_on.append(threading.get_ident())
        done.set()

    spawn("redisson-py-test", work)
    assert done.wait(5)
    assert ran_on != [threading.get_ident()]


def test_work_that_raises_is_dropped_quietly(capfd: pytest.CaptureFixture[str]) -> None:
    done = threading.Event()

    def broken() -> None:
        done.set()
        raise RuntimeError("a broken promise not to raise")

    spawn("redisson-py-test", broken)
    assert done.wait(5)
    time.sleep(0.1)
    assert "broken promise" not in capfd.readouterr().err


def test_an_error_that_escapes_the_work_is_logged_not_dropped(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # A background flow reports its own errors; one that escapes it is a bug, and a bug
    # in a thread nobody joins must still be seen.
    done = threading.Event()

    def broken() -> None:
        try:
            raise RuntimeError("a broken promise")
        finally:
            done.set()

    with caplog.at_level("ERROR", logger="redisson_py"):
        spawn("redisson-py-take-up", broken)
        assert done.wait(5.0)
        deadline = time.monotonic() + 5.0
        while not caplog.records and time.monotonic() < deadline:
            time.sleep(0.01)
    [record] = caplog.records
    assert record.levelname == "ERROR"
    assert "background work redisson-py-take-up failed" in record.getMessage()
    assert record.exc_info is not None and "a broken promise" in str(record.exc_info[1])
