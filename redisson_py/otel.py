"""OpenTelemetry metrics and spans for lock events (the ``otel`` extra).

``instrument(client)`` registers a listener (see `redisson_py.core.state.events`) on a
sync or asyncio client that records, through the given (or the global) providers:

- ``redisson.lock.wait`` (histogram, seconds): from the start of each acquire call to
  the grant;
- ``redisson.lock.held`` (up-down counter): locks this client holds now (a reentrant
  acquire or release that leaves the lock held does not count; a loss does);
- ``redisson.lock.lost`` (counter): holds found lost by the watchdog or a lease's end;
- ``redisson.lock.renewal_failures`` (counter): watchdog renewals that failed (the
  hold may still be renewed in time);
- a span ``redisson.lock.wait`` per granted acquire that waited at least
  ``span_min_wait`` seconds. It is recorded when the grant is reported, with its start
  set back by the wait time, so it covers the wait exactly; it is made in the thread or
  task of the acquire, so its parent is the caller's current span. Acquires that end
  without a grant (a timeout) make no span.

Each measurement carries ``redisson.lock.name`` (the lock's name, or a MultiLock's
label) unless ``lock_name_attribute=False``: turn it off when lock names are unbounded
(one per user, per order...), which would make one time series per name.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from redisson_py.core.state.events import LockEvent
from redisson_py.errors import UsageError

if TYPE_CHECKING:
    from opentelemetry.metrics import MeterProvider
    from opentelemetry.trace import TracerProvider

INSTRUMENTATION_NAME = "redisson_py"
NAME_ATTRIBUTE = "redisson.lock.name"
NODE_ATTRIBUTE = "redisson.lock.node"


def instrument(
    client: Any,
    meter_provider: MeterProvider | None = None,
    tracer_provider: TracerProvider | None = None,
    *,
    lock_name_attribute: bool = True,
    span_min_wait: float = 0.0,
) -> Callable[[LockEvent], None]:
    """Record ``client``'s lock events as OpenTelemetry metrics and spans.

    ``client`` is a [`redisson_py.Redisson`][redisson_py.Redisson] or its asyncio twin.
    With no provider given, the global one is used (set by the application's
    OpenTelemetry setup). Returns the listener; ``client.remove_listener(listener)``
    stops the recording. Raises [`UsageError`][redisson_py.errors.UsageError] when
    ``opentelemetry-api`` is not installed (``pip install 'redisson-py[otel]'``).
    """
    try:
        # Imported here: the extra is optional, and importing this module must not fail.
        from opentelemetry import metrics, trace  # noqa: PLC0415
    except ImportError as error:
        raise UsageError(
            "redisson_py.otel needs the opentelemetry-api package: pip install 'redisson-py[otel]'"
        ) from error
    meter = metrics.get_meter(INSTRUMENTATION_NAME, meter_provider=meter_provider)
    tracer = trace.get_tracer(INSTRUMENTATION_NAME, tracer_provider=tracer_provider)
    wait_histogram = meter.create_histogram(
        "redisson.lock.wait", unit="s", description="Time from an acquire call to its grant"
    )
    held_counter = meter.create_up_down_counter(
        "redisson.lock.held", unit="{lock}", description="Locks held by this client"
    )
    lost_counter = meter.create_counter(
        "redisson.lock.lost", unit="{lock}", description="Holds found lost"
    )
    failure_counter = meter.create_counter(
        "redisson.lock.renewal_failures",
        unit="{renewal}",
        description="Watchdog renewals that failed",
    )
    # (name, owner) of the locks counted in held_counter: a loss or release only
    # subtracts what an acquire added (a MultiLock's member lost, a lock forced open).
    held: set[tuple[str, str]] = set()
    guard = threading.Lock()

    def listener(event: LockEvent) -> None:
        attributes = {NAME_ATTRIBUTE: event.name} if lock_name_attribute else {}
        key = (event.name, event.owner)
        if event.kind == "acquired":
            wait = event.wait or 0.0
            wait_histogram.record(wait, attributes)
            with guard:
                added = key not in held
                held.add(key)
            if added:
                held_counter.add(1, attributes)
            if wait >= span_min_wait:
                end = time.time_ns()
                span_attributes: dict[str, str] = {NAME_ATTRIBUTE: event.name}
                if event.node:
                    span_attributes[NODE_ATTRIBUTE] = event.node
                span = tracer.start_span(
                    "redisson.lock.wait",
                    start_time=end - int(wait * 1e9),
                    attributes=span_attributes,
                )
                span.end(end_time=end)
        elif (event.kind == "released" and not event.hold_count) or event.kind == "lost":
            with guard:
                removed = key in held
                held.discard(key)
            if removed:
                held_counter.add(-1, attributes)
            if event.kind == "lost":
                lost_counter.add(1, attributes)
        elif event.kind == "renewal_failed":
            failure_counter.add(1, attributes)

    client.add_listener(listener)
    return listener
