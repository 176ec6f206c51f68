"""Lock events (issue 13, item 5): a listener registered on the client hears every
acquire (with its wait), release, renewal, failed renewal and loss, in both APIs, on a
real Redis; a failing listener never breaks a lock call; ``redisson_py.otel`` turns the
events into OpenTelemetry metrics and spans (read back with the SDK's in-memory
reader and exporter)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
import redis
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from redisson_py import otel
from redisson_py.events import LockEvent
from redisson_py.testing import Topology
from redisson_py.testing.owners import Flavor


class Heard:
    """A listener that records events (from any thread) and can wait for one."""

    def __init__(self) -> None:
        self.events: list[LockEvent] = []
        self._changed = threading.Condition()

    def __call__(self, event: LockEvent) -> None:
        with self._changed:
            self.events.append(event)
            self._changed.notify_all()

    def kinds(self, name: str) -> list[str]:
        with self._changed:
            return [e.kind for e in self.events if e.name == name]

    def wait_for(self, kind: str, name: str, timeout: float) -> LockEvent:
        def found() -> LockEvent | None:
            return next((e for e in self.events if e.kind == kind and e.name == name), None)

        with self._changed:
            assert self._changed.wait_for(lambda: found() is not None, timeout), (
                f"no {kind} event for {name!r} within {timeout} s: {self.events}"
            )
            event = found()
            assert event is not None
            return event


def _admin(topology: Topology) -> redis.Redis:
    master = topology.master()
    return redis.Redis(host=master.host, port=master.port, socket_timeout=2)


def test_acquire_wait_release_renewal_and_loss_are_heard(
    flavor: Flavor, single_topology: Topology, topology_config: Any, lock_name: str
) -> None:
    client = flavor.create_client(topology_config(single_topology, lock_watchdog_timeout=1.5))
    heard = Heard()
    client.add_listener(heard)
    lock = client.get_lock(lock_name)
    alice, bob = flavor.owner("alice"), flavor.owner("bob")

    alice(lock.lock)
    pending = bob.start(lock.try_lock, 10.0)
    time.sleep(0.4)  # bob waits for alice this long at least
    alice(lock.unlock)
    assert pending.result(timeout=10) is True

    acquired = [e for e in heard.events if e.kind == "acquired"]
    assert len(acquired) == 2, heard.events
    first, second = acquired
    assert first.wait is not None and first.wait < 0.3
    assert second.wait is not None and 0.35 <= second.wait < 5.0
    assert first.owner != second.owner and first.owner.startswith(client.id)
    assert first.hold_count == 1 and first.node  # the node that granted it
    released = heard.wait_for("released", lock_name, 1.0)
    assert (released.owner, released.hold_count) == (first.owner, 0)

    # bob holds on the watchdog (renewed every 0.5 s); then the key vanishes.
    renewed = heard.wait_for("renewed", lock_name, 3.0)
    assert renewed.owner == second.owner
    _admin(single_topology).delete(lock_name)
    lost = heard.wait_for("lost", lock_name, 3.0)
    assert lost.owner == second.owner and lost.error
    assert heard.kinds(lock_name)[:3] == ["acquired", "released", "acquired"]

    client.remove_listener(heard)
    count = len(heard.events)
    alice(lock.lock)
    alice(lock.unlock)
    assert len(heard.events) == count  # removed: told nothing more


def test_a_failing_listener_never_breaks_a_lock_call(
    flavor: Flavor,
    single_topology: Topology,
    topology_config: Any,
    lock_name: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    client = flavor.create_client(topology_config(single_topology))

    def broken(event: LockEvent) -> None:
        raise RuntimeError(f"listener bug on {event.kind}")

    heard = Heard()
    client.add_listener(broken)
    client.add_listener(heard)  # still told, after the failing one
    lock = client.get_lock(lock_name)
    alice = flavor.owner("alice")
    with caplog.at_level("ERROR", logger="redisson_py.events"):
        assert alice(lock.try_lock, 1.0) is True
        alice(lock.unlock)
    assert heard.kinds(lock_name) == ["acquired", "released"]
    assert alice(lock.is_locked) is False
    assert (
        sum("listener bug" in r.getMessage() or r.exc_info is not None for r in caplog.records) == 2
    )


def test_a_renewal_that_fails_is_heard_and_then_the_loss(
    flavor: Flavor,
    topology_factory: Callable[..., Topology],
    topology_config: Any,
    lock_name: str,
) -> None:
    single = topology_factory("single")  # of its own: this test freezes its node
    config = topology_config(single, lock_watchdog_timeout=1.0)
    config.server_config.timeout = 0.5
    client = flavor.create_client(config)
    heard = Heard()
    client.add_listener(heard)
    lock = client.get_lock(lock_name)
    alice = flavor.owner("alice")
    alice(lock.lock)
    server = single.master()
    server.pause()
    try:
        failed = heard.wait_for("renewal_failed", lock_name, 3.0)
        lost = heard.wait_for("lost", lock_name, 3.0)
    finally:
        server.resume()
    assert failed.error and lost.error
    assert failed.owner == lost.owner


def test_otel_records_wait_held_lost_and_wait_spans(
    flavor: Flavor, single_topology: Topology, topology_config: Any, lock_name: str
) -> None:
    reader = InMemoryMetricReader()
    exporter = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    client = flavor.create_client(topology_config(single_topology, lock_watchdog_timeout=1.5))
    otel.instrument(client, MeterProvider(metric_readers=[reader]), tracer_provider)
    lock, other = client.get_lock(lock_name), client.get_lock(lock_name + ":other")
    alice, bob = flavor.owner("alice"), flavor.owner("bob")

    alice(lock.lock)
    alice(lock.lock)  # reentrant: still one lock held
    bob(other.lock)
    pending = bob.start(lock.try_lock, 10.0)
    time.sleep(0.4)
    assert _points(reader)["redisson.lock.held"] == {lock_name: 1, lock_name + ":other": 1}
    alice(lock.unlock)
    alice(lock.unlock)
    assert pending.result(timeout=10) is True
    _admin(single_topology).delete(lock_name + ":other")
    _wait(lambda: _points(reader).get("redisson.lock.lost"), 3.0)

    points = _points(reader)
    assert points["redisson.lock.held"] == {lock_name: 1, lock_name + ":other": 0}
    assert points["redisson.lock.lost"] == {lock_name + ":other": 1}
    waits = points["redisson.lock.wait"]
    assert waits[lock_name][0] == 3 and waits[lock_name][1] >= 0.35  # count, sum
    spans = [
        s
        for s in exporter.get_finished_spans()
        if s.attributes and s.attributes.get("redisson.lock.name") == lock_name
    ]
    assert len(spans) == 3
    longest = max(spans, key=lambda s: (s.end_time or 0) - (s.start_time or 0))
    assert longest.name == "redisson.lock.wait"
    assert ((longest.end_time or 0) - (longest.start_time or 0)) / 1e9 >= 0.35
    bob(lock.unlock)


def _wait(predicate: Callable[[], object], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def _points(reader: Any) -> dict[str, dict[str, Any]]:
    """Metric name -> lock name -> value (a histogram's: (count, sum))."""
    out: dict[str, dict[str, Any]] = {}
    data = reader.get_metrics_data()
    for resource in data.resource_metrics if data else ():
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                values = out.setdefault(metric.name, {})
                for point in metric.data.data_points:
                    name = point.attributes.get("redisson.lock.name")
                    if hasattr(point, "bucket_counts"):
                        values[name] = (point.count, point.sum)
                    else:
                        values[name] = point.value
    return out


def test_a_multilock_is_heard_by_its_label(
    flavor: Flavor, single_topology: Topology, topology_config: Any, lock_name: str
) -> None:
    client = flavor.create_client(topology_config(single_topology))
    heard = Heard()
    client.add_listener(heard)
    multi = flavor.multilock(client.get_lock(lock_name + ":a"), client.get_lock(lock_name + ":b"))
    alice = flavor.owner("alice")
    assert alice(multi.try_lock, 1.0) is True
    alice(multi.unlock)
    label = f"MultiLock({lock_name + ':a'!r}, {lock_name + ':b'!r})"
    assert heard.kinds(label) == ["acquired", "released"]
    acquired = heard.wait_for("acquired", label, 0)
    assert acquired.wait is not None and acquired.hold_count == 1
    assert heard.wait_for("released", label, 0).hold_count == 0
