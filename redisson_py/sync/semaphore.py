# GENERATED from redisson_py/asyncio/semaphore.py by scripts/generate_sync.py: do not edit.
# Edit the asyncio source, then run `python3 scripts/generate_sync.py`.
"""The semaphore (Redisson's ``RSemaphore``, same key and channel)."""

from __future__ import annotations

from types import TracebackType
from typing import Self

from redisson_py.core.flows import semaphore, synchronizers
from redisson_py.core.handles import check_wait, release_failed_note
from redisson_py.core.synchronizer_handles import MAX_PERMITS, ObjectHandle, check_int
from redisson_py.sync.driver import run


class Semaphore(ObjectHandle):
    """A counting semaphore shared by every client: the number of available permits is
    the integer at the key ``name``, and releases are announced on ``redisson_sc:{name}``,
    as Redisson's ``RSemaphore`` keeps them, so Java and Python clients share it.

    Set the number of permits once, with
    [`try_set_permits`][redisson_py.Semaphore.try_set_permits] (or
    [`add_permits`][redisson_py.Semaphore.add_permits]): until then there are
    none, and an acquire waits. Permits belong to nobody: any thread may release them, and
    a holder that dies keeps its permits taken (a
    [`PermitExpirableSemaphore`][redisson_py.PermitExpirableSemaphore] gives
    them back). Every change is counted once however often a lost reply makes it retry.

    Also a context manager that takes one permit and gives it back.

    Get one from the client's ``get_semaphore``.
    """

    layout = semaphore.LAYOUT

    def _permits(self, permits: int) -> int:
        return check_int(self._subject, "permits", permits)

    def acquire(self, permits: int = 1) -> None:
        """Block until ``permits`` permits are taken (0: at once).

        Waits through failovers: connection errors and grants the replicas did not
        acknowledge are retried for as long as it waits, with a WARNING log line at the
        first failure and every tenth after it. Use
        [`try_acquire`][redisson_py.Semaphore.try_acquire] for a deadline.
        """
        run(self._flow(semaphore.try_acquire, self._permits(permits), None))

    def try_acquire(self, permits: int = 1, wait_time: float = 0.0) -> bool:
        """Take ``permits`` permits if they can be had within ``wait_time`` seconds;
        True if taken.

        Returns within ``wait_time`` plus one command timeout whatever the servers do. A
        waiter wakes when permits are announced (or every few seconds, in case a message
        was lost). Raises
        [`NoSyncedReplicasError`][redisson_py.errors.NoSyncedReplicasError] when the
        master granted them but its replicas did not acknowledge in time until the
        deadline (the grant is undone); a wait that ends without the permits leaves none
        taken.
        """
        permits = self._permits(permits)
        wait = check_wait(self.name, wait_time, what=self.layout.label)
        taken: bool = run(self._flow(semaphore.try_acquire, permits, wait))
        return taken

    def release(self, permits: int = 1) -> None:
        """Give back ``permits`` permits (any thread may, also permits it never took) and
        wake as many waiters. Creates the count when there is none."""
        run(self._flow(semaphore.release, self._permits(permits)))

    def release_if_exists(self, permits: int = 1) -> bool:
        """[`release`][redisson_py.Semaphore.release], only while the semaphore
        exists (so that one deleted stays deleted); True when released."""
        flow = self._flow(semaphore.release, self._permits(permits), True)
        released: bool = run(flow)
        return released

    def try_set_permits(self, permits: int) -> bool:
        """Set the number of available permits to ``permits`` unless it is set already;
        True when set (then waiters are told)."""
        flow = self._flow(semaphore.try_set_permits, self._permits(permits))
        done: bool = run(flow)
        return done

    def add_permits(self, permits: int) -> None:
        """Add ``permits`` to the available permits, whatever they are (negative: take
        some away, even below zero); the new count is announced."""
        bound = check_int(self._subject, "permits", permits, low=-MAX_PERMITS)
        run(self._flow(semaphore.add_permits, bound))

    def drain_permits(self) -> int:
        """Take every available permit; how many there were."""
        drained: int = run(self._flow(semaphore.drain_permits))
        return drained

    def available_permits(self) -> int:
        """How many permits are available now (0 before any is set)."""
        available: int = run(self._flow(semaphore.available_permits))
        return available

    def delete(self) -> bool:
        """Delete the semaphore (its count); True if it existed. Waiters keep waiting
        until permits are set again."""
        deleted: bool = run(self._flow(synchronizers.delete))
        return deleted

    def __enter__(self) -> Self:
        self.acquire()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        """Give the permit back; an exception from the block is never replaced by a
        release error, which is attached to it as a note instead."""
        if exc is None:
            self.release()
            return
        try:
            self.release()
        except Exception as error:
            exc.add_note(release_failed_note(self._subject, error))
