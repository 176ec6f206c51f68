# GENERATED from redisson_py/asyncio/driver.py by scripts/generate_sync.py: do not edit.
# Edit the asyncio source, then run `python3 scripts/generate_sync.py`.
"""Runs a core flow in the current thread: performs each effect and sends back its outcome.

The flows live in `redisson_py.core`; this is the whole of what a shell adds to
them. A `Gather` sends every call before it reads any
reply (each manager sends first and reads later, one connection per node), so members
on five masters cost one round trip, with no thread or thread started per call. An error,
cancellation included, is thrown into the flow at the point that yielded it, so the
flow's own ``try``/``finally`` blocks decide retries and clean-up.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any, TypeVar

from redisson_py.core.effects import (
    Background,
    Call,
    Direct,
    Effect,
    Gather,
    Sleep,
    Subscribe,
    Unsubscribe,
    WaitSignal,
    by_target,
)
from redisson_py.sync import _primitives

T = TypeVar("T")


def _gather(effect: Gather) -> list[Any]:
    results: list[Any] = [None] * len(effect.calls)
    started = []
    for target, indexes in by_target(effect.calls):
        # Every target sends its share first; the replies are read afterwards, so the
        # round trips of all targets overlap.
        started.append((indexes, target.start([effect.calls[i] for i in indexes])))
    for indexes, batch in started:
        for index, outcome in zip(indexes, batch.finish(), strict=True):
            results[index] = outcome
    return results


# One case, one return per effect kind: every command goes through this dispatch, and a
# call more per effect (to split it) is paid on each.
def perform(effect: Effect) -> Any:  # noqa: PLR0911
    """Perform one effect and return its outcome (or raise its error)."""
    match effect:
        case Call() | Direct():
            return effect.target.execute(effect)
        case Gather():
            return _gather(effect)
        case WaitSignal():
            return effect.subscription.wait(effect.timeout)
        case Sleep():
            _primitives.sleep(effect.seconds)
            return None
        case Subscribe():
            return effect.target.subscribe(
                effect.channel, effect.timeout, effect.rule, effect.live_only
            )
        case Unsubscribe():
            effect.subscription.close()
            return None
        case Background():
            flow = effect.flow
            _primitives.spawn(effect.name, lambda: run(flow))
            return None
    raise TypeError(f"not an effect: {effect!r}")  # pragma: no cover


def run(flow: Generator[Effect, Any, T]) -> T:
    """Drive ``flow`` to its end in this thread and return its value.

    An effect's error is thrown into the flow at the point that yielded it; clean-up
    effects the flow yields then are still performed, and the error (a cancellation, a
    KeyboardInterrupt) propagates once the flow re-raises it.
    """
    value: Any = None
    error: BaseException | None = None
    while True:
        try:
            effect = flow.send(value) if error is None else flow.throw(error)
        except StopIteration as stop:
            return stop.value  # type: ignore[no-any-return]
        value, error = None, None
        try:
            value = perform(effect)
        except BaseException as exc:  # thrown into the flow, which decides
            error = exc
