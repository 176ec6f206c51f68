"""The asyncio client's watchdog on daemon threads (the default; see
``docs/asyncio.md``), so that an event loop blocked for longer than the watchdog timeout
keeps its holds. Written by hand, asyncio only: the threaded client's watchdog is a
thread already (``scripts/generate_sync.py`` leaves this module alone).

`WatchdogThreads` runs the watchdog's renewal rounds and loss reports (the same core
flows as the loop's, `redisson_py.core.flows.watchdog`) on two daemon threads, the
rounds on threaded twins of the client's connection managers, and tells what they find
on the loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import math
import threading
import time
from collections.abc import Callable, Generator
from typing import Any

from redisson_py.asyncio._primitives import ERROR_PAUSE, ERROR_PAUSE_MAX, LONGEST_WAIT

log = logging.getLogger("redisson_py.watchdog")

Route = Callable[[Any], Any]
"""Maps an asyncio manager to the threaded one a round sends on."""

STOP_GRACE = 1.0
"""Seconds `RenewalThread.stop` waits, beyond one command timeout, for a round in
flight to end."""


@functools.cache
def _twin_class() -> type[Any]:
    # Imported here, when the threads start: the one import of the threaded shell by the
    # asyncio one (an exception listed in tests/test_architecture.py, with its reason).
    from redisson_py.sync.manager import ConnectionManager  # noqa: PLC0415

    class ThreadTwin(ConnectionManager):
        """A threaded connection manager that routes by another (the asyncio client's)
        manager's view: no discovery and no background loop of its own. What it learns
        of the topology (a failure to refresh on, a MOVED) goes to that manager, on
        its loop."""

        def __init__(self, source: Any, loop: asyncio.AbstractEventLoop):
            super().__init__(source.config)
            self._source = source
            self._loop = loop

        @property
        def view(self) -> Any:
            return self._source.view

        @view.setter
        def view(self, new: Any) -> None:
            self._on_loop(self._source.apply_view, new)

        def suspect(self, address: Any) -> None:
            self._on_loop(self._source.suspect, address)

        def _on_loop(self, function: Callable[..., object], *args: Any) -> None:
            with contextlib.suppress(RuntimeError):  # the loop is closed: nothing to tell
                self._loop.call_soon_threadsafe(function, *args)

    return ThreadTwin


class _LoopThread:
    """One background loop on a daemon thread: sleeps until ``wake_at()`` (monotonic
    seconds) or `wake`, then runs ``step()``; its errors are logged."""

    def __init__(
        self,
        name: str,
        wake_at: Callable[[], float],
        step: Callable[[], object],
        clock: Callable[[], float],
        stopping: threading.Event,
    ):
        self._name = name
        self._wake_at = wake_at
        self._step = step
        self._clock = clock
        self._stopping = stopping
        self._wake = threading.Event()
        self.thread: threading.Thread | None = None

    def start(self) -> bool:
        if self._stopping.is_set() or (self.thread is not None and self.thread.is_alive()):
            return False
        self.thread = threading.Thread(target=self._run, name=self._name, daemon=True)
        self.thread.start()
        return True

    def wake(self) -> None:
        self._wake.set()

    def _run(self) -> None:
        # Only halt() ends this loop: an unexpected error is logged at ERROR and the loop
        # goes on (a dead thread would silently stop every renewal, or every report),
        # after a pause that grows while the error repeats.
        pause = ERROR_PAUSE
        while not self._stopping.is_set():
            try:
                at = self._wake_at()
                # No hold: sleep until woken (an infinite timeout is not a timeout); a
                # far timer is waited for in pieces (threading's waits overflow).
                self._wake.wait(
                    None if at == math.inf else min(LONGEST_WAIT, max(0.0, at - self._clock()))
                )
                self._wake.clear()
                if self._stopping.is_set():
                    return
                self._step()
                pause = ERROR_PAUSE
            except Exception:
                log.exception("%s failed; it goes on", self._name)
                self._stopping.wait(pause)
                pause = min(pause * 2, ERROR_PAUSE_MAX)


class WatchdogThreads:
    """The asyncio client's watchdog on two daemon threads, so that an event loop
    blocked (CPU work, a synchronous call) for longer than the watchdog timeout keeps
    its holds: one runs the renewal rounds, with threaded connections of its own; the
    other the loss reports at safe ends (no I/O, so a round waiting on a frozen node
    cannot make a report late).

    ``rounds`` is (when the next round is due, the round as a core flow given a route);
    ``reports`` is (when the next report is due, the report). A round's calls go on
    the threaded twin of each hold's asyncio manager (`_twin_class`: the same view,
    one connection per master in use, no second discovery). What the threads find
    (losses, events) is told on the loop that started them (`deliver`).
    """

    def __init__(
        self,
        rounds: tuple[
            Callable[[], float], Callable[[Callable[[Any], Any]], Generator[Any, Any, Any]]
        ],
        reports: tuple[Callable[[], float], Callable[[], object]],
        clock: Callable[[], float],
    ):
        self._stopping = threading.Event()
        round_at, round_flow = rounds
        self.renewals = _LoopThread(
            "redisson-py-watchdog-thread",
            round_at,
            lambda: self._run_round(round_flow),
            clock,
            self._stopping,
        )
        self.reports = _LoopThread("redisson-py-expiry-thread", *reports, clock, self._stopping)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._twins: dict[int, tuple[Any, Any]] = {}
        self._twins_lock = threading.Lock()

    def start(self) -> tuple[bool, bool]:
        """Start the threads that are not running; whether (renewals, reports) started
        now. Outside a running loop (a hold recorded from another thread) nothing is
        started."""
        try:
            self._loop = asyncio.get_running_loop()
        except RuntimeError:
            return False, False
        return self.renewals.start(), self.reports.start()

    def _run_round(self, flow: Callable[[Route], Generator[Any, Any, Any]]) -> None:
        from redisson_py.sync.driver import run  # noqa: PLC0415

        loop = self._loop
        if loop is not None and loop.is_closed():
            self._abandon()
            return
        run(flow(self.route))

    def _abandon(self) -> None:
        """The client's loop closed without ``shutdown()`` (``asyncio.run`` returned):
        stop renewing, as the loop's own tasks would have, so its locks expire after the
        watchdog timeout rather than live as long as the process; close the
        connections."""
        log.warning(
            "the event loop of an asyncio client closed without shutdown(): its watchdog"
            " threads stop, and the locks it held expire after the watchdog timeout"
        )
        self._stopping.set()
        self.reports.wake()
        self._close_twins()

    def _close_twins(self) -> None:
        with self._twins_lock:
            twins, self._twins = [twin for _, twin in self._twins.values()], {}
        for twin in twins:
            with contextlib.suppress(Exception):
                twin.close()

    def route(self, target: Any) -> Any:
        """The threaded twin of the asyncio manager ``target`` (made on first use)."""
        with self._twins_lock:
            kept = self._twins.get(id(target))
            if kept is None:
                assert self._loop is not None
                kept = self._twins[id(target)] = (target, _twin_class()(target, self._loop))
            return kept[1]

    def deliver(self, report: Callable[[], None]) -> None:
        """Run ``report`` (a loss report, an event) on the loop when called from one of
        these threads, at once otherwise. A closed loop gets it told here rather than
        never."""
        loop = self._loop
        current = threading.current_thread()
        if loop is None or current not in (self.renewals.thread, self.reports.thread):
            report()
            return
        try:
            loop.call_soon_threadsafe(report)
        except RuntimeError:
            report()

    def alive(self) -> int:
        """How many of the two threads run now."""
        return sum(
            t is not None and t.is_alive() for t in (self.renewals.thread, self.reports.thread)
        )

    def halt(self) -> None:
        """Tell both threads to stop, without waiting: no round starts after this."""
        self._stopping.set()
        self.renewals.wake()
        self.reports.wake()

    async def stop(self, command_timeout: float) -> None:
        """Stop both threads (a round in flight ends first, up to one command timeout
        and `STOP_GRACE`), then close the renewal thread's connections."""
        self.halt()
        deadline = time.monotonic() + command_timeout + STOP_GRACE
        for thread in (self.renewals.thread, self.reports.thread):
            # Polled: a thread's end cannot be awaited without yet another thread.
            while thread is not None and thread.is_alive() and time.monotonic() < deadline:  # noqa: ASYNC110
                await asyncio.sleep(0.005)
        self._close_twins()
        if self.alive():  # a round stuck past its timeout: it ends with it
            log.warning("the watchdog thread did not stop in time; it ends with its round")
