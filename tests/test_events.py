"""The events API and the OpenTelemetry listener, without Redis: listener registration
and error isolation (:mod:`redisson_py.core.state.events`), and how ``redisson_py.otel``
turns events into metrics and spans (SDK in-memory reader and exporter). The same
paths against a real Redis, in both APIs: integration/lock/test_lock_events.py."""

from __future__ import annotations

import sys
from typing import Any

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from redisson_py import otel
from redisson_py.core.state import events
from redisson_py.core.state.client_state import ClientState, LockSettings
from redisson_py.errors import RedissonError
from redisson_py.events import LockEvent
from redisson_py.sync._primitives import RUNTIME


class _Client:
    """What ``otel.instrument`` needs of a client: add_listener, on a real state."""

    def __init__(self) -> None:
        self.state = ClientState(LockSettings(), runtime=RUNTIME)

    def add_listener(self, listener: Any) -> None:
        events.add_listener(self.state, listener)

    def emit(
        self, kind: events.EventKind, name: str = "orders", owner: str = "c:1", **fields: Any
    ) -> None:
        events.emit(self.state, LockEvent(kind, name, owner, **fields))


def test_listeners_are_called_in_order_and_a_failing_one_is_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    state = ClientState(LockSettings(), runtime=RUNTIME)
    assert state.listeners == ()  # no listener: emission points skip at one check
    heard: list[str] = []

    def broken(event: LockEvent) -> None:
        raise ValueError("bug")

    events.add_listener(state, broken)
    events.add_listener(state, lambda e: heard.append(e.kind))
    with caplog.at_level("ERROR", logger="redisson_py.events"):
        events.emit(state, LockEvent("acquired", "orders", "c:1", wait=0.1))
    assert heard == ["acquired"]
    assert "orders" in caplog.text and "ValueError" in caplog.text
    events.remove_listener(state, broken)
    events.remove_listener(state, broken)  # again: ignored
    assert len(state.listeners) == 1


def test_events_are_frozen() -> None:
    event = LockEvent("lost", "orders", "c:1", error="gone")
    with pytest.raises(AttributeError):
        event.kind = "acquired"  # type: ignore[misc]


@pytest.fixture
def otel_setup() -> Any:
    reader, exporter = InMemoryMetricReader(), InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    return MeterProvider(metric_readers=[reader]), tracer_provider, reader, exporter


def _values(reader: Any) -> dict[str, dict[str | None, Any]]:
    out: dict[str, dict[str | None, Any]] = {}
    data = reader.get_metrics_data()
    for resource in data.resource_metrics if data else ():
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                for point in metric.data.data_points:
                    name = point.attributes.get("redisson.lock.name")
                    value = (
                        (point.count, point.sum) if hasattr(point, "bucket_counts") else point.value
                    )
                    out.setdefault(metric.name, {})[name] = value
    return out


def test_otel_counts_locks_held_not_holds(otel_setup: Any) -> None:
    meters, tracers, reader, _ = otel_setup
    client = _Client()
    otel.instrument(client, meters, tracers)
    client.emit("acquired", wait=0.0, hold_count=1)
    client.emit("acquired", wait=0.5, hold_count=2)  # reentrant
    client.emit("released", hold_count=1)
    assert _values(reader)["redisson.lock.held"] == {"orders": 1}
    client.emit("released", hold_count=0)
    client.emit("released", hold_count=0)  # a stray release subtracts nothing
    client.emit("acquired", "cart", wait=0.0, hold_count=1)
    client.emit("renewal_failed", "cart", error="timeout")
    client.emit("lost", "cart", hold_count=1, error="gone")
    client.emit("lost", "member", hold_count=1, error="gone")  # never counted as held
    values = _values(reader)
    assert values["redisson.lock.held"] == {"orders": 0, "cart": 0}
    assert values["redisson.lock.lost"] == {"cart": 1, "member": 1}
    assert values["redisson.lock.renewal_failures"] == {"cart": 1}
    assert values["redisson.lock.wait"] == {"orders": (2, 0.5), "cart": (1, 0.0)}


def test_otel_wait_span_covers_the_wait_under_the_callers_span(otel_setup: Any) -> None:
    meters, tracers, _, exporter = otel_setup
    client = _Client()
    otel.instrument(client, meters, tracers, span_min_wait=0.1)
    with tracers.get_tracer("test").start_as_current_span("request") as parent:
        client.emit("acquired", wait=0.05, hold_count=1)  # shorter: no span
        client.emit("acquired", wait=2.0, hold_count=2, node="127.0.0.1:6379")
    spans = {s.name: s for s in exporter.get_finished_spans()}
    assert set(spans) == {"request", "redisson.lock.wait"}
    wait = spans["redisson.lock.wait"]
    assert wait.parent is not None
    assert wait.parent.span_id == parent.get_span_context().span_id
    assert (wait.end_time - wait.start_time) / 1e9 == pytest.approx(2.0, abs=0.01)
    assert dict(wait.attributes or {}) == {
        "redisson.lock.name": "orders",
        "redisson.lock.node": "127.0.0.1:6379",
    }


def test_otel_can_leave_lock_names_out_of_metrics(otel_setup: Any) -> None:
    meters, tracers, reader, _ = otel_setup
    client = _Client()
    otel.instrument(client, meters, tracers, lock_name_attribute=False)
    client.emit("acquired", "user:1", wait=0.0, hold_count=1)
    client.emit("acquired", "user:2", wait=0.0, hold_count=1)
    assert _values(reader)["redisson.lock.held"] == {None: 2}


def test_instrument_without_opentelemetry_raises_a_redisson_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "opentelemetry", None)  # as if not installed
    with pytest.raises(RedissonError, match=r"redisson-py\[otel\]"):
        otel.instrument(_Client())
