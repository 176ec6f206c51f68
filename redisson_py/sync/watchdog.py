# GENERATED from redisson_py/asyncio/watchdog.py by scripts/generate_sync.py: do not edit.
# Edit the asyncio source, then run `python3 scripts/generate_sync.py`.
"""The client's watchdog: one background loop renews its lease-less holds and watches
its leased ones.

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
from typing import Any

from redisson_py.config.addresses import Address
from redisson_py.core.client_state import ClientState
from redisson_py.core.holds import Hold
from redisson_py.core.renewal import Schedule, renew_round
from redisson_py.sync import _primitives as primitives
from redisson_py.sync.driver import run

log = logging.getLogger("redisson_py.watchdog")


class Watchdog:
    """Renews and watches the holds of one :class:`ClientState` from a background loop."""

    def __init__(self, state: ClientState):
        self._state = state
        self._worker = primitives.Worker("redisson-py-watchdog", self._loop)
        self._wake = primitives.Event()
        self._schedule = Schedule(state)
        self._wake_at = float("inf")
        self._watched: set[int] = set()
        self._stopped = False
        state.holds.watcher = self._noticed
        primitives.after_fork_in_child(self._after_fork_in_child)

    def ensure_running(self) -> None:
        """Start the loop if it is not running (cheap when it is)."""
        if not self._stopped and self._worker.start():
            self._schedule = Schedule(self._state)

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
        while True:
            self._wake_at = self._schedule.wake_at(self._state)
            self._wake.wait(max(0.0, self._wake_at - self._state.clock()))
            self._wake.clear()
            if self._stopped:  # set by stop(), which woke the loop
                return
            try:
                run(self._schedule.step(self._state))
            except Exception:
                log.exception("watchdog renewal round failed")

    def renew_now(self) -> int:
        """Run one renewal round now; return how many holds it renewed."""
        return (run(renew_round(self._state))).renewed

    def stop(self) -> None:
        self._stopped = True
        self._wake.set()
        self._worker.stop()

    def _after_fork_in_child(self) -> None:
        # The client state gave the child a new hold table (see core.client_state).
        self._state.holds.watcher = self._noticed
        self._wake = primitives.Event()
        self._watched = set()
