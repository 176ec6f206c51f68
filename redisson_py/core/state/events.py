"""Lock events for observers (metrics, tracing, logs), independent of how I/O is done.

A listener registered on a client (``client.add_listener(callback)``) receives a
[`LockEvent`][redisson_py.events.LockEvent] for every acquire, release, watchdog
renewal, failed renewal and loss of that client's locks. Listeners are called
synchronously, in the thread or task where the event happens: they must be cheap and
must not block. An exception raised by a listener is logged and swallowed, so it never
breaks a lock call or the watchdog.

With no listener registered, each emission point costs one attribute check
(``state.listeners`` is an empty tuple), so the hot path pays nothing measurable.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from redisson_py.core.state.client_state import ClientState

log = logging.getLogger("redisson_py.events")

EventKind = Literal["acquired", "released", "renewed", "renewal_failed", "lost"]


@dataclass(frozen=True, slots=True)
class LockEvent:
    """One thing that happened to a lock held (or taken) by this client.

    ``name`` is the lock's name (for a MultiLock/RedLock, its label such as
    ``MultiLock('a', 'b')``; its members' renewals and losses come as events of the
    member locks); ``owner`` the owner field (client id and thread or task). ``wait``
    (acquired only) is the seconds from the start of the acquire call to the grant.
    ``hold_count`` is the owner's hold count after the event (0 after the last release;
    for ``lost``, the count that was lost). ``node`` is the address of the node that
    answered, where known; ``error`` the failure's text (renewal_failed, lost).
    """

    kind: EventKind
    name: str
    owner: str
    wait: float | None = None
    hold_count: int | None = None
    node: str | None = None
    error: str | None = None


Listener = Callable[[LockEvent], object]


def add_listener(state: ClientState, listener: Listener) -> None:
    """Register ``listener`` (copy-on-write: an emission in progress is unaffected)."""
    state.listeners = (*state.listeners, listener)


def remove_listener(state: ClientState, listener: Listener) -> None:
    """Unregister ``listener``; a listener never registered is ignored."""
    listeners = list(state.listeners)
    if listener in listeners:
        listeners.remove(listener)
    state.listeners = tuple(listeners)


def emit(state: ClientState, event: LockEvent) -> None:
    """Call every listener of ``state`` with ``event``; a listener's error is logged."""
    for listener in state.listeners:
        try:
            listener(event)
        except Exception:
            log.exception(
                "lock event listener %r raised on %s of lock %r", listener, event.kind, event.name
            )
