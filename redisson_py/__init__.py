"""redisson-py: distributed locks for Python on Redis, with the semantics of Redisson."""

from __future__ import annotations

from redisson_py.errors import (
    AuthError,
    ConfigError,
    ConnectError,
    LockNotOwnedError,
    LockUnavailableError,
    NoSyncedReplicasError,
    RedissonError,
    TopologyError,
)

__version__ = "0.1.0"

__all__ = [
    "AuthError",
    "ConfigError",
    "ConnectError",
    "LockNotOwnedError",
    "LockUnavailableError",
    "NoSyncedReplicasError",
    "RedissonError",
    "TopologyError",
    "__version__",
]
