"""A client's own record of the locks it holds: hold counts, leases, renewal, loss.

Redis is the authority on who holds a lock; this table is what one client knows about
its own holds, for two purposes:

- the watchdog renews the holds taken without a lease, checks that the leased ones still
  exist, and reports a hold whose safe time ran out (`redisson_py.core.flows.watchdog`);
  each loss is reported once;
- a hold the client has reported lost makes the next ``unlock()`` raise, even if the
  key happens to be back by then.

The table is shared by user threads (or tasks) and the watchdog, so every method takes a
short internal lock and never blocks on I/O.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable
from contextlib import AbstractContextManager
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

    ``expires_at`` (monotonic seconds) is the hold's safe end: until then no other
    client can be granted the lock, on the master or on a replica a failover could
    promote. It is `safe_end` of the last confirmed write of the key's expiry (the
    acquire, a renewal, an extension): when it was *sent*, plus the TTL it set, minus
    `safety_margin`. A write counts as confirmed when the master applied it and,
    with replica sync on, the replicas a grant waits for acknowledged it (see
    `redisson_py.core.flows.watchdog`). ``lease`` is the lease of the last acquire (None:
    the watchdog's). ``unconfirmed`` says why the last renewal did not count (None: it
    did), for the loss report. ``on_lost`` reports a loss: the lock's own reporter, or
    the aggregator of the MultiLock/RedLock the hold is a member of.
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
    """The lock's `LockKind` (its renewal script);
    None: the reentrant lock's."""
    unconfirmed: str | None = None
    checked: bool = True
    """Whether renewal rounds look at the key (False: a semaphore's leased permit, whose
    only watch is its safe end)."""
    acquires: tuple[str, ...] = ()
    """The request ids of the acquires of this hold (the last `MAX_ACQUIRES`):
    a release carries them, so one that reaches the server after the owner took the
    lock again by other acquires releases nothing (see
    `redisson_py.core.scripts.old_hold_check`)."""
    renew_until: float | None = None
    """``max_hold_time``: when (monotonic) the watchdog stops renewing this hold, counted
    from its first acquire; None: no cap."""
    max_hold: float | None = None
    """The ``max_hold_time`` (seconds) behind `renew_until`, for the loss report."""
    capped: bool = False
    """True once `renew_until` passed: renewal rounds only check the hold, which then
    expires and is reported lost "held past max_hold_time"."""
    orphaned: bool = False
    """True once the watchdog found the hold's owner finished without releasing it (an
    asyncio task that ended holding it; see `HoldTable.orphan`): renewal rounds only
    check the hold, which then expires and is reported lost (`ORPHANED`)."""

    @property
    def renews(self) -> bool:
        """True when renewal rounds renew this hold (a watchdog hold under its cap,
        whose owner has not finished); False: they only check it is there."""
        return self.watchdog and not self.capped and not self.orphaned


MAX_ACQUIRES = 16
"""Request ids a hold keeps; the server's field names the owner's last acquire, so
only the most recent ones can match it."""


CLOCK_DRIFT_FACTOR = 0.01
"""The share of a TTL allowed for the client's clock and the servers' clocks running at
different rates (Redlock's figure)."""

REPORT_ALLOWANCE = 0.05
"""Seconds allowed for the client to notice a hold's safe end and report it: a watchdog
thread or task waking late on a busy machine (scheduling, the GIL, a garbage collection)."""


def safety_margin(ttl: float) -> float:
    """How long before its key could expire anywhere a hold of ``ttl`` seconds stops
    counting as safe: ``ttl`` x 1% (clock drift) + 50 ms (the report's own delay)."""
    return ttl * CLOCK_DRIFT_FACTOR + REPORT_ALLOWANCE


def safe_end(sent_at: float, ttl: float) -> float:
    """The safe end of a hold whose key's expiry was set to ``ttl`` seconds by a write
    sent at ``sent_at`` (monotonic) and confirmed: the key lives at least until
    ``sent_at + ttl`` on every node that has the write (the server counts from when it
    runs the write, after it was sent), less `safety_margin`."""
    return sent_at + ttl - safety_margin(ttl)


EXPIRY_SLACK = 0.1
"""A leased key found gone this close (seconds) to its lease's end counts as expired: the
client's clock for the lease starts a round trip after the server's."""


def lease_text(lease: float) -> str:
    """A lease in seconds as messages show it (``10 s``, ``2.5 s``)."""
    return f"{lease:g} s"


HELD_PAST_CAP = "held past max_hold_time"
"""How a loss at the renewal cap is reported (the reason starts with it)."""


