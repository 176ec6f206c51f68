"""The asyncio client's watchdog: one task renews its lease-less holds and watches its
leased ones (the twin of :mod:`redisson_py.sync.watchdog`; the rounds and their schedule
are shared, in :mod:`redisson_py.core.renewal`)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import Any

from redisson_py.asyncio.driver import run
from redisson_py.config.addresses import Address
from redisson_py.core.client_state import ClientState
from redisson_py.core.holds import Hold
from redisson_py.core.renewal import Schedule, renew_round

log = logging.getLogger("redisson_py.watchdog")


class Watchdog:
    """Renews and watches the holds of one :class:`ClientState` from a task on the
    client's loop."""

    def __init__(self, state: ClientState):
        self._state = state
        self._task: asyncio.Task[None] | None = None
        self._wake: asyncio.Event | None = None
        self._schedule = Schedule(state.settings)
        self._wake_at = float("inf")
        self._watched: set[int] = set()
        self._stopped = False
        state.holds.watcher = self._noticed

    def ensure_running(self) -> None:
        """Start the task if it is not running (cheap when it is)."""
        if (self._task is None or self._task.done()) and not self._stopped:
            self._schedule = Schedule(self._state.settings)
            self._wake = asyncio.Event()
            self._task = asyncio.get_running_loop().create_task(
                self._loop(), name="redisson-py-watchdog"
            )

    def _noticed(self, hold: Hold) -> None:
        """The hold table recorded an acquire: run, and wake sooner for an earlier lease end."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:  # not on a loop (the table is shared): nothing to start here
            return
        self.ensure_running()
        if not hold.watchdog and hold.expires_at < self._wake_at and self._wake is not None:
            self._wake.set()
        target = hold.target
        if id(target) not in self._watched:
            self._watched.add(id(target))
            pubsub: Any = getattr(target, "pubsub", None)
            add = getattr(pubsub, "add_node_listener", None)
            if add is not None:
                add(self.node_event)

    def node_event(self, address: Address) -> None:
        """Pub/sub saw ``address``'s connection drop or come back: check the holds now
        (a drop makes the round fail, and the node is then probed until it answers).
        Called on the client's loop."""
        log.debug("pub/sub saw %s drop or come back; checking holds now", address)
        self._schedule.ask()
        if self._wake is not None:
            self._wake.set()

    async def _loop(self) -> None:
        wake = self._wake
        assert wake is not None
        while True:
            self._wake_at = self._schedule.wake_at(self._state)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(wake.wait(), max(0.0, self._wake_at - time.monotonic()))
            wake.clear()
            try:
                await run(self._schedule.step(self._state))
            except Exception:
                log.exception("watchdog renewal round failed")

    async def renew_now(self) -> int:
        """Run one renewal round now; return how many holds it renewed."""
        return (await run(renew_round(self._state))).renewed

    async def stop(self) -> None:
        self._stopped = True
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
