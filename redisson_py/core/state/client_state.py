"""What one client instance knows, independent of how it does I/O.

A `ClientState` is shared by the sync and asyncio clients: the client id that
prefixes every owner field, the lock settings taken from the config, the table of holds,
and the client-wide lost-lock callback. Forking gives the child a new client id and an
empty table, so a child never unlocks, renews or reenters its parent's holds.
"""

from __future__ import annotations

import os
import uuid
import weakref
from collections.abc import Awaitable, Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any

from redisson_py.config.model import Config
from redisson_py.config.schema import by_attr
from redisson_py.config.sections import BaseConfig
from redisson_py.core.state.holds import HoldTable, LostCallback, TakenTable


def _config_default(settings: type[Any], attr: str) -> Any:
    # The default a config class declares for ``attr``: written there and only there.
    return by_attr(settings)[attr].default


@dataclass(frozen=True, slots=True)
class LockSettings:
    """Lock behaviour taken from the config; all times in seconds.

    ``retry_delay(attempt)`` gives the pause before retry ``attempt`` (1-based) after a
    connection error; ``latch_ttl`` is how long a release remembers its outcome for a
    retry, which must outlast every retry of that release. A client's settings come from its
    config (``lock_settings`` in ``core/state/options.py``); the defaults here are the
    config's own defaults (a top-level key, or a server section's), read from its
    declarations, so ``LockSettings()`` is what a default config gives.
    """

    watchdog_timeout: float = _config_default(Config, "lock_watchdog_timeout")
    check_lock_synced_slaves: bool = _config_default(Config, "check_lock_synced_slaves")
    slaves_sync_timeout: float = _config_default(Config, "slaves_sync_timeout")
    retry_attempts: int = _config_default(BaseConfig, "retry_attempts")
    retry_delay: Callable[[int], float] = _config_default(BaseConfig, "retry_delay").delay
    subscription_timeout: float = _config_default(BaseConfig, "subscription_timeout")
    command_timeout: float = _config_default(BaseConfig, "timeout")
    renew_batch_size: int = _config_default(Config, "lock_watchdog_batch_size")
    fair_lock_wait_timeout: float = _config_default(Config, "fair_lock_wait_timeout")
    """How long a fair lock's waiter that stopped retrying keeps its place (seconds)."""
    max_hold_time: float | None = _config_default(Config, "lock_max_hold_time") or None
    """The default cap on a watchdog hold's renewals (seconds; None: no cap, the config's
    0)."""
    latch_ttl: float = field(init=False)

    def __post_init__(self) -> None:
        # Computed once: a release sends it, and the retry delay of a jittered strategy
        # is not free to evaluate.
        attempts = range(1, self.retry_attempts + 1)
        worst_retry = max((self.retry_delay(n) for n in attempts), default=0.0)
        latch_ttl = max(1.0, (self.command_timeout + worst_retry) * max(1, self.retry_attempts))
        object.__setattr__(self, "latch_ttl", latch_ttl)

    def key_ttl(self, lease: float | None) -> float:
        """The rule "no lease means the watchdog", decided here and nowhere else: the TTL
        a hold's key gets is its ``lease``, or without one (None) the watchdog timeout,
        and the watchdog then renews it every `renew_interval`."""
        return self.watchdog_timeout if lease is None else lease

    @property
    def sync_replicas(self) -> float | None:
        """How long a write of a hold waits for the replicas' acknowledgement (a grant, a
        renewal, an extension): ``slaves_sync_timeout``, or None with replica sync off."""
        return self.slaves_sync_timeout if self.check_lock_synced_slaves else None

    @property
    def release_timeout(self) -> float:
        """How long `shutdown()` may spend releasing this client's holds, all at once:
        one command timeout plus the retry delays (the retries of a failed release
        fit in them), whatever the servers do."""
        delays = sum(self.retry_delay(n) for n in range(1, self.retry_attempts + 1))
        return self.command_timeout + delays

    @property
    def renew_interval(self) -> float:
        """How often the watchdog renews: a third of the watchdog timeout, as Redisson."""
        return self.watchdog_timeout / 3


