"""The threaded client's watchdog: one daemon thread renews all its lease-less holds.

Every renewal interval (a third of the watchdog timeout) it runs one renewal round
(:func:`redisson_py.core.renewal.renew_round`): about one pipelined round trip per node,
whatever the number of locks held. It starts with the client's first lease-less hold
and stops at shutdown; a forked child starts its own when it needs one.
"""

from __future__ import annotations

import logging
import os
import threading

from redisson_py.core.client_state import ClientState
from redisson_py.core.renewal import renew_round
from redisson_py.sync.driver import run

log = logging.getLogger("redisson_py.watchdog")


class Watchdog:
    """Renews the holds of one :class:`ClientState` from a background thread."""

    def __init__(self, state: ClientState):
        self._state = state
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._pid = os.getpid()
        self._start_lock = threading.Lock()

    def ensure_running(self) -> None:
        """Start the thread if it is not running (cheap when it is)."""
        thread = self._thread
        if thread is not None and self._pid == os.getpid():
            return
        with self._start_lock:
            if self._thread is not None and self._pid == os.getpid():
                return
            if self._stop.is_set():
                return
            self._pid = os.getpid()
            self._thread = threading.Thread(
                target=self._loop, name="redisson-py-watchdog", daemon=True
            )
            self._thread.start()

    def _loop(self) -> None:
        interval = self._state.settings.renew_interval
        while not self._stop.wait(interval):
            try:
                run(renew_round(self._state))
            except Exception:
                log.exception("watchdog renewal round failed")

    def renew_now(self) -> int:
        """Run one renewal round in the calling thread; return how many holds it renewed."""
        return run(renew_round(self._state))

    def stop(self) -> None:
        self._stop.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=5)
