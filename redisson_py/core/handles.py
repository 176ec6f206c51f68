"""What the sync and asyncio lock objects share: identity, argument checks, and the
`LockRef` each operation runs on.

The shells subclass these and add only the public methods, each of which runs one flow
with the current thread (sync) or task (asyncio) as the owner.
"""

from __future__ import annotations

import copy
import functools
import inspect
import math
from collections.abc import Callable, Generator
from typing import Any, Generic, TypeVar

from redisson_py.config.model import Config
from redisson_py.core.effects import Effect
from redisson_py.core.flows import quorum
from redisson_py.core.flows.calls import guarded
from redisson_py.core.flows.handoff import HoldToken
from redisson_py.core.flows.lock_kinds import REENTRANT, LockKind, LockRef
from redisson_py.core.keyspace import owner_field
from redisson_py.core.routing.manager_base import ManagerBase
from redisson_py.core.routing.naming import prefixed_name
from redisson_py.core.state import events
from redisson_py.core.state.client_state import ClientState, Runtime
from redisson_py.core.state.events import LockEvent
from redisson_py.core.state.group_holds import GroupState
from redisson_py.core.state.holds import LostCallback
from redisson_py.core.state.options import lock_settings
from redisson_py.errors import (
    ArgumentError,
    ArgumentOverflowError,
    ArgumentTypeError,
    ClientClosedError,
    InvalidLockNameError,
    LockTimeoutError,
)

MIN_LEASE = 0.001
"""The shortest lease: PEXPIRE counts whole milliseconds, and a lease that rounds to
0 ms would expire (or be re-entered) before the acquire even returns."""

MAX_LEASE = 10**9
"""The longest lease, ``max_hold_time`` (but ``math.inf``), extension or semaphore
lease, in seconds: 10**9 s, about 31.7 years. Below every bound met on the way: Redis
adds the lease in ms to its clock in a signed 64-bit int (PEXPIRE fails past about
9.2e15 s; the scripts refuse a TTL above 2**53 - 1 ms, see
``redisson_py.core.scripts.ttl_guard``); the client's own
timers (``threading.TIMEOUT_MAX``, about 9.2e9 s on Linux; the event loop's timers;
monotonic seconds plus a lease, still exact to the microsecond) do too. A longer value
is an [`ArgumentOverflowError`][redisson_py.errors.ArgumentOverflowError] naming it and
this limit; for "for ever", take no lease (the watchdog) or ``max_hold_time=math.inf``.
A wait above it is a wait for ever (`check_wait`)."""


def _too_long(
    what: str, name: str, argument: str, value: float, instead: str | None
) -> ArgumentOverflowError:
    hint = "" if instead is None else f"; for no end, {instead}"
    return ArgumentOverflowError(
        f"{what} {name!r}: {argument}={value!r} s is above the longest lease redisson-py"
        f" sends to Redis, MAX_LEASE = 10**9 s (about 31.7 years){hint}"
    )


def check_lease(
    name: str,
    lease_time: float | None,
    *,
    what: str = "lock",
    none: str | None = "the watchdog",
    argument: str = "lease_time",
) -> float | None:
    """The one check of a lease (and of an extension, which is a new lease):
    ``lease_time`` must be a finite number of seconds, at least `MIN_LEASE` (1 ms) and
    at most `MAX_LEASE` (else an
    [`ArgumentOverflowError`][redisson_py.errors.ArgumentOverflowError]), or None where
    None is allowed (``none`` says what no lease means; ``none=None``: not
    allowed); else an [`ArgumentError`][redisson_py.errors.ArgumentError] naming the
    ``what`` (a lock, a semaphore...) ``name`` and the ``argument``."""
    if lease_time is None and none is not None:
        return None
    if isinstance(lease_time, bool) or not isinstance(lease_time, int | float):
        allowed = "seconds" if none is None else "seconds or None"
        raise ArgumentTypeError(
            f"{what} {name!r}: {argument} must be {allowed}, not {lease_time!r}"
        )
    if not math.isfinite(lease_time) or lease_time < MIN_LEASE:
        alternative = "" if none is None else f", or None for {none}"
        raise ArgumentError(
            f"{what} {name!r}: {argument} must be at least 0.001 s (1 ms){alternative};"
            f" got {lease_time!r}"
        )
    if lease_time > MAX_LEASE:
        instead = None if none is None else f"pass None ({none})"
        raise _too_long(what, name, argument, lease_time, instead)
    return float(lease_time)


