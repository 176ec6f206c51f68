# GENERATED from redisson_py/asyncio/pubsub.py by scripts/generate_sync.py: do not edit.
# Edit the asyncio source, then run `python3 scripts/generate_sync.py`.
"""Pub/sub: one connection and one reader loop per node, shared by the waiters.

Waiters of one client share one subscription per channel
(`SubscriptionTable` keeps the count and the
wake-up permits). Each node's connection has a reader loop that turns messages into
permits. When that connection fails, or the manager's view moves a channel to another
node (failover, slot migration), the channel is subscribed again where it now belongs
and every waiter is woken to retry at once, without restarting the client. The client's
watchdog is told when a node's connection drops and when it is back
(`PubSubService.add_node_listener`): a restart may have taken its locks.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from redis.client import PubSub
from redis.exceptions import ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from redisson_py.config.addresses import Address
from redisson_py.core.effects import WakeRule
from redisson_py.core.routing.replies import ReplyStream, published
from redisson_py.core.routing.subscriptions import (
    ChannelSub,
    SubscriptionTable,
    Waiter,
)
from redisson_py.core.routing.wire import as_refusal
from redisson_py.sync import _primitives

if TYPE_CHECKING:
    from redisson_py.sync.manager import ConnectionManager

log = logging.getLogger("redisson_py.pubsub")

READ_TICK = 0.5
"""How often a reader loop looks up from its connection: to stop, and to unsubscribe
the channels idle past their grace period."""


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _typed(message: dict[str, Any]) -> tuple[str, str, Any]:
    """A redis-py pub/sub message as (type, channel, data)."""
    return _text(message.get("type")), _text(message.get("channel")), message.get("data")


def close_pubsub(pubsub: Any) -> None:
    """Close a redis-py ``PubSub``; errors are dropped (its connection is going anyway)."""
    # close() since redis-py 5.0.1; reset() before (deprecated after).
    closer = getattr(pubsub, "close", None) or pubsub.reset
    try:
        closer()
    except Exception as error:
        log.debug("closing pub/sub: %s", error)


def _notify(woken: list[Waiter]) -> None:
    """Wake the waiters the bookkeeping handed a wake-up (caller holds the lock)."""
    for waiter in woken:
        waiter.handle.notify()


class _Listener:
    """One pub/sub connection to one node and the loop that reads it."""

    def __init__(self, service: PubSubService, address: Address, sharded: bool):
        self.service = service
        self.address = address
        self.sharded = sharded
        pool = service.manager.pools.get(address, pubsub=True)
        self.pubsub: Any = PubSub(pool, ignore_subscribe_messages=False)
        self.confirmations: dict[str, _primitives.Event] = {}
        self.reader = _primitives.Worker(f"redisson-py-pubsub-{address.port}", self._read)
        self.stopped = False
        self._connect = _primitives.ConnectOnce()

    def subscribe(self, channel: str) -> _primitives.Event:
        """Send the subscribe; the returned event is set when the node confirms it."""
        confirmed = self.confirmations.setdefault(channel, _primitives.Event())
        try:
            self._connect(self.pubsub)
            if self.sharded:
                self.pubsub.ssubscribe(channel)
            else:
                self.pubsub.subscribe(channel)
        except ResponseError as error:
            # A new connection's handshake refused (BUSY...): a refusal, which a waiter
            # outlasts by polling, as when the node cannot be reached.
            refusal = as_refusal(error, self.address)
            if refusal is error:
                raise
            raise refusal from error
        self.reader.start()
        return confirmed

    def unsubscribe(self, channel: str) -> None:
        try:
            if self.sharded:
                self.pubsub.sunsubscribe(channel)
            else:
                self.pubsub.unsubscribe(channel)
        except Exception as error:  # the connection is going anyway; the reader notices
            log.debug("unsubscribe %s on %s failed: %s", channel, self.address, error)

    def _read(self) -> None:
        swept = heard = time.monotonic()
        pinged: float | None = None
        stream = ReplyStream()
        while not self.stopped:
            try:
                received, failure = self._receive(stream)
            except _primitives.Cancelled:
                raise
            except Exception as error:
                received, failure = [], error
            if received:
                heard, pinged = time.monotonic(), None
            elif failure is None:
                try:
                    pinged, failure = self._check_health(heard, pinged)
                except _primitives.Cancelled:
                    raise
                except Exception as error:
                    failure = error
            self._dispatch(received)
            if failure is not None:
                if not self.stopped:
                    self.service._listener_failed(self, failure)
                return
            if time.monotonic() - swept >= READ_TICK:
                swept = time.monotonic()
                self.service._sweep()

    def _dispatch(self, received: list[tuple[str, str, Any]]) -> None:
        """Deliver each message received (a read's batch) to its channel's waiters, and
        mark each subscription it confirms."""
        for kind, channel, data in received:
            if kind in ("message", "smessage"):
                self.service._deliver(channel, data)
            elif kind in ("subscribe", "ssubscribe"):
                event = self.confirmations.pop(channel, None)
                if event is not None:
                    event.set()
                self.service._confirmed(self.address)

    def _check_health(
        self, heard: float, pinged: float | None
    ) -> tuple[float | None, Exception | None]:
        """The health check of a connection that received nothing lately (Redisson's
        ``pingConnectionInterval``, which redis-py's own check cannot do here: see
        `redisson_py.core.routing.pool_registry`): after ``pingConnectionInterval`` of
        silence since ``heard``, send a PING; when ``pinged`` (monotonic) is older than
        the command ``timeout`` and still unanswered, the connection is half-open (a
        peer or a middlebox that stopped forwarding without closing it), and every
        wake-up sent on it would be lost: fail it, so its channels are subscribed again
        and their waiters retry at once. Returns (when the pending PING was sent, the
        failure)."""
        section = self.service.manager.mode.section
        interval = section.ping_connection_interval
        if not interval or not self.pubsub.subscribed:
            # Nothing subscribed: nothing to lose, and redis-py reads no reply then.
            return None, None
        now = time.monotonic()
        if pinged is not None:
            if now - pinged < section.timeout:
                return pinged, None
            return pinged, RedisTimeoutError(
                f"pub/sub connection to {self.address}: no answer to PING within"
                f" {section.timeout:g} s (pingConnectionInterval)"
            )
        if now - heard < interval:
            return None, None
        # Under the service's lock: subscribes are sent on this connection from other
        # threads or threads under it, and two commands must not interleave.
        with self.service._lock:
            self.pubsub.ping()
        return now, None

    def _receive(self, stream: ReplyStream) -> tuple[list[tuple[str, str, Any]], Exception | None]:
        """What the connection received within `READ_TICK`, as (type, channel, data),
        and the error reply that came after them, if one did (the connection is then
        given up, as when ``get_message`` raises it). Read by the shell where it can
        (`_primitives.read_pushed`), else by redis-py's ``get_message``. A published
        message read by the shell skips redis-py (its pub/sub metrics do not count
        it); every other reply goes through ``handle_message``, which keeps redis-py's
        account of what is subscribed."""
        replies = _primitives.read_pushed(self.pubsub, stream, READ_TICK)
        if replies is None:
            message = self.pubsub.get_message(timeout=READ_TICK)
            return ([] if message is None else [_typed(message)]), None
        received: list[tuple[str, str, Any]] = []
        for reply in replies:
            if isinstance(reply, Exception):
                return received, reply
            message = published(reply)
            if message is not None:
                received.append(("message", _text(message[0]), message[1]))
                continue
            handled = self.pubsub.handle_message(reply, self.pubsub.ignore_subscribe_messages)
            if handled is not None:
                received.append(_typed(handled))
        return received, None

    def close(self) -> None:
        self.stopped = True
        # Not awaited: a threaded reader stops at its next read of the closed connection.
        self.reader.stop(wait=False)
        close_pubsub(self.pubsub)


class Subscription:
    """A waiter's share of a channel subscription (what the lock flows wait on)."""

    __slots__ = ("_closed", "_service", "_sub", "_waiter", "behind")

    def __init__(self, service: PubSubService, sub: ChannelSub):
        self._service = service
        self._sub = sub
        self._waiter = Waiter(sub, _primitives.Waker(service._lock))
        self._closed = False
        self.behind = len(sub.sleepers)
        """How many of the client's waiters were asleep on the channel when this one
        joined (the flows let them go first)."""

    def wait(self, timeout: float) -> bool:
        """Until a signal wakes this waiter (True) or ``timeout`` passes (False)."""
        return self._service._wait(self._waiter, timeout)

    @property
    def last_message(self) -> bytes | str | None:
        """The last message that came on the channel (None: none yet)."""
        return self._sub.last_message

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._service._leave(self._waiter)


class PubSubService:
    """Subscriptions of one client, placed by its connection manager."""

    def __init__(self, manager: ConnectionManager):
        self.manager = manager
        self._lock = _primitives.ThreadLock()
        self._table = SubscriptionTable()
        self._listeners: dict[Address, _Listener] = {}
        self._node_listeners: list[Callable[[Address], None]] = []

    def add_node_listener(self, callback: Callable[[Address], None]) -> None:
        """Call ``callback(address)`` (from a reader loop; it must not block) when a
        node's pub/sub connection drops, and when a subscription on that node is
        confirmed again afterwards: the node may have restarted and lost its keys."""
        with self._lock:
            if callback not in self._node_listeners:
                self._node_listeners.append(callback)

    def _notify_node(self, address: Address) -> None:
        with self._lock:
            callbacks = list(self._node_listeners)
        for callback in callbacks:
            try:
                callback(address)
            except Exception:
                log.exception("pub/sub node listener failed")

    def _confirmed(self, address: Address) -> None:
        """A subscription on ``address`` was confirmed: tell the node listeners if its
        connection had failed before (it is back)."""
        with self._lock:
            back = self._table.node_back(address)
        if back:
            self._notify_node(address)

    def __len__(self) -> int:
        """How many channels are subscribed (0 once every waiter has left and the idle
        grace period has passed)."""
        with self._lock:
            return len(self._table)

    def _listener(self, address: Address) -> _Listener:
        listener = self._listeners.get(address)
        if listener is None:
            listener = _Listener(self, address, self.manager.mode.sharded_pubsub)
            self._listeners[address] = listener
        return listener

    def _place(self, sub: ChannelSub) -> _primitives.Event | None:
        """Subscribe ``sub`` where the view says it belongs (caller holds the lock)."""
        address = self.manager.mode.pubsub_address(self.manager.view, sub.channel)
        # Set before the subscribe is sent: a waiter joining meanwhile finds the
        # confirmation it must wait for on that node's listener.
        sub.address = address
        if address is None:
            return None
        return self._listener(address).subscribe(sub.channel)

    def _live(self, sub: ChannelSub | None) -> bool:
        """``sub`` is subscribed on its node and confirmed there, with no confirmation
        pending (a channel being subscribed or moved is not live)."""
        if sub is None or sub.address is None:
            return False
        listener = self._listeners.get(sub.address)
        return listener is not None and sub.channel not in listener.confirmations

    def listens(self, channel: str) -> bool:
        """True when ``channel``'s subscription is live now (see `_live`): a hint,
        read without the lock; ``subscribe(..., live_only=True)`` decides under it."""
        sub = self._table.get(channel)
        return sub is not None and self._live(sub)

    def subscribe(
        self, channel: str, timeout: float, rule: WakeRule = "lock", live_only: bool = False
    ) -> Subscription | None:
        """Join ``channel``'s subscription; the first waiter subscribes and waits for
        the node's confirmation, so a message published after this returns is seen.
        ``rule`` says how many waiters a message wakes (see
        `wake_count`). ``live_only``: join only a subscription that is live already
        (every message published from now on reaches this waiter), else change
        nothing and return None."""
        if live_only:
            with self._lock:
                if not self._live(self._table.get(channel)):
                    return None
                sub, _ = self._table.join(channel, rule)
                return Subscription(self, sub)
        with self._lock:
            sub, created = self._table.join(channel, rule)
            confirmed = None
            try:
                if created:
                    confirmed = self._place(sub)
                elif sub.address is not None:
                    listener = self._listeners.get(sub.address)
                    confirmed = listener.confirmations.get(channel) if listener else None
            except BaseException:
                self._table.leave(sub, time.monotonic())
                self._drop_locked(sub)
                raise
        try:
            ok = confirmed is None or confirmed.wait(timeout)
        except BaseException:  # cancelled while waiting
            ok = False
            raise
        finally:
            if not ok:
                with self._lock:
                    self._table.leave(sub, time.monotonic())
                    self._drop_locked(sub)
        if not ok:
            raise RedisTimeoutError(
                f"subscribing to {channel!r} on {sub.address} timed out after {timeout:g} s"
            )
        return Subscription(self, sub)

    def _wait(self, waiter: Waiter, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        with self._lock:
            while not waiter.woken():
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                waiter.sleep()
                try:
                    waiter.handle.wait(left)
                finally:
                    waiter.awake()
            return True

    def _leave(self, waiter: Waiter) -> None:
        # No UNSUBSCRIBE here: an idle channel is unsubscribed by its node's reader
        # once its grace period is over (see core.routing.subscriptions).
        with self._lock:
            _notify(waiter.leave())
            self._table.leave(waiter.sub, time.monotonic())

    def _drop_locked(self, sub: ChannelSub) -> None:
        """Forget ``sub`` and unsubscribe it on its node (caller holds the lock)."""
        self._table.discard(sub)
        self._unsubscribe_locked(sub)

    def _unsubscribe_locked(self, sub: ChannelSub) -> None:
        if self._table.get(sub.channel) is not None:
            # Its channel was subscribed again meanwhile (a sweep unsubscribes its
            # channels one by one, and where the table's lock is a no-op a waiter may
            # join between two of them): an UNSUBSCRIBE now would undo that
            # subscription at the node, and taking its confirmation would leave its
            # waiter without one.
            return
        listener = self._listeners.get(sub.address) if sub.address is not None else None
        if listener is not None:
            listener.confirmations.pop(sub.channel, None)
            listener.unsubscribe(sub.channel)

    def _sweep(self) -> None:
        """Unsubscribe the channels that have been idle past their grace period."""
        with self._lock:
            for sub in self._table.expired(time.monotonic()):
                self._unsubscribe_locked(sub)

    def _deliver(self, channel: str, data: Any) -> None:
        with self._lock:
            _notify(self._table.deliver(channel, data))

    @staticmethod
    def _wake_all(sub: ChannelSub) -> None:
        _notify(sub.signal_all())

    def _listener_failed(self, listener: _Listener, error: BaseException) -> None:
        """A node's connection broke: its channels wait for the manager's next view."""
        log.info("pub/sub connection to %s lost (%s); resubscribing", listener.address, error)
        with self._lock:
            if self._listeners.get(listener.address) is listener:
                del self._listeners[listener.address]
            _notify(self._table.node_lost(listener.address))
        listener.close()
        self.manager.suspect(listener.address)
        self._notify_node(listener.address)

    def reconcile(self) -> None:
        """Re-place every channel whose node is gone or no longer the right one, and wake
        its waiters (they retry at once: messages may have been lost meanwhile)."""
        with self._lock:
            view, mode = self.manager.view, self.manager.mode
            for sub in self._table.misplaced(lambda ch: mode.pubsub_address(view, ch)):
                if sub.waiters == 0:
                    self._drop_locked(sub)  # nobody waits: no need to follow it
                    continue
                old = self._listeners.get(sub.address) if sub.address is not None else None
                if old is not None:
                    old.unsubscribe(sub.channel)
                try:
                    self._place(sub)
                except Exception as error:
                    sub.address = None
                    log.debug("resubscribing %s failed: %s", sub.channel, error)
                self._wake_all(sub)

    def after_fork(self) -> None:
        """In a forked child: the parent's reader threads do not exist here."""
        self._lock = _primitives.ThreadLock()
        self._table = SubscriptionTable()
        self._listeners = {}

    def close(self) -> None:
        """Close every connection and wake every waiter: a wait in progress when its
        client shuts down ends at once (it raises ClientClosedError) rather than at its
        deadline."""
        with self._lock:
            listeners, self._listeners = list(self._listeners.values()), {}
            for sub in self._table.all():
                self._wake_all(sub)
        for listener in listeners:
            listener.close()
