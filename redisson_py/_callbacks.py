"""Running what an async lost-lock callback returns: the same for both shells.

The core calls a lost-lock callback and hands an awaitable result to the shell's
``Runtime.await_later``; both shells give this function, since a loss can be found on
an event loop's thread even by the threaded client (an ``unlock()`` called there).
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Awaitable

log = logging.getLogger("redisson_py.lock")

_running: set[asyncio.Task[None]] = set()
"""Callback tasks running now: the loop keeps only weak references to tasks."""


def await_later(result: Awaitable[object], name: str) -> None:
    """Run ``result`` (what an async callback for lock ``name`` returned) as a task on
    the loop running here; with no loop here, log an ERROR and close it. Its errors are
    logged, never raised."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:  # no loop here: a coroutine callback on the threaded client
        log.error(
            "on_lock_lost callback for lock %r is async, but no event loop runs here to await it",
            name,
        )
        if inspect.iscoroutine(result):
            result.close()
        return
    task = loop.create_task(_logged(result, name))
    _running.add(task)
    task.add_done_callback(_running.discard)


async def _logged(awaitable: Awaitable[object], name: str) -> None:
    try:
        await awaitable
    except Exception:
        log.exception("on_lock_lost callback for lock %r raised", name)