def check_wait(
    name: str, wait_time: float | None, *, what: str = "lock", argument: str = "wait_time"
) -> float | None:
    """``wait_time`` must be None (for ever) or a non-negative number of seconds; the
    error names the ``what`` (a lock, a semaphore...) ``name`` and the ``argument``. A
    wait above `MAX_LEASE` (31.7 years; infinity too) is a wait for ever (None): its
    milliseconds would overflow the client's timers (a float's range, past 1e305 s) and
    a fair lock's queue entry would outlive any holder."""
    if wait_time is None:
        return None
    if isinstance(wait_time, bool) or not isinstance(wait_time, int | float):
        raise ArgumentTypeError(f"{what} {name!r}: {argument} must be seconds, not {wait_time!r}")
    if math.isnan(wait_time) or wait_time < 0:
        raise ArgumentError(
            f"{what} {name!r}: {argument} must be 0 or more seconds; got {wait_time!r}"
        )
    return None if wait_time > MAX_LEASE else float(wait_time)


def check_max_hold(
    name: str, max_hold_time: float | None, lease: float | None, *, what: str = "lock"
) -> float | None:
    """``max_hold_time`` checked: None (the config's ``lockMaxHoldTime``), ``math.inf``
    (no cap, whatever the config says) or `MIN_LEASE` to `MAX_LEASE` seconds; an explicit cap
    with a lease is an [`ArgumentError`][redisson_py.errors.ArgumentError] (a leased
    hold is never renewed: its lease is its cap)."""
    if max_hold_time is None:
        return None
    if isinstance(max_hold_time, bool) or not isinstance(max_hold_time, int | float):
        raise ArgumentTypeError(
            f"{what} {name!r}: max_hold_time must be seconds or None, not {max_hold_time!r}"
        )
    if math.isnan(max_hold_time) or max_hold_time < MIN_LEASE:
        raise ArgumentError(
            f"{what} {name!r}: max_hold_time must be at least 0.001 s (1 ms), math.inf for"
            f" no cap, or None for the config's lockMaxHoldTime; got {max_hold_time!r}"
        )
    if MAX_LEASE < max_hold_time < math.inf:
        raise _too_long(what, name, "max_hold_time", max_hold_time, "pass math.inf")
    if lease is not None:
        raise ArgumentError(
            f"{what} {name!r}: max_hold_time caps the watchdog's renewals, and a hold with"
            f" lease_time={lease:g} is never renewed (its lease is its cap); give one or"
            " the other"
        )
    return float(max_hold_time)


def release_failed_note(what: str, error: BaseException) -> str:
    """The note a ``with`` block's exception gets when the release at its end failed
    too (the block's exception stays the one raised)."""
    return f"releasing {what} at the end of the block failed too: {type(error).__name__}: {error}"


