"""The client's watchdog: background loops that renew its lease-less holds, watch its
leased ones, and tell each holder when its hold stops being safe.

Two loops, so that neither can make the other late:

- the renewal loop runs a renewal round (`redisson_py.core.flows.watchdog.renew_round`)
  every renewal interval (a third of the watchdog timeout): about one pipelined round
  trip per node, whatever the number of locks held, with the replicas' acknowledgement
  in the same round trip when replica sync is on. It looks again every
  `PROBE_INTERVAL` at holds whose renewal did not count
  (a node refusing connections, replicas not acknowledging), and at once when the
  client's pub/sub sees a node's connection drop or come back (see
  `Schedule`);
- the report loop does no I/O: it sleeps until the earliest safe end of any hold and
  reports the holds whose safe end has come (a lease that ran out while held, renewals
  not confirmed in time; see `ExpiryReports`), however
  long a round waits on a frozen node or on a ``WAIT``.

Both start with the client's first hold and stop at shutdown; a forked child starts its
own when it needs them.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Generator
from typing import Any

from redisson_py.asyncio import _primitives
from redisson_py.asyncio.driver import run
from redisson_py.asyncio.watchdog_threads import WatchdogThreads  # async only
from redisson_py.config.addresses import Address
from redisson_py.core.effects import Effect
from redisson_py.core.flows.watchdog import ExpiryReports, Route, Schedule
from redisson_py.core.state.client_state import ClientState
from redisson_py.core.state.holds import Hold

log = logging.getLogger("redisson_py.watchdog")


def sleep_until(at: float, now: float) -> float | None:
    """How long a loop waits for a step due at ``at`` (monotonic seconds; inf: nothing
    due, wait until woken: None), never above `_primitives.LONGEST_WAIT`: a timer far
    off (a lease of years) would overflow ``threading``'s waits (``TIMEOUT_MAX``), and
    a loop that wakes early finds nothing due and sleeps again."""
    if at == math.inf:
        return None
    return min(_primitives.LONGEST_WAIT, max(0.0, at - now))


def _same(target: Any) -> Any:
    """The route of the rounds run here: each hold's own manager."""
    return target


class Watchdog:
    """Renews and watches the holds of one `ClientState` from background loops."""

    def __init__(self, state: ClientState):
        self._state = state
        self._worker = _primitives.Worker("redisson-py-watchdog", self._loop)
        self._reporter = _primitives.Worker("redisson-py-expiry", self._report_loop)
        self._wake = _primitives.Event()
        self._report_wake = _primitives.Event()
        self._schedule = Schedule(state)
        self._reports = ExpiryReports()
        self._report_at = float("inf")
        self._watched: set[int] = set()
        self._stopped = False
        self._threads: WatchdogThreads | None = None  # async only
        state.holds.watcher = self._noticed
        _primitives.after_fork_in_child(self._after_fork_in_child)

    def renew_on_thread(self) -> None:  # async only
        """Run the rounds and reports on daemon threads (see the module docstring)."""  # async only
        rounds = (self._round_at, self._round)  # async only
        reports = (self._report_due, self._report_step)  # async only
        self._threads = WatchdogThreads(rounds, reports, self._state.clock)  # async only
        self._state.deliver = self._threads.deliver  # async only

    def _round_at(self) -> float:
        return self._schedule.wake_at(self._state)

    def _round(self, route: Route) -> Generator[Effect, Any, int]:
        return self._schedule.step(self._state, route)

    def _report_due(self) -> float:
        self._report_at = at = self._reports.wake_at(self._state)
        return at

    def _report_step(self) -> int:
        return self._reports.step(self._state)

    def _start_loops(self) -> tuple[bool, bool]:
        """Start the loops that are not running; whether (renewals, reports) started now."""
        if self._threads is not None:  # async only
            return self._threads.start()  # async only
        return self._worker.start(), self._reporter.start()

    def ensure_running(self) -> None:
        """Start the loops if they are not running (cheap when they are)."""
        if self._stopped:
            return
        renewals, reports = self._start_loops()
        if renewals:
            self._schedule = Schedule(self._state)
        if reports:
            self._reports = ExpiryReports()

    def _noticed(self, hold: Hold) -> None:
        """The hold table recorded an acquire: run, renew sooner a hold whose safe end
        is near (`Schedule.hurry`), and wake the reports sooner for an earlier one."""
        self.ensure_running()
        if self._schedule.hurry(hold, self._state.clock()):
            self._wake.set()
            if self._threads is not None:  # async only
                self._threads.renewals.wake()  # async only
        if hold.expires_at < self._report_at:
            self._report_wake.set()
            if self._threads is not None:  # async only
                self._threads.reports.wake()  # async only
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
        if self._threads is not None:  # async only
            self._threads.renewals.wake()  # async only

    async def _loop(self) -> None:
        # Nothing may end this loop but stop(): an unexpected error is logged at ERROR
        # and the loop goes on (a dead loop would silently stop every renewal), after a
        # pause that grows while the error repeats (no busy loop, no flood of logs).
        pause = _primitives.ERROR_PAUSE
        while True:
            try:
                wake_at = self._schedule.wake_at(self._state)
                await self._wake.wait(sleep_until(wake_at, self._state.clock()))
                self._wake.clear()
                if self._stopped:  # set by stop(), which woke the loop
                    return
                await run(self._round(_same))
                pause = _primitives.ERROR_PAUSE
            except Exception:
                log.exception("watchdog renewal round failed; the watchdog goes on")
                await _primitives.sleep(pause)
                pause = min(pause * 2, _primitives.ERROR_PAUSE_MAX)

    async def _report_loop(self) -> None:
        # As _loop: only stop() ends it (a dead loop would silence every loss report).
        pause = _primitives.ERROR_PAUSE
        while True:
            try:
                at = self._report_due()
                await self._report_wake.wait(sleep_until(at, self._state.clock()))
                self._report_wake.clear()
                if self._stopped:
                    return
                self._report_step()
                pause = _primitives.ERROR_PAUSE
            except Exception:
                log.exception("watchdog loss report failed; the reports go on")
                await _primitives.sleep(pause)
                pause = min(pause * 2, _primitives.ERROR_PAUSE_MAX)

    def halt(self) -> None:
        """Tell the loops to stop, without waiting for them: no round starts after
        this, and a round in flight ends by itself (its calls are bounded)."""
        self._stopped = True
        self._wake.set()
        self._report_wake.set()
        if self._threads is not None:  # async only
            self._threads.halt()  # async only

    async def stop(self) -> None:
        """`halt`, and wait for the loops' end."""
        self.halt()
        await self._worker.stop()
        await self._reporter.stop()
        if self._threads is not None:  # async only
            await self._threads.stop(self._state.settings.command_timeout)  # async only

    def _after_fork_in_child(self) -> None:
        # The client state gave the child a new hold table (see core.state.client_state).
        self._state.holds.watcher = self._noticed
        self._wake = _primitives.Event()
        self._report_wake = _primitives.Event()
        self._watched = set()
