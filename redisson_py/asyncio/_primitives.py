"""What the asyncio shell does differently from the threaded one, all in one place.

The asyncio shell (every other module of this package) is the one hand-written source of
both shells: ``scripts/generate_sync.py`` turns it into `redisson_py.sync` by
dropping ``async``/``await``. What cannot be expressed that way lives here, with the same
names in `redisson_py.sync._primitives`:

- background loops are tasks here, daemon threads there (`Worker`, `spawn`);
- an `Event` and a `Waker` (a waiter queue) are futures here, a
  ``threading.Event`` / ``threading.Condition`` there;
- `ThreadLock` is a no-op here: everything runs on one event loop, and no
  ``await`` happens while shared state is half-updated;
- a round trip is timed as a whole by `round_trip_timeout` here (redis-py's own
  asyncio socket timeout starts a task per command); the threaded shell relies on
  socket timeouts;
- owners are tasks here, threads there (`current_owner_id`); fork hooks exist only
  there;
- here only: `RenewalThread`, the asyncio client's watchdog renewals on a daemon
  thread, so that a blocked event loop cannot starve them.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import itertools
import logging
import threading
import time
import weakref
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Generator
from typing import Any

from redis.asyncio.connection import AbstractConnection

from redisson_py._callbacks import await_later
from redisson_py.core.state.client_state import Runtime
from redisson_py.errors import UsageError

IS_ASYNC = True
"""True in the asyncio shell; the client checks decorated functions against it."""

TIMES_ROUND_TRIPS = True
"""The manager bounds each round trip with `round_trip_timeout`, so command pools
need no socket timeout of their own."""

RUNTIME = Runtime(
    clock=time.monotonic,
    wall_clock=time.time,
    # A real lock, not ThreadLock: a client's hold table may be read from other
    # threads (is_held_by_current_thread, a callback, the CLI).
    new_mutex=threading.Lock,
    await_later=await_later,
)
"""What the core takes from this shell (see
`Runtime`)."""

Cancelled: type[BaseException] = asyncio.CancelledError
"""What a background loop receives when it is stopped (re-raised, never swallowed)."""


class ThreadLock:
    """A no-op lock: the asyncio shell's state is touched by one thread only."""

    __slots__ = ()

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


class Event:
    """A flag with a timed wait."""

    __slots__ = ("_event",)

    def __init__(self) -> None:
        self._event = asyncio.Event()

    def set(self) -> None:
        self._event.set()

    def clear(self) -> None:
        self._event.clear()

    def is_set(self) -> bool:
        return self._event.is_set()

    async def wait(self, timeout: float | None = None) -> bool:
        """Until set (True) or ``timeout`` seconds passed (False)."""
        if timeout is None:
            await self._event.wait()
            return True
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(max(0.0, timeout)):
                await self._event.wait()
        return self._event.is_set()


class Waker:
    """The waiters of one channel subscription; ``notify`` wakes the longest waiting one.

    ``lock`` is the subscription table's `ThreadLock` (unused here; the threaded
    twin is a condition variable on it)."""

    __slots__ = ("_waiters",)

    def __init__(self, lock: ThreadLock) -> None:
        self._waiters: deque[asyncio.Future[None]] = deque()

    async def wait(self, timeout: float) -> None:
        """Until notified or ``timeout`` seconds passed."""
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(waiter, timeout)
        finally:
            with contextlib.suppress(ValueError):
                self._waiters.remove(waiter)

    def notify(self) -> None:
        self._wake(everyone=False)

    def notify_all(self) -> None:
        self._wake(everyone=True)

    def _wake(self, *, everyone: bool) -> None:
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                if not everyone:
                    return


class Worker:
    """A background loop (``target()``) run as a task on the running loop."""

    def __init__(self, name: str, target: Callable[[], Coroutine[Any, Any, None]]):
        self._name = name
        self._target = target
        self._task: asyncio.Task[None] | None = None

    def start(self) -> bool:
        """Start the loop unless it runs; True if started now. Outside a running loop
        (a hold recorded from a thread) nothing is started."""
        if self._task is not None and not self._task.done():
            return False
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return False
        self._task = loop.create_task(self._target(), name=self._name)
        return True

    async def stop(self, *, wait: bool = True) -> None:
        """Cancel the loop and, with ``wait``, await its end. From within the loop
        itself nothing is cancelled: the loop is on its way out (it returns)."""
        task, self._task = self._task, None
        if task is None or task is asyncio.current_task():
            return
        task.cancel()
        if wait:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task


