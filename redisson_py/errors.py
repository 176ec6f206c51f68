"""Every error redisson-py raises on purpose.

All of them derive from :class:`RedissonError`, so ``except RedissonError`` catches what
the library reports about itself; errors from redis-py that say nothing more than redis-py
already says (a plain connection refused mid-operation, say) are passed through as they are.
No message built here ever contains a password.
"""

from __future__ import annotations

from collections.abc import Mapping


class RedissonError(Exception):
    """Base class of the errors redisson-py raises."""


class ConfigError(RedissonError, ValueError):
    """A configuration is malformed.

    The message names the key path (``singleServerConfig.address``) and, when the config
    came from YAML, the line. ``path`` and ``line`` carry the same facts for programs.
    """

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None):
        super().__init__(message)
        self.path = path
        self.line = line


class TopologyError(RedissonError):
    """A topology spec (``topologies/*.yaml``) is malformed or cannot be started."""


class ConnectError(RedissonError, ConnectionError):
    """No configured server could be reached when the client was created.

    ``attempts`` maps each address tried to the reason it failed, in the order tried.
    """

    def __init__(self, message: str, attempts: Mapping[str, str] | None = None):
        super().__init__(message)
        self.attempts = dict(attempts or {})


class AuthError(ConnectError):
    """The server refused the credentials (wrong password or unknown user)."""


class LockNotOwnedError(RedissonError, RuntimeError):
    """The caller released a lock it does not hold.

    Raised by ``unlock()`` when the current thread (sync) or task (asyncio) holds no hold
    on the lock, including when the lock was lost behind its back (expired, deleted, or
    not renewed in time). Like :meth:`threading.Lock.release`, it is a ``RuntimeError``.
    """


class NoSyncedReplicasError(RedissonError):
    """An acquire reached the master but not enough replicas acknowledged it in time.

    The acquire has been undone; the caller holds nothing. Raised where the topology
    says the master has healthy replicas and ``check_lock_synced_slaves`` is on.
    """

    def __init__(self, message: str, *, lock_name: str, acknowledged: int, required: int):
        super().__init__(message)
        self.lock_name = lock_name
        self.acknowledged = acknowledged
        self.required = required


class LockUnavailableError(RedissonError):
    """A multi-node lock could not be acquired because its nodes failed, not because
    another owner held it.

    ``errors`` maps each failing member (its lock name and address) to the error it gave.
    """

    def __init__(self, message: str, errors: Mapping[str, BaseException]):
        super().__init__(message)
        self.errors = dict(errors)
