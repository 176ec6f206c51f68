"""The flows read time only from their client state's clock, so a test drives time: a
timed wait and a watchdog renewal are stepped through here with a fake clock, in no
real time at all (the shells pass ``time.monotonic``)."""

from __future__ import annotations

import time
from collections.abc import Generator
from dataclasses import replace
from typing import Any

import pytest
from test_lock_flows import Target

from redisson_py.core import scripts
from redisson_py.core.effects import (
    Call,
    CallResult,
    Effect,
    Gather,
    ScriptCommand,
    Sleep,
    Subscribe,
    Unsubscribe,
    WaitSignal,
)
from redisson_py.core.flows import lock, lock_kinds, watchdog
from redisson_py.core.state.client_state import ClientState, LockSettings
from redisson_py.sync._primitives import RUNTIME


class FakeClock:
    """Monotonic seconds that move only when the test says so."""

    def __init__(self, start: float = 1000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        assert seconds >= 0
        self.now += seconds


def held(ttl_ms: int) -> CallResult:
    return CallResult(([0, ttl_ms],))


def drive_contended_wait(
    flow: Generator[Effect, Any, Any], clock: FakeClock, log: list[str]
) -> Any:
    """Play the shell for a waiter that is never woken: every acquire finds the lock
    held (TTL 10 s), every wait runs to its timeout, which moves the clock."""
    value: Any = None
    while True:
        try:
            effect = flow.send(value)
        except StopIteration as stop:
            return stop.value
        match effect:
            case Call():
                log.append("acquire")
                value = held(10_000)
            case Subscribe():
                log.append("subscribe")
                value = object()
            case WaitSignal():
                log.append(f"wait {effect.timeout:.2f}")
                clock.advance(effect.timeout)
                value = False
            case Sleep():
                clock.advance(effect.seconds)
                value = None
            case Unsubscribe():
                log.append("unsubscribe")
                value = None
            case _:
                raise AssertionError(f"unexpected effect {effect!r}")


def test_a_timed_wait_ends_when_the_fake_clock_passes_its_deadline() -> None:
    clock = FakeClock()
    state = ClientState(LockSettings(), runtime=replace(RUNTIME, clock=clock))
    ref = lock_kinds.LockRef("res", f"{state.client_id}:1", Target(), state)
    log: list[str] = []
    started = time.monotonic()
    acquired = drive_contended_wait(lock.try_lock(ref, 2.5, None), clock, log)
    assert acquired is False
    assert clock.now == 1002.5  # the waits added up to the wait time, exactly
    assert log[:2] == ["acquire", "subscribe"] and log[-1] == "unsubscribe"
    waits = [float(entry.split()[1]) for entry in log if entry.startswith("wait")]
    assert abs(sum(waits) - 2.5) < 1e-9 and all(w <= 2.5 for w in waits)
    assert time.monotonic() - started < 0.5  # the clock moved, the test did not sleep


def test_the_watchdog_renews_when_the_fake_clock_reaches_a_third_of_its_timeout() -> None:
    clock = FakeClock()
    state = ClientState(LockSettings(watchdog_timeout=30.0), runtime=replace(RUNTIME, clock=clock))
    owner = f"{state.client_id}:1"
    hold = state.holds.acquired(
        "res", owner, 1, target=Target(), lease=None, ttl=30.0,
        now=clock(), on_lost=lambda hold, reason: None,
    )  # fmt: skip
    schedule = watchdog.Schedule(state)
    assert schedule.wake_at(state) == 1010.0  # a renewal every 30 / 3 s

    clock.advance(9.0)  # not due yet: a step renews nothing and sends nothing
    early = schedule.step(state)
    try:
        next(early)
        raise AssertionError("a step before the renewal interval sent something")
    except StopIteration as stop:
        assert stop.value == 0

    clock.advance(1.0)
    due = schedule.step(state)
    gather = next(due)
    assert isinstance(gather, Gather)
    command = gather.calls[0].commands[0]
    assert isinstance(command, ScriptCommand) and command.script is scripts.RENEW
    assert command.keys == ("res",)
    try:
        due.send([CallResult(([1],))])
        raise AssertionError("the renewal round yielded more")
    except StopIteration as stop:
        assert stop.value == 1
    # Renewed at the fake 1010 s: the key lives to 1040 s, the hold is safe until then
    # less the margin (30 s x 1% + 50 ms), the next round at 1020 s.
    assert hold.expires_at == pytest.approx(1040.0 - 0.35)
    assert schedule.wake_at(state) == 1020.0
