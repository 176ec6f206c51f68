"""The enumerations of Redisson's config, by the same names and values.

They are `enum.StrEnum`, so ``ReadMode.SLAVE == "SLAVE"`` and config attributes
accept the plain name.
"""

from __future__ import annotations

from enum import StrEnum


class ReadMode(StrEnum):
    """Where read commands go in master/slave, sentinel and cluster modes."""

    SLAVE = "SLAVE"
    """Replicas; the master when no replica is available (Redisson's default)."""
    MASTER = "MASTER"
    """The master only."""
    MASTER_SLAVE = "MASTER_SLAVE"
    """The master and the replicas."""


class SubscriptionMode(StrEnum):
    """Which nodes carry pub/sub subscriptions (lock wake-ups)."""

    SLAVE = "SLAVE"
    MASTER = "MASTER"


class SslVerificationMode(StrEnum):
    """How much of the server's TLS certificate is checked."""

    NONE = "NONE"
    """No verification at all."""
    CA_ONLY = "CA_ONLY"
    """The chain must lead to a trusted CA; the host name is not checked."""
    STRICT = "STRICT"
    """Chain and host name are both checked (the default)."""


class ShardedSubscriptionMode(StrEnum):
    """Whether cluster mode uses sharded pub/sub (``SSUBSCRIBE``, Redis 7+)."""

    AUTO = "AUTO"
    """Sharded pub/sub when every node supports it."""
    ON = "ON"
    OFF = "OFF"


class Protocol(StrEnum):
    """The RESP protocol version spoken to the servers."""

    RESP2 = "RESP2"
    RESP3 = "RESP3"

    @property
    def version(self) -> int:
        """The number redis-py's ``protocol=`` argument takes: 2 or 3."""
        return 2 if self is Protocol.RESP2 else 3


class LockSyncMode(StrEnum):
    """How a lock grant is confirmed when ``checkLockSyncedSlaves`` is on (a redisson-py
    extension; Redisson has only the first)."""

    WAIT = "WAIT"
    """``WAIT``: the replicas received the grant (in memory)."""
    WAITAOF = "WAITAOF"
    """``WAITAOF 1 N``: the master and N replicas fsynced it to their append-only files
    (Redis >= 7.2, Valkey; needs ``appendonly yes``)."""
