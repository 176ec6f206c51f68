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
- a call's replies, and what a pub/sub connection receives, are read from the
  connection's stream here, from its socket there, when redis-py's pure-Python reader
  would read them (`read_directly`, `read_pushed`; the parsing is shared:
  `redisson_py.core.routing.replies`);
- owners are tasks here, threads there (`current_owner_id`); fork hooks exist only
  there;
- a host name is resolved by the loop's ``getaddrinfo`` here (off the loop, in its
  executor), by ``socket.getaddrinfo`` on the background worker's thread there
  (`resolve`); a connection's socket is reached through its stream here (`sever`).

The asyncio client's watchdog threads, which have no threaded twin, are in
`redisson_py.asyncio.watchdog_threads`.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import itertools
import logging
import socket
import threading
import time
import weakref
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine
from types import TracebackType
from typing import Any, Concatenate, NoReturn, ParamSpec, TypeVar

from redis._parsers import _AsyncRESP2Parser  # redis-py's pure-Python reader (read_directly)
from redis.asyncio.connection import AbstractConnection
from redis.exceptions import ConnectionError as RedisConnectionError

from redisson_py._callbacks import await_later
from redisson_py.core.routing.replies import ReplyStream, take
from redisson_py.core.state.client_state import Runtime
from redisson_py.errors import UsageError

IS_ASYNC = True
"""True in the asyncio shell; the client checks decorated functions against it."""

TIMES_ROUND_TRIPS = True
"""The manager bounds each round trip with `round_trip_timeout`, so command pools
need no socket timeout of their own."""

TIMEOUT_MAX = threading.TIMEOUT_MAX
"""The longest ``acquire(timeout=...)``, in both shells: ``threading.Lock.acquire``'s
own limit (a longer one raises ``OverflowError`` there, and here)."""

LONGEST_WAIT = 3600.0
"""The longest single wait of a background loop, in seconds: well below
``threading.TIMEOUT_MAX`` on every platform (49.7 days on Windows); a loop whose next
step is further off wakes, finds nothing due and waits again."""

# --- owners: which task a hold belongs to ---

_task_ids: weakref.WeakKeyDictionary[asyncio.Task[Any], int] = weakref.WeakKeyDictionary()
_owner_tasks: weakref.WeakValueDictionary[int, asyncio.Task[Any]] = weakref.WeakValueDictionary()
_next_id = itertools.count(1)
_shared: dict[str, None] = {}
"""Owner ids (as fields spell them) that an ``owned_by`` view or ``adopt_hold`` acts
for: their holds outlive their task (`owner_finished`); the oldest of more than
`_MAX_SHARED` are forgotten."""
_MAX_SHARED = 10_000
_bound: contextvars.ContextVar[tuple[asyncio.Task[Any] | None, int] | None] = (
    contextvars.ContextVar("redisson_py_bound_owner", default=None)
)
"""(a task, the owner it acts for): the owner a lock method's call was bound to when it
was called, while the call runs (see `binds_owner`), else the task's own id. Tasks
inherit their creator's context: the pair counts only in the task it names."""


def current_owner_id() -> int:
    """The current task's owner id: unique within the process and never reused (a
    task's ``id()`` can be), so a new task never inherits a finished one's holds.

    While a lock method's call runs in a task of its own (``asyncio.wait_for`` on
    Python 3.11, ``asyncio.create_task(lock.lock())``), it is the owner of the task
    that called the method (`binds_owner`)."""
    task = asyncio.current_task()
    if task is None:
        raise UsageError("an asyncio lock is owned by a task: call it from inside one")
    bound = _bound.get()
    if bound is not None and bound[0] is task:
        return bound[1]
    owner = _task_ids.get(task)
    if owner is None:
        owner = _task_ids[task] = next(_next_id)
        _owner_tasks[owner] = task
    # Kept in the task's context too: read there first from now on (a weak dictionary's
    # look-up costs a weak reference a call).
    _bound.set((task, owner))
    return owner


_S = TypeVar("_S")
_P = ParamSpec("_P")
_R = TypeVar("_R")


