# GENERATED from redisson_py/asyncio/manager.py by scripts/generate_sync.py: do not edit.
# Edit the asyncio source, then run `python3 scripts/generate_sync.py`.
"""The connection manager: routes each lock to its master and keeps knowing it.

One manager per client. It keeps the current `TopologyView`
(refreshed by a scanner loop every scan interval, at once after a connection error, a
MOVED, or sentinel's ``+switch-master``), runs the calls of the lock flows on pinned
connections (so a ``WAIT`` follows its write on the same connection, and calls to many
masters are sent before any reply is read), and owns the pub/sub service. With DNS
monitoring on (``dnsMonitoringInterval``; in replicated mode ``monitorIPChanges``), a
second loop re-resolves the nodes' host names and, when one moves, shuts down every
connection to it, so that commands and pub/sub subscriptions reconnect to the new
address (`redisson_py.core.routing.dns`). Routing,
planning, batching and the re-send rules (NOSCRIPT, MOVED, ASK) are shared
(`ManagerBase`, `redisson_py.core.routing.wire.settle`).

Why not redis-py's ``RedisCluster``/``Sentinel`` clients for the lock commands: they pick
a connection per command and retry on their own, so neither "WAIT on the connection that
wrote" nor "send to five masters, then read" can be expressed, and a blind resend of an
acquire would count twice. Pools, sockets, TLS, RESP parsing, error classes and the
CRC16 slot function are redis-py's.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from typing import Any

import redis
from redis.client import PubSub
from redis.exceptions import AuthenticationError, ResponseError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from redisson_py.config.addresses import Address
from redisson_py.config.model import Config
from redisson_py.core import forks
from redisson_py.core.effects import Call, CallResult, Direct, WakeRule
from redisson_py.core.routing.dns import DnsWatch, monitoring_interval, watched_hosts
from redisson_py.core.routing.failures import note_node, with_next_step
from redisson_py.core.routing.manager_base import (
    REFRESH_THROTTLE,
    ConnectionKey,
    Group,
    ManagerBase,
    pool_size,
)
from redisson_py.core.routing.modes import SentinelMode
from redisson_py.core.routing.pool_registry import IdleConnections
from redisson_py.core.routing.refusals import stale_node
from redisson_py.core.routing.topology import attached_replicas, parse_switch_master
from redisson_py.core.routing.wire import Planned, as_refusal, finished, pack, settle
from redisson_py.core.state.options import connection_kwargs_for
from redisson_py.errors import ConnectError
from redisson_py.sync import _primitives
from redisson_py.sync.driver import run
from redisson_py.sync.pools import NodePools, checkout
from redisson_py.sync.pubsub import PubSubService, Subscription, close_pubsub

log = logging.getLogger("redisson_py.connection")

_IO_ERRORS = (RedisConnectionError, RedisTimeoutError, OSError)


class ConnectionManager(ManagerBase):
    """Routes lock names to masters for one client; see the module docstring."""

    def __init__(self, config: Config):
        super().__init__(config)
        section = self.mode.section
        self.pools = NodePools(
            connection_kwargs_for(config, section),
            max_connections=pool_size(section),
            wait_timeout=section.timeout,
        )
        self.pubsub = PubSubService(self)
        self._closed = _primitives.Event()
        self._wake = _primitives.Event()
        self._workers = [_primitives.Worker("redisson-py-scan", self._scan_loop)]
        self._forks = forks.count
        self._last_refresh = 0.0
        self._slots: dict[ConnectionKey, tuple[Any, IdleConnections]] = {}
        self.dns = DnsWatch()
        self.dns_interval = monitoring_interval(section)
        """Seconds between two resolutions of the nodes' host names; None: off."""
        self.dns_worker: _primitives.Worker | None = None
        """The DNS monitoring loop; None when off or no node is named by a host name."""

    # --- lifecycle -----------------------------------------------------------------

    @classmethod
    def create(cls, config: Config) -> ConnectionManager:
        """Connect, read the topology and start watching it; raises ConnectError or
        AuthError (listing every address tried) when the servers cannot be used."""
        manager = cls(config)
        try:
            manager.view = run(manager.mode.startup(manager))
        except ConnectError as exc:
            manager.pools.close()
            with_next_step(exc, config)  # its message: the file, the line, what to run
            raise
        except BaseException:
            manager.pools.close()
            raise
        if isinstance(manager.mode, SentinelMode):
            manager._workers.append(
                _primitives.Worker("redisson-py-sentinel", manager._watch_sentinels)
            )
        if manager.dns_interval is not None and manager.watched_hosts():
            manager.dns_worker = _primitives.Worker("redisson-py-dns", manager._dns_loop)
            manager._workers.append(manager.dns_worker)
        manager._start_workers()
        return manager

    def _start_workers(self) -> None:
        self._forks = forks.count
        for worker in self._workers:
            worker.start()

    def _check_fork(self) -> None:
        # A forked child has none of its parent's threads; redis-py resets the pools.
        if self._forks != forks.count:
            self.pubsub.after_fork()
            self._start_workers()

    def halt(self) -> None:
        """Tell the background loops to stop, without waiting for them (`close` waits):
        no topology scan starts after this, and one in flight ends by itself (its
        calls are bounded). Calls still work until `close`."""
        self._closed.set()
        self._wake.set()

    def close(self) -> None:
        """Stop the background loops and close every connection; idempotent."""
        self.halt()
        for worker in self._workers:
            worker.stop()
        self.pubsub.close()
        self._slots = {}
        self.pools.close()

    # --- clients for the user's own commands -------------------------------------------

    def master_client(self, name: str) -> redis.Redis:
        """A redis-py client on the master that owns ``name`` now."""
        return self.pools.client(self.master_address(name))

    def read_client(self, name: str) -> redis.Redis:
        """A redis-py client on the node ``readMode`` picks for reading ``name``."""
        address = self.mode.read_address(self.view, name) or self.master_address(name)
        return self.pools.client(address)

    # --- executing calls -------------------------------------------------------------

    def _pool(self, key: ConnectionKey) -> redis.ConnectionPool:
        address, timeout, sentinel = key
        return self.pools.get(address, timeout, sentinel=sentinel)

    def _failed(self, error: BaseException, address: Address) -> BaseException:
        """Note a failed round trip on ``address``; the error to raise for it."""
        if not isinstance(error, _IO_ERRORS):
            # A refusal met while connecting (the handshake's PING answered BUSY, say)
            # goes on as a refusal in a reply does.
            return as_refusal(error, address)
        self.suspect(address)
        if isinstance(error, TimeoutError) and not isinstance(error, RedisTimeoutError):
            # The round trip's own timer ran out (a thread's timeout): say it as redis-py would.
            error = RedisTimeoutError(f"Timeout talking to {address}")
        note_node(error, address)
        return error

    def _slot(self, key: ConnectionKey) -> tuple[Any, IdleConnections]:
        """The pool for ``key`` and its idle connections (one lookup per call)."""
        slot = self._slots.get(key)
        if slot is None:
            pool = self._pool(key)
            slot = self._slots[key] = (pool, self.pools.idle(pool))
        return slot

    @staticmethod
    def _idle_connection(idle: IdleConnections) -> Any:
        """An idle connection fit to send on, or None (check one out of the pool)."""
        connection, check = idle.take_idle(time.monotonic())
        if check and _primitives.stale(connection):
            # The server closed it (a restart, a failover, an idle timeout): a command
            # sent on it would fail, or be lost, for nothing. It reconnects on send.
            connection.disconnect()
        return connection

    @staticmethod
    def _checkout(pool: Any, idle: IdleConnections) -> Any:
        """A connection from ``pool`` (or one given back to ``idle`` meanwhile), counted
        as waiting on the pool so that connections given back go to it (see
        `IdleConnections`)."""
        connection = idle.enter_checkout()
        try:
            if connection is None:
                connection = checkout(pool)
        finally:
            idle.leave_checkout()
        return connection

    @staticmethod
    def _give(pool: Any, idle: IdleConnections, connection: Any) -> None:
        """Keep ``connection`` for the next call, or release it to ``pool`` when a
        caller waits there."""
        if idle.keeps():
            idle.give(connection, time.monotonic())
        else:
            pool.release(connection)

    @staticmethod
    def _read(connection: Any, count: int) -> list[Any]:
        """``count`` replies, error replies as exceptions: read by the shell itself where
        it can (`_primitives.read_directly`), else by redis-py."""
        direct = _primitives.read_directly(connection, count)
        if direct is not None:
            return direct
        replies: list[Any] = []
        for _ in range(count):
            try:
                replies.append(connection.read_response())
            except ResponseError as error:
                replies.append(error)
        return replies

    def _send(
        self,
        key: ConnectionKey,
        commands: list[Any],
        *,
        read: bool = False,
        probing: Group | None = None,
        reauth: bool = True,
    ) -> Any:
        """Send ``commands`` on one connection of ``key``'s pool; return the connection
        (`_receive` reads it later). With ``read``, read their replies too, under
        the same round-trip timer, give
        the connection back and return the replies. With ``probing``, ask the master for
        its attached replicas first, on the same connection, and send the group's
        commands raised to them (`Group.raise_required`) instead of ``commands``. With a
        credential provider, a connection refused at AUTH (before anything was sent) is
        opened once more (``reauth``), which asks the provider again."""
        address, timeout = key[0], key[1] or self.command_timeout
        pool, idle = self._slot(key)
        connection = self._idle_connection(idle)
        try:
            with _primitives.round_trip_timeout(timeout):
                if connection is None:
                    connection = self._checkout(pool, idle)
                if probing is not None:
                    connection.send_packed_command([pack([("ROLE",)])])
                    [role] = self._read(connection, 1)
                    probing.raise_required(attached_replicas(role))
                    commands = probing.commands
                connection.send_packed_command([pack(commands)])
                if not read:
                    return connection
                replies = self._read(connection, len(commands))
            if stale_node(replies):
                self._drop_stale(connection, address)
        except BaseException as error:
            if connection is not None:
                connection.disconnect()
                self._give(pool, idle, connection)
            if (
                reauth
                and isinstance(error, AuthenticationError)
                and self.config.credential_provider is not None
            ):
                # A rotation the provider had not caught up with on its first answer
                # costs one more connection, not the call.
                log.info("%s refused AUTH: asking the credential provider once more", address)
                return self._send(key, commands, read=read, probing=probing, reauth=False)
            replacement = self._failed(error, address)
            if replacement is not error:
                raise replacement from error
            raise
        self._give(pool, idle, connection)
        return replies

    def _drop_stale(self, connection: Any, address: Address) -> None:
        """A reply said ``address`` is no longer the node to write to (READONLY,
        MASTERDOWN, LOADING: see `redisson_py.core.routing.refusals.STALE_NODE`): close
        ``connection`` (its pool slot opens a new one, resolving the host name again, when
        next used) and refresh the topology at once."""
        log.info("%s refused as a stale node: connection closed, topology refresh asked", address)
        connection.disconnect()
        self.suspect(address)

    def _receive(self, key: ConnectionKey, connection: Any, count: int) -> list[Any]:
        """Read ``count`` replies (error replies as exceptions) and give the connection
        back; a connection that failed, timed out or was cancelled mid-way is closed,
        never reused."""
        address, timeout = key[0], key[1] or self.command_timeout
        try:
            with _primitives.round_trip_timeout(timeout):
                replies = self._read(connection, count)
            if stale_node(replies):
                self._drop_stale(connection, address)
            return replies
        except BaseException as error:
            connection.disconnect()
            replacement = self._failed(error, address)
            if replacement is not error:
                raise replacement from error
            raise
        finally:
            self._give(*self._slot(key), connection)

    def _roundtrip(self, planned: Planned) -> list[Any]:
        replies: list[Any] = self._send(self.pool_key(planned), planned.commands(), read=True)
        return replies

    def _probed_roundtrip(self, planned: Planned) -> tuple[Planned, list[Any]]:
        """`_roundtrip` after asking the master for its attached replicas; the call
        as sent (its WAIT raised to them) and its replies."""
        group = Group.of(planned)
        key = self.pool_key(planned)
        replies: list[Any] = self._send(key, group.commands, read=True, probing=group)
        return group.members[0][1], replies

    def _settle(self, planned: Planned, replies: list[Any]) -> Any:
        """Act on the replies: done, or re-send (EVAL, redirect) until done, or raise."""
        outcome = finished(planned, replies)
        if outcome is not None:
            return outcome
        steps = settle(planned, replies, self.suspect)
        try:
            resend = next(steps)
            while True:
                resend = steps.send(self._roundtrip(resend))
        except StopIteration as done:
            return done.value

    def execute(self, effect: Call | Direct) -> CallResult | tuple[Any, ...]:
        """Run one call (or direct command list) and return its outcome."""
        if self._forks != forks.count:
            self._check_fork()
        planned = self.plan(effect)
        if planned.probe:
            planned, replies = self._probed_roundtrip(planned)
        else:
            replies = self._roundtrip(planned)
        return self._settle(planned, replies)  # type: ignore[no-any-return]

    def start(self, effects: Sequence[Call | Direct]) -> _Batch | _One:
        """Send ``effects`` now (one connection per node); read them in ``finish()``."""
        if self._forks != forks.count:
            self._check_fork()
        batch = _One(self, effects[0]) if len(effects) == 1 else _Batch(self, effects)
        batch.send()
        return batch

    def subscribe(
        self, channel: str, timeout: float, rule: WakeRule = "lock", live_only: bool = False
    ) -> Subscription | None:
        if self._forks != forks.count:
            self._check_fork()
        return self.pubsub.subscribe(channel, timeout, rule, live_only)

    def listens(self, channel: str) -> bool:
        return self.pubsub.listens(channel)

    # --- topology refresh ------------------------------------------------------------

    def suspect(self, address: Address | None) -> None:
        log.debug("refresh asked after a failure on %s", address or "a moved slot")
        self._wake.set()

    def refresh(self) -> bool:
        """Read the topology now; True when the view changed."""
        new = run(self.mode.refresh(self, self.view))
        self._last_refresh = time.monotonic()
        return self.apply_view(new)

    def _scan_loop(self) -> None:
        interval = self.mode.scan_interval or 1.0
        while not self._closed.is_set():
            self._wake.wait(interval)
            self._wake.clear()
            if self._closed.is_set():
                return
            _primitives.sleep(REFRESH_THROTTLE - (time.monotonic() - self._last_refresh))
            try:
                self.refresh()
            except Exception as error:  # keep the last view; try again next time
                log.debug("topology refresh failed: %s", error)
            try:
                self.pubsub.reconcile()
            except Exception as error:
                log.debug("resubscription failed: %s", error)

    # --- DNS monitoring ------------------------------------------------------------------

    def watched_hosts(self) -> dict[str, int]:
        """The host names DNS monitoring re-resolves (each with a port to resolve it
        for): those of the configured nodes and of the nodes in the current view; IP
        literals are left out. Empty when monitoring is off."""
        if self.dns_interval is None:
            return {}
        view = self.view
        nodes = [*view.masters, *(r for rs in view.replicas.values() for r in rs)]
        return watched_hosts([*self.mode.seeds(), *nodes])

    def check_dns(self) -> list[str]:
        """Resolve every watched host name once; for each that moved, shut down every
        connection to it and refresh the topology (pub/sub subscriptions follow: their
        connections fail, their waiters are woken, and they are subscribed again).
        Returns the host names that moved. A name that does not resolve keeps its last
        address (a warning, at most one per minute per name); nothing here raises."""
        moved_hosts: list[str] = []
        timeout = self.mode.section.timeout
        for host, port in self.watched_hosts().items():
            try:
                found = _primitives.resolve(host, port, timeout)
            except (OSError, TimeoutError) as error:
                if self.dns.failed(host, time.monotonic()):
                    known = self.dns.known(host)
                    log.warning(
                        "host %s did not resolve (%s); its connections keep the last address%s",
                        host,
                        error or type(error).__name__,
                        f" ({', '.join(sorted(known))})" if known else "",
                    )
                continue
            if self.dns.recovered(host):
                log.info("host %s resolves again", host)
            moved = self.dns.resolved(host, found)
            if moved is None:
                continue
            severed = self.pools.sever_host(host)
            log.warning("%s: %d connection(s) to it closed", moved, severed)
            moved_hosts.append(host)
        if moved_hosts:
            self._wake.set()  # the scan loop refreshes and re-places the subscriptions
        return moved_hosts

    def _dns_loop(self) -> None:
        interval = self.dns_interval or 5.0
        while not self._closed.is_set():
            try:
                self.check_dns()  # the first pass takes the baseline
            except _primitives.Cancelled:
                raise
            except Exception:  # never end the loop: the next pass may do better
                log.exception("DNS monitoring pass failed")
            self._closed.wait(interval)

    def _watch_sentinels(self) -> None:
        """Listen for ``+switch-master`` on one sentinel after another; each one seen
        triggers a refresh at once (polling alone would take a scan interval)."""
        assert isinstance(self.mode, SentinelMode)
        index = 0
        while not self._closed.is_set():
            sentinels = self.mode.sentinels
            address = sentinels[index % len(sentinels)]
            index += 1
            pubsub: Any = PubSub(self.pools.get(address, sentinel=True, pubsub=True))
            try:
                pubsub.subscribe("+switch-master")
                while not self._closed.is_set():
                    message = pubsub.get_message(timeout=0.5)
                    if message and message.get("type") in ("message", b"message"):
                        parsed = parse_switch_master(message["data"])
                        if parsed and parsed[0] == self.mode.master_name:
                            log.info("sentinel %s: +switch-master %s", address, message["data"])
                            self._wake.set()
            except _primitives.Cancelled:
                raise
            except Exception as error:
                log.debug("sentinel %s watch ended: %s", address, error)
                self._closed.wait(0.5)
            finally:
                close_pubsub(pubsub)


