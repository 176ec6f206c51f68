"""Lock events: what a listener registered with ``client.add_listener`` receives.

See `redisson_py.core.state.events` for the contract (synchronous, cheap, exceptions
logged and swallowed) and `redisson_py.otel` for an OpenTelemetry listener.
"""

from redisson_py.core.state.events import EventKind, Listener, LockEvent

__all__ = ["EventKind", "Listener", "LockEvent"]
