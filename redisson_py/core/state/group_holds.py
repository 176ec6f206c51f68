"""What one process knows of its MultiLock and RedLock holds: per owner, how many times
it holds the group and which members, and whether the group was reported lost.

A table, not a flow: user threads (or tasks) and watchdogs update it, so every method
takes a short internal lock and never blocks on I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from redisson_py.core.state.client_state import Runtime
from redisson_py.core.state.holds import Hold, LostCallback, report_lost


@dataclass(slots=True)
class _OwnerGroupHold:
    count: int
    members: set[int]
    lost_members: set[int] = field(default_factory=set)
    lost: bool = False
    lease: float | None = None
    valid_until: float = 0.0


class GroupState:
    """One MultiLock or RedLock: its members' names and the holds of its owners.

    ``need`` is how many members must be held (all for a MultiLock, a quorum for a
    RedLock). Thread-safe; member losses arrive from watchdogs.
    """

    def __init__(self, kind: str, names: Sequence[str], need: int, runtime: Runtime):
        self.kind = kind
        self._runtime = runtime
        self.names = tuple(names)
        self.need = need
        self.on_lock_lost: LostCallback | None = None
        self.fallback_callback: Callable[[], LostCallback | None] = lambda: None
        self._lock = runtime.new_mutex()
        self._holds: dict[str, _OwnerGroupHold] = {}

    @property
    def all_of(self) -> bool:
        """True for a MultiLock (every member needed), False for a RedLock (a quorum)."""
        return self.need == len(self.names) and self.kind == "MultiLock"

    @property
    def label(self) -> str:
        return f"{self.kind}({', '.join(repr(n) for n in self.names)})"

    def held_count(self, owner: str) -> int:
        with self._lock:
            hold = self._holds.get(owner)
            return 0 if hold is None or hold.lost else hold.count

    def acquired(
        self,
        owner: str,
        members: set[int],
        lease: float | None = None,
        valid_until: float = 0.0,
    ) -> None:
        """Record one more hold of ``owner`` on ``members``: leased for ``lease``
        seconds (None: renewed by the members' watchdogs) and valid until
        ``valid_until`` (monotonic; Redlock's arithmetic, see
        `redisson_py.core.flows.quorum.validity`). The last acquire sets the lease, as
        it sets the members' TTLs on the servers."""
        with self._lock:
            hold = self._holds.get(owner)
            if hold is None or hold.lost:
                hold = _OwnerGroupHold(count=1, members=set(members))
                self._holds[owner] = hold
            else:
                hold.count += 1
                hold.members |= members
            hold.lease = lease
            hold.valid_until = valid_until

    def lease_of(self, owner: str) -> tuple[bool, float | None, frozenset[int]]:
        """(held and not lost, the lease of the last acquire or extension, the members
        held) of ``owner``'s hold on the group."""
        with self._lock:
            hold = self._holds.get(owner)
            if hold is None or hold.lost:
                return False, None, frozenset()
            return True, hold.lease, frozenset(hold.members - hold.lost_members)

    def valid_until(self, owner: str) -> float | None:
        """When ``owner``'s leased hold stops being valid (monotonic seconds); None
        when it holds none, or it was reported lost."""
        with self._lock:
            hold = self._holds.get(owner)
            if hold is None or hold.lost:
                return None
            return hold.valid_until

    def cap_validity(self, owner: str, valid_until: float) -> None:
        """``owner``'s hold is valid until ``valid_until`` at the latest (a failed
        extension that shortened some members' leases)."""
        with self._lock:
            hold = self._holds.get(owner)
            if hold is not None and not hold.lost:
                hold.valid_until = min(hold.valid_until, valid_until)

    def extended(self, owner: str, members: set[int], lease: float, valid_until: float) -> bool:
        """Record an extension of ``owner``'s hold: ``members`` extended to ``lease``
        seconds, valid until ``valid_until``. False when the hold is gone (released or
        reported lost while the extension was in flight): nothing is recorded then."""
        with self._lock:
            hold = self._holds.get(owner)
            if hold is None or hold.lost:
                return False
            hold.members |= members
            hold.lease = lease
            hold.valid_until = valid_until
            return True

    def released(self, owner: str) -> bool:
        """Record one release; return True if the group had been reported lost."""
        with self._lock:
            hold = self._holds.get(owner)
            if hold is None:
                return False
            hold.count -= 1
            if hold.count <= 0 or hold.lost:
                del self._holds[owner]
            return hold.lost

    def member_lost(self, owner: str, index: int, hold: Hold, reason: str) -> None:
        """A watchdog found member ``index`` of ``owner``'s hold lost: report the group
        lost once it can no longer be held (any member for all-of, below ``need``)."""
        with self._lock:
            group = self._holds.get(owner)
            if group is None or group.lost:
                return
            group.lost_members.add(index)
            alive = len(group.members - group.lost_members)
            if alive >= self.need:
                return
            group.lost = True
        reason = (
            f"{self.label}: member {hold.name!r} lost ({reason}); "
            f"{alive} of {len(self.names)} members held, {self.need} needed"
        )
        callback = self.on_lock_lost or self.fallback_callback()
        report_lost(self.label, owner, reason, callback, await_later=self._runtime.await_later)