def capped_text(hold: Hold) -> str:
    """Why a capped hold ended, for its loss report and its ``unlock()``'s error."""
    return (
        f"{HELD_PAST_CAP} ({lease_text(hold.max_hold or 0.0)}): the watchdog stopped"
        " renewing it there"
    )


ORPHANED = "its owner task finished without unlock()"
"""How a loss after the owning task finished is reported (the reason starts with it)."""


def orphaned_text(hold: Hold) -> str:
    """Why the hold of a finished owner ended, for its loss report."""
    return f"{ORPHANED}: the watchdog stopped renewing it then, and it expired"


def gone_text(hold: Hold, now: float) -> str:
    """How ``hold`` came to be gone, for ``unlock()``'s error: its lease ran out, its
    renewals stopped counting until its safe end, or its key went while the lease (or
    the watchdog) still kept it."""
    if hold.lease is not None and now >= hold.expires_at - EXPIRY_SLACK:
        return f"the hold expired (lease {lease_text(hold.lease)})"
    if hold.capped and now >= hold.expires_at - EXPIRY_SLACK:
        return f"the hold expired: {capped_text(hold)}"
    if hold.orphaned and now >= hold.expires_at - EXPIRY_SLACK:
        return f"the hold expired: {orphaned_text(hold)}"
    if hold.lease is None and now >= hold.expires_at:
        return "the hold expired unrenewed (" + (hold.unconfirmed or "no renewal in time") + ")"
    lease = "" if hold.lease is None else f"; lease {lease_text(hold.lease)}"
    return f"the hold vanished (the key was deleted or evicted{lease})"


CAP_TOLERANCE = 0.01
"""Seconds: a write that makes the key expire this close to a hold's cap (or later) is
its last; the TTL sent was cut to the cap from a clock read a moment before the send."""


def _reaches_cap(hold: Hold, sent_at: float, ttl: float) -> bool:
    """True when a write sent at ``sent_at`` with ``ttl`` makes ``hold``'s key expire
    at its ``max_hold_time`` (renewing it again would carry it past)."""
    return hold.renew_until is not None and sent_at + ttl >= hold.renew_until - CAP_TOLERANCE


