"""The threaded client's watchdog: one daemon thread renews its lease-less holds and
watches its leased ones.

Every renewal interval (a third of the watchdog timeout) it runs one renewal round
(:func:`redisson_py.core.renewal.renew_round`): about one pipelined round trip per node,
whatever the number of locks held. It also wakes at the end of each lease (to report a
lease that ran out while held), every :data:`~redisson_py.core.renewal.PROBE_INTERVAL`
while a node refuses connections, and at once when the client's pub/sub sees a node's
connection drop or come back (see :class:`~redisson_py.core.renewal.Schedule`). It
starts with the client's first hold and stops at shutdown; a forked child starts its
own when it needs one.
"""

from __future__ import annotations

import logging
import os
import threading
import time
import weakref
from typing import Any

from redisson_py.config.addresses import Address
from redisson_py.core.client_state import ClientState
from redisson_py.core.holds import Hold
from redisson_py.core.renewal import Schedule, renew_round
from redisson_py.sync.driver import run

log = logging.getLogger("redisson_py.watchdog")

_watchdogs: weakref.WeakSet[Watchdog] = weakref.WeakSet()


class Watchdog:
    """Renews and watches the holds of one :class:`ClientState` from a background thread."""

    def __init__(self, state: ClientState):
        self._state = state
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self._pid = os.getpid()
        self._start_lock = threading.Lock()
        self._schedule = Schedule(state.settings)
        self._wake_at = float("inf")
        self._watched: set[int] = set()
        state.holds.watcher = self._noticed
        _watchdogs.add(self)

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
            self._schedule = Schedule(self._state.settings)
            self._thread = threading.Thread(
                target=self._loop, name="redisson-py-watchdog", daemon=True
            )
            self._thread.start()

    def _noticed(self, hold: Hold) -> None:
        """The hold table recorded an acquire: run, and wake sooner for an earlier lease end."""
        self.ensure_running()
        if not hold.watchdog and hold.expires_at < self._wake_at:
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
        (a drop makes the round fail, and the node is then probed until it answers)."""
        log.debug("pub/sub saw %s drop or come back; checking holds now", address)
        self._schedule.ask()
        self._wake.set()

    def _loop(self) -> None:
        while not self._stop.is_set():
            self._wake_at = self._schedule.wake_at(self._state)
            self._wake.wait(max(0.0, self._wake_at - time.monotonic()))
            self._wake.clear()
            if self._stop.is_set():
                return
            try:
                run(self._schedule.step(self._state))
            except Exception:
                log.exception("watchdog renewal round failed")

    def renew_now(self) -> int:
        """Run one renewal round in the calling thread; return how many holds it renewed."""
        return run(renew_round(self._state)).renewed

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=5)

    def _after_fork_in_child(self) -> None:
        # The client state gave the child a new hold table (see core.client_state).
        self._state.holds.watcher = self._noticed
        self._wake = threading.Event()
        self._watched = set()


def _reattach_in_child() -> None:
    for watchdog in list(_watchdogs):
        watchdog._after_fork_in_child()


# Registered after core.client_state's handler (imported above), so it runs after it.
os.register_at_fork(after_in_child=_reattach_in_child)