def acquire_wait(name: str, blocking: bool, timeout: float, timeout_max: float) -> float | None:
    """``threading.Lock.acquire``'s arguments as a wait time (None: for ever), refused
    as ``threading.Lock.acquire`` refuses them: a timeout that is not a number
    ([`ArgumentTypeError`][redisson_py.errors.ArgumentTypeError], a ``TypeError``), a
    non-blocking acquire with a timeout, a negative timeout but -1, NaN
    ([`ArgumentError`][redisson_py.errors.ArgumentError], a ``ValueError``), a timeout
    above ``timeout_max`` (the shell's ``threading.TIMEOUT_MAX``; infinity too:
    [`ArgumentOverflowError`][redisson_py.errors.ArgumentOverflowError], an
    ``OverflowError``)."""
    if isinstance(timeout, bool) or not isinstance(timeout, int | float):
        raise ArgumentTypeError(f"lock {name!r}: timeout must be seconds, not {timeout!r}")
    if not blocking:
        if timeout != -1:
            raise ArgumentError(f"lock {name!r}: a non-blocking acquire cannot have a timeout")
        return 0.0
    if timeout == -1:
        return None
    if math.isnan(timeout) or timeout < 0:
        raise ArgumentError(
            f"lock {name!r}: timeout must be -1 (no limit) or 0 or more seconds; got {timeout!r}"
        )
    if timeout > timeout_max:
        raise ArgumentOverflowError(
            f"lock {name!r}: timeout={timeout!r} s is above threading.TIMEOUT_MAX"
            f" ({timeout_max:g} s), which threading.Lock.acquire refuses too; use -1 to"
            " wait for ever"
        )
    return check_wait(name, timeout)


def check_name(name: object, what: str = "lock") -> str:
    """``name`` checked as the name of a lock (or other object: ``what``): a non-empty
    string of encodable text; else
    [`InvalidLockNameError`][redisson_py.errors.InvalidLockNameError]."""
    if not isinstance(name, str) or not name:
        raise InvalidLockNameError(f"a {what} name must be a non-empty string, not {name!r}")
    try:
        name.encode("utf-8")
    except UnicodeEncodeError as exc:  # a lone surrogate: no Redis key can hold it
        raise InvalidLockNameError(
            f"{what} name {name!r} is not valid text: character {exc.start} is a lone "
            "surrogate, which has no UTF-8 form"
        ) from None
    return name


def owner_of(name: str, owner_id: object) -> int:
    """``owner_id`` checked as an owner id (an int from ``current_owner_id()``)."""
    if isinstance(owner_id, bool) or not isinstance(owner_id, int):
        raise ArgumentTypeError(
            f"lock {name!r}: an owner id is an int (from current_owner_id()), not {owner_id!r}"
        )
    return owner_id