class HoldTable:
    """Thread-safe table of this client's holds, keyed by (lock name, owner field)."""

    def __init__(self, new_mutex: Callable[[], AbstractContextManager[Any]]) -> None:
        self._lock = new_mutex()
        self._holds: dict[HoldKey, Hold] = {}
        # Holds reported lost and not yet unlocked by their owner (whose next unlock
        # must raise, saying how it went, and whose release of what may be left of the
        # hold must still carry its acquire ids): the reason and the ids; bounded,
        # oldest first out, so owners that never unlock cannot grow it without end.
        self._lost: dict[HoldKey, tuple[str, tuple[str, ...]]] = {}
        # Holds exported (see redisson_py.core.flows.handoff): their owner's unlock
        # raises, and its acquire asks Redis whether the adopter still has the field.
        self._exported: dict[HoldKey, None] = {}
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
        ttl: float,
        now: float,
        on_lost: Callable[[Hold, str], None],
        kind: Any = None,
        checked: bool = True,
        request_id: str = "",
        max_hold: float | None = None,
    ) -> Hold:
        """Record that ``owner`` now holds ``name`` ``count`` times (the server's count),
        granted by a confirmed write sent at ``now`` (monotonic seconds), the acquire
        ``request_id`` ("": an extension, which is no acquire).

        ``lease`` None means the watchdog keeps the key alive; ``ttl`` is the TTL the
        write gave the key (`key_ttl`
        of the lease). A reentrant acquire with a
        lease turns a watchdog hold into a leased one and back, as the last acquire sets
        the key's TTL on the server. The hold is safe until `safe_end` of ``now``
        and its TTL. `watcher`, if set, is told of the hold. ``max_hold`` (seconds, None:
        no cap) caps the watchdog's renewals from ``now``; a hold's earliest cap stays
        (a reentrant acquire cannot lift it).
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
                    checked=checked,
                )
                self._holds[key] = hold
            if request_id and request_id not in hold.acquires:
                hold.acquires = (*hold.acquires, request_id)[-MAX_ACQUIRES:]
            if max_hold is not None:
                until = now + max_hold
                if hold.renew_until is None or until < hold.renew_until:
                    hold.renew_until, hold.max_hold = until, max_hold
            hold.count = count
            hold.watchdog = lease is None
            hold.lease = lease
            hold.unconfirmed = None
            hold.orphaned = False  # acquired again (through a view): the next round judges
            hold.expires_at = safe_end(now, ttl)
            if hold.watchdog and _reaches_cap(hold, now, ttl):
                hold.capped = True
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

    def acquiring(self, name: str, owner: str, request_id: str) -> None:
        """An acquire ``request_id`` is sent for ``owner``'s hold on ``name``, if it has
        one: its id joins the hold's (the server's field may name it from now on,
        granted or taken back, whatever its reply)."""
        with self._lock:
            hold = self._holds.get((name, owner))
            if hold is not None and request_id not in hold.acquires:
                hold.acquires = (*hold.acquires, request_id)[-MAX_ACQUIRES:]

    def acquire_ids(self, name: str, owner: str) -> tuple[str, ...]:
        """The request ids of ``owner``'s hold on ``name``, or of the hold reported lost
        and not unlocked since (its unlock still releases what may be left of it, and a
        release the server runs late must not release a later hold); empty: no hold
        known."""
        with self._lock:
            hold = self._holds.get((name, owner))
            if hold is not None:
                return hold.acquires
            lost = self._lost.get((name, owner))
            return () if lost is None else lost[1]

    def get(self, name: str, owner: str) -> Hold | None:
        """``owner``'s hold on ``name``, or None."""
        with self._lock:
            return self._holds.get((name, owner))

    def expires_at(self, name: str, owner: str) -> float | None:
        """The safe end of ``owner``'s hold on ``name`` (monotonic seconds; see
        `Hold`), or None when this client knows of no such hold."""
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
            lost = self._lost.get(key)
            if lost is not None:
                return lost[0]
            hold = self._holds.get(key)
            return None if hold is None else f"{gone_text(hold, now)} before this unlock"

    def clear_lost(self, name: str, owner: str) -> None:
        with self._lock:
            self._lost.pop((name, owner), None)

    def all_holds(self) -> list[Hold]:
        """Return every hold (renewed or leased), as a snapshot."""
        with self._lock:
            return list(self._holds.values())

    def next_expiry(self) -> float | None:
        """The earliest safe end of any hold (monotonic), or None without holds."""
        with self._lock:
            return min((h.expires_at for h in self._holds.values()), default=None)

    def renewed(self, hold: Hold, sent_at: float, ttl: float, now: float) -> bool:
        """Record a confirmed renewal sent at ``sent_at`` that set the key's TTL to
        ``ttl``: the hold is safe until `safe_end` of it, and no longer unconfirmed (a
        TTL that reaches the hold's cap makes this its last renewal). A hold whose safe
        end had passed by ``now`` stays as it is: it is reported lost (that it was
        renewed since does not undo the time it was not safe). True when the hold was
        renewed."""
        with self._lock:
            if self._holds.get((hold.name, hold.owner)) is not hold or not hold.renews:
                return False
            if now >= hold.expires_at:
                return False
            hold.expires_at = max(hold.expires_at, safe_end(sent_at, ttl))
            hold.unconfirmed = None
            if _reaches_cap(hold, sent_at, ttl):
                hold.capped = True  # its last renewal: the key now expires at the cap
            return True

    def cap(self, now: float) -> None:
        """Mark the watchdog holds whose renewal cap (``max_hold_time``) has passed by
        ``now``: renewal rounds stop renewing them."""
        with self._lock:
            for hold in self._holds.values():
                if hold.renew_until is not None and now >= hold.renew_until:
                    hold.capped = True

    def orphan(self, client_id: str, finished: Callable[[str], bool]) -> int:
        """Mark the renewed holds of this client (``client_id``) whose owner has
        ``finished`` (called with the owner id of the hold's field): renewal rounds stop
        renewing them, so each expires within a watchdog timeout and is reported lost
        (`ORPHANED`). Adopted holds (another client's field) are left alone. How many
        were marked now.

        Why not release them: a finished owner is treated as a crashed client is, whose
        holds expire (Redisson's rule); no release is sent on a guess, and a task that
        handed its hold on (``owned_by``, see the shell's ``current_owner_id``) is not
        reported finished."""
        prefix = client_id + ":"
        marked = 0
        with self._lock:
            for hold in self._holds.values():
                owner = hold.owner[len(prefix) :].partition(":")[0]
                if hold.renews and hold.owner.startswith(prefix) and finished(owner):
                    hold.orphaned = True
                    marked += 1
        return marked

    def unconfirmed(self, hold: Hold, why: str) -> None:
        """Record that a renewal of ``hold`` did not count (``why``: unreachable, too few
        replicas acknowledged it); its safe end stays where the last confirmed write put
        it, and a loss reported at that end gives ``why``."""
        with self._lock:
            if self._holds.get((hold.name, hold.owner)) is hold:
                hold.unconfirmed = why

    def extended(self, hold: Hold, lease: float, safe_until: float) -> None:
        """Record a lease extension: ``hold`` is now leased for ``lease`` seconds and
        safe until ``safe_until`` (monotonic)."""
        with self._lock:
            if self._holds.get((hold.name, hold.owner)) is hold:
                hold.lease = lease
                hold.watchdog = False
                hold.expires_at = safe_until

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
            self._lost[key] = (f"{gone} and was reported lost before this unlock", hold.acquires)
            if len(self._lost) > MAX_LOST_REMEMBERED:
                del self._lost[next(iter(self._lost))]
            return True

    def exported(self, hold: Hold) -> bool:
        """Remove ``hold`` as handed to another client: no renewal, no loss report, no
        release at shutdown from now on; its owner's ``unlock()`` raises. False (nothing
        done) when ``hold`` is no longer the table's (reported lost meanwhile)."""
        key = (hold.name, hold.owner)
        with self._lock:
            if self._holds.get(key) is not hold:
                return False
            del self._holds[key]
            self._lost.pop(key, None)
            self._exported[key] = None
            if len(self._exported) > MAX_LOST_REMEMBERED:
                del self._exported[next(iter(self._exported))]
            return True

    def was_exported(self, name: str, owner: str) -> bool:
        """True when ``owner`` exported its hold on ``name`` and has not been told since
        that the adopter no longer has it (`clear_exported`)."""
        with self._lock:
            return (name, owner) in self._exported

    def clear_exported(self, name: str, owner: str) -> None:
        with self._lock:
            self._exported.pop((name, owner), None)

    def clear(self) -> None:
        """Forget everything (after a fork, or at shutdown)."""
        with self._lock:
            self._holds.clear()
            self._lost.clear()
            self._exported.clear()


