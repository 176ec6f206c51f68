"""What the threaded shell does differently from the asyncio one, all in one place.

Every other module of `redisson_py.sync` is generated from the asyncio shell (see
`redisson_py.asyncio._primitives` for the list of differences); this module gives
the same names their threaded meaning: daemon threads, ``threading`` events and
condition variables, a real lock, socket timeouts, thread owners and fork hooks.
"""

from __future__ import annotations

import _thread
import contextlib
import itertools
import logging
import os
import select
import socket
import threading
import time
import weakref
from collections.abc import Callable
from typing import Any, TypeVar

from redis._parsers import _RESP2Parser  # redis-py's pure-Python reader (see read_directly)
from redis.connection import AbstractConnection
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from redisson_py._callbacks import await_later
from redisson_py.core import forks
from redisson_py.core.routing.replies import ReplyStream, take
from redisson_py.core.state.client_state import Runtime

IS_ASYNC = False
"""False in the threaded shell; the client checks decorated functions against it."""

TIMES_ROUND_TRIPS = False
"""Round trips are bounded by the pools' socket timeouts (set per reply timeout)."""

TIMEOUT_MAX = threading.TIMEOUT_MAX
"""The longest ``acquire(timeout=...)``, in both shells: ``threading.Lock.acquire``'s
own limit (a longer one raises ``OverflowError`` there, and here)."""

LONGEST_WAIT = 3600.0
"""The longest single wait of a background loop, in seconds: well below
``threading.TIMEOUT_MAX`` on every platform (49.7 days on Windows); a loop whose next
step is further off wakes, finds nothing due and waits again."""


_owner_threads: weakref.WeakValueDictionary[int, threading.Thread] = weakref.WeakValueDictionary()
"""The thread each owner id was given to (`current_owner_id`), for error messages."""


def describe_owner(owner: str) -> str | None:
    """`Runtime.describe_owner`: ``thread NAME (ident N)`` for the thread the owner id
    ``owner`` was given to, while that thread lives."""
    thread = _owner_threads.get(int(owner)) if owner.isdecimal() else None
    if thread is None or not thread.is_alive():
        return None
    return f"thread {thread.name} (ident {thread.ident})"


RUNTIME = Runtime(
    clock=time.monotonic,
    wall_clock=time.time,
    new_mutex=threading.Lock,
    await_later=await_later,
    describe_owner=describe_owner,
)
"""What the core takes from this shell (see
`Runtime`)."""


class Cancelled(BaseException):
    """Never raised: a thread is stopped by its loop's own check, not cancelled."""


ThreadLock = threading.Lock


class Event(threading.Event):
    """``threading.Event``; ``wait`` returns whether it is set."""


class Waker:
    """The waiters of one channel subscription: a condition variable on ``lock`` (the
    subscription table's lock, held by whoever calls ``wait`` or ``notify``)."""

    __slots__ = ("_condition",)

    def __init__(self, lock: Any) -> None:
        self._condition = threading.Condition(lock)

    def wait(self, timeout: float) -> None:
        self._condition.wait(timeout)

    def notify(self) -> None:
        self._condition.notify()

    def notify_all(self) -> None:
        self._condition.notify_all()


class ConnectOnce:
    """Nothing to do here: the threaded shell subscribes under its subscription lock,
    and redis-py's threaded ``PubSub`` connects within its first command (the asyncio
    twin makes concurrent first subscribes share one connection)."""

    __slots__ = ()

    def __call__(self, pubsub: Any) -> None:
        return None


ERROR_PAUSE = 0.05
"""Seconds a `Worker` waits before it runs a loop that failed again."""

ERROR_PAUSE_MAX = 5.0
"""The longest such wait, reached by doubling while the loop keeps failing at once."""

log = logging.getLogger("redisson_py")


class Worker:
    """A background loop (``target()``) run in a daemon thread, started again in a
    forked child (which has none of its parent's threads). It never dies silently: an
    error escaping the loop is logged at ERROR, and the loop runs again."""

    def __init__(self, name: str, target: Callable[[], None]):
        self._name = name
        self._target = target
        self._thread: threading.Thread | None = None
        self._forks = forks.count
        self._start_lock = threading.Lock()

    def start(self) -> bool:
        """Start the loop unless it runs (in this process); True if started now."""
        if self._thread is not None and self._forks == forks.count:
            return False
        with self._start_lock:
            if self._thread is not None and self._forks == forks.count:
                return False
            self._forks = forks.count
            self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
            self._thread.start()
            return True

    def _run(self) -> None:
        """The loop, kept alive: an error that escapes it is logged at ERROR and the
        loop runs again (after `ERROR_PAUSE`, doubled while it keeps failing, up to
        `ERROR_PAUSE_MAX`), until `stop`; a loop that returns has ended."""
        pause = ERROR_PAUSE
        while True:
            started = time.monotonic()
            try:
                self._target()
                return
            except Exception:
                if self._thread is not threading.current_thread():
                    return  # stopped (or a fork's new thread took over)
                log.exception("background loop %s failed; it starts again", self._name)
            pause = ERROR_PAUSE if time.monotonic() - started > ERROR_PAUSE_MAX else pause
            time.sleep(pause)
            pause = min(pause * 2, ERROR_PAUSE_MAX)

    def stop(self, *, wait: bool = True) -> None:
        """With ``wait``, join the thread (up to 5 s; not from within it). The loop
        itself must notice that it is to stop (its owner sets a flag and wakes it)."""
        thread, self._thread = self._thread, None
        if wait and thread is not None and thread is not threading.current_thread():
            thread.join(timeout=5)