def binds_owner(
    method: Callable[Concatenate[_S, _P], Coroutine[Any, Any, _R]],
) -> Callable[Concatenate[_S, _P], Coroutine[Any, Any, _R]]:
    """Make the lock method ``method`` act for the task that *calls* it, not the one
    that runs its coroutine: the owner is read when the method is called and bound to
    the coroutine it returns. ``asyncio.wait_for(lock.lock(), 5)`` on Python 3.11 (which
    runs the coroutine in a task of its own), ``asyncio.shield``, ``asyncio.gather``
    and ``asyncio.create_task(lock.lock())`` then all take the lock for the caller,
    whose ``unlock()`` releases it. Called outside a task (the coroutine made before
    ``asyncio.run``), the task that runs the coroutine is the owner.

    The coroutine returned refuses a truth test (`UsageError`): ``if lock.try_lock():``
    without ``await`` would run the branch without the lock (a coroutine is true)."""
    name = method.__name__

    @functools.wraps(method)
    def call(self: _S, /, *args: _P.args, **kwargs: _P.kwargs) -> Coroutine[Any, Any, _R]:
        coroutine = method(self, *args, **kwargs)
        try:
            owner = current_owner_id()
        except (RuntimeError, UsageError):  # no running loop, or no task
            return _MustAwait(coroutine, coroutine, name)
        return _MustAwait(_acting_for(owner, coroutine), coroutine, name)

    return call


class _MustAwait(Coroutine[Any, Any, _R]):
    """A lock method's coroutine, as it is, except that testing it for truth raises
    `UsageError` saying to ``await`` it. A `collections.abc.Coroutine`, so
    ``asyncio.create_task``, ``wait_for``, ``gather`` and ``shield`` take it."""

    __slots__ = ("_coroutine", "_method", "_name")

    def __init__(
        self, coroutine: Coroutine[Any, Any, _R], method: Coroutine[Any, Any, _R], name: str
    ) -> None:
        self._coroutine = coroutine
        self._method = method  # the method's own coroutine (the same, or the one it runs)
        self._name = name

    def send(self, value: Any) -> Any:
        return self._coroutine.send(value)

    def throw(
        self,
        typ: Any,
        val: Any = None,
        tb: TracebackType | None = None,
    ) -> Any:
        if val is None and tb is None:
            return self._coroutine.throw(typ)
        return self._coroutine.throw(typ, val, tb)

    def close(self) -> None:
        self._coroutine.close()

    def __await__(self) -> Any:
        return self._coroutine.__await__()

    def __bool__(self) -> NoReturn:
        # never run: closed, so no "never awaited" warning follows the error
        self._coroutine.close()
        self._method.close()
        raise UsageError(
            f"{self._name}() of an asyncio lock returns a coroutine, which is always true: "
            f"write `if await lock.{self._name}(...):`"
        )

    def __repr__(self) -> str:
        return repr(self._coroutine)


def _refuse_with(self: object) -> NoReturn:
    """``__enter__`` of the asyncio locks: ``with lock:`` raises `UsageError` saying to
    write ``async with`` (a plain ``with`` cannot wait for the lock without blocking the
    event loop)."""
    raise UsageError(
        f"an asyncio lock ({type(self).__name__}) is entered with `async with`, in a "
        "coroutine: write `async with ...:`, not `with ...:` (or use the threaded "
        "redisson_py.Redisson)"
    )


def _refuse_with_exit(self: object, *exc: object) -> None:
    """``__exit__`` beside `_refuse_with` (Python looks both up before calling either)."""


async def _acting_for(owner: int, coroutine: Coroutine[Any, Any, _R]) -> _R:
    """Run ``coroutine`` with ``owner`` as `current_owner_id` of the task running it
    (only that task: tasks it starts are their own owners)."""
    token = _bound.set((asyncio.current_task(), owner))
    try:
        return await coroutine
    finally:
        _bound.reset(token)


def share_owner(owner: int | str) -> None:
    """Record that an ``owned_by`` view or an adopted hold acts for ``owner``: its holds
    are another task's to release, so they are renewed after the task that took them
    finished (`owner_finished` is False for it)."""
    key = str(owner)
    _shared.pop(key, None)
    _shared[key] = None
    if len(_shared) > _MAX_SHARED:
        del _shared[next(iter(_shared))]


def owner_finished(owner: str) -> bool:
    """`Runtime.owner_finished`: True when ``owner`` (an owner id, as a hold's field
    spells it) was given to a task that has finished (or was collected), and no view
    acts for it (`share_owner`). Read by the watchdog, possibly from its thread: plain
    reads only."""
    if not owner.isdecimal() or owner in _shared:
        return False
    # Every other owner id of this client's holds was given to a task (an id passed to
    # owned_by by hand is shared): one no longer in the table belongs to a collected task.
    task = _owner_tasks.get(int(owner))
    return task is None or task.done()


def describe_owner(owner: str) -> str | None:
    """`Runtime.describe_owner`: ``task NAME`` for the task the owner id ``owner`` was
    given to, while that task is kept."""
    task = _owner_tasks.get(int(owner)) if owner.isdecimal() else None
    return None if task is None else f"task {task.get_name()}"