_background: set[asyncio.Task[None]] = set()
"""Fire-and-forget tasks running now: the loop keeps only weak references to tasks."""


def spawn(name: str, work: Callable[[], Awaitable[None]]) -> None:
    """Run ``work()`` on its own and return at once; its errors are dropped."""

    async def quietly() -> None:
        with contextlib.suppress(Exception):
            await work()

    task = asyncio.get_running_loop().create_task(quietly(), name=name)
    _background.add(task)
    task.add_done_callback(_background.discard)


async def sleep(seconds: float) -> None:
    await asyncio.sleep(max(0.0, seconds))


@contextlib.asynccontextmanager
async def round_trip_timeout(seconds: float) -> AsyncIterator[None]:
    """Bound a whole round trip (checkout, connect, send, replies) to ``seconds``."""
    async with asyncio.timeout(seconds):
        yield


async def stale(connection: AbstractConnection) -> bool:
    """True when an idle connection has something to read: the server closed it (EOF,
    a reset) or it is out of step. redis-py's pool makes this check on checkout; the
    managers' idle stacks bypass the pool, so it is made here."""
    if not connection.is_connected:
        return False
    # can_read() since redis-py 8 (can_read_destructive() deprecated there), before it
    # only can_read_destructive().
    check: Any = getattr(connection, "can_read", None) or connection.can_read_destructive
    try:
        return bool(await check())
    except Exception:
        return True


_task_ids: weakref.WeakKeyDictionary[asyncio.Task[Any], int] = weakref.WeakKeyDictionary()
_next_id = itertools.count(1)


def current_owner_id() -> int:
    """The current task's owner id: unique within the process and never reused (a
    task's ``id()`` can be), so a new task never inherits a finished one's holds."""
    task = asyncio.current_task()
    if task is None:
        raise UsageError("an asyncio lock is owned by a task: call it from inside one")
    owner = _task_ids.get(task)
    if owner is None:
        owner = _task_ids[task] = next(_next_id)
    return owner


def after_fork_in_child(callback: Callable[[], None]) -> None:
    """Nothing: an asyncio client does not cross a fork (its loop does not)."""


log = logging.getLogger("redisson_py.watchdog")

Route = Callable[[Any], Any]
"""Maps an asyncio manager to the threaded one a round sends on."""

STOP_GRACE = 1.0
"""Seconds `RenewalThread.stop` waits, beyond one command timeout, for a round in
flight to end."""


@functools.cache
def _twin_class() -> type[Any]:
    # Imported here: the threaded shell imports this package's siblings at its own import.
    from redisson_py.sync.manager import ConnectionManager as ThreadedManager  # noqa: PLC0415

    class ThreadTwin(ThreadedManager):
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
        while not self._stopping.is_set():
            at = self._wake_at()
            # No hold: sleep until woken (an infinite timeout is not a timeout).
            self._wake.wait(None if at == float("inf") else max(0.0, at - self._clock()))
            self._wake.clear()
            if self._stopping.is_set():
                return
            try:
                self._step()
            except Exception:
                log.exception("%s failed", self._name)


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
        from redisson_py.sync.driver import run as run_threaded  # noqa: PLC0415

        run_threaded(flow(self.route))

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

    async def stop(self, command_timeout: float) -> None:
        """Stop both threads (a round in flight ends first, up to one command timeout
        and `STOP_GRACE`), then close the renewal thread's connections."""
        self._stopping.set()
        self.renewals.wake()
        self.reports.wake()
        deadline = time.monotonic() + command_timeout + STOP_GRACE
        for thread in (self.renewals.thread, self.reports.thread):
            # Polled: a thread's end cannot be awaited without yet another thread.
            while thread is not None and thread.is_alive() and time.monotonic() < deadline:  # noqa: ASYNC110
                await asyncio.sleep(0.005)
        with self._twins_lock:
            twins, self._twins = [twin for _, twin in self._twins.values()], {}
        for twin in twins:
            with contextlib.suppress(Exception):
                twin.close()
        if self.alive():  # a round stuck past its timeout: it ends with it
            log.warning("the watchdog thread did not stop in time; it ends with its round")
