"""A client's own record of the locks it holds: hold counts, leases, renewal, loss.

Redis is the authority on who holds a lock; this table is what one client knows about
its own holds, for two purposes:

- the watchdog renews the holds taken without a lease, checks that the leased ones still
  exist, and reports a lease that runs out while held (:mod:`redisson_py.core.renewal`);
  each loss is reported once;
- a hold the client has reported lost makes the next ``unlock()`` raise, even if the
  key happens to be back by then.

The table is shared by user threads (or tasks) and the watchdog, so every method takes a
short internal lock and never blocks on I/O.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

log = logging.getLogger("redisson_py.lock")


@dataclass(frozen=True, slots=True)
class LockLost:
    """What a lost-lock callback receives.

    ``name`` is the lock, ``owner`` the hash field of the owner that lost it
    (``<client id>:<thread or task id>``), ``reason`` one sentence saying how it was
    found out (the key was gone at renewal or at a leased hold's check, the lease ran
    out while held, or Redis stayed unreachable past expiry).
    """

    name: str
    owner: str
    reason: str


LostCallback = Callable[[LockLost], object]
"""Called once when a held lock is found lost. If it returns an awaitable (an ``async
def`` callback on the asyncio client), that is run as a task on the client's loop."""

HoldKey = tuple[str, str]
"""(lock name, owner field)."""

MAX_LOST_REMEMBERED = 10_000
"""Lost holds remembered for their owner's next unlock, at most."""


@dataclass(slots=True, eq=False)
class Hold:
    """One owner's holds on one lock, as this client knows them.

    ``expires_at`` (monotonic seconds) is when the key must be assumed gone unless
    renewed: the end of the lease, or for a watchdog hold the last renewal (or acquire)
    plus the watchdog timeout. ``lease`` is the lease of the last acquire (None: the
    watchdog's). ``on_lost`` reports a loss: the lock's own reporter, or the aggregator
    of the MultiLock/RedLock the hold is a member of.
    """

    name: str
    owner: str
    count: int
    target: Any
    watchdog: bool
    expires_at: float
    on_lost: Callable[[Hold, str], None]
    releasing: int = 0
    lease: float | None = None
    kind: Any = None
    """The lock's :class:`~redisson_py.core.lock_kinds.LockKind` (its renewal script);
    None: the reentrant lock's."""


EXPIRY_SLACK = 0.1
"""A leased key found gone this close (seconds) to its lease's end counts as expired: the
client's clock for the lease starts a round trip after the server's."""


def lease_text(lease: float) -> str:
    """A lease in seconds as messages show it (``10 s``, ``2.5 s``)."""
    return f"{lease:g} s"


def gone_text(hold: Hold, now: float) -> str:
    """How ``hold`` came to be gone, for ``unlock()``'s error: its lease ran out, or its
    key went while the lease (or the watchdog) still kept it."""
    if hold.lease is not None and now >= hold.expires_at - EXPIRY_SLACK:
        return f"the hold expired (lease {lease_text(hold.lease)})"
    lease = "" if hold.lease is None else f"; lease {lease_text(hold.lease)}"
    return f"the hold vanished (the key was deleted or evicted{lease})"


