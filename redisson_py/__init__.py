"""redisson-py: distributed locks for Python on Redis, with the semantics of Redisson.

Quick start::

    from redisson_py import Config, Redisson

    # a config for a running Redis, e.g. from `redisson-py topology up single --detach`
    client = Redisson.create(Config.from_yaml("redisson.yaml"))
    with client.get_lock("resource:x"):
        ...  # held; the watchdog renews it until the block ends

The asyncio API lives in `redisson_py.asyncio`; the test harness that starts and
breaks real Redis topologies in `redisson_py.testing`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from redisson_py._deprecate import moved_attribute
from redisson_py.config import Config
from redisson_py.core.flows.backoff import ConstantBackOff, ExponentialBackOff
from redisson_py.core.flows.fenced_resource import Fence
from redisson_py.core.state.holds import LockLost
from redisson_py.errors import (
    _MOVED,  # the names moved out of here too, and the version that removes them
    ArgumentError,
    ArgumentOverflowError,
    ArgumentTypeError,
    AuthError,
    ClientClosedError,
    CommandTimeoutError,
    ConfigError,
    ConfigFileError,
    ConnectError,
    GroupExtendError,
    HandOffError,
    InvalidLockNameError,
    LockNotOwnedError,
    LockReentryError,
    LockTimeoutError,
    LockUnavailableError,
    NoSyncedReplicasError,
    PermitNotHeldError,
    RedissonError,
    ServerRefusedError,
    StaleTokenError,
    UsageError,
)
from redisson_py.sync.client import Redisson
from redisson_py.sync.count_down_latch import CountDownLatch
from redisson_py.sync.fenced_lock import FencedLock
from redisson_py.sync.fenced_resource import FencedResource
from redisson_py.sync.lock import Lock, current_owner_id
from redisson_py.sync.lock_kinds import (
    FairLock,
    NonReentrantFairLock,
    NonReentrantLock,
    QueuedLock,
    SpinLock,
)
from redisson_py.sync.multilock import MultiLock, RedLock
from redisson_py.sync.permit_semaphore import PermitExpirableSemaphore
from redisson_py.sync.read_write_lock import ReadLock, ReadWriteLock, WriteLock
from redisson_py.sync.semaphore import Semaphore

if TYPE_CHECKING:
    # Type checkers see the moved name too, so typed code on the old import still checks.
    from redisson_py.testing.errors import TopologyError as TopologyError

__version__ = "0.2.0"

__all__ = [
    "ArgumentError",
    "ArgumentOverflowError",
    "ArgumentTypeError",
    "AuthError",
    "ClientClosedError",
    "CommandTimeoutError",
    "Config",
    "ConfigError",
    "ConfigFileError",
    "ConnectError",
    "ConstantBackOff",
    "CountDownLatch",
    "ExponentialBackOff",
    "FairLock",
    "Fence",
    "FencedLock",
    "FencedResource",
    "GroupExtendError",
    "HandOffError",
    "InvalidLockNameError",
    "Lock",
    "LockLost",
    "LockNotOwnedError",
    "LockReentryError",
    "LockTimeoutError",
    "LockUnavailableError",
    "MultiLock",
    "NoSyncedReplicasError",
    "NonReentrantFairLock",
    "NonReentrantLock",
    "PermitExpirableSemaphore",
    "PermitNotHeldError",
    "QueuedLock",
    "ReadLock",
    "ReadWriteLock",
    "RedLock",
    "Redisson",
    "RedissonError",
    "Semaphore",
    "ServerRefusedError",
    "SpinLock",
    "StaleTokenError",
    "UsageError",
    "WriteLock",
    "__version__",
    "current_owner_id",
]

if not TYPE_CHECKING:  # hidden from type checkers, which would accept any name through it

    def __getattr__(name: str) -> Any:
        return moved_attribute(__name__, name, _MOVED)
