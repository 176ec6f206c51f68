"""redis-py connection pools per node (see `redisson_py.core.routing.pool_registry` for
how pools are keyed and why)."""

from __future__ import annotations

import inspect
from typing import Any

import redis.asyncio as aioredis
from redis.asyncio.connection import Connection, SSLConnection
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff

from redisson_py.asyncio import _primitives
from redisson_py.config.addresses import Address
from redisson_py.core.routing.pool_registry import KwargsFor, PoolRegistry

# redis-py 5.0's get_connection() requires a command name; 5.3+ deprecates passing one.
_NEEDS_NAME = (
    inspect.signature(aioredis.ConnectionPool.get_connection).parameters["command_name"].default
    is inspect.Parameter.empty
)


async def checkout(pool: aioredis.ConnectionPool) -> Any:
    """Take a connected connection from ``pool``, whatever the redis-py version."""
    get: Any = pool.get_connection
    return await (get("_") if _NEEDS_NAME else get())


def _connections(pool: Any) -> list[Any]:
    """Every connection ``pool`` made that is still its own, idle or in use (the
    attributes differ between redis-py's pools and versions)."""
    found: dict[int, Any] = {}
    for name in ("_connections", "_available_connections", "_in_use_connections"):
        for connection in getattr(pool, name, None) or ():
            found[id(connection)] = connection
    return list(found.values())


class NodePools(PoolRegistry[aioredis.ConnectionPool]):
    """Blocking pools (``max_connections`` each) for commands, plain ones for pub/sub."""

    def __init__(self, kwargs_for: KwargsFor, *, max_connections: int, wait_timeout: float):
        def make_pool(kwargs: dict[str, Any], pubsub: bool) -> aioredis.ConnectionPool:
            if pubsub:
                return aioredis.ConnectionPool(**kwargs)
            if _primitives.TIMES_ROUND_TRIPS:
                # The manager times each round trip as a whole (redis-py's socket
                # timeout would start a task for every send there).
                kwargs["socket_timeout"] = None
            blocking: Any = aioredis.BlockingConnectionPool  # untyped in redis-py
            pool: aioredis.ConnectionPool = blocking(
                max_connections=max_connections, timeout=wait_timeout, **kwargs
            )
            return pool

        self._clients: dict[Address, aioredis.Redis] = {}
        super().__init__(
            kwargs_for,
            make_pool,
            retry=lambda: Retry(NoBackoff(), 0),
            connection_class=lambda tls: SSLConnection if tls else Connection,
            mutex=_primitives.RUNTIME.new_mutex(),
        )

    def client(self, address: Address) -> aioredis.Redis:
        """A redis-py client on ``address`` for the user's own commands, with the
        config's socket timeout (its own pool: the lock's pools time differently)."""
        client = self._clients.get(address)
        if client is None:
            kwargs = self.kwargs(address, None, sentinel=False, pubsub=False)
            client = self._clients[address] = aioredis.Redis(
                connection_pool=aioredis.ConnectionPool(**kwargs)
            )
        return client

    def sever_host(self, host: str) -> int:
        """Shut down every connection open to a node named ``host`` (see
        `_primitives.sever`), the user's clients' too: each is reopened, resolving the
        name again, by its next use. Returns how many there were."""
        pools = self.pools_of_host(host)
        pools += [client.connection_pool for at, client in self._clients.items() if at.host == host]
        severed = 0
        for pool in pools:
            for connection in _connections(pool):
                _primitives.sever(connection)
                severed += 1
        return severed

    async def close(self) -> None:
        clients, self._clients = list(self._clients.values()), {}
        for pool in [*self.take_all(), *(c.connection_pool for c in clients)]:
            await pool.disconnect()
