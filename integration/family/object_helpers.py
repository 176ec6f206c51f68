"""Helpers for the semaphore and latch tests: a client whose replies can be lost on
purpose, raw access to the node serving an object (as a Java Redisson client has it),
and a Redisson-like client's way of running its own Lua there."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from typing import Any

import redis
from kind_helpers import by_slot

from redisson_py import Config
from redisson_py.config import ConstantDelay
from redisson_py.core.routing import naming
from redisson_py.testing import Topology
from redisson_py.testing.faults.proxy import ReplyDropper
from redisson_py.testing.owners import Flavor


def client_through(flavor: Flavor, proxy: ReplyDropper) -> Any:
    """A client of ``flavor`` that talks to the single server through ``proxy``."""
    config = Config()
    section = config.use_single_server(address=f"redis://127.0.0.1:{proxy.port}")
    section.retry_delay = ConstantDelay(0.05)
    return flavor.create_client(config)


@contextlib.contextmanager
def java_client(topology: Topology, name: str, *, raw: bool = False) -> Iterator[redis.Redis]:
    """A redis-py client on the master serving ``name``, for a Redisson-like client's
    Lua (``raw``: replies as bytes, for binary permit ids)."""
    if by_slot(topology):
        node = topology.master_for_slot(naming.key_slot(name))
    else:
        node = topology.master()
    client = node.client(decode_responses=not raw)
    try:
        yield client
    finally:
        client.close()


def clocked(action: Callable[[], Any]) -> tuple[Any, float]:
    """``action()``'s result and how long it took (seconds)."""
    started = time.monotonic()
    result = action()
    return result, time.monotonic() - started
