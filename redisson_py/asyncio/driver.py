"""Runs a core flow in the current task: awaits each effect.

The asyncio twin of :mod:`redisson_py.sync.driver`; the flows themselves are shared.
Calls of a :class:`~redisson_py.core.effects.Gather` run concurrently (one pipelined
round trip per node and manager). A cancellation is thrown into the flow like any
error, so the flow can undo an acquire that was in flight before the task ends.
"""

from __future__ import annotations

import asyncio
import contextlib
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

T = TypeVar("T")

_background: set[asyncio.Task[None]] = set()
"""Background flows running now: the loop keeps only weak references to tasks."""


async def _gather(effect: Gather) -> list[Any]:
    results: list[Any] = [None] * len(effect.calls)
    shares = by_target(effect.calls)
    batches = await asyncio.gather(
        *(target.execute_many([effect.calls[i] for i in indexes]) for target, indexes in shares)
    )
    for (_target, indexes), outcomes in zip(shares, batches, strict=True):
        for index, outcome in zip(indexes, outcomes, strict=True):
            results[index] = outcome
    return results


async def perform(effect: Effect) -> Any:
    """Perform one effect and return its outcome (or raise its error)."""
    match effect:
        case Call() | Direct():
            return await effect.target.execute(effect)
        case Gather():
            return await _gather(effect)
        case WaitSignal():
            return await effect.subscription.wait(effect.timeout)
        case Sleep():
            await asyncio.sleep(max(0.0, effect.seconds))
            return None
        case Subscribe():
            return await effect.target.subscribe(effect.channel, effect.timeout)
        case Unsubscribe():
            await effect.subscription.close()
            return None
        case Background():
            task = asyncio.get_running_loop().create_task(
                _run_quietly(effect.flow), name=effect.name
            )
            _background.add(task)
            task.add_done_callback(_background.discard)
            return None
    raise TypeError(f"not an effect: {effect!r}")  # pragma: no cover


async def _run_quietly(flow: Generator[Effect, Any, Any]) -> None:
    # See the sync twin: a background flow promises not to raise.
    with contextlib.suppress(Exception):
        await run(flow)


async def run(flow: Generator[Effect, Any, T]) -> T:
    """Drive ``flow`` to its end in this task and return its value.

    An effect's error, ``asyncio.CancelledError`` included, is thrown into the flow at
    the point that yielded it; clean-up effects the flow yields then are still awaited,
    and the cancellation propagates once the flow re-raises it.
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
            value = await perform(effect)
        except BaseException as exc:  # thrown into the flow, which decides
            error = exc