class LockHandle:
    """Base of [`redisson_py.Lock`][redisson_py.Lock] and
    [`redisson_py.asyncio.Lock`][redisson_py.asyncio.Lock] and of every other lock
    kind's class in both shells."""

    kind: LockKind = REENTRANT
    """The kind of lock: its data layout and scripts (see `redisson_py.core.flows.lock_kinds`)."""

    def __init__(self, client: Any, name: str, *, on_lock_lost: LostCallback | None = None):
        check_name(name)
        self._client = client
        self.name = name
        by_slot = client._manager.routes_by_slot
        self._channel = prefixed_name(self.kind.channel_prefix, name, by_slot=by_slot)
        self._aux = self.kind.aux_keys(name, by_slot)
        self.on_lock_lost = on_lock_lost
        """Called once when a hold of this lock is found lost (overrides the client's)."""
        self.owner_id: int | str | None = None
        """The owner this handle acts for (see ``owned_by``); None: the calling thread
        (sync) or task (asyncio)."""
        self._last_ref: tuple[tuple[Any, ...], LockRef] | None = None
        self._field: str | None = None
        """The hash field of a hold adopted from another client (``adopt_hold``); None:
        this client's own ``<client id>:<owner id>``."""

    def _view(self, owner_id: int | str) -> Any:
        """A copy of this handle acting for ``owner_id`` (checked by the shell)."""
        view = copy.copy(self)
        view.owner_id = owner_id
        view._field = None
        return view

    def _adopted_view(self, token: HoldToken) -> Any:
        """A copy of this handle acting for the field ``token`` names (an adopted hold)."""
        view = copy.copy(self)
        view.owner_id = token.owner_id
        view._field = token.field
        view._last_ref = None
        return view

    @staticmethod
    def _check_extension(name: str, seconds: float) -> float:
        """``extend``'s argument: a new lease, checked as one."""
        lease = check_lease(name, seconds, none=None, argument="seconds")
        assert lease is not None
        return lease

    def _ref(self, owner_id: int | str, group_on_lost: Any = None) -> LockRef:
        state = self._client._state
        if state.closed:
            raise ClientClosedError(
                f"lock {self.name!r}: the client is shut down; create a new client"
            )
        # The last ref made for one owner is kept (a lock()/unlock() loop makes the same
        # one every call): it depends on the owner, the client id (new after a fork) and
        # the lost-lock callback, so a change of any of them makes a new one. One entry,
        # read and replaced as one tuple, so threads sharing a handle see a matching pair.
        key = (owner_id, state.client_id, self.on_lock_lost, self._field)
        last = self._last_ref
        if group_on_lost is None and last is not None and last[0] == key:
            return last[1]
        field = self._field
        ref = LockRef(
            self.name,
            owner_field(state.client_id, owner_id) + self.kind.owner_suffix
            if field is None
            else field,
            self._client._manager,
            state,
            self.on_lock_lost,
            group_on_lost,
            self._channel,
            self.kind,
            self._aux,
            adopted=field is not None,
        )
        if group_on_lost is None:
            self._last_ref = (key, ref)
        return ref

    def _flow(
        self, owner_id: int | str, flow: Callable[..., Generator[Effect, Any, T]], *args: Any
    ) -> Generator[Effect, Any, T]:
        """``flow(ref, *args)`` for this lock and owner, its errors made ours
        (`guarded`)."""
        ref = self._ref(owner_id)
        return guarded(ref, flow(ref, *args))

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"


class GroupHandle:
    """Base of the MultiLock and RedLock classes of both shells."""

    kind = "MultiLock"

    def __init__(
        self,
        *locks: LockHandle,
        on_lock_lost: LostCallback | None = None,
        member_timeout: float | None = None,
    ):
        if not locks:
            raise ArgumentError(f"a {self.kind} needs at least one lock")
        seen: set[tuple[int, str]] = set()
        for lock in locks:
            if not isinstance(lock, LockHandle):
                raise ArgumentTypeError(f"a {self.kind} is made of locks, not {lock!r}")
            if lock.kind.passes_on:
                # A grant passed on to a member its group stopped waiting for would
                # hold that member until the grant expired: not supported (yet).
                raise ArgumentError(
                    f"a {self.kind} cannot have queued lock {lock.name!r} as a member"
                )
            # The same lock twice (same name through the same connection manager) would
            # be one hold counted as several votes: one master granting a "majority".
            key = (id(lock._client._manager), lock.name)
            if key in seen:
                raise ArgumentError(
                    f"a {self.kind} cannot hold lock {lock.name!r} twice through the same"
                    " client: each member must be a distinct lock (for a RedLock, one per"
                    " independent master)"
                )
            seen.add(key)
        if member_timeout is not None and (
            isinstance(member_timeout, bool)
            or not isinstance(member_timeout, int | float)
            or not math.isfinite(member_timeout)
            or member_timeout <= 0
        ):
            raise ArgumentError(f"{self.kind}: member_timeout must be positive seconds")
        self.locks: tuple[LockHandle, ...] = tuple(locks)
        self.member_timeout = member_timeout
        runtime = locks[0]._client._state.runtime
        names = [lock.name for lock in locks]
        self._group = GroupState(self.kind, names, self._need(len(locks)), runtime)
        self._group.on_lock_lost = on_lock_lost
        self._group.fallback_callback = lambda: self.locks[0]._client.on_lock_lost
        self.owner_id: int | None = None
        """The owner this group acts for (see ``owned_by``); None: the calling thread
        (sync) or task (asyncio)."""
        self._last_refs: tuple[tuple[Any, ...], tuple[LockRef, ...]] | None = None

    def _need(self, members: int) -> int:
        return members

    def _view(self, owner_id: int) -> Any:
        """A copy of this group acting for ``owner_id`` (same members, same hold table)."""
        view = copy.copy(self)
        view.owner_id = owner_id
        return view

    @property
    def on_lock_lost(self) -> LostCallback | None:
        """Called once when the group is found lost (a member of a MultiLock; below quorum
        for a RedLock); defaults to the first member's client's callback."""
        return self._group.on_lock_lost

    @on_lock_lost.setter
    def on_lock_lost(self, callback: LostCallback | None) -> None:
        self._group.on_lock_lost = callback

    def _refs(self, owner_id: int | str) -> list[LockRef]:
        # The members' refs for the last owner are kept, as LockHandle._ref keeps its
        # own: made again for another owner, a new client id (a fork) or a member's new
        # lost-lock callback; never handed out once a member's client is shut down.
        key = (
            owner_id,
            *((lock._client._state.client_id, lock.on_lock_lost) for lock in self.locks),
        )
        last = self._last_refs
        if last is not None and last[0] == key and not any(r.state.closed for r in last[1]):
            return list(last[1])
        owner = str(owner_id)
        refs = [
            lock._ref(owner_id, functools.partial(self._group.member_lost, owner, index))
            for index, lock in enumerate(self.locks)
        ]
        self._last_refs = (key, tuple(refs))
        return refs

    def _check(
        self, wait_time: float | None, lease_time: float | None
    ) -> tuple[float | None, float | None]:
        label = self._group.label
        return check_wait(label, wait_time), check_lease(label, lease_time)

    def _check_extension(self, seconds: float) -> float:
        """``extend``'s argument: a new lease, checked as one."""
        return LockHandle._check_extension(self._group.label, seconds)

    def __repr__(self) -> str:
        return f"<{self._group.label}>"


