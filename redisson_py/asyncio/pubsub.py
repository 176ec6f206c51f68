"""Pub/sub for the asyncio client: one connection and one reader task per node.

The twin of :mod:`redisson_py.sync.pubsub`: the same shared
:class:`~redisson_py.core.subscriptions.SubscriptionTable`, with futures instead of
condition variables (everything runs on the client's event loop, so no lock is needed).
The client's watchdog is told when a node's connection drops and when it is back.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from redis.asyncio.client import PubSub
from redis.exceptions import TimeoutError as RedisTimeoutError

from redisson_py.config.addresses import Address
from redisson_py.core.subscriptions import ChannelSub, SubscriptionTable

if TYPE_CHECKING:
    from redisson_py.asyncio.manager import ConnectionManager

log = logging.getLogger("redisson_py.pubsub")

READ_TICK = 0.5


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


class _Listener:
    """One pub/sub connection to one node and the task that reads it."""

    def __init__(self, service: PubSubService, address: Address, sharded: bool):
        self.service = service
        self.address = address
        self.sharded = sharded
        self.pubsub: Any = PubSub(service.manager.pools.get(address, pubsub=True))
        self.confirmations: dict[str, asyncio.Future[None]] = {}
        self.task: asyncio.Task[None] | None = None
        self.stopped = False

    async def subscribe(self, channel: str) -> asyncio.Future[None]:
        """Send the subscribe; the future completes when the node confirms it."""
        confirmed = self.confirmations.get(channel)
        if confirmed is None:
            confirmed = asyncio.get_running_loop().create_future()
            self.confirmations[channel] = confirmed
        if self.sharded:
            await self.pubsub.ssubscribe(channel)
        else:
            await self.pubsub.subscribe(channel)
        if self.task is None:
            name = f"redisson-py-pubsub-{self.address.port}"
            self.task = asyncio.create_task(self._read(), name=name)
        return confirmed

    async def unsubscribe(self, channel: str) -> None:
        try:
            if self.sharded:
                await self.pubsub.sunsubscribe(channel)
            else:
                await self.pubsub.unsubscribe(channel)
        except Exception as error:  # the reader notices a broken connection
            log.debug("unsubscribe %s on %s failed: %s", channel, self.address, error)

    async def _read(self) -> None:
        loop = asyncio.get_running_loop()
        swept = loop.time()
        while not self.stopped:
            try:
                message = await self.pubsub.get_message(timeout=READ_TICK)
            except asyncio.CancelledError:
                raise
            except Exception as error:
                if not self.stopped:
                    await self.service._listener_failed(self, error)
                return
            if loop.time() - swept >= READ_TICK:
                swept = loop.time()
                await self.service._sweep()
            if message is None:
                continue
            kind = _text(message.get("type"))
            channel = _text(message.get("channel"))
            if kind in ("message", "smessage"):
                self.service._deliver(channel)
            elif kind in ("subscribe", "ssubscribe"):
                confirmed = self.confirmations.pop(channel, None)
                if confirmed is not None and not confirmed.done():
                    confirmed.set_result(None)
                self.service._confirmed(self.address)

    async def close(self) -> None:
        self.stopped = True
        if self.task is not None and self.task is not asyncio.current_task():
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self.task
        with contextlib.suppress(Exception):
            await _close(self.pubsub)


class Subscription:
    """A waiter's share of a channel subscription (what the lock flows wait on)."""

    __slots__ = ("_closed", "_service", "_sub")

    def __init__(self, service: PubSubService, sub: ChannelSub):
        self._service = service
        self._sub = sub
        self._closed = False

    async def wait(self, timeout: float) -> bool:
        """Until a signal wakes this waiter (True) or ``timeout`` passes (False)."""
        return await self._service._wait(self._sub, timeout)

    async def close(self) -> None:
        if not self._closed:
            self._closed = True
            await self._service._leave(self._sub)


