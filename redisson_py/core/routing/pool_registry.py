"""Connection pools per node, keyed by what a call needs: the registry both shells share.

A pool is keyed by node address, reply timeout, and kind (data node or sentinel, command
or pub/sub connections). The timeout is part of the key because redis-py 5.0 cannot
bound a single read otherwise: a RedLock member that must answer within 50 ms takes its
connection from a pool whose sockets time out after 50 ms. Retries are off in every pool:
a lock script must never be resent blindly (the lock flows decide how to retry, with
arguments that make a retry safe). The shells say how a pool is made (sync or asyncio).
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any, Generic, TypeVar

from redisson_py.config.addresses import Address

KwargsFor = Callable[[Address, bool], dict[str, Any]]
"""(address, sentinel?) -> keyword arguments for redis-py's Connection."""

P = TypeVar("P")
PoolKey = tuple[Address, float | None, bool, bool]


class IdleConnections:
    """Connections taken from a redis-py pool and kept here between calls.

    Checking a connection out of redis-py's blocking pool and back costs more than the
    call itself on loopback (a queue with condition variables, a readiness ``select``,
    metrics); a lock call takes one from this stack instead and puts it back, and only
    goes to the pool when the stack is empty, so the pool still bounds how many exist.
    A connection comes back here, not to the pool, unless a call is waiting for the pool
    (every connection of the pool is out: more calls at once than the pool holds): then
    it goes back to the pool, which hands it to that call; kept here, it would leave the
    call waiting for the pool's timeout. A broken connection is kept too: redis-py
    reconnects it on its next send. A forked child never reuses its parent's sockets.
    """

    __slots__ = ("_checkouts", "_pid", "_stack")

    def __init__(self) -> None:
        self._stack: deque[Any] = deque()
        self._pid = os.getpid()
        # One entry per call checking a connection out of the pool now (append and pop
        # of a deque are atomic: threads need no lock).
        self._checkouts: deque[None] = deque()

    def take(self) -> Any:
        """An idle connection, or None (then take one from the pool)."""
        if self._pid != os.getpid():
            self._stack, self._pid = deque(), os.getpid()
            return None
        try:
            return self._stack.pop()  # atomic: threads need no lock here
        except IndexError:
            return None

    def give(self, connection: Any) -> None:
        self._stack.append(connection)

    def checkout_started(self) -> None:
        """A call goes to the pool for a connection (the stack was empty)."""
        self._checkouts.append(None)

    def checkout_ended(self) -> None:
        self._checkouts.pop()

    @property
    def pool_wanted(self) -> bool:
        """True while a call waits for the pool: give connections back to the pool."""
        return bool(self._checkouts)


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
            # from its reader while another thread or task subscribes on it.
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

    def take_all(self) -> list[P]:
        """Forget every pool and return them (to be closed by the shell)."""
        with self._lock:
            pools, self._pools, self._idle = list(self._pools.values()), {}, {}
        return pools
