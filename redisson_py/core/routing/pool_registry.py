"""Connection pools per node, keyed by what a call needs: the registry both shells share.

A pool is keyed by node address, reply timeout, and kind (data node or sentinel, command
or pub/sub connections). The timeout is part of the key because redis-py 5.0 cannot
bound a single read otherwise: a RedLock member that must answer within 50 ms takes its
connection from a pool whose sockets time out after 50 ms. Retries are off in every pool:
a lock script must never be resent blindly (the lock flows decide how to retry, with
arguments that make a retry safe). The shells say how a pool is made (sync or asyncio).
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any, Generic, TypeVar

from redisson_py.config.addresses import Address
from redisson_py.core import forks

KwargsFor = Callable[[Address, bool], dict[str, Any]]
"""(address, sentinel?) -> keyword arguments for redis-py's Connection."""

P = TypeVar("P")
PoolKey = tuple[Address, float | None, bool, bool]

CHECK_AFTER_IDLE = 0.002
"""Seconds a connection must have been idle before it is checked for staleness when
taken (see `IdleConnections`)."""


class IdleConnections:
    """Connections taken from a redis-py pool and kept here between calls.

    Checking a connection out of redis-py's blocking pool and back costs more than the
    call itself on loopback (a queue with condition variables, a readiness ``select``,
    metrics); a lock call takes one from this stack instead and puts it back, and only
    goes to the pool when the stack is empty, so the pool still bounds how many exist.
    A broken connection is kept too: redis-py reconnects it on its next send. A forked
    child never reuses its parent's sockets.

    While a caller waits on the pool (more calls at once than the pool holds: a burst of
    thousands of waiters' first attempts), a connection given back must go to the pool,
    not here: that caller waits on the pool's own queue and would otherwise wait until
    its timeout while idle connections pile up here. `waiting` counts those callers
    (see `enter_checkout`), and `keeps` says where a connection given back goes.

    A connection given back less than `CHECK_AFTER_IDLE` ago is taken without the
    shells' staleness check (a poll: a system call that releases the GIL, a thread
    switch per call when threads share the connections); one idle longer is checked.
    A server that closed a connection within that time costs the call a connection
    error, which the flows handle as any lost reply.
    """

    __slots__ = ("_checkouts", "_forks", "_stack")

    def __init__(self) -> None:
        self._stack: deque[tuple[Any, float]] = deque()
        self._forks = forks.count
        self._checkouts: deque[None] = deque()
        """One entry per caller between `enter_checkout` and `leave_checkout` (a
        deque's append and pop are atomic: threads need no lock to count)."""

    def take(self) -> Any:
        """An idle connection, or None (then take one from the pool)."""
        return self.take_idle(math.inf)[0]

    def take_idle(self, now: float) -> tuple[Any, bool]:
        """An idle connection (None: take one from the pool), and whether it has been
        idle long enough to be checked for staleness before use (``now``: monotonic
        seconds, as given to `give`)."""
        if self._forks != forks.count:
            self.forget_if_forked()
            return None, False
        try:
            connection, given = self._stack.pop()  # atomic: threads need no lock here
        except IndexError:
            return None, False
        return connection, now - given >= CHECK_AFTER_IDLE

    def enter_checkout(self) -> Any:
        """Count the caller as waiting on the pool, then look here once more: a
        connection given back before the count was seen is here (take it, and call
        `leave_checkout`), one given back after goes to the pool."""
        self.forget_if_forked()
        self._checkouts.append(None)
        return self.take()

    def forget_if_forked(self) -> None:
        """In a forked child, forget the parent's connections and callers."""
        if self._forks != forks.count:
            self._stack, self._checkouts, self._forks = deque(), deque(), forks.count

    def leave_checkout(self) -> None:
        if self._checkouts:  # emptied meanwhile only by a fork
            self._checkouts.pop()

    @property
    def waiting(self) -> int:
        """Callers between `enter_checkout` and `leave_checkout`."""
        return len(self._checkouts)

    def keeps(self) -> bool:
        """True: give a connection back here (`give`); False: a caller waits on the
        pool, release the connection to the pool instead."""
        return not self._checkouts

    def give(self, connection: Any, now: float = -math.inf) -> None:
        """Keep ``connection``, given back at ``now`` (monotonic seconds; by default
        long ago: checked when next taken)."""
        self._stack.append((connection, now))


class PoolRegistry(Generic[P]):
    """Pools of type ``P`` per (address, reply timeout, sentinel?, pub/sub?)."""

    def __init__(
        self,
        kwargs_for: KwargsFor,
        make_pool: Callable[[dict[str, Any], bool], P],
        *,
        retry: Callable[[], Any],
        connection_class: Callable[[bool], type],
        mutex: AbstractContextManager[Any],
    ):
        self._kwargs_for = kwargs_for
        self._make_pool = make_pool
        self._retry = retry
        self._connection_class = connection_class
        self._pools: dict[PoolKey, P] = {}
        self._idle: dict[int, IdleConnections] = {}
        self._lock = mutex  # the shell's: pools are created from any thread

    def kwargs(
        self, address: Address, timeout: float | None, sentinel: bool, pubsub: bool
    ) -> dict[str, Any]:
        kwargs = dict(self._kwargs_for(address, sentinel))
        kwargs["retry"] = self._retry()
        kwargs["retry_on_timeout"] = False
        kwargs["connection_class"] = self._connection_class(address.tls)
        if timeout is not None:
            kwargs["socket_timeout"] = timeout
        # Connecting counts against a command's time: a node that takes SYNs and never
        # answers (a dead host) must not hold a lock call for the whole connectTimeout
        # (10 s by default) when its reply may take only ``timeout``.
        reply_timeout = kwargs.get("socket_timeout")
        connect_timeout = kwargs.get("socket_connect_timeout")
        if reply_timeout and connect_timeout and not pubsub:
            kwargs["socket_connect_timeout"] = min(connect_timeout, reply_timeout)
        if pubsub:
            # A pub/sub connection is held for as long as it listens; no health PING
            # of redis-py's while another thread or task subscribes on it. Its reader
            # sends its own, under the subscribers' lock (the shells' pubsub modules).
            kwargs["health_check_interval"] = 0
        return kwargs

    def get(
        self,
        address: Address,
        timeout: float | None = None,
        *,
        sentinel: bool = False,
        pubsub: bool = False,
    ) -> P:
        """The pool for ``address``; with ``timeout``, its sockets time out after it."""
        key = (address, timeout, sentinel, pubsub)
        pool = self._pools.get(key)
        if pool is not None:
            return pool
        with self._lock:
            pool = self._pools.get(key)
            if pool is None:
                pool = self._make_pool(self.kwargs(address, timeout, sentinel, pubsub), pubsub)
                self._idle[id(pool)] = IdleConnections()
                self._pools[key] = pool
            return pool

    def idle(self, pool: P) -> IdleConnections:
        """The idle connections kept for ``pool`` (one of this registry's)."""
        return self._idle[id(pool)]

    def pools_of_host(self, host: str) -> list[P]:
        """Every pool (command, pub/sub, sentinel; any timeout) to a node named ``host``."""
        with self._lock:
            return [pool for key, pool in self._pools.items() if key[0].host == host]

    def take_all(self) -> list[P]:
        """Forget every pool and return them (to be closed by the shell)."""
        with self._lock:
            pools, self._pools, self._idle = list(self._pools.values()), {}, {}
        return pools