RUNTIME = Runtime(
    clock=time.monotonic,
    wall_clock=time.time,
    # A real lock, not ThreadLock: a client's hold table may be read from other
    # threads (is_held_by_current_thread, a callback, the CLI).
    new_mutex=threading.Lock,
    await_later=await_later,
    owner_finished=owner_finished,
    describe_owner=describe_owner,
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


def _time_up(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)


class Waker:
    """The waiters of one channel subscription; ``notify`` wakes the longest waiting one.

    ``lock`` is the subscription table's `ThreadLock` (unused here; the threaded
    twin is a condition variable on it)."""

    __slots__ = ("_waiters",)

    def __init__(self, lock: ThreadLock) -> None:
        self._waiters: deque[asyncio.Future[None]] = deque()

    async def wait(self, timeout: float) -> None:
        """Until notified or ``timeout`` seconds passed."""
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[None] = loop.create_future()
        self._waiters.append(waiter)
        # The future itself, timed by a loop timer: a notify resumes this task in one
        # step of the loop (``asyncio.wait_for`` took two, a callback of its own first:
        # part of a queued lock's hand-off).
        timer = loop.call_later(max(0.0, timeout), _time_up, waiter)
        try:
            await waiter
        finally:
            timer.cancel()
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


class ConnectOnce:
    """Opens a redis-py ``PubSub``'s connection once, however many tasks subscribe at
    once.

    redis-py's asyncio ``PubSub`` takes a connection from its pool on its first command,
    with an await in between: two first subscribes at once would each open one, and the
    one overwritten would carry a SUBSCRIBE whose confirmation nobody reads (its waiters
    would sleep until their lock's lease ran out). So one task connects and the others
    wait for it; after a failure the next one tries."""

    __slots__ = ("_pending",)

    def __init__(self) -> None:
        self._pending: asyncio.Event | None = None

    async def __call__(self, pubsub: Any) -> None:
        while pubsub.connection is None:
            pending = self._pending
            if pending is not None:
                await pending.wait()
                continue
            self._pending = pending = asyncio.Event()
            try:
                await pubsub.connect()
            finally:
                self._pending = None
                pending.set()


ERROR_PAUSE = 0.05
"""Seconds a `Worker` waits before it runs a loop that failed again."""

ERROR_PAUSE_MAX = 5.0
"""The longest such wait, reached by doubling while the loop keeps failing at once."""

log = logging.getLogger("redisson_py")


class Worker:
    """A background loop (``target()``) run as a task on the running loop. It never
    dies silently: an error escaping the loop is logged at ERROR, and the loop runs
    again."""

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
        self._task = loop.create_task(self._run(), name=self._name)
        return True

    async def _run(self) -> None:
        """The loop, kept alive: an error that escapes it is logged at ERROR and the
        loop runs again (after `ERROR_PAUSE`, doubled while it keeps failing, up to
        `ERROR_PAUSE_MAX`), until `stop` cancels it; a loop that returns has ended."""
        pause = ERROR_PAUSE
        while True:
            started = time.monotonic()
            try:
                await self._target()
                return
            except Exception:
                log.exception("background loop %s failed; it starts again", self._name)
            pause = ERROR_PAUSE if time.monotonic() - started > ERROR_PAUSE_MAX else pause
            await asyncio.sleep(pause)
            pause = min(pause * 2, ERROR_PAUSE_MAX)

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
    """Run ``work()`` on its own and return at once. A background flow reports its own
    errors; one that escapes it (a bug) is logged at ERROR, never dropped."""

    async def quietly() -> None:
        try:
            await work()
        except Exception:
            log.exception("background work %s failed", name)

    task = asyncio.get_running_loop().create_task(quietly(), name=name)
    _background.add(task)
    task.add_done_callback(_background.discard)


async def sleep(seconds: float) -> None:
    await asyncio.sleep(max(0.0, seconds))


def round_trip_timeout(seconds: float) -> asyncio.Timeout:
    """Bound a whole round trip (checkout, connect, send, replies) to ``seconds``: one
    timer on the loop, and no generator-based context manager around it (each costs
    microseconds, twice a lock cycle)."""
    return asyncio.timeout(seconds)


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


async def resolve(host: str, port: int, timeout: float) -> list[str]:
    """The addresses ``host`` resolves to now, for TCP to ``port`` (the system's
    resolver, off the event loop). Raises OSError (``socket.gaierror``) when it does
    not resolve, TimeoutError past ``timeout`` seconds."""
    loop = asyncio.get_running_loop()
    async with asyncio.timeout(timeout):
        found = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return [str(info[4][0]) for info in found]


def sever(connection: Any) -> None:
    """Shut a connection's socket down both ways, from outside whatever uses it: a
    read in progress or the next one ends at EOF, as when the server closes it, and
    its user disconnects it (the next use reconnects, resolving its host again). No
    state of redis-py's is touched, so a task using it meanwhile sees only a
    connection error."""
    writer = getattr(connection, "_writer", None)
    sock = writer.get_extra_info("socket") if writer is not None else None
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)


