"""The asyncio client's watchdog: one task renews all its lease-less holds (the twin of
:mod:`redisson_py.sync.watchdog`; the renewal round itself is shared)."""

from __future__ import annotations

import asyncio
import contextlib
import logging

from redisson_py.asyncio.driver import run
from redisson_py.core.client_state import ClientState
from redisson_py.core.renewal import renew_round

log = logging.getLogger("redisson_py.watchdog")


class Watchdog:
    """Renews the holds of one :class:`ClientState` from a task on the client's loop."""

    def __init__(self, state: ClientState):
        self._state = state
        self._task: asyncio.Task[None] | None = None

    def ensure_running(self) -> None:
        """Start the task if it is not running (cheap when it is)."""
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(
                self._loop(), name="redisson-py-watchdog"
            )

    async def _loop(self) -> None:
        interval = self._state.settings.renew_interval
        while True:
            await asyncio.sleep(interval)
            try:
                await run(renew_round(self._state))
            except Exception:
                log.exception("watchdog renewal round failed")

    async def renew_now(self) -> int:
        """Run one renewal round now; return how many holds it renewed."""
        return await run(renew_round(self._state))

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
