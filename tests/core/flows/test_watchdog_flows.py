"""The watchdog round's decisions, stepped through without Redis (as test_lock_flows):
which holds are renewed or only checked, what is resent, what is reported lost, and
how the round's outcome schedules the next look. Behaviour against real servers is
tested in integration/lock/test_lost_holds.py and test_watchdog.py."""

from __future__ import annotations

import math
import time
from collections.abc import Generator
from dataclasses import replace
from typing import Any

import pytest
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from test_fake_clock import FakeClock

from redisson_py.core import scripts
from redisson_py.core.effects import Call, CallResult, Effect, Gather, ScriptCommand
from redisson_py.core.flows import watchdog
from redisson_py.core.routing.refusals import refused
from redisson_py.core.state import holds, losses
from redisson_py.core.state.client_state import ClientState, LockSettings
from redisson_py.core.state.holds import Hold
from redisson_py.sync._primitives import RUNTIME


class Target:
    routes_by_slot = False


TARGET = Target()


def make_state() -> tuple[ClientState, list[tuple[Hold, str]]]:
    state = ClientState(LockSettings(watchdog_timeout=3.0), runtime=RUNTIME)
    lost: list[tuple[Hold, str]] = []
    return state, lost


def take(state: ClientState, lost: list[tuple[Hold, str]], name: str, lease: float | None) -> Hold:
    return state.holds.acquired(
        name,
        f"{state.client_id}:1",
        1,
        target=TARGET,
        lease=lease,
        ttl=state.settings.key_ttl(lease),
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
    flow = watchdog.renew_round(state)
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
    flow = watchdog.renew_round(state)
    command = script(gather_of(flow, next(flow)))
    assert len(command.args) == 2  # the TTL and one owner: Redisson's own shape


def test_a_connection_error_is_resent_once_in_the_same_round() -> None:
    state, lost = make_state()
    take(state, lost, "a", None)
    flow = watchdog.renew_round(state)
    first = gather_of(flow, next(flow))
    again = gather_of(flow, flow.send([RedisConnectionError("Connection closed by server.")]))
    assert again.calls == first.calls
    outcome = finish(flow, [CallResult(([0],))])
    assert [h.name for h, _ in lost] == ["a"] and outcome.failing == set()


def test_a_timeout_is_not_resent_and_a_failing_node_is_probed() -> None:
    state, lost = make_state()
    take(state, lost, "a", None)
    flow = watchdog.renew_round(state)
    next(flow)
    outcome = finish(flow, [RedisTimeoutError("Timeout reading")])  # no resend
    assert len(outcome.failing) == 1 and lost == []  # not at its safe end yet: not lost

    flow = watchdog.renew_round(state)
    next(flow)
    flow.send([RedisConnectionError("refused")])
    outcome = finish(flow, [RedisConnectionError("refused")])
    assert len(outcome.failing) == 1 and lost == []


def test_a_lease_that_ran_out_is_reported_without_io() -> None:
    state, lost = make_state()
    take(state, lost, "a", 0.001)
    time.sleep(0.01)
    assert losses.report_expired(state, time.monotonic()) == 1
    assert [(h.name, r) for h, r in lost] == [("a", "its lease of 0.001 s expired while held")]
    assert losses.report_expired(state, time.monotonic()) == 0  # reported once
    assert "expired (lease 0.001 s)" in (
        state.holds.gone_reason("a", f"{state.client_id}:1", time.monotonic()) or ""
    )


def test_rounds_and_reports_wake_on_their_own_timers() -> None:
    state, lost = make_state()
    schedule = watchdog.Schedule(state)
    reports = watchdog.ExpiryReports()
    assert schedule.wake_at(state) == schedule.next_round
    assert reports.wake_at(state) == math.inf  # no hold, nothing to report
    hold = take(state, lost, "a", 0.5)
    assert schedule.wake_at(state) == schedule.next_round  # rounds do not wait for leases
    assert reports.wake_at(state) == hold.expires_at - watchdog.REPORT_GAP
    schedule.ask()
    flow = schedule.step(state)
    next(flow)  # a full round at once, though the interval has not passed
    flow.send([RedisConnectionError("refused")])
    finish(flow, [RedisConnectionError("refused")])
    assert schedule.next_probe - time.monotonic() <= watchdog.PROBE_INTERVAL


def test_a_hold_granted_a_short_ttl_is_renewed_a_third_of_the_way_to_its_safe_end() -> None:
    # A queued lock's grant gives the key a few seconds, not the watchdog's TTL: the
    # next full round, a renewal interval away, would come after the hold's safe end.
    clock = FakeClock()
    state = ClientState(LockSettings(watchdog_timeout=30.0), runtime=replace(RUNTIME, clock=clock))
    lost: list[tuple[Hold, str]] = []
    schedule = watchdog.Schedule(state)
    assert schedule.wake_at(state) == pytest.approx(clock.now + 10.0)
    owner = f"{state.client_id}:1"

    def grant(name: str, ttl: float) -> Hold:
        return state.holds.acquired(
            name, owner, 1, target=TARGET, lease=None, ttl=ttl, now=clock.now,
            on_lost=lambda hold, reason: lost.append((hold, reason)),
        )  # fmt: skip

    usual = grant("usual", 30.0)
    assert schedule.hurry(usual, clock.now) is False  # the interval's round is in time
    assert schedule.wake_at(state) == pytest.approx(clock.now + 10.0)
    short = grant("short", 5.0)
    assert schedule.hurry(short, clock.now) is True
    due = clock.now + (short.expires_at - clock.now) / 3
    assert schedule.wake_at(state) == pytest.approx(due)
    clock.now += 0.01
    assert schedule.hurry(grant("later", 5.0), clock.now) is False  # one round serves both
    assert schedule.hurry(take(state, lost, "leased", 2.0), clock.now) is False  # not renewed
    assert list(schedule.step(state)) == []  # not due yet: nothing sent
    clock.now = due
    flow = schedule.step(state)
    gather = gather_of(flow, next(flow))
    keys = [key for call in gather.calls for key in call.commands[0].keys]
    assert {"usual", "short", "later"} <= set(keys)  # a full round
    finish(flow, [CallResult(([1] * len(call.commands[0].keys),)) for call in gather.calls])
    assert state.holds.get("short", owner).expires_at == pytest.approx(  # type: ignore[union-attr]
        holds.safe_end(due, 30.0)
    )
    assert schedule.wake_at(state) == pytest.approx(due + 10.0)
    assert lost == []


def test_reports_come_early_by_at_most_the_gap_never_late() -> None:
    clock = FakeClock()
    state = ClientState(LockSettings(watchdog_timeout=3.0), runtime=replace(RUNTIME, clock=clock))
    lost: list[tuple[Hold, str]] = []
    owner = f"{state.client_id}:1"

    def take_at(name: str, lease: float) -> Hold:
        return state.holds.acquired(
            name, owner, 1, target=TARGET, lease=lease, ttl=state.settings.key_ttl(lease),
            now=clock(), on_lost=lambda hold, reason: lost.append((hold, reason)),
        )  # fmt: skip

    holds_ = [take_at("a", 1.0), take_at("b", 1.01), take_at("c", 1.02)]
    reports = watchdog.ExpiryReports()
    told_at: dict[str, float] = {}
    while len(told_at) < 3:
        clock.advance(max(0.0, reports.wake_at(state) - clock()))
        reports.step(state)
        for hold, _ in lost:
            told_at.setdefault(hold.name, clock())
    for hold in holds_:
        early = hold.expires_at - told_at[hold.name]
        assert 0 <= early <= watchdog.REPORT_GAP + 1e-9, (hold.name, early)
    # Three safe ends 10 ms apart cost two wake-ups, not three.
    assert told_at["a"] < told_at["b"] == told_at["c"]


def test_the_safe_end_counts_from_the_send_less_the_margin() -> None:
    clock = FakeClock()
    state = ClientState(LockSettings(watchdog_timeout=30.0), runtime=replace(RUNTIME, clock=clock))
    sent = clock()
    clock.advance(0.4)  # the reply (and its WAIT) came 0.4 s after the send
    hold = state.holds.acquired(
        "a", "o", 1, target=TARGET, lease=10.0, ttl=10.0, now=sent,
        on_lost=lambda hold, reason: None,
    )  # fmt: skip
    assert holds.safety_margin(10.0) == pytest.approx(0.15)  # 10 s x 1% + 50 ms
    assert hold.expires_at == pytest.approx(sent + 10.0 - 0.15)


def synced_state(clock: FakeClock) -> tuple[ClientState, list[tuple[Hold, str]], Hold]:
    settings = LockSettings(
        watchdog_timeout=3.0, check_lock_synced_slaves=True, slaves_sync_timeout=0.5
    )
    state = ClientState(settings, runtime=replace(RUNTIME, clock=clock))
    lost: list[tuple[Hold, str]] = []
    hold = state.holds.acquired(
        "a", f"{state.client_id}:1", 1, target=TARGET, lease=None, ttl=3.0,
        now=clock(), on_lost=lambda hold, reason: lost.append((hold, reason)),
    )  # fmt: skip
    return state, lost, hold


def test_with_replica_sync_a_renewal_asks_the_replicas_to_acknowledge_it() -> None:
    state, _, _ = synced_state(FakeClock())
    flow = watchdog.renew_round(state)
    [call] = gather_of(flow, next(flow)).calls
    assert isinstance(call, Call) and call.sync_replicas == 0.5
    state.settings = LockSettings(watchdog_timeout=3.0, check_lock_synced_slaves=False)
    flow = watchdog.renew_round(state)
    [call] = gather_of(flow, next(flow)).calls
    assert isinstance(call, Call) and call.sync_replicas is None


def test_a_renewal_the_replicas_did_not_acknowledge_does_not_count() -> None:
    # The partition: the old master the holder still reaches applies every renewal, the
    # replica a failover promotes never sees them. The holder is told at the safe end
    # of its last acknowledged renewal, before the key can expire on that replica.
    clock = FakeClock()
    state, lost, hold = synced_state(clock)
    safe_until = hold.expires_at
    events: list[Any] = []
    state.listeners = (events.append,)
    for _ in range(2):
        clock.advance(1.0)
        flow = watchdog.renew_round(state)
        next(flow)
        outcome = finish(flow, [CallResult(([1],), required=1, synced=0, address="m:1")])
        assert outcome.renewed == 0 and len(outcome.failing) == 1  # probed again soon
        assert hold.expires_at == safe_until  # the master renewed it; it does not count
    assert [e.kind for e in events] == ["renewal_failed", "renewal_failed"]
    assert "only 0 of 1 replicas acknowledged it" in (events[0].error or "")
    assert lost == []
    clock.advance(safe_until - clock())
    assert losses.report_expired(state, clock()) == 1
    [(_, reason)] = lost
    assert "renewals were not confirmed" in reason and "0 of 1 replicas" in reason, reason
    assert "expired unrenewed" in (state.holds.gone_reason("a", hold.owner, clock()) or "")
    assert safe_until == pytest.approx(1000.0 + 3.0 - holds.safety_margin(3.0))


def test_an_acknowledged_renewal_in_time_keeps_the_hold() -> None:
    clock = FakeClock()
    state, lost, hold = synced_state(clock)
    clock.advance(1.0)
    flow = watchdog.renew_round(state)
    next(flow)
    finish(flow, [CallResult(([1],), required=1, synced=0)])
    clock.advance(0.25)
    sent = clock()
    flow = watchdog.renew_round(state)
    next(flow)
    clock.advance(0.3)  # the WAIT took 0.3 s
    outcome = finish(flow, [CallResult(([1],), required=1, synced=1)])
    assert outcome.renewed == 1 and outcome.failing == set() and lost == []
    assert hold.expires_at == pytest.approx(holds.safe_end(sent, 3.0))
    assert hold.unconfirmed is None


def test_a_renewal_confirmed_after_the_safe_end_does_not_undo_the_loss() -> None:
    clock = FakeClock()
    state, lost, _ = synced_state(clock)
    clock.advance(2.5)
    flow = watchdog.renew_round(state)
    next(flow)
    clock.advance(1.0)  # the reply came after the safe end had passed
    finish(flow, [CallResult(([1],), required=1, synced=1)])
    assert len(lost) == 1  # reported by the round itself, as it looked at the clock


def test_an_unreachable_node_until_the_safe_end_is_reported_as_such() -> None:
    clock = FakeClock()
    state, lost, hold = synced_state(clock)
    clock.advance(1.0)
    flow = watchdog.renew_round(state)
    next(flow)
    finish(flow, [RedisTimeoutError("Timeout reading from m:1")])
    clock.advance(hold.expires_at - clock())
    losses.report_expired(state, clock())
    [(_, reason)] = lost
    assert reason.startswith("Redis unreachable until the lock expired (Timeout reading"), reason


def test_a_node_refusing_renewals_until_the_safe_end_is_reported_as_such() -> None:
    # A minority master of a cluster answers CLUSTERDOWN: reachable, but refusing.
    clock = FakeClock()
    state, lost, hold = synced_state(clock)
    clock.advance(1.0)
    flow = watchdog.renew_round(state)
    next(flow)
    refusal = refused("CLUSTERDOWN", "The cluster is down", "m:1")
    outcome = finish(flow, [refusal])
    assert len(outcome.failing) == 1  # probed again soon
    clock.advance(hold.expires_at - clock())
    losses.report_expired(state, clock())
    [(_, reason)] = lost
    assert reason.startswith("its renewals were refused until the lock expired"), reason
    assert "CLUSTERDOWN" in reason


def test_a_round_sends_on_the_route_and_delivers_what_it_finds() -> None:
    """The asyncio client's watchdog thread: each call goes on ``route`` of its hold's
    manager (its threaded twin), and losses and events go through ``state.deliver``
    (the loop), while the hold leaves the table at once."""
    state, lost = make_state()
    take(state, lost, "a", None)
    take(state, lost, "b", None)
    twin = Target()
    queued: list[Any] = []
    state.deliver = queued.append
    state.listeners = (lambda event: None,)
    flow = watchdog.renew_round(state, route=lambda target: twin if target is TARGET else None)
    gather = gather_of(flow, next(flow))
    assert [call.target for call in gather.calls] == [twin]
    finish(flow, [CallResult(replies=([1, 0],))])
    assert state.holds.get("b", f"{state.client_id}:1") is None  # gone from the table now
    assert lost == []  # told only when delivered
    for report in queued:
        report()
    assert [hold.name for hold, _ in lost] == ["b"]


def test_a_finished_owners_hold_is_only_checked_then_reported_at_its_safe_end() -> None:
    """`Runtime.owner_finished` (the asyncio shell's: the owning task is done): the
    round stops renewing that owner's holds and only checks them; at the safe end the
    loss is reported as the owner's finishing. Another owner's hold, and a hold of
    another client's field (adopted), are renewed as before."""
    gone = {"1"}
    runtime = replace(RUNTIME, owner_finished=lambda owner: owner in gone)
    state = ClientState(LockSettings(watchdog_timeout=3.0), runtime=runtime)
    lost: list[tuple[Hold, str]] = []
    take(state, lost, "a", None)  # owner 1: finished
    record = lambda hold, reason: lost.append((hold, reason))  # noqa: E731
    for name, owner in (("b", f"{state.client_id}:2"), ("c", "other-client:1")):
        state.holds.acquired(
            name,
            owner,
            1,
            target=TARGET,
            lease=None,
            ttl=3.0,
            now=time.monotonic(),
            on_lost=record,
        )
    flow = watchdog.renew_round(state)
    command = script(gather_of(flow, next(flow)))
    assert command.keys == ("a", "b", "c")
    assert command.args[4:] == ("0", "1", "1")  # check a, renew b and c
    assert finish(flow, [CallResult(([1, 1, 1],))]).renewed == 2
    hold = state.holds.get("a", f"{state.client_id}:1")
    assert hold is not None and hold.orphaned and lost == []
    assert losses.report_expired(state, hold.expires_at) == 1
    assert [(h.name, r) for h, r in lost] == [("a", holds.orphaned_text(hold))]
    assert lost[0][1].startswith(holds.ORPHANED)
