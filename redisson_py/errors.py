"""Every error redisson-py raises on purpose.

Every exception that leaves the public API (clients, locks, MultiLock/RedLock, their
asyncio twins) derives from [`RedissonError`][redisson_py.errors.RedissonError], so
``except RedissonError`` catches them all. A redis-py error met on the way is wrapped,
never passed through: network failures become
[`ConnectError`][redisson_py.errors.ConnectError] or
[`CommandTimeoutError`][redisson_py.errors.CommandTimeoutError] (also the builtin
``ConnectionError`` / ``TimeoutError``), a node's refusal to serve (``NOREPLICAS``,
``READONLY``, ``LOADING``, ``BUSY``...)
[`ServerRefusedError`][redisson_py.errors.ServerRefusedError], naming the lock and the
node, with redis-py's error as ``__cause__``. The one exception is
[`redisson_py.Redisson.redis`][redisson_py.Redisson.redis], which hands out a plain
redis-py client for the user's own commands. No message built here ever contains a
password.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from redisson_py._deprecate import moved_attribute

if TYPE_CHECKING:
    # Type checkers see the moved name too, so typed code on the old import still checks
    # (the redundant alias is how a type checker is told it is a re-export).
    from redisson_py.testing.errors import TopologyError as TopologyError  # noqa: PLC0414

_MOVED = {"TopologyError": ("redisson_py.testing", "0.3.0")}
"""Names that moved out of this module (and out of `redisson_py`): each one's new module
and the version that removes the old name. The harness's error went to the harness; the
old import warns, and the new module is imported on first use only. This shim is the one
place the errors (the package's lowest layer) name the harness: it goes in 0.3.0
(``tests/test_architecture.py`` fails once ``__version__`` reaches that)."""


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


class ConfigFileError(ConfigError, OSError):
    """A config file could not be read (missing, not readable). Also an ``OSError``
    whose ``errno`` and ``filename`` are the operating system's."""

    def __init__(self, message: str, *, errno: int | None, filename: str):
        super().__init__(message)
        self.message = message
        self.errno = errno
        self.filename = filename

    def __str__(self) -> str:  # OSError's own would print "[Errno 2] None: ..."
        return self.message


class ArgumentError(RedissonError, ValueError):
    """A call got an argument it cannot use (a negative wait, a lease under 1 ms, a
    RedLock naming one lock twice); the message names the lock and the argument."""


class InvalidLockNameError(ArgumentError):
    """A lock name is not a non-empty string of encodable text (a lone surrogate such as
    ``"a\\ud800"`` has no UTF-8 form, so it can never be a Redis key)."""


class ArgumentTypeError(ArgumentError, TypeError):
    """A call got an argument of the wrong type (a string where seconds belong)."""


class ArgumentOverflowError(ArgumentError, OverflowError):
    """A call got a number of seconds too large to count: a lease, ``max_hold_time``,
    extension or semaphore lease above 10**9 s, about 31.7 years
    (``redisson_py.core.handles.MAX_LEASE``), or an ``acquire(timeout=...)``
    above ``threading.TIMEOUT_MAX``. Also an ``OverflowError``, as
    `threading.Lock.acquire` raises for such a timeout. Raised before anything is sent;
    the message names the lock, the value and the limit."""


class UsageError(RedissonError, RuntimeError):
    """The API was called where it cannot work, such as an asyncio lock outside a task."""


class ClientClosedError(RedissonError, RuntimeError):
    """The client was shut down; it takes no more calls (create a new one)."""


class ConnectError(RedissonError, ConnectionError):
    """A server could not be reached or the connection broke.

    Raised by ``Redisson.create()`` when no configured server could be reached
    (``attempts`` maps each address tried to the reason it failed, in the order tried),
    and by lock calls when the node serving the lock stayed unreachable through the
    retries the call had time for (``lock_name`` and ``address`` say which).

    Raised by ``create()``, its message ends with what to do next (``next_step``): the
    config file and line of the address and ``redisson-py config check FILE --connect``
    for a config loaded from YAML, what to check for one built in code.
    """

    def __init__(
        self,
        message: str,
        attempts: Mapping[str, str] | None = None,
        *,
        lock_name: str | None = None,
        address: str | None = None,
    ):
        super().__init__(message)
        self.attempts = dict(attempts or {})
        self.lock_name = lock_name
        self.address = address
        self.next_step: str | None = None


class CommandTimeoutError(RedissonError, TimeoutError):
    """A node did not answer a lock command within the command timeout (``timeout``),
    or within the time the caller's wait had left; ``lock_name`` and ``address`` say
    which lock and node. The command may still have been applied: the lock flows undo
    what an unanswered acquire may have taken before they raise this."""

    def __init__(self, message: str, *, lock_name: str | None = None, address: str | None = None):
        super().__init__(message)
        self.lock_name = lock_name
        self.address = address


class AuthError(ConnectError):
    """The server refused the credentials (wrong password or unknown user)."""


class ServerRefusedError(ConnectError):
    """A node answered, but refused to run the command now; nothing was applied.

    ``refusal`` is Redis's code and ``text`` its words after it; ``lock_name`` and
    ``address`` say which lock (or semaphore, latch, resource: its name) and which node.
    ``transient`` says whether the refusal ends by itself:

    - transient: ``NOREPLICAS`` (fewer replicas in sync than ``min-replicas-to-write``),
      ``READONLY`` (the node is a replica: a failover under way, or a config naming a
      replica), ``MASTERDOWN`` (a replica that lost its master), ``CLUSTERDOWN``,
      ``TRYAGAIN`` (a slot in migration), ``LOADING`` (a restart loading its dataset),
      ``BUSY`` (a script or function running; ``SCRIPT KILL`` ends one);
    - not transient: ``OOM`` (``maxmemory`` reached, nothing evictable) and
      ``MISCONF`` (the node cannot persist): raised at once.

    A transient refusal is retried as a connection error is: a wait (``try_lock(w)``,
    ``lock()``, a semaphore's or latch's wait) retries it until its deadline (for ever,
    with WARNINGs, without one) and raises this only when a refusal, not another holder,
    is why it ended; a call without a wait (``unlock()``, reads) retries it through
    ``retryAttempts`` and ``retryDelay``, then raises this. The bounds of "Deadlines and
    errors" hold. Redis refuses before it runs anything (in a script, at its first write),
    so a retry is safe and a refused acquire leaves nothing to undo.

    One class, not one per code: what a caller can do depends on whether the refusal
    lasts (``transient``), not on which one it is, and servers add codes (Valkey, Redis
    releases) that need no new class; ``refusal`` tells them apart. It is a
    [`ConnectError`][redisson_py.errors.ConnectError], as
    [`AuthError`][redisson_py.errors.AuthError] is: the node cannot serve the call, not
    another holder, and ``READONLY``, ``TRYAGAIN``, ``CLUSTERDOWN``, ``MASTERDOWN`` and
    ``LOADING`` were raised as ``ConnectError`` before this class existed, so code that
    catches ``ConnectError`` (or ``ConnectionError``) goes on catching them; catch this
    class first to tell a refusal from an unreachable node. Other error replies (such as
    ``WRONGTYPE``: a key used by something else) are plain
    [`RedissonError`][redisson_py.errors.RedissonError].
    """

    def __init__(
        self,
        message: str,
        *,
        lock_name: str | None,
        address: str | None,
        refusal: str,
        text: str,
        transient: bool,
    ):
        super().__init__(message, lock_name=lock_name, address=address)
        self.refusal = refusal
        self.text = text
        self.transient = transient


class LockNotOwnedError(RedissonError, RuntimeError):
    """The caller released a lock it does not hold.

    Raised by ``unlock()`` when the current thread (sync) or task (asyncio) holds no hold
    on the lock, including when the lock was lost behind its back (expired, deleted, or
    not renewed in time). Like `threading.Lock.release`, it is a ``RuntimeError``.
    """


class HandOffError(RedissonError, RuntimeError):
    """A hold's hand-off (``export_hold()`` / ``adopt_hold(token)``, see
    ``docs/handoff.md``) was refused. Nothing changed on the server: an export refused
    leaves the hold with its owner, an adoption refused adopts nothing.

    ``lock_name`` names the lock, ``reason`` says why in one word: ``"not-held"`` (the
    exporter holds nothing, or its hold was reported lost), ``"group"`` (a
    MultiLock/RedLock member: the group's hold is exported whole or not at all),
    ``"readers-inside"`` (a write hold whose owner also holds the read lock, or the
    other way round: one field would be adopted, the other orphaned), ``"gone"`` (the
    adopter found the token's field no longer in the lock's hash: released, expired,
    or never there), ``"exported"`` (the owner exported this hold, and its adopter
    still has it), ``"adopted-released"`` (an adopted view may re-enter its hold, not
    take the lock anew once released).
    """

    def __init__(self, message: str, *, lock_name: str, reason: str):
        super().__init__(message)
        self.lock_name = lock_name
        self.reason = reason


class LockReentryError(RedissonError, RuntimeError):
    """The owner asked again for a non-reentrant lock it already holds (Redisson's
    non-reentrant locks raise ``IllegalMonitorStateException`` then). Raised at once,
    without waiting; the owner's hold is unchanged. ``lock_name`` names the lock."""

    def __init__(self, message: str, *, lock_name: str):
        super().__init__(message)
        self.lock_name = lock_name


class PermitNotHeldError(RedissonError, ValueError):
    """A permit-expirable semaphore's ``release(permit_id)`` named a permit that is not
    acquired: never acquired, released already, or its lease ended (Redisson raises
    ``IllegalArgumentException``); nothing changed then. Also raised when this client had
    reported the permit lost at its lease's safe end (a little before the lease ends):
    a permit the server still counted as acquired was released then, and the message
    says so. ``name`` and ``permit_id`` say which semaphore and permit."""

    def __init__(self, message: str, *, name: str, permit_id: str):
        super().__init__(message)
        self.name = name
        self.permit_id = permit_id


class LockTimeoutError(RedissonError, TimeoutError):
    """A call that must run under a lock could not have it within its wait time
    (raised by ``client.synchronized(name, wait_time=...)``); ``lock_name`` and
    ``wait_time`` say which lock and how long was waited. Another owner held it
    throughout: nothing was run and nothing is held."""

    def __init__(self, message: str, *, lock_name: str, wait_time: float):
        super().__init__(message)
        self.lock_name = lock_name
        self.wait_time = wait_time


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


class GroupExtendError(RedissonError):
    """A MultiLock's or RedLock's ``extend()`` did not reach the members acquiring needs
    (every member of a MultiLock, a majority of a RedLock), or, for a RedLock, took so
    long that the new lease left no validity.

    ``errors`` maps each member not extended (its lock name and node address) to why: a
    [`LockNotOwnedError`][redisson_py.errors.LockNotOwnedError] when the member answered
    that the owner no longer holds it, else the error it gave (down, timed out,
    refusing). ``extended`` names the members that were extended: they stay the owner's
    holds with the new lease, and ``unlock()`` releases them as usual. The group keeps
    the validity it had before the call, or the new lease's when that is shorter
    (``remaining_validity()``): nothing may be assumed held past it.
    """

    def __init__(
        self, message: str, errors: Mapping[str, BaseException], extended: tuple[str, ...]
    ):
        super().__init__(message)
        self.errors = dict(errors)
        self.extended = extended


class StaleTokenError(RedissonError):
    """A fenced resource refused a write: its token is smaller than the highest token
    the resource accepted (``highest``), or equal to it but first written by another
    owner (``tie``: a failover of the lock's deployment gave two holders one token, and
    the other wrote first). Nothing was written.

    The writer is no longer the holder the resource follows: it must stop its critical
    section, and take the lock again for a new token if the work must still be done.
    ``resource``, ``token`` and ``address`` say which resource, token and node.
    """

    def __init__(
        self,
        message: str,
        *,
        resource: str,
        token: int,
        highest: int,
        tie: bool,
        address: str | None = None,
    ):
        super().__init__(message)
        self.resource = resource
        self.token = token
        self.highest = highest
        self.tie = tie
        self.address = address


if not TYPE_CHECKING:  # hidden from type checkers, which would accept any name through it

    def __getattr__(name: str) -> Any:
        return moved_attribute(__name__, name, _MOVED)