class HoldTable:
    """Thread-safe table of this client's holds, keyed by (lock name, owner field)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._holds: dict[HoldKey, Hold] = {}
        # Holds reported lost and not yet unlocked by their owner (whose next unlock
        # must raise, saying how it went); bounded, oldest first out, so owners that
        # never unlock cannot grow it without end.
        self._lost: dict[HoldKey, str] = {}
        self.watcher: Callable[[Hold], None] | None = None
        """Told of every acquire recorded (outside the table's lock): the client's
        watchdog, which watches leased holds too."""

    def __len__(self) -> int:
        with self._lock:
            return len(self._holds)

    def count(self, name: str, owner: str, now: float) -> int:
        """Return the hold count this client believes ``owner`` has (0 after a lease ran out)."""
        with self._lock:
            hold = self._holds.get((name, owner))
            if hold is None:
                return 0
            if not hold.watchdog and now >= hold.expires_at:
                # The lease ran out on the server too; forget it so a later acquire
                # starts from 0 rather than from a count that no longer exists.
                del self._holds[(name, owner)]
                return 0
            return hold.count

    def acquired(
        self,
        name: str,
        owner: str,
        count: int,
        *,
        target: Any,
        lease: float | None,
        watchdog_timeout: float,
        now: float,
        on_lost: Callable[[Hold, str], None],
        kind: Any = None,
    ) -> Hold:
        """Record that ``owner`` now holds ``name`` ``count`` times (the server's count).

        ``lease`` None means the watchdog keeps the key alive. A reentrant acquire with a
        lease turns a watchdog hold into a leased one and back, as the last acquire sets
        the key's TTL on the server. :attr:`watcher`, if set, is told of the hold.
        """
        key = (name, owner)
        with self._lock:
            self._lost.pop(key, None)
            hold = self._holds.get(key)
            if hold is None:
                hold = Hold(
                    name=name,
                    owner=owner,
                    count=count,
                    target=target,
                    watchdog=lease is None,
                    expires_at=0.0,
                    on_lost=on_lost,
                    kind=kind,
                )
                self._holds[key] = hold
            hold.count = count
            hold.watchdog = lease is None
            hold.lease = lease
            hold.expires_at = now + (watchdog_timeout if lease is None else lease)
        watcher = self.watcher
        if watcher is not None:
            watcher(hold)
        return hold

    def released(self, name: str, owner: str, left: int) -> None:
        """Record a release that left ``left`` holds (0 forgets the lock)."""
        key = (name, owner)
        with self._lock:
            self._lost.pop(key, None)
            if left <= 0:
                self._holds.pop(key, None)
            elif key in self._holds:
                self._holds[key].count = left

    def _keys(self, name: str, owner: str | None) -> list[HoldKey]:
        """The keys of ``owner``'s hold on ``name``, or of every owner's (None): a scan of
        the table only for the rare whole-lock case (force unlock)."""
        if owner is not None:
            return [(name, owner)] if (name, owner) in self._holds else []
        return [key for key in self._holds if key[0] == name]

    def forget(self, name: str, owner: str | None = None) -> None:
        """Drop the holds on ``name`` (of one owner, or all: after a force unlock)."""
        with self._lock:
            for key in self._keys(name, owner):
                del self._holds[key]

    def was_lost(self, name: str, owner: str) -> bool:
        """True when this client reported ``owner``'s hold on ``name`` lost since its
        last acquire or release."""
        with self._lock:
            return (name, owner) in self._lost

    def expires_at(self, name: str, owner: str) -> float | None:
        """When ``owner``'s hold on ``name`` must be assumed gone unless renewed
        (monotonic seconds), or None when this client knows of no such hold."""
        with self._lock:
            hold = self._holds.get((name, owner))
            return None if hold is None else hold.expires_at

    def gone_reason(self, name: str, owner: str, now: float) -> str | None:
        """Why ``owner``'s hold on ``name`` is gone, for an ``unlock()`` that found
        nothing to release: as reported when it was reported lost, else judged from the
        hold still in the table (its lease ran out, or its key vanished); None when this
        client knows of no such hold."""
        key = (name, owner)
        with self._lock:
            reason = self._lost.get(key)
            if reason is not None:
                return reason
            hold = self._holds.get(key)
            return None if hold is None else f"{gone_text(hold, now)} before this unlock"

    def clear_lost(self, name: str, owner: str) -> None:
        with self._lock:
            self._lost.pop((name, owner), None)

    def watchdog_holds(self) -> list[Hold]:
        """Return the holds the watchdog must renew, as a snapshot."""
        with self._lock:
            return [h for h in self._holds.values() if h.watchdog]

    def all_holds(self) -> list[Hold]:
        """Return every hold (renewed or leased), as a snapshot."""
        with self._lock:
            return list(self._holds.values())

    def next_lease_end(self) -> float | None:
        """When the first leased hold's lease runs out (monotonic), or None."""
        with self._lock:
            ends = [h.expires_at for h in self._holds.values() if not h.watchdog]
        return min(ends, default=None)

    def renewed(self, hold: Hold, sent_at: float, watchdog_timeout: float) -> None:
        """Record a successful renewal sent at ``sent_at`` (the key lives at least that long)."""
        with self._lock:
            if self._holds.get((hold.name, hold.owner)) is hold and hold.watchdog:
                hold.expires_at = max(hold.expires_at, sent_at + watchdog_timeout)

    def releasing(self, name: str, owner: str | None, delta: int) -> None:
        """Count a release of ``name`` by ``owner`` (None: any owner, a force unlock)
        starting (+1) or ending (-1). A renewal that finds the key gone while a release is
        in flight is that release's doing, not a loss."""
        with self._lock:
            for key in self._keys(name, owner):
                hold = self._holds[key]
                hold.releasing = max(0, hold.releasing + delta)

    def take_lost(self, hold: Hold, gone: str = "") -> bool:
        """Remove ``hold`` as lost; True if it was still current (report it then, once).
        ``gone`` is what its owner's next ``unlock()`` will say happened to it."""
        key = (hold.name, hold.owner)
        with self._lock:
            if self._holds.get(key) is not hold or hold.releasing:
                return False
            del self._holds[key]
            gone = gone or "the hold was lost"
            self._lost[key] = f"{gone} and was reported lost before this unlock"
            if len(self._lost) > MAX_LOST_REMEMBERED:
                del self._lost[next(iter(self._lost))]
            return True

    def clear(self) -> None:
        """Forget everything (after a fork, or at shutdown)."""
        with self._lock:
            self._holds.clear()
            self._lost.clear()


def report_lost(
    name: str, owner: str, reason: str, callback: LostCallback | None, *, quiet: bool = False
) -> None:
    """Tell the holder of lock ``name`` it is lost: one ERROR line naming the lock
    (unless ``quiet``: a member of a group, which reports for itself), then the callback,
    whose exceptions are logged, never propagated into the watchdog."""
    if not quiet:
        log.error("lock %r lost by %s: %s", name, owner, reason)
    if callback is None:
        return
    try:
        result = callback(LockLost(name, owner, reason))
    except Exception:
        log.exception("on_lock_lost callback for lock %r raised", name)
        return
    if inspect.isawaitable(result):
        # An async callback (asyncio client): run it on the loop that found the loss.
        try:
            asyncio.get_running_loop().create_task(_logged(result, name))
        except RuntimeError:  # no loop here: a coroutine callback on the sync client
            log.error(
                "on_lock_lost callback for lock %r is async, but no event loop "
                "runs here to await it",
                name,
            )
            if inspect.iscoroutine(result):
                result.close()


async def _logged(awaitable: Awaitable[object], name: str) -> None:
    try:
        await awaitable
    except Exception:
        log.exception("on_lock_lost callback for lock %r raised", name)
