"""redisson-py for asyncio: the same locks, owned by tasks, with ``await``/``async with``."""

from __future__ import annotations

from redisson_py.asyncio.client import Redisson
from redisson_py.asyncio.lock import Lock
from redisson_py.asyncio.multilock import MultiLock, RedLock

__all__ = ["Lock", "MultiLock", "RedLock", "Redisson"]