def spawn(name: str, work: Callable[[], None]) -> None:
    """Run ``work()`` in a new thread and return at once. A background flow reports
    its own errors; one that escapes it (a bug) is logged at ERROR with ``name``, not
    printed as a thread's traceback, and never dropped. ``name`` is not given to the
    thread.

    A bare thread (``_thread``), as daemon as a daemon ``Thread``: ``Thread.start``
    waits for the new thread to run, and that thread then keeps the GIL through
    ``work()`` up to its first blocking call, which cost a queued lock's waiter about
    0.7 ms (its take-up's start) before its ``lock()`` returned. Here the caller goes
    on at once and the work runs when the caller next blocks."""

    def quietly() -> None:
        try:
            work()
        except Exception:
            log.exception("background work %s failed", name)

    _thread.start_new_thread(quietly, ())


def sleep(seconds: float) -> None:
    time.sleep(max(0.0, seconds))


_NO_TIMER: contextlib.nullcontext[None] = contextlib.nullcontext()
"""Shared: a ``nullcontext`` keeps no state, and a RedLock cycle asks for twenty."""


def round_trip_timeout(seconds: float) -> contextlib.nullcontext[None]:
    """Nothing to add: the pools' socket timeouts bound every read and connect."""
    return _NO_TIMER


_HAS_POLL = hasattr(select, "poll")

_READ_SIZE = 65536
"""Bytes asked of the socket per read (redis-py's ``socket_read_size`` default)."""


def read_directly(connection: Any, count: int) -> list[Any] | None:  # a redis-py Connection
    """``count`` replies to commands sent on ``connection``, error replies as
    exceptions, read here (`redisson_py.core.routing.replies` says why) when redis-py
    would read them with its pure-Python RESP2 parser, undecoded, with none of its
    buffer unread; otherwise None, having read nothing (then redis-py reads them). An
    error reading closes the connection (as redis-py's reader does) and raises
    redis-py's ``TimeoutError`` or ``ConnectionError``. Bytes past the last reply mean
    the connection is out of step: it is closed once the replies are returned, never
    reused.
    """
    parser: Any = getattr(connection, "_parser", None)
    sock: Any = connection._sock
    buffered = getattr(parser, "_buffer", None)
    if (
        type(parser) is not _RESP2Parser
        or sock is None
        or buffered is None
        or buffered.unread_bytes()
        or connection.encoder.decode_responses
    ):
        return None
    replies: list[Any] = []
    kept = b""
    try:
        while len(replies) < count:
            kept = take(replies, count, kept, sock.recv(_READ_SIZE), parser.parse_error)
    except BaseException as error:
        failure = _reading_failed(connection, error)
        if failure is error:
            raise
        raise failure from error
    if kept:
        connection.disconnect()
    if connection.health_check_interval:
        connection.next_health_check = time.monotonic() + connection.health_check_interval
    return replies


def read_pushed(pubsub: Any, stream: ReplyStream, timeout: float) -> list[Any] | None:
    """The replies a redis-py ``PubSub``'s connection receives within ``timeout``
    seconds ([] when none came; see `redisson_py.core.routing.replies` for why), read
    here when redis-py would read them with its pure-Python RESP2 parser, undecoded,
    from a plain socket (the wait is a ``poll``: none on Windows, and it cannot see into
    a TLS connection's buffered records), with none of its buffer unread; otherwise
    None, having read nothing (then ``PubSub.get_message`` reads). None too when nothing
    is subscribed: ``get_message`` then waits without reading, and so does the caller.
    ``stream`` keeps a reply cut short between calls: one per connection. An error
    reading closes the connection and raises redis-py's ``ConnectionError`` (or
    ``TimeoutError``)."""
    connection: Any = pubsub.connection
    if connection is None or not pubsub.subscribed or not _HAS_POLL:
        return None
    parser: Any = getattr(connection, "_parser", None)
    sock: Any = connection._sock
    buffered = getattr(parser, "_buffer", None)
    if (
        type(parser) is not _RESP2Parser
        or type(sock) is not socket.socket
        or buffered is None
        or buffered.unread_bytes()
        or connection.encoder.decode_responses
    ):
        return None
    try:
        if not _poller(connection, sock).poll(max(0, int(timeout * 1000))):
            return []
        return stream.feed(sock.recv(_READ_SIZE), parser.parse_error)
    except BaseException as error:
        failure = _reading_failed(connection, error)
        if failure is error:
            raise
        raise failure from error


