"""The locks under test, each used the way its documentation shows, behind one shape.

A :class:`Cycle` is one lock handle with ``acquire()`` (blocking until held) and
``release()``; :class:`AsyncCycle` the same with coroutines. A :class:`Contender` builds
handles of one kind on given servers and owns the clients it made. Kinds:

- ``floor``: redisson-py's own ACQUIRE and RELEASE scripts sent by plain redis-py
  ``evalsha`` with exactly the KEYS and ARGV the library sends (lease, owner field, fresh
  request id and latch key per release, latch lifetime from the library's own settings,
  and the release's acquire-latch field and the hold's request id, which the library
  sends so that a late release cannot release a later hold).
  It cannot wait for a held lock: it is the cost of the two round trips and nothing else.
- ``ours``: ``Redisson.create(config).get_lock(name)``, ``lock()``/``unlock()`` without
  a lease (the watchdog's 30 s, renewed), as a user writes it.
- ``redis-py``: ``redis.Redis().lock(name, timeout=30)``, ``acquire()``/``release()``
  with its default ``sleep=0.1`` polling.
- ``python-redis-lock``: ``redis_lock.Lock(conn, name, expire=30)``.
- ``pottery``: ``pottery.Redlock(key=name, masters={...}, auto_release_time=30)``.
- ``ours-redlock``: ``RedLock.for_name(name, clients)``, one client per master.
- ``floor-many``: the floor over several masters: each script sent to every master (one
  connection each) before any reply is read; the least a Python RedLock can cost.
- ``floor-asyncio-waiting``: the asyncio floor for many tasks on few locks, waiting
  the way any lock that other processes share must: the same two scripts by
  ``redis.asyncio``; a refused task sleeps until the lock's unlock message (one
  ``PubSub`` connection, each channel subscribed once and for good, one reader task
  waking the longest registered task per message) or the holder's TTL, then tries
  again. A task registers for the wake-up before it tries, so a release after its try
  is never missed, and one that finds tasks of its process waiting lets them go first
  (for the library's ``QUEUE_PAUSE`` at most), as redisson-py's waiters do: one ACQUIRE
  and one RELEASE per acquisition when the turns go round.
- ``floor-asyncio-queued``: a bound, not a floor: the same two scripts, each name's
  tasks queued on an ``asyncio.Lock`` in this process first, so every acquisition
  costs exactly one ACQUIRE and one RELEASE and waiting costs no round trip at all (no
  client of a lock that other processes share can do this: it cannot see another
  process's holders, and it would let one busy process win every turn).

Every lock expires after 30 s if its owner dies, so all of them do comparable work.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import itertools
import threading
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import redis
import redis.asyncio as aioredis

from redisson_py import Config, Redisson, RedLock
from redisson_py import asyncio as aio
from redisson_py.core import keyspace, scripts
from redisson_py.core.effects import to_millis
from redisson_py.core.flows.calls import QUEUE_PAUSE, new_request_id
from redisson_py.core.routing.modes import mode_for
from redisson_py.core.state.options import lock_settings

LEASE_SECONDS = 30
"""Every contender's lock lifetime: redisson-py's default watchdog timeout."""

SYNC_KINDS = ("floor", "ours", "redis-py", "python-redis-lock", "pottery")
ASYNC_KINDS = ("floor-asyncio", "ours-asyncio")
QUEUED_FLOOR = "floor-asyncio-queued"
WAITING_FLOOR = "floor-asyncio-waiting"

LABELS = {
    "floor": "floor: 2 scripts by redis-py EVALSHA",
    "floor-asyncio": "floor, asyncio",
    "floor-asyncio-queued": "bound, asyncio: 2 scripts per acquisition, tasks queued in process",
    "floor-asyncio-waiting": "floor, asyncio: the scripts, waiting on the unlock message",
    "ours": "redisson-py",
    "ours-queued": "redisson-py QueuedLock",
    "ours-asyncio": "redisson-py asyncio",
    "redis-py": "redis-py Lock",
    "python-redis-lock": "python-redis-lock",
    "pottery": "pottery Redlock (1 master)",
    "reference": "PUBLISH + 1 round trip",
}


@dataclass(frozen=True, slots=True)
class Server:
    """One redis-server on 127.0.0.1."""

    port: int

    @property
    def address(self) -> str:
        return f"redis://127.0.0.1:{self.port}"

    def redis(self) -> redis.Redis:
        return redis.Redis(host="127.0.0.1", port=self.port)

    def aioredis(self) -> aioredis.Redis:
        # A connection per task in flight: redis-py 8's default cap (100) refuses the
        # 101st (100 tasks and a pub/sub connection) rather than making it wait.
        return aioredis.Redis(host="127.0.0.1", port=self.port, max_connections=1024)


def redisson_config(server: Server, **settings: Any) -> Config:
    """A single-server Redisson config for ``server`` with top-level ``settings``."""
    config = Config()
    config.use_single_server(address=server.address)
    for name, value in settings.items():
        setattr(config, name, value)
    return config


def latch_millis(config: Config) -> int:
    """The latch lifetime redisson-py sends with a release under ``config``."""
    return to_millis(lock_settings(config, mode_for(config).section).latch_ttl)


@dataclass(frozen=True, slots=True)
class Cycle:
    """One lock handle, for one thread: ``acquire()`` blocks until held."""

    acquire: Callable[[], object]
    release: Callable[[], object]


@dataclass(frozen=True, slots=True)
class AsyncCycle:
    """One lock handle, for one task."""

    acquire: Callable[[], Awaitable[object]]
    release: Callable[[], Awaitable[object]]


_floor_owner_ids = itertools.count(1)


class FloorScripts:
    """The floor's two calls for one lock name and one owner (see the module docstring):
    the library's keys (``by_slot``: a cluster's slot-safe names), arguments and request
    ids (:func:`~redisson_py.core.flows.calls.new_request_id`), built by hand."""

    def __init__(
        self, name: str, latch_ms: int, *, by_slot: bool = False, publish: str = "publish"
    ):
        self.name = name
        self.by_slot = by_slot
        self.channel = keyspace.lock_channel(name, by_slot=by_slot)
        self.owner = f"{uuid.uuid4()}:{next(_floor_owner_ids)}"
        self.latch_field = keyspace.acquire_field(self.owner)
        self.latch_ms = latch_ms
        self.lease_ms = LEASE_SECONDS * 1000
        self.publish = publish
        self.request_id = ""

    def acquire_args(self) -> tuple[Any, ...]:
        self.request_id = new_request_id()
        return (
            scripts.ACQUIRE.sha,
            1,
            self.name,
            self.lease_ms,
            self.owner,
            self.latch_field,
            self.request_id,
        )

    def release_args(self) -> tuple[Any, ...]:
        latch = keyspace.unlock_latch(self.name, new_request_id(), by_slot=self.by_slot)
        return (
            scripts.RELEASE.sha,
            3,
            self.name,
            self.channel,
            latch,
            keyspace.UNLOCK_MESSAGE,
            self.owner,
            self.publish,
            self.latch_ms,
            self.latch_field,
            self.request_id,
        )


def _floor_many_cycle(clients: list[redis.Redis], name: str, latch_ms: int) -> Cycle:
    # Connections held for good: this is the floor, with no pool in the way.
    connections: list[Any] = [c.connection_pool.get_connection() for c in clients]
    calls = [FloorScripts(name, latch_ms) for _ in clients]

    def both(args: Callable[[FloorScripts], tuple[Any, ...]]) -> list[Any]:
        for connection, call in zip(connections, calls, strict=True):
            connection.send_command("EVALSHA", *args(call))
        return [connection.read_response() for connection in connections]

    def acquire() -> None:
        if any(int(reply[0]) != 1 for reply in both(FloorScripts.acquire_args)):
            raise RuntimeError(f"floor: {name!r} is held by someone else")

    def release() -> None:
        both(FloorScripts.release_args)

    return Cycle(acquire, release)


def _floor_cycle(client: redis.Redis, name: str, latch_ms: int) -> Cycle:
    calls = FloorScripts(name, latch_ms)

    def acquire() -> None:
        reply = client.evalsha(*calls.acquire_args())
        if int(reply[0]) != 1:
            raise RuntimeError(f"floor: {name!r} is held by someone else")

    def release() -> None:
        client.evalsha(*calls.release_args())

    return Cycle(acquire, release)


class Contender:
    """Builds lock handles of one sync ``kind`` on ``servers`` (the first one for the
    single-master kinds); :meth:`close` releases the clients it made."""

    def __init__(self, kind: str, servers: list[Server]):
        self.kind = kind
        self.servers = servers
        self._closers: list[Callable[[], object]] = []
        self._lock = threading.Lock()
        if kind in ("floor", "floor-many", "redis-py", "python-redis-lock", "pottery"):
            self.clients = [s.redis() for s in servers]
            self._closers += [c.close for c in self.clients]
            if kind.startswith("floor"):
                self.latch_ms = latch_millis(redisson_config(servers[0]))
                for client in self.clients:
                    for source in (scripts.ACQUIRE.source, scripts.RELEASE.source):
                        client.script_load(source)
        elif kind in ("ours", "ours-queued", "ours-redlock"):
            self.redissons = [Redisson.create(redisson_config(s)) for s in servers]
            self._closers += [c.shutdown for c in self.redissons]
        else:
            raise ValueError(f"unknown sync contender {kind!r}")

    def lock(self, name: str) -> Cycle:
        """A new handle on lock ``name`` (use one per thread)."""
        kind = self.kind
        if kind == "floor":
            return _floor_cycle(self.clients[0], name, self.latch_ms)
        if kind == "floor-many":
            return _floor_many_cycle(self.clients, name, self.latch_ms)
        if kind == "ours":
            lock = self.redissons[0].get_lock(name)
            return Cycle(lock.lock, lock.unlock)
        if kind == "ours-queued":
            queued = self.redissons[0].get_queued_lock(name)
            return Cycle(queued.lock, queued.unlock)
        if kind == "ours-redlock":
            red = RedLock.for_name(name, self.redissons)
            return Cycle(red.lock, red.unlock)
        if kind == "redis-py":
            peer: Any = self.clients[0].lock(name, timeout=LEASE_SECONDS)
            return Cycle(peer.acquire, peer.release)
        if kind == "python-redis-lock":
            import redis_lock  # noqa: PLC0415 - a bench extra, imported when used

            peer = redis_lock.Lock(self.clients[0], name, expire=LEASE_SECONDS)
            return Cycle(peer.acquire, peer.release)
        from pottery import Redlock  # noqa: PLC0415 - a bench extra, imported when used

        peer = Redlock(key=name, masters=set(self.clients), auto_release_time=LEASE_SECONDS)
        return Cycle(peer.acquire, peer.release)

    def close(self) -> None:
        for close in self._closers:
            close()


class AsyncContender:
    """Builds asyncio lock handles of one kind on one server; create and use it inside
    one event loop."""

    def __init__(self, kind: str, server: Server):
        if kind not in (*ASYNC_KINDS, QUEUED_FLOOR, WAITING_FLOOR):
            raise ValueError(f"unknown asyncio contender {kind!r}")
        self.kind = kind
        self.server = server
        self.client: aioredis.Redis | None = None
        self.redisson: aio.Redisson | None = None
        self.latch_ms = latch_millis(redisson_config(server))
        self._queues: dict[str, asyncio.Lock] = {}
        # The waiting floor's: channel -> the futures of tasks waiting on it, oldest first.
        self._waiters: dict[str, collections.deque[asyncio.Future[None]]] = {}
        self._pubsub: Any = None
        self._reader: asyncio.Task[None] | None = None

    async def start(self) -> None:
        if self.kind.startswith("floor"):
            self.client = self.server.aioredis()
            for source in (scripts.ACQUIRE.source, scripts.RELEASE.source):
                await self.client.script_load(source)
        else:
            self.redisson = await aio.Redisson.create(redisson_config(self.server))

    async def _read(self) -> None:
        """The waiting floor's reader: each unlock message wakes one waiting task."""
        while True:
            message = await self._pubsub.get_message(ignore_subscribe_messages=True, timeout=1.0)
            if message is None:
                continue
            queue = self._waiters.get(message["channel"].decode())
            while queue:
                future = queue.popleft()
                if not future.done():  # done: its task was granted the lock, or gave up
                    future.set_result(None)
                    break

    async def ready(self) -> None:
        """The waiting floor: subscribe every channel of the locks made so far, once and
        for good, and wait for the server's confirmations before any task tries (a
        release before a confirmed subscription would not wake anyone)."""
        if self.kind != WAITING_FLOOR or not self._waiters:
            return
        assert self.client is not None
        self._pubsub = self.client.pubsub()
        await self._pubsub.subscribe(*self._waiters)
        confirmed = 0
        while confirmed < len(self._waiters):
            message = await self._pubsub.get_message(timeout=5.0)
            if message is None:
                raise RuntimeError("the waiting floor's subscriptions were not confirmed")
            confirmed += message["type"] == "subscribe"
        self._reader = asyncio.create_task(self._read())

    def _waiting_cycle(self, name: str) -> AsyncCycle:
        client = self.client
        assert client is not None
        calls = FloorScripts(name, self.latch_ms)
        loop = asyncio.get_running_loop()
        queue = self._waiters.setdefault(calls.channel, collections.deque())

        async def until(woken: asyncio.Future[None], seconds: float) -> None:
            try:
                async with asyncio.timeout(seconds):
                    await woken
            except TimeoutError:
                woken.cancel()

        async def acquire() -> None:
            # Tasks of this process asleep on the lock go first (at most QUEUE_PAUSE),
            # as redisson-py's waiters do: a task that releases and asks again at once
            # would win nearly every turn.
            behind = any(not future.done() for future in queue)
            while True:
                woken: asyncio.Future[None] = loop.create_future()
                queue.append(woken)  # before the try: a release after it wakes us
                if behind:
                    behind = False
                    await until(woken, QUEUE_PAUSE)
                    continue
                reply = await client.evalsha(*calls.acquire_args())
                if int(reply[0]) == 1:
                    woken.cancel()
                    return
                await until(woken, max(int(reply[1]), 1) / 1000)

        async def release() -> None:
            await client.evalsha(*calls.release_args())

        return AsyncCycle(acquire, release)

    def lock(self, name: str) -> AsyncCycle:
        """A new handle on lock ``name`` (use one per task); call it in the loop, then
        `ready` before the first acquire."""
        if self.redisson is not None:
            lock = self.redisson.get_lock(name)
            return AsyncCycle(lock.lock, lock.unlock)
        if self.kind == WAITING_FLOOR:
            return self._waiting_cycle(name)
        client = self.client
        assert client is not None
        calls = FloorScripts(name, self.latch_ms)
        queue = self._queues.setdefault(name, asyncio.Lock()) if self.kind == QUEUED_FLOOR else None

        async def acquire() -> None:
            if queue is not None:
                await queue.acquire()
            reply = await client.evalsha(*calls.acquire_args())
            if int(reply[0]) != 1:
                raise RuntimeError(f"floor: {name!r} is held by someone else")

        async def release() -> None:
            await client.evalsha(*calls.release_args())
            if queue is not None:
                queue.release()

        return AsyncCycle(acquire, release)

    async def close(self) -> None:
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader
        if self._pubsub is not None:
            await self._pubsub.aclose()
        if self.redisson is not None:
            await self.redisson.shutdown()
        if self.client is not None:
            await self.client.aclose()