def _undescribed(owner: str) -> str | None:
    return None


def _never_finished(owner: str) -> bool:
    """`Runtime.owner_finished` of a shell whose owners never finish with holds."""
    return False


@dataclass(frozen=True, slots=True)
class Runtime:
    """What the core needs of the world and does not take for itself: each shell gives
    its own (``RUNTIME`` in `redisson_py.asyncio._primitives` and in its threaded
    twin), and a test may give a fake clock (``dataclasses.replace(RUNTIME, clock=...)``).
    The core imports no ``asyncio`` or ``threading`` and reads no clock of its own."""

    clock: Callable[[], float]
    """Monotonic seconds: the only clock the flows read."""
    wall_clock: Callable[[], float]
    """Seconds since the epoch, for data other clients compare against their own
    clocks (a fair lock's waiter timeouts, a leased permit's end, as Redisson's)."""
    new_mutex: Callable[[], AbstractContextManager[Any]]
    """A new lock for state shared by user threads (or tasks) and the watchdog; held
    briefly, never across I/O."""
    await_later: Callable[[Awaitable[object], str], None]
    """Runs what an async lost-lock callback returned, on its own (``str``: the lock,
    for the log line when it cannot be run or raises)."""
    owner_finished: Callable[[str], bool] = _never_finished
    """True when the owner a hold's field names (``owner``: the part after the client
    id) has finished without releasing it: the asyncio shell's task is done. The
    watchdog then stops renewing that owner's holds (`HoldTable.orphan`). The threaded
    shell's default: never (a thread's holds stay renewed until its ``unlock()``)."""
    describe_owner: Callable[[str], str | None] = _undescribed
    """The owner a field's owner id (the part after the client id) names, as a reader
    knows it (``thread MainThread``, ``task Task-3``), for error messages; None when the
    shell no longer knows it (its thread or task is gone)."""


def _now(report: Callable[[], None]) -> None:
    report()


_live_states: weakref.WeakSet[ClientState] = weakref.WeakSet()


class ClientState:
    """Identity, settings and holds of one client instance (sync or asyncio)."""

    def __init__(
        self,
        settings: LockSettings,
        on_lock_lost: LostCallback | None = None,
        *,
        runtime: Runtime,
    ):
        self.settings = settings
        self.runtime = runtime
        self.clock = runtime.clock
        """Monotonic seconds (`Runtime.clock`)."""
        self.wall_clock = runtime.wall_clock
        """Seconds since the epoch (`Runtime.wall_clock`)."""
        self.on_lock_lost = on_lock_lost
        self.holds = HoldTable(runtime.new_mutex)
        self.taken = TakenTable(runtime.new_mutex)
        """Semaphore permits taken through this client (released at shutdown)."""
        self.client_id = str(uuid.uuid4())
        self.pid = os.getpid()
        self.closed = False
        """Set by the client's shutdown: every later call raises ClientClosedError."""
        self.deliver: Callable[[Callable[[], None]], None] = _now
        """Runs a loss report or a watchdog event (callbacks, listeners): at once here;
        the asyncio client whose watchdog renews on a thread replaces it, so what that
        thread finds is told on the client's event loop."""
        self.listeners: tuple[Callable[[Any], object], ...] = ()
        """Lock event listeners (see `redisson_py.core.state.events`); empty: no cost."""
        _live_states.add(self)

    def _after_fork_in_child(self) -> None:
        self.client_id = str(uuid.uuid4())
        self.pid = os.getpid()
        # A new table rather than clear(): a parent thread may have held the old
        # table's lock at the fork, and the child would wait on it forever.
        self.holds = HoldTable(self.runtime.new_mutex)
        self.taken = TakenTable(self.runtime.new_mutex)


def _reset_states_in_child() -> None:
    for state in list(_live_states):
        state._after_fork_in_child()


os.register_at_fork(after_in_child=_reset_states_in_child)
