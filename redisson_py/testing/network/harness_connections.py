"""The harness's own redis-py connections to nodes that live in a network namespace.

The test process stays in the host's namespace, where the nodes' addresses do not exist.
A connection made here creates (and connects) its socket while the calling thread is
switched into the topology's namespace, and switches it straight back: the socket keeps
the namespace it was made in, so it works from any thread afterwards. It leaves from
127.0.0.1, which no partition cuts, so the harness sees every node during a partition.
"""

from __future__ import annotations

import functools
import socket
from typing import Any

import redis
import redis.connection

from redisson_py.testing.network import source_binding
from redisson_py.testing.network.namespace import NetworkNamespace

__all__ = ["connect_in_namespace"]

_KWARG = "network_namespace"


@functools.cache
def _namespaced_class(base: type[Any]) -> type[Any]:
    """``base`` (a redis-py connection class) made to connect inside the namespace passed
    as its ``network_namespace`` keyword (which the pool hands every connection)."""

    class InNamespace(base):  # type: ignore[misc]
        def __init__(self, *args: Any, **kwargs: Any):
            self._network_namespace: NetworkNamespace = kwargs.pop(_KWARG)
            super().__init__(*args, **kwargs)

        def _connect(self) -> socket.socket:
            with self._network_namespace.entered(), source_binding.exempt():
                sock: socket.socket = super()._connect()
                return sock

    InNamespace.__name__ = InNamespace.__qualname__ = f"{base.__name__}InNamespace"
    return InNamespace


def connect_in_namespace(client: redis.Redis, namespace: NetworkNamespace) -> redis.Redis:
    """Make ``client`` (not yet connected) open its connections inside ``namespace``;
    returns it. TCP and TLS connections both work: the TLS class wraps the socket the
    TCP one made."""
    pool = client.connection_pool
    base = pool.connection_class
    if issubclass(base, redis.connection.UnixDomainSocketConnection):
        return client
    pool.connection_class = _namespaced_class(base)
    pool.connection_kwargs[_KWARG] = namespace
    return client
