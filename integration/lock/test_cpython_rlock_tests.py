"""CPython's own tests of ``threading.RLock`` (``RLockTests`` in ``Lib/test/lock_tests.py``,
the interpreter's ``test`` package), run against ``client.get_lock(...)`` on a real
server (issue 38, item 3).

The README says the lock speaks `threading.Lock`'s protocol and is reentrant: this is
the interpreter's definition of that claim, run as it is written. Each test gets a
lock of its own name (``locktype()`` makes a new one each call) from one client shared
by the class. Left out, each for a reason about the protocol (see `SKIPPED`): the repr
format (a distributed lock's repr names the lock, not the holder's thread and count)
and CPython's private helpers ``_release_save``, ``_recursion_count`` and
``_is_owned``, which are not part of the protocol.

The client's background threads (watchdog, loss reports, pub/sub reader) are started
before each test: CPython's helpers count the process's threads around a test (and
fail when a test leaves more than it found), and a client starts them on first use.

Without the ``test`` package (Debian ships it apart: ``libpython3.X-testsuite``) the
tests are skipped, saying so.
"""

from __future__ import annotations

import sys
import threading
import unittest
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from integration.conftest import config_for
from redisson_py import Redisson

try:
    from test import lock_tests
except ImportError:  # the interpreter's test package is not installed
    lock_tests = None

MISSING = (
    "CPython's test package (test.lock_tests) is not installed; on Debian/Ubuntu:"
    f" apt install libpython3.{sys.version_info.minor}-testsuite"
)

SKIPPED = {
    "test_repr": "the repr format: a distributed lock's repr names the lock, not a thread",
    "test_locked_repr": "the repr format: a distributed lock's repr names the lock",
    "test_release_save_unacquired": "_release_save is CPython's private Condition helper",
    "test_recursion_count": "_recursion_count is CPython's private helper",
    "test__is_owned": "_is_owned is CPython's private Condition helper",
}
"""The tests left out, each with its reason (all about what is not the protocol)."""


def _warm_up(client: Redisson) -> None:
    """Start the client's background threads: the watchdog's (a hold) and a pub/sub
    reader (a waiter that subscribes), so that no test sees them start."""
    lock = client.get_lock(f"cpython-rlock:warm-up:{uuid.uuid4().hex[:8]}")
    lock.acquire()
    waiter = threading.Thread(target=lambda: lock.try_lock(0.3))
    waiter.start()
    waiter.join(10)
    lock.release()


@pytest.fixture(scope="class")
def _lock_factory(request: pytest.FixtureRequest, _redisson_py_shared: Any) -> Iterator[None]:
    """``locktype()`` for the class: a new lock name each call, on one client of the
    shared single topology (the fixtures' topologies are per test; this one is the
    session's, as theirs)."""
    topology = _redisson_py_shared.get("single")
    client = Redisson.create(config_for(topology))
    _warm_up(client)
    prefix = f"cpython-rlock:{uuid.uuid4().hex[:8]}"
    count = iter(range(1_000_000))

    def locktype() -> Any:
        return client.get_lock(f"{prefix}:{next(count)}")

    request.cls.locktype = staticmethod(locktype)
    yield
    client.shutdown()


def _skipped(reason: str) -> Callable[[Any], None]:
    @unittest.skip(reason)
    def test(self: Any) -> None:
        raise AssertionError("skipped")

    return test


if lock_tests is None:

    class TestRLockProtocol(unittest.TestCase):
        """Stands for CPython's ``RLockTests`` where they are not installed."""

        def test_rlock_tests(self) -> None:
            self.skipTest(MISSING)

else:

    @pytest.mark.usefixtures("_lock_factory")
    class TestRLockProtocol(lock_tests.RLockTests):  # type: ignore[no-redef]
        """``RLockTests`` as CPython runs them on ``threading.RLock``, on our lock."""

        locals().update({name: _skipped(reason) for name, reason in SKIPPED.items()})
