# GENERATED from redisson_py/asyncio/fenced_lock.py by scripts/generate_sync.py: do not edit.
# Edit the asyncio source, then run `python3 scripts/generate_sync.py`.
"""The fenced lock (Redisson's ``RFencedLock``): a reentrant lock whose every new holder
gets a token larger than all earlier holders' tokens."""

from __future__ import annotations

from redisson_py.core.flows import fenced_lock
from redisson_py.core.flows.fenced_resource import Fence
from redisson_py.core.flows.lock_kinds import FENCED
from redisson_py.core.handles import check_lease, check_wait
from redisson_py.sync.driver import run
from redisson_py.sync.lock import Lock


class FencedLock(Lock):
    """A reentrant lock with a fencing token: the counter ``redisson_lock_token:{name}``,
    incremented by every first acquire (a reentrant one keeps the token), as Redisson's.

    Pass the token (or the [`fence`][redisson_py.FencedLock.fence], token and
    owner) to the resource the lock protects, and have the resource refuse a write whose
    token is smaller than one it has seen, or equal to it from another owner (a failover
    can give two holders one token): a holder that was paused past its lease and then
    writes is refused, which no lock alone can promise.
    [`FencedResource`][redisson_py.FencedResource] does it for a value in Redis.
    Everything of [`Lock`][redisson_py.Lock] applies (watchdog, leases, waiting,
    replica sync).
    """

    kind = FENCED

    def lock_and_get_token(self, lease_time: float | None = None) -> int:
        """Block until this thread holds the lock; its token.

        Unlike Redisson's ``lockAndGetToken(leaseTime, unit)``, which ignores the
        lease, ``lease_time`` is honoured as by [`lock`][redisson_py.FencedLock.lock].
        """
        lease = check_lease(self.name, lease_time)
        flow = self._flow(self._owner(), fenced_lock.try_lock_and_get_token, None, lease)
        token: int | None = run(flow)
        assert token is not None  # a wait without deadline returns only when held
        return token

    def try_lock_and_get_token(
        self, wait_time: float = 0.0, lease_time: float | None = None
    ) -> int | None:
        """Take the lock within ``wait_time`` seconds; its token, or None if not taken."""
        wait, lease = check_wait(self.name, wait_time), check_lease(self.name, lease_time)
        flow = self._flow(self._owner(), fenced_lock.try_lock_and_get_token, wait, lease)
        token: int | None = run(flow)
        return token

    def get_token(self) -> int | None:
        """The lock's current token (the last holder's), None before any acquire."""
        token: int | None = run(self._flow(self._owner(), fenced_lock.get_token))
        return token

    def fence(self) -> Fence:
        """This thread's [`Fence`][redisson_py.Fence]: the token of its hold and its owner
        field, for a [`FencedResource`][redisson_py.FencedResource] (or your own resource)
        to check. Its owner lets a resource tell apart two holders a failover gave one
        token: the first of them to write keeps it.

        Raises [`LockNotOwnedError`][redisson_py.errors.LockNotOwnedError] when this
        thread holds no hold.
        """
        fence: Fence = run(self._flow(self._owner(), fenced_lock.fence))
        return fence
