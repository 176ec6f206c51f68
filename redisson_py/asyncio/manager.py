"""The asyncio connection manager: the twin of :mod:`redisson_py.sync.manager`.

Routing, planning and batching are shared (:class:`~redisson_py.core.manager_base.ManagerBase`);
this module adds the awaited sockets, a scanner task instead of a thread, and the
sentinel ``+switch-master`` watcher as a task.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Sequence
from typing import Any

import redis.asyncio as aioredis
from redis.asyncio.client import PubSub
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from redisson_py.asyncio.driver import run
from redisson_py.asyncio.pools import NodePools, checkout
from redisson_py.asyncio.pubsub import PubSubService, Subscription
from redisson_py.config.addresses import Address
from redisson_py.config.model import Config
from redisson_py.core.effects import Call, CallResult, Direct
from redisson_py.core.failures import note_node
from redisson_py.core.manager_base import (
    REFRESH_THROTTLE,
    ConnectionKey,
    ManagerBase,
    pool_size,
)
from redisson_py.core.modes import SentinelMode
from redisson_py.core.options import connection_kwargs_for
from redisson_py.core.topology import parse_switch_master
from redisson_py.core.wire import Done, Planned, Resend, interpret

log = logging.getLogger("redisson_py.connection")

_IO_ERRORS = (RedisConnectionError, RedisTimeoutError, OSError, asyncio.TimeoutError)


class ConnectionManager(ManagerBase):
    """Routes lock names to masters for one asyncio client."""

    def __init__(self, config: Config):
        super().__init__(config)
        section = self.mode.section
        self.pools = NodePools(
            connection_kwargs_for(config, section),
            max_connections=pool_size(section),
            wait_timeout=section.timeout,
        )
        self.pubsub = PubSubService(self)
        self._closed = asyncio.Event()
        self._wake = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        self._last_refresh = 0.0

    @classmethod
    async def create(cls, config: Config) -> ConnectionManager:
        """Connect, read the topology and start watching it (see the sync twin)."""
        manager = cls(config)
        try:
            manager.view = await run(manager.mode.startup(manager))
        except BaseException:
            await manager.pools.close()
            raise
        manager._tasks.append(asyncio.create_task(manager._scan_loop(), name="redisson-py-scan"))
        if isinstance(manager.mode, SentinelMode):
            manager._tasks.append(
                asyncio.create_task(manager._watch_sentinels(), name="redisson-py-sentinel")
            )
        return manager

    async def close(self) -> None:
        """Stop the tasks and close every connection; idempotent."""
        self._closed.set()
        self._wake.set()
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._tasks = []
        await self.pubsub.close()
        await self.pools.close()

    def master_client(self, name: str) -> aioredis.Redis:
        """A redis-py asyncio client on the master that owns ``name`` now."""
        return self.pools.client(self.master_address(name))

    def read_client(self, name: str) -> aioredis.Redis:
        """A redis-py asyncio client on the node ``readMode`` picks for reading ``name``."""
        address = self.mode.read_address(self.view, name) or self.master_address(name)
        return self.pools.client(address)

    # --- executing calls -------------------------------------------------------------

    def _pool(self, key: ConnectionKey) -> aioredis.ConnectionPool:
        address, timeout, sentinel = key
        return self.pools.get(address, timeout, sentinel=sentinel)

    async def _roundtrip_on(self, key: ConnectionKey, commands: list[Any]) -> list[Any]:
        """Send ``commands`` on one connection of ``key``'s pool and read one reply each
        (error replies as exceptions), all within the key's reply timeout, connecting
        included. A connection that failed, timed out or was cancelled mid-way is closed,
        never reused."""
        address, timeout = key[0], key[1] or self.command_timeout
        pool = self._pool(key)
        idle = self.pools.idle(pool)
        connection = idle.take()
        if connection is not None and await _stale(connection):
            # See the sync twin: closed by the server; it reconnects on send.
            await connection.disconnect()
        replies: list[Any] = []
        try:
            # One timeout for the whole round trip, the connect of a new connection
            # included: redis-py's own (socket_timeout) wraps every send in
            # asyncio.wait_for, a task per command, and bounds each step separately.
            async with asyncio.timeout(timeout):
                if connection is None:
                    connection = await checkout(pool)
                await connection.send_packed_command(connection.pack_commands(commands))
                for _ in commands:
                    try:
                        replies.append(await connection.read_response())
                    except ResponseError as error:
                        replies.append(error)
        except BaseException as error:
            if connection is not None:
                await connection.disconnect()
            if isinstance(error, _IO_ERRORS):
                note_node(error, address)
                self.suspect(address)
            if isinstance(error, TimeoutError) and not isinstance(error, RedisTimeoutError):
                timeout_error = RedisTimeoutError(f"Timeout talking to {address}")
                note_node(timeout_error, address)
                raise timeout_error from error
            raise
        finally:
            if connection is not None:
                idle.give(connection)
        return replies

    async def _roundtrip(self, planned: Planned) -> list[Any]:
        return await self._roundtrip_on(self.pool_key(planned), planned.commands())

    async def _settle(self, planned: Planned, replies: list[Any]) -> Any:
        """Act on the replies: done, or re-send (EVAL, redirect) until done, or raise."""
        while True:
            outcome = interpret(planned, replies)
            if isinstance(outcome, Done):
                return outcome.value
            if isinstance(outcome, Resend):
                if outcome.moved:
                    self.suspect(None)
                planned = outcome.planned
                replies = await self._roundtrip(planned)
                continue
            if outcome.suspect:
                self.suspect(planned.address)
            raise outcome.error

    async def execute(self, effect: Call | Direct) -> CallResult | tuple[Any, ...]:
        """Run one call (or direct command list) and return its outcome."""
        planned = self.plan(effect)
        return await self._settle(planned, await self._roundtrip(planned))  # type: ignore[no-any-return]

    async def execute_many(self, effects: Sequence[Call | Direct]) -> list[Any]:
        """Run ``effects`` concurrently, one pipelined round trip per node; one outcome
        (or exception) per effect, never raising for one effect's failure."""
        outcomes, groups = self.group(effects)

        async def one_node(key: ConnectionKey, members: list[tuple[int, Planned]]) -> None:
            commands = [c for _, planned in members for c in planned.commands()]
            try:
                replies = await self._roundtrip_on(key, commands)
            except Exception as error:
                for index, _ in members:
                    outcomes[index] = error
                return
            offset = 0
            for index, planned in members:
                count = len(planned.commands())
                try:
                    outcomes[index] = await self._settle(planned, replies[offset : offset + count])
                except Exception as error:
                    outcomes[index] = error
                offset += count

        await asyncio.gather(*(one_node(key, members) for key, members in groups.items()))
        return outcomes

    async def subscribe(self, channel: str, timeout: float) -> Subscription:
        return await self.pubsub.subscribe(channel, timeout)

    # --- topology refresh ------------------------------------------------------------

    def suspect(self, address: Address | None) -> None:
        log.debug("refresh asked after a failure on %s", address or "a moved slot")
        self._wake.set()

    async def refresh(self) -> bool:
        """Read the topology now; True when the view changed."""
        new = await run(self.mode.refresh(self, self.view))
        self._last_refresh = time.monotonic()
        return self.apply_view(new)

    async def _scan_loop(self) -> None:
        interval = self.mode.scan_interval or 1.0
        while not self._closed.is_set():
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._wake.wait(), interval)
            self._wake.clear()
            if self._closed.is_set():
                return
            pause = REFRESH_THROTTLE - (time.monotonic() - self._last_refresh)
            if pause > 0:
                await asyncio.sleep(pause)
            try:
                await self.refresh()
            except Exception as error:  # keep the last view; try again next time
                log.debug("topology refresh failed: %s", error)
            try:
                await self.pubsub.reconcile()
            except Exception as error:
                log.debug("resubscription failed: %s", error)

    async def _watch_sentinels(self) -> None:
        """Listen for ``+switch-master`` on one sentinel after another (see the sync twin)."""
        assert isinstance(self.mode, SentinelMode)
        index = 0
        while not self._closed.is_set():
            sentinels = self.mode.sentinels
            address = sentinels[index % len(sentinels)]
            index += 1
            pubsub: Any = PubSub(self.pools.get(address, sentinel=True, pubsub=True))
            try:
                await pubsub.subscribe("+switch-master")
                while not self._closed.is_set():
                    message = await pubsub.get_message(timeout=0.5)
                    if message and message.get("type") in ("message", b"message"):
                        parsed = parse_switch_master(message["data"])
                        if parsed and parsed[0] == self.mode.master_name:
                            log.info("sentinel %s: +switch-master %s", address, message["data"])
                            self._wake.set()
            except asyncio.CancelledError:
                raise
            except Exception as error:
                log.debug("sentinel %s watch ended: %s", address, error)
                await asyncio.sleep(0.5)
            finally:
                with contextlib.suppress(Exception):
                    await _close(pubsub)


async def _stale(connection: Any) -> bool:
    """True when an idle connection has something to read (see the sync twin)."""
    if not connection.is_connected:
        return False
    # can_read() since redis-py 8 (can_read_destructive() deprecated there), before it
    # only can_read_destructive().
    check = getattr(connection, "can_read", None) or connection.can_read_destructive
    try:
        return bool(await check())
    except Exception:
        return True


async def _close(pubsub: Any) -> None:
    # aclose() since redis-py 5.0.1; reset() before (deprecated after).
    closer = getattr(pubsub, "aclose", None) or pubsub.reset
    await closer()