@dataclass(slots=True)
class Taken:
    """Permits of one semaphore this client took and has not given back (a semaphore's
    count, or one permit of a permit-expirable semaphore): what `shutdown()` releases.
    ``release(count)`` makes the command that gives ``count`` back; ``subject`` names
    them in log lines."""

    subject: str
    target: Any
    route: str
    count: int
    release: Callable[[int], Any]


class TakenTable:
    """Thread-safe table of the semaphore permits this client took: the count of each
    plain semaphore (its acquires less its releases through this client, never below
    0) and each permit of a permit-expirable one, by (name, permit id or "")."""

    def __init__(self, new_mutex: Callable[[], AbstractContextManager[Any]]) -> None:
        self._lock = new_mutex()
        self._taken: dict[tuple[str, str], Taken] = {}

    def took(self, key: tuple[str, str], taken: Taken) -> None:
        """Record ``taken.count`` permits taken (added to those already recorded)."""
        with self._lock:
            known = self._taken.get(key)
            if known is None:
                self._taken[key] = taken
            else:
                known.count += taken.count

    def gave(self, key: tuple[str, str], count: int | None = None) -> None:
        """Record ``count`` permits given back (None: all of ``key``'s); a release of
        permits this client never took changes nothing."""
        with self._lock:
            known = self._taken.get(key)
            if known is None:
                return
            known.count = 0 if count is None else known.count - count
            if known.count <= 0:
                del self._taken[key]

    def drain(self) -> list[Taken]:
        """Every record, removed from the table (at shutdown)."""
        with self._lock:
            taken, self._taken = list(self._taken.values()), {}
            return taken


def report_lost(
    name: str,
    owner: str,
    reason: str,
    callback: LostCallback | None,
    *,
    await_later: Callable[[Awaitable[object], str], None],
    subject: str | None = None,
) -> None:
    """Tell the holder of lock ``name`` it is lost: one ERROR line naming the lock,
    then the callback,
    whose exceptions are logged, never propagated into the watchdog. What an async
    callback returns goes to ``await_later`` (the shell's
    `await_later`). ``subject`` names
    what was lost in the log line when it is not a lock (a semaphore's permit)."""
    if subject is None:
        log.error("lock %r lost by %s: %s", name, owner, reason)
    else:
        log.error("%s lost: %s", subject, reason)
    if callback is None:
        return
    try:
        result = callback(LockLost(name, owner, reason))
    except Exception:
        log.exception("on_lock_lost callback for lock %r raised", name)
        return
    if inspect.isawaitable(result):
        await_later(result, name)