def _reading_failed(connection: Any, error: BaseException) -> BaseException:
    """Close ``connection``, whose read failed with ``error`` (as redis-py's reader
    does); the error to raise for it: redis-py's types for the socket's own."""
    connection.disconnect()
    if isinstance(error, TimeoutError):  # socket.timeout
        return RedisTimeoutError(f"Timeout reading from {_host(connection)}")
    if isinstance(error, OSError):
        return RedisConnectionError(f"Error while reading from {_host(connection)} : {error.args}")
    return error


def _poller(connection: Any, sock: Any) -> Any:
    """A ``select.poll`` for ``sock``'s input, kept with ``connection`` for its current
    socket (a reconnect makes a new one)."""
    kept = getattr(connection, "_redisson_py_poll", None)
    if kept is None or kept[0] is not sock:
        poller = select.poll()
        poller.register(sock, select.POLLIN)
        kept = connection._redisson_py_poll = (sock, poller)
    return kept[1]


def _host(connection: AbstractConnection) -> str:
    return f"{getattr(connection, 'host', '?')}:{getattr(connection, 'port', '?')}"


def stale(connection: AbstractConnection) -> bool:
    """True when an idle connection has something to read: the server closed it (EOF,
    a reset) or it is out of step. redis-py's pool makes this check on checkout; the
    managers' idle stacks bypass the pool, so it is made here. One non-blocking poll."""
    sock = getattr(connection, "_sock", None)
    if sock is None:
        return False  # not connected: connects on send
    try:
        # A poll first (under 1 us): the common case, nothing to read, costs no more.
        # (No poll() on Windows: redis-py's check alone there.)
        if _HAS_POLL and not _poller(connection, sock).poll(0):
            return False
        # Readable: EOF, a reset, stray bytes, or only a TLS record with no data for us
        # (a TLS 1.3 session ticket), which redis-py's read through TLS tells apart.
        return bool(connection.can_read(timeout=0))
    except Exception:
        return True


def resolve(host: str, port: int, timeout: float) -> list[str]:
    """The addresses ``host`` resolves to now, for TCP to ``port`` (the system's
    resolver, on the calling background thread; its own timeouts bound it, so
    ``timeout`` is not used). Raises OSError (``socket.gaierror``) when it does not
    resolve."""
    found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return [str(info[4][0]) for info in found]


def sever(connection: Any) -> None:
    """Shut a connection's socket down both ways, from outside whatever uses it: a
    read in progress or the next one ends at EOF, as when the server closes it, and
    its user disconnects it (the next use reconnects, resolving its host again). No
    state of redis-py's is touched, so a thread using it meanwhile sees only a
    connection error."""
    sock = getattr(connection, "_sock", None)
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)


_owners = threading.local()
_owner_ids = itertools.count(1)


def current_owner_id() -> int:
    """This thread's owner id: unique within the process, never reused (unlike
    ``threading.get_ident()``), so a new thread never inherits a dead one's holds."""
    try:
        return _owners.id  # type: ignore[no-any-return]
    except AttributeError:
        _owners.id = next(_owner_ids)
        _owner_threads[_owners.id] = threading.current_thread()
        return _owners.id  # type: ignore[no-any-return]


_M = TypeVar("_M")


def binds_owner(method: _M) -> _M:
    """``method`` as it is: a thread runs the calls it makes, so the owner read when the
    call runs is the caller (the asyncio twin binds it when the method is called)."""
    return method


def share_owner(owner: int | str) -> None:
    """Nothing: a thread's holds stay renewed until released, whether or not the thread
    still runs (`owner_finished`), so none needs marking as handed on."""


def owner_finished(owner: str) -> bool:
    """Never, as `Runtime.owner_finished`'s default that `RUNTIME` keeps: as Redisson's,
    the watchdog renews a thread's hold until it is released, even after the thread
    ended."""
    return False


_fork_callbacks: list[weakref.WeakMethod[Callable[[], None]]] = []


def after_fork_in_child(callback: Callable[[], None]) -> None:
    """Call the bound method ``callback`` in a forked child, while its object lives."""
    _fork_callbacks[:] = [ref for ref in _fork_callbacks if ref() is not None]
    _fork_callbacks.append(weakref.WeakMethod(callback))


def _run_fork_callbacks() -> None:
    for ref in list(_fork_callbacks):
        method = ref()
        if method is not None:
            method()


# Registered after core.client_state's handler (imported by every client first), so a
# child's hold tables are new before these run.
os.register_at_fork(after_in_child=_run_fork_callbacks)