class PubSubService:
    """Subscriptions of one asyncio client, placed by its connection manager."""

    def __init__(self, manager: ConnectionManager):
        self.manager = manager
        self._table = SubscriptionTable()
        self._listeners: dict[Address, _Listener] = {}
        self._node_listeners: list[Callable[[Address], None]] = []
        # Nodes whose connection failed and has not confirmed a subscription since.
        self._reconnecting: set[Address] = set()

    def add_node_listener(self, callback: Callable[[Address], None]) -> None:
        """Call ``callback(address)`` (on the loop; it must not block) when a node's
        pub/sub connection drops, and when a subscription on that node is confirmed
        again afterwards: the node may have restarted and lost its keys."""
        if callback not in self._node_listeners:
            self._node_listeners.append(callback)

    def _notify_node(self, address: Address) -> None:
        for callback in list(self._node_listeners):
            try:
                callback(address)
            except Exception:
                log.exception("pub/sub node listener failed")

    def _confirmed(self, address: Address) -> None:
        """A subscription on ``address`` was confirmed: tell the node listeners if its
        connection had failed before (it is back)."""
        if address in self._reconnecting:
            self._reconnecting.discard(address)
            self._notify_node(address)

    def __len__(self) -> int:
        return len(self._table)

    def _listener(self, address: Address) -> _Listener:
        listener = self._listeners.get(address)
        if listener is None:
            listener = _Listener(self, address, self.manager.mode.sharded_pubsub)
            self._listeners[address] = listener
        return listener

    async def _place(self, sub: ChannelSub) -> asyncio.Future[None] | None:
        address = self.manager.mode.pubsub_address(self.manager.view, sub.channel)
        sub.address = address
        if address is None:
            return None
        return await self._listener(address).subscribe(sub.channel)

    async def subscribe(self, channel: str, timeout: float) -> Subscription:
        """Join ``channel``'s subscription; the first waiter subscribes and waits for
        the node's confirmation, so a message published after this returns is seen."""
        sub, created = self._table.join(channel, deque)
        try:
            if created:
                confirmed = await self._place(sub)
            else:
                listener = self._listeners.get(sub.address) if sub.address else None
                confirmed = listener.confirmations.get(channel) if listener else None
            if confirmed is not None:
                await asyncio.wait_for(asyncio.shield(confirmed), timeout)
        except TimeoutError:
            await self._drop(sub)
            raise RedisTimeoutError(
                f"subscribing to {channel!r} on {sub.address} timed out after {timeout:g} s"
            ) from None
        except BaseException:
            await self._drop(sub)
            raise
        return Subscription(self, sub)

    async def _wait(self, sub: ChannelSub, timeout: float) -> bool:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not sub.take():
            left = deadline - loop.time()
            if left <= 0:
                return False
            waiter: asyncio.Future[None] = loop.create_future()
            sub.waker.append(waiter)
            try:
                await asyncio.wait_for(waiter, left)
            except TimeoutError:
                pass
            finally:
                with contextlib.suppress(ValueError):
                    sub.waker.remove(waiter)
        return True

    async def _leave(self, sub: ChannelSub) -> None:
        # No UNSUBSCRIBE here: an idle channel is unsubscribed by its node's reader task
        # once its grace period is over (see core.subscriptions).
        self._table.leave(sub, asyncio.get_running_loop().time())

    async def _unsubscribe(self, sub: ChannelSub) -> None:
        listener = self._listeners.get(sub.address) if sub.address is not None else None
        if listener is not None:
            listener.confirmations.pop(sub.channel, None)
            await listener.unsubscribe(sub.channel)

    async def _drop(self, sub: ChannelSub) -> None:
        """Forget ``sub`` (its subscription failed, or nobody waits for it any more)."""
        self._table.leave(sub, asyncio.get_running_loop().time())
        self._table.discard(sub)
        await self._unsubscribe(sub)

    async def _sweep(self) -> None:
        """Unsubscribe the channels that have been idle past their grace period."""
        for sub in self._table.expired(asyncio.get_running_loop().time()):
            await self._unsubscribe(sub)

    @staticmethod
    def _wake(sub: ChannelSub, everyone: bool) -> None:
        waiters: deque[asyncio.Future[None]] = sub.waker
        while waiters:
            waiter = waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                if not everyone:
                    return

    def _deliver(self, channel: str) -> None:
        sub = self._table.get(channel)
        if sub is not None:
            sub.signal_one()
            self._wake(sub, everyone=False)

    async def _listener_failed(self, listener: _Listener, error: BaseException) -> None:
        log.info("pub/sub connection to %s lost (%s); resubscribing", listener.address, error)
        if self._listeners.get(listener.address) is listener:
            del self._listeners[listener.address]
        for sub in self._table.on_node(listener.address):
            if sub.waiters == 0:
                self._table.discard(sub)
                continue
            sub.address = None
            sub.signal_all()
            self._wake(sub, everyone=True)
        self._reconnecting.add(listener.address)
        await listener.close()
        self.manager.suspect(listener.address)
        self._notify_node(listener.address)

    async def reconcile(self) -> None:
        """Re-place every channel whose node is gone or no longer the right one, and wake
        its waiters (see the sync twin)."""
        view, mode = self.manager.view, self.manager.mode
        for sub in self._table.misplaced(lambda ch: mode.pubsub_address(view, ch)):
            if sub.waiters == 0:
                self._table.discard(sub)  # nobody waits: no need to follow it
                await self._unsubscribe(sub)
                continue
            old = self._listeners.get(sub.address) if sub.address is not None else None
            if old is not None:
                await old.unsubscribe(sub.channel)
            try:
                await self._place(sub)
            except Exception as error:
                sub.address = None
                log.debug("resubscribing %s failed: %s", sub.channel, error)
            sub.signal_all()
            self._wake(sub, everyone=True)

    async def close(self) -> None:
        """Close every connection and wake every waiter (see the sync twin)."""
        listeners, self._listeners = list(self._listeners.values()), {}
        for sub in self._table.all():
            sub.signal_all()
            self._wake(sub, everyone=True)
        for listener in listeners:
            await listener.close()


async def _close(pubsub: Any) -> None:
    # aclose() since redis-py 5.0.1; reset() before (deprecated after).
    closer = getattr(pubsub, "aclose", None) or pubsub.reset
    await closer()
