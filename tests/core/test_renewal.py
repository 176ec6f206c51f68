"""The watchdog round's decisions, stepped through without Redis (as test_lock_flows):
which holds are renewed or only checked, what is resent, what is reported lost, and
how the round's outcome schedules the next look. Behaviour against real servers is
tested in integration/lock/test_lost_holds.py and test_watchdog.py."""

from __future__ import annotations

import time
from collections.abc import Generator
from typing import Any

from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from redisson_py.core import renewal, scripts
from redisson_py.core.client_state import ClientState, LockSettings
from redisson_py.core.effects import CallResult, Effect, Gather, ScriptCommand
from redisson_py.core.holds import Hold


class Target:
    routes_by_slot = False


TARGET = Target()


def make_state() -> tuple[ClientState, list[tuple[Hold, str]]]:
    state = ClientState(LockSettings(watchdog_timeout=3.0))
    lost: list[tuple[Hold, str]] = []
    return state, lost


def take(state: ClientState, lost: list[tuple[Hold, str]], name: str, lease: float | None) -> Hold:
    return state.holds.acquired(
        name,
        f"{state.client_id}:1",
        1,
        target=TARGET,
        lease=lease,
        watchdog_timeout=3.0,
        now=time.monotonic(),
        on_lost=lambda hold, reason: lost.append((hold, reason)),
    )


def gather_of(flow: Generator[Effect, Any, Any], effect: Any) -> Gather:
    assert isinstance(effect, Gather), effect
    return effect


def script(gather: Gather, index: int = 0) -> ScriptCommand:
    command = gather.calls[index].commands[0]
    assert isinstance(command, ScriptCommand) and command.script is scripts.RENEW
    return command


def finish(flow: Generator[Effect, Any, Any], outcome: Any) -> Any:
    try:
        flow.send(outcome)
    except StopIteration as stop:
        return stop.value
    raise AssertionError("the round yielded more")


def test_watchdog_holds_are_renewed_and_leased_ones_only_checked() -> None:
    state, lost = make_state()
    take(state, lost, "a", None)
    take(state, lost, "b", 60.0)
    flow = renewal.renew_round(state)
    gather = gather_of(flow, next(flow))
    command = script(gather)
    assert command.keys == ("a", "b")
    assert command.args[3:] == ("1", "0")  # renew a, check b
    outcome = finish(flow, [CallResult(([1, 0],))])
    assert outcome.renewed == 1
    assert [h.name for h, _ in lost] == ["b"]
    assert "deleted or evicted" in lost[0][1], lost[0][1]
    assert state.holds.gone_reason("b", f"{state.client_id}:1", time.monotonic()) == (
        "the hold vanished (the key was deleted or evicted; lease 60 s)"
        " and was reported lost before this unlock"
    )


def test_a_round_of_watchdog_holds_sends_no_flags() -> None:
    state, lost = make_state()
    take(state, lost, "a", None)
    flow = renewal.renew_round(state)
    command = script(gather_of(flow, next(flow)))
    assert len(command.args) == 2  # the TTL and one owner: Redisson's own shape


def test_a_connection_error_is_resent_once_in_the_same_round() -> None:
    state, lost = make_state()
    take(state, lost, "a", None)
    flow = renewal.renew_round(state)
    first = gather_of(flow, next(flow))
    again = gather_of(flow, flow.send([RedisConnectionError("Connection closed by server.")]))
    assert again.calls == first.calls
    outcome = finish(flow, [CallResult(([0],))])
    assert [h.name for h, _ in lost] == ["a"] and outcome.failing == set()


def test_a_timeout_is_not_resent_and_a_refusing_node_is_probed() -> None:
    state, lost = make_state()
    take(state, lost, "a", None)
    flow = renewal.renew_round(state)
    next(flow)
    outcome = finish(flow, [RedisTimeoutError("Timeout reading")])
    assert outcome.failing == set() and lost == []

    flow = renewal.renew_round(state)
    next(flow)
    flow.send([RedisConnectionError("refused")])
    outcome = finish(flow, [RedisConnectionError("refused")])
    assert len(outcome.failing) == 1 and lost == []  # not expired yet: not lost


def test_a_lease_that_ran_out_is_reported_without_io() -> None:
    state, lost = make_state()
    take(state, lost, "a", 0.001)
    time.sleep(0.01)
    assert renewal.expire_leases(state, time.monotonic()) == 1
    assert [(h.name, r) for h, r in lost] == [("a", "its lease of 0.001 s expired while held")]
    assert renewal.expire_leases(state, time.monotonic()) == 0  # reported once
    assert "expired (lease 0.001 s)" in (
        state.holds.gone_reason("a", f"{state.client_id}:1", time.monotonic()) or ""
    )


def test_the_schedule_wakes_at_the_first_lease_end_and_probes_after_refusals() -> None:
    state, lost = make_state()
    schedule = renewal.Schedule(state)
    assert schedule.wake_at(state) == schedule.next_round
    hold = take(state, lost, "a", 0.5)
    assert schedule.wake_at(state) == hold.expires_at
    schedule.ask()
    flow = schedule.step(state)
    next(flow)  # a full round at once, though the interval has not passed
    flow.send([RedisConnectionError("refused")])
    finish(flow, [RedisConnectionError("refused")])
    assert schedule.next_probe - time.monotonic() <= renewal.PROBE_INTERVAL