class _One:
    """One call sent now and read in ``finish()``: a Gather's only call to this manager
    (each member of a RedLock is on a client of its own), with none of the grouping of
    `_Batch`, whose outcomes it gives: the call's, or its exception."""

    __slots__ = ("connection", "count", "error", "key", "manager", "planned")

    def __init__(self, manager: ConnectionManager, effect: Call | Direct):
        self.manager = manager
        self.connection: Any = None
        self.error: Exception | None = None
        try:
            self.planned = manager.plan(effect)
        except Exception as error:
            self.error = error

    def send(self) -> None:
        if self.error is not None:
            return
        self.key = self.manager.pool_key(self.planned)
        group = Group.of(self.planned) if self.planned.probe else None
        commands = self.planned.commands() if group is None else group.commands
        try:
            self.connection = self.manager._send(self.key, commands, probing=group)
        except Exception as error:
            self.error = error
            return
        if group is not None:  # sent with its WAIT raised to the attached replicas
            self.planned = group.members[0][1]
            commands = group.commands
        self.count = len(commands)

    def finish(self) -> list[Any]:
        if self.error is not None:
            return [self.error]
        try:
            replies = self.manager._receive(self.key, self.connection, self.count)
            return [self.manager._settle(self.planned, replies)]
        except Exception as error:
            return [error]


class _Batch:
    """Calls sent to their nodes at once, one connection and one round trip per node;
    ``finish()`` reads and settles them, one outcome (or exception) per call."""

    def __init__(self, manager: ConnectionManager, effects: Sequence[Call | Direct]):
        self.manager = manager
        self.outcomes, self.groups = manager.group(effects)
        self.sent: list[tuple[ConnectionKey, Any, Group]] = []

    def send(self) -> None:
        for key, group in self.groups.items():
            try:
                probing = group if group.probes else None
                connection = self.manager._send(key, group.commands, probing=probing)
            except Exception as error:
                group.fail(self.outcomes, error)
                continue
            self.sent.append((key, connection, group))

    def finish(self) -> list[Any]:
        for key, connection, group in self.sent:
            try:
                replies = self.manager._receive(key, connection, len(group.commands))
            except Exception as error:
                group.fail(self.outcomes, error)
                continue
            for index, planned, share in group.shares(replies):
                try:
                    self.outcomes[index] = self.manager._settle(planned, share)
                except Exception as error:
                    self.outcomes[index] = error
        return self.outcomes
