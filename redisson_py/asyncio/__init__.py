"""redisson-py for asyncio: the same locks, owned by tasks, with ``await``/``async with``."""

from __future__ import annotations

from redisson_py.asyncio.client import Redisson
from redisson_py.asyncio.count_down_latch import CountDownLatch
from redisson_py.asyncio.fenced_lock import FencedLock
from redisson_py.asyncio.fenced_resource import FencedResource
from redisson_py.asyncio.lock import Lock, current_owner_id
from redisson_py.asyncio.lock_kinds import (
    FairLock,
    NonReentrantFairLock,
    NonReentrantLock,
    QueuedLock,
    SpinLock,
)
from redisson_py.asyncio.multilock import MultiLock, RedLock
from redisson_py.asyncio.permit_semaphore import PermitExpirableSemaphore
from redisson_py.asyncio.read_write_lock import ReadLock, ReadWriteLock, WriteLock
from redisson_py.asyncio.semaphore import Semaphore
from redisson_py.config import Config
from redisson_py.core.flows.backoff import ConstantBackOff, ExponentialBackOff
from redisson_py.core.flows.fenced_resource import Fence
from redisson_py.core.state.holds import LockLost
from redisson_py.errors import (
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

# Config, Fence, LockLost and the errors are the same objects as in ``redisson_py``; they are
# here too so an asyncio program needs one import.
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
    "current_owner_id",
]