class RedLockHandle(GroupHandle):
    """A RedLock needs a quorum (a strict majority) of its members."""

    kind = "RedLock"

    def _need(self, members: int) -> int:
        return quorum.quorum(members)


L = TypeVar("L", bound=LockHandle)
T = TypeVar("T")
M = TypeVar("M", bound=ManagerBase)


class ClientHandle(Generic[L, M]):
    """What the sync and asyncio clients share: identity, settings, the lost-lock
    callback and lock handles. ``L`` is the shell's lock; ``M`` its manager."""

    def __init__(
        self,
        config: Config,
        manager: M,
        on_lock_lost: LostCallback | None,
        runtime: Runtime,
    ):
        self.config = config
        self._manager = manager
        settings = lock_settings(config, manager.mode.section)
        self._state = ClientState(settings, on_lock_lost, runtime=runtime)

    @property
    def id(self) -> str:
        """This client's id (a UUID), the first half of every owner field it writes."""
        return self._state.client_id

    @property
    def on_lock_lost(self) -> LostCallback | None:
        """Called when a hold is found lost, unless the lock has its own callback (from
        the watchdog thread, or on the asyncio client's event loop)."""
        return self._state.on_lock_lost

    @on_lock_lost.setter
    def on_lock_lost(self, callback: LostCallback | None) -> None:
        self._state.on_lock_lost = callback

    def add_listener(self, listener: Callable[[LockEvent], object]) -> None:
        """Call ``listener`` with a [`LockEvent`][redisson_py.events.LockEvent] for every
        acquire, release, renewal, failed renewal and loss of this client's locks;
        synchronously where it happens (keep it cheap); its exceptions are logged."""
        events.add_listener(self._state, listener)

    def remove_listener(self, listener: Callable[[LockEvent], object]) -> None:
        """Stop calling ``listener``; one never added is ignored."""
        events.remove_listener(self._state, listener)

    def _check_open(self) -> None:
        if self._state.closed:
            raise ClientClosedError("the client is shut down; create a new client")

    def _synchronized_lock(
        self,
        name: str,
        wait_time: float | None,
        lease_time: float | None,
        max_hold_time: float | None,
        func: Callable[..., Any],
        *,
        coroutine: bool,
    ) -> tuple[L, float | None, float | None, float | None]:
        """``synchronized``'s checks, made when it decorates: the lock, wait, lease and
        renewal cap."""
        lock = self.get_lock(name)
        wait, lease = check_wait(name, wait_time), check_lease(name, lease_time)
        cap = check_max_hold(name, max_hold_time, lease)
        if not callable(func):
            raise ArgumentTypeError(f"synchronized({name!r}) decorates functions, not {func!r}")
        if inspect.isgeneratorfunction(func) or inspect.isasyncgenfunction(func):
            raise ArgumentTypeError(
                f"synchronized({name!r}) cannot decorate generator {func!r}: the lock would"
                " be released before its body runs; hold the lock inside it instead"
            )
        if inspect.iscoroutinefunction(func) != coroutine:
            shell = "asyncio" if coroutine else "sync"
            kind = "plain functions" if not coroutine else "async def functions"
            raise ArgumentTypeError(
                f"synchronized({name!r}) of the {shell} client decorates {kind}, not"
                f" {func!r}; use the {'sync' if coroutine else 'asyncio'} client for it"
            )
        return lock, wait, lease, cap

    @staticmethod
    def _timed_out(name: str, wait: float) -> LockTimeoutError:
        return LockTimeoutError(
            f"lock {name!r} was not acquired within wait_time={wait:g} s: another owner"
            " held it; the function was not called",
            lock_name=name,
            wait_time=wait,
        )

    def get_lock(self, name: str, *, on_lock_lost: LostCallback | None = None) -> L:
        """The shell's reentrant lock ``name`` (each shell client defines it, with its
        own lock class as the return type its pages show)."""
        raise NotImplementedError

    def _adoptable(self, token: str, on_lock_lost: LostCallback | None) -> tuple[L, HoldToken]:
        """``adopt_hold``'s checks: the token read, and a lock of its kind acting for
        its field ([`ArgumentError`][redisson_py.errors.ArgumentError] for a token that
        is not one, or names a kind this client has no lock for)."""
        self._check_open()
        parsed = HoldToken.decode(token)
        name = parsed.lock
        client: Any = self  # the shell's client, which has every get_* method
        getters: dict[str, Callable[[], Any]] = {
            "reentrant": lambda: self.get_lock(name, on_lock_lost=on_lock_lost),
            "fair": lambda: client.get_fair_lock(name, on_lock_lost=on_lock_lost),
            "queued": lambda: client.get_queued_lock(name, on_lock_lost=on_lock_lost),
            "non-reentrant": lambda: client.get_non_reentrant_lock(name, on_lock_lost=on_lock_lost),
            "non-reentrant fair": lambda: client.get_non_reentrant_fair_lock(
                name, on_lock_lost=on_lock_lost
            ),
            "spin": lambda: client.get_spin_lock(name, on_lock_lost=on_lock_lost),
            "fenced": lambda: client.get_fenced_lock(name, on_lock_lost=on_lock_lost),
            "read": lambda: client.get_read_write_lock(name).read_lock(on_lock_lost=on_lock_lost),
            "write": lambda: client.get_read_write_lock(name).write_lock(on_lock_lost=on_lock_lost),
        }
        getter = getters.get(parsed.kind)
        if getter is None:
            raise ArgumentError(
                f"hold token for lock {name!r} names kind {parsed.kind!r}, which has no"
                f" hand-off (one of {', '.join(sorted(getters))})"
            )
        view: L = getter()._adopted_view(parsed)
        return view, parsed

    def __repr__(self) -> str:
        kind = self._manager.mode.kind
        return f"<{type(self).__module__}.{type(self).__name__} {kind} {self.id}>"