_READ_SIZE = 65536
"""Bytes asked of the stream per read (redis-py's ``socket_read_size`` default)."""


async def read_directly(connection: Any, count: int) -> list[Any] | None:
    """``count`` replies to commands sent on ``connection`` (a redis-py asyncio
    connection), error replies as exceptions, read here
    (`redisson_py.core.routing.replies` says why) when redis-py would read them with its
    pure-Python RESP2 parser, undecoded, with no socket timeout of its own and none of
    its buffer unread; otherwise None, having read nothing (then redis-py reads them).
    An error reading, or a cancellation (the round trip's timer), closes the connection
    as redis-py's reader does; an OS error is raised as redis-py's ``ConnectionError``.
    Bytes past the last reply mean the connection is out of step: it is closed once the
    replies are returned, never reused.
    """
    parser: Any = getattr(connection, "_parser", None)
    stream: Any = getattr(connection, "_reader", None)
    if (
        type(parser) is not _AsyncRESP2Parser
        or stream is None
        or parser._buffer
        or parser._chunks
        or connection.socket_timeout is not None
        or connection.encoder.decode_responses
    ):
        return None
    replies: list[Any] = []
    kept = b""
    try:
        while len(replies) < count:
            kept = take(replies, count, kept, await stream.read(_READ_SIZE), parser.parse_error)
    except BaseException as error:
        failure = await _reading_failed(connection, error)
        if failure is error:
            raise
        raise failure from error
    if kept:
        await connection.disconnect(nowait=True)
    if connection.health_check_interval:
        loop_time = asyncio.get_running_loop().time()
        connection.next_health_check = loop_time + connection.health_check_interval
    return replies


async def read_pushed(pubsub: Any, stream: ReplyStream, timeout: float) -> list[Any] | None:
    """The replies a redis-py asyncio ``PubSub``'s connection receives within
    ``timeout`` seconds ([] when none came; see `redisson_py.core.routing.replies` for
    why), read here from the connection's stream when redis-py would read them with its
    pure-Python RESP2 parser, undecoded, with none of its buffer unread; otherwise None,
    having read nothing (then ``PubSub.get_message`` reads). None too when nothing is
    subscribed: ``get_message`` then waits without reading, and so does the caller.
    ``stream`` keeps a reply cut short between calls: one per connection. An error
    reading closes the connection and raises redis-py's ``ConnectionError``; a wait
    that ends (or is cancelled) reads nothing."""
    connection: Any = pubsub.connection
    if connection is None or not pubsub.subscribed:
        return None
    parser: Any = getattr(connection, "_parser", None)
    reader: Any = getattr(connection, "_reader", None)
    if (
        type(parser) is not _AsyncRESP2Parser
        or reader is None
        or parser._buffer
        or parser._chunks
        or connection.encoder.decode_responses
    ):
        return None
    try:
        try:
            # The stream keeps what it has not returned: a wait cut here loses nothing.
            async with asyncio.timeout(timeout):
                chunk = await reader.read(_READ_SIZE)
        except TimeoutError:
            return []
        return stream.feed(chunk, parser.parse_error)
    except BaseException as error:
        failure = await _reading_failed(connection, error)
        if failure is error:
            raise
        raise failure from error


async def _reading_failed(connection: Any, error: BaseException) -> BaseException:
    """Close ``connection``, whose read failed with ``error`` or was cancelled (as
    redis-py's reader does); the error to raise for it: redis-py's ``ConnectionError``
    for the socket's own."""
    await connection.disconnect(nowait=True)
    if isinstance(error, OSError):
        return RedisConnectionError(f"Error while reading from {_host(connection)} : {error.args}")
    return error


def _host(connection: AbstractConnection) -> str:
    return f"{getattr(connection, 'host', '?')}:{getattr(connection, 'port', '?')}"


def after_fork_in_child(callback: Callable[[], None]) -> None:
    """Nothing: an asyncio client does not cross a fork (its loop does not)."""
