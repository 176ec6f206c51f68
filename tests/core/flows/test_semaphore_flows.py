"""The semaphores' flows, stepped through without Redis, with a fake clock: which script
goes with which keys, how a waiter waits and when it gives up, what a retry resends
(the same request id, so the server counts it once), and what is undone.

Behaviour against real servers: integration/family/test_semaphore.py and
test_permit_expirable_semaphore.py."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

import pytest
from redis.exceptions import ConnectionError as RedisConnectionError
from test_fake_clock import FakeClock
from test_lock_flows import Stepper, Target

from redisson_py.core.effects import (
    Background,
    Call,
    CallResult,
    Effect,
    ScriptCommand,
    Sleep,
    Subscribe,
    Unsubscribe,
    WaitSignal,
)
from redisson_py.core.flows import grants
from redisson_py.core.flows import permit_semaphore as permit_flows
from redisson_py.core.flows import semaphore as semaphore_flows
from redisson_py.core.flows.calls import guarded
from redisson_py.core.flows.synchronizers import Layout, ObjectRef, object_ref
from redisson_py.core.flows.waiting import RECHECK
from redisson_py.core.routing.naming import key_slot
from redisson_py.core.routing.subscriptions import ALL, wake_count
from redisson_py.core.scripts import permit_semaphore, semaphore
from redisson_py.core.state.client_state import ClientState, LockSettings
from redisson_py.errors import ConnectError, NoSyncedReplicasError
from redisson_py.sync._primitives import RUNTIME


def make_ref(
    layout: Layout = semaphore_flows.LAYOUT, *, by_slot: bool = False, **settings: Any
) -> tuple[ObjectRef, FakeClock]:
    clock = FakeClock()
    settings = {"retry_attempts": 2, **settings}
    state = ClientState(
        LockSettings(**settings),
        runtime=replace(RUNTIME, clock=clock, wall_clock=lambda: 1_700_000_000.0),
    )
    return object_ref("res", Target(by_slot), state, layout), clock


def script_of(effect: Effect | None) -> ScriptCommand:
    assert isinstance(effect, Call)
    command = effect.commands[0]
    assert isinstance(command, ScriptCommand)
    return command


def refused() -> CallResult:
    return CallResult(([0, -1],))


def granted(*, required: int = 0, synced: int = 0) -> CallResult:
    return CallResult(([1, 0],), required=required, synced=synced, address="x")


def test_an_acquire_sends_its_permits_and_its_latch_in_the_semaphores_slot() -> None:
    ref, _ = make_ref(by_slot=True)
    step = Stepper(semaphore_flows.try_acquire(ref, 3, 0.0))
    command = script_of(step.effect)
    assert command.script is semaphore.ACQUIRE
    name, latch = command.keys
    assert name == "res" and latch.startswith("redisson_py_request:{res}:r")
    assert key_slot(latch) == key_slot(name)
    latch_ms, _publish, permits = command.args
    assert permits == 3 and latch_ms == round(ref.state.settings.latch_ttl * 1000)
    step.send(granted())
    assert step.done and step.result is True


def test_zero_permits_are_had_at_once_without_redis() -> None:
    ref, _ = make_ref()
    flow = semaphore_flows.try_acquire(ref, 0, None)
    with pytest.raises(StopIteration) as stop:
        next(flow)
    assert stop.value.value is True


def drive_starved_wait(step: Stepper, clock: FakeClock) -> list[Effect]:
    """Play the shell for a waiter that never gets a permit: every attempt is refused,
    every wait runs to its timeout (moving the clock)."""
    seen: list[Effect] = []
    effect: Effect | None = step.effect
    while effect is not None:
        seen.append(effect)
        match effect:
            case Call():
                effect = step.send(refused())
            case Subscribe():
                effect = step.send(object())
            case WaitSignal():
                clock.advance(effect.timeout)
                effect = step.send(False)
            case Sleep():
                clock.advance(effect.seconds)
                effect = step.send(None)
            case Unsubscribe() | Background():
                effect = step.send(None)
            case _:
                raise AssertionError(f"unexpected {effect!r}")
    return seen


def test_a_timed_wait_listens_for_permits_and_ends_at_its_deadline() -> None:
    ref, clock = make_ref()
    step = Stepper(semaphore_flows.try_acquire(ref, 1, 7.5))
    seen = drive_starved_wait(step, clock)
    assert step.result is False
    assert clock.now == 1007.5  # the waits added up to the wait time, exactly
    subscribe = seen[1]
    assert isinstance(subscribe, Subscribe)
    assert subscribe.channel == "redisson_sc:{res}" and subscribe.rule == "permits"
    waits = [e.timeout for e in seen if isinstance(e, WaitSignal)]
    assert all(w <= RECHECK for w in waits) and len(waits) == 3  # a lost message costs RECHECK
    assert isinstance(seen[-1], Unsubscribe)
    assert not any(isinstance(e, Background) for e in seen)  # nothing unanswered: no undo


def test_a_waiter_of_a_client_listening_already_joins_before_its_first_try() -> None:
    clock = FakeClock()
    state = ClientState(LockSettings(retry_attempts=2), runtime=replace(RUNTIME, clock=clock))
    target = Target(listening=("redisson_sc:{res}",))
    ref = object_ref("res", target, state, semaphore_flows.LAYOUT)
    step = Stepper(semaphore_flows.try_acquire(ref, 1, 7.5))
    seen = drive_starved_wait(step, clock)
    assert step.result is False and clock.now == 1007.5
    join = seen[0]
    assert isinstance(join, Subscribe) and join.live_only and join.rule == "permits"
    # Refused, it sleeps at once: no second try before its first sleep, no other join.
    assert isinstance(seen[1], Call) and isinstance(seen[2], WaitSignal)
    assert sum(isinstance(e, Subscribe) for e in seen) == 1
    assert isinstance(seen[-1], Unsubscribe)


def test_every_attempt_of_one_acquire_carries_one_request_id() -> None:
    ref, clock = make_ref()
    step = Stepper(semaphore_flows.try_acquire(ref, 2, None))
    first = script_of(step.effect)
    for _ in range(5):  # past the per-command retries, into the wait-through loop
        effect = step.throw(RedisConnectionError("reset"))
        assert isinstance(effect, Sleep)
        clock.advance(effect.seconds)
        again = script_of(step.send(None))
        assert again == first
    step.send(granted())
    assert step.result is True


def test_an_unanswered_acquire_is_undone_in_the_background_when_the_wait_gives_up() -> None:
    ref, clock = make_ref()
    step = Stepper(semaphore_flows.try_acquire(ref, 2, 1.0))
    acquire = script_of(step.effect)
    effect: Effect | None = step.effect
    while isinstance(effect, Call):  # the node never answers; retries until the deadline
        effect = step.throw(RedisConnectionError("timed out"))
        while isinstance(effect, Sleep):
            clock.advance(effect.seconds)
            effect = step.send(None)
    assert isinstance(effect, Background)  # the undo, then the error
    assert clock.now <= 1001.0
    undo = effect.flow
    call = next(undo)
    command = script_of(call)
    assert command.script is semaphore.UNDO_ACQUIRE
    assert command.keys == ("res", "redisson_sc:{res}", acquire.keys[-1])  # same request
    assert command.args[2] == 2
    with pytest.raises(RedisConnectionError):
        step.send(None)


def test_a_grant_the_replicas_missed_is_given_back_and_raised_at_the_deadline() -> None:
    ref, _ = make_ref(check_lock_synced_slaves=True, slaves_sync_timeout=0.5)
    step = Stepper(semaphore_flows.try_acquire(ref, 1, 0.0))
    acquire = script_of(step.effect)
    assert isinstance(step.effect, Call) and step.effect.sync_replicas == 0.5
    undo = script_of(step.send(granted(required=1, synced=0)))
    assert undo.script is semaphore.UNDO_ACQUIRE and undo.keys[-1] == acquire.keys[-1]
    with pytest.raises(NoSyncedReplicasError, match="semaphore 'res'"):
        step.send(CallResult((1,)))


def test_an_acquire_cancelled_after_its_grant_gives_the_permits_back() -> None:
    ref, _ = make_ref()
    step = Stepper(semaphore_flows.try_acquire(ref, 1, 5.0))
    step.send(refused())
    step.send(object())  # subscribed; tries again
    effect = step.send(granted())
    assert isinstance(effect, Unsubscribe)
    effect = step.throw(asyncio.CancelledError())  # cancelled while leaving the channel
    assert isinstance(effect, Background)
    assert script_of(next(effect.flow)).script is semaphore.UNDO_ACQUIRE
    with pytest.raises(asyncio.CancelledError):
        step.send(None)


def test_a_release_is_retried_with_the_same_request_id() -> None:
    ref, _ = make_ref()
    step = Stepper(semaphore_flows.release(ref, 4))
    first = script_of(step.effect)
    assert first.script is semaphore.RELEASE
    assert first.keys[:2] == ("res", "redisson_sc:{res}")
    assert first.args[1:] == ("publish", 4, "0")
    assert isinstance(step.throw(RedisConnectionError("reply lost")), Sleep)
    assert script_of(step.send(None)) == first  # the latch makes the server count it once
    step.send(CallResult((4,)))
    assert step.done and step.result is True


def test_errors_leave_as_ours_naming_the_semaphore_and_its_node() -> None:
    ref, _ = make_ref(retry_attempts=0)
    step = Stepper(guarded(ref, semaphore_flows.available_permits(ref)))
    with pytest.raises(ConnectError, match=r"semaphore 'res'.*127\.0\.0\.1:6379"):
        step.throw(RedisConnectionError("refused"))


def permit_ref() -> tuple[ObjectRef, FakeClock]:
    return make_ref(permit_flows.LAYOUT, by_slot=True)


def test_a_permit_is_sixteen_raw_bytes_scored_by_its_lease_end_and_shown_as_hex() -> None:
    ref, _ = permit_ref()
    step = Stepper(permit_flows.try_acquire(ref, 0.0, 2.5))
    command = script_of(step.effect)
    assert command.script is permit_semaphore.ACQUIRE
    assert command.keys[:3] == ("res", "{res}:timeout", "redisson_sc:{res}")
    assert len({key_slot(key) for key in command.keys}) == 1
    _latch_ms, _publish, now_ms, permit, expiry = command.args
    assert now_ms == 1_700_000_000_000 and expiry == now_ms + 2500
    assert isinstance(permit, bytes) and len(permit) == 16
    step.send(granted())
    assert step.result == permit.hex()


def test_a_permit_without_lease_never_expires() -> None:
    ref, _ = permit_ref()
    step = Stepper(permit_flows.try_acquire(ref, 0.0, None))
    assert script_of(step.effect).args[4] == 922337203685477  # Redisson's


def test_a_permit_waiter_sleeps_no_longer_than_until_the_first_lease_ends() -> None:
    ref, _ = permit_ref()
    step = Stepper(permit_flows.try_acquire(ref, 10.0, None))
    step.send(CallResult(([0, 1200],)))  # none free; the first lease ends in 1.2 s
    effect = step.send(object())
    effect = step.send(CallResult(([0, 1200],)))
    assert isinstance(effect, WaitSignal) and effect.timeout == pytest.approx(1.2)


def test_an_undone_permit_acquire_names_its_permit() -> None:
    ref, _ = permit_ref()
    step = Stepper(permit_flows.try_acquire(ref, 0.0, None))
    permit = script_of(step.effect).args[3]
    effect = step.throw(RedisConnectionError("timed out"))  # no time left to retry
    assert isinstance(effect, Background)
    undo = script_of(next(effect.flow))
    assert undo.script is permit_semaphore.UNDO_ACQUIRE and undo.args[3] == permit


def test_permit_messages_wake_as_many_waiters_as_permits_they_announce() -> None:
    assert wake_count("permits", b"3") == 3
    assert wake_count("permits", "0") == 0
    assert wake_count("permits", "-2") == 0  # add_permits may announce a negative count
    assert wake_count("latch", b"0") == ALL and wake_count("latch", b"1") == 0


def test_grants_keep_one_request_until_it_is_undone() -> None:
    ref, _ = make_ref()
    request = semaphore_flows.acquire_request(ref, 1)
    first = request.request_id
    assert request.command().keys[-1].endswith(first)
    request.renew()
    assert request.request_id != first and not request.maybe_applied
    assert request.undo_window == ref.state.settings.latch_ttl
    assert isinstance(request, grants.PermitRequest)


def test_an_attempt_lost_before_a_refusal_is_still_undone_when_the_wait_gives_up() -> None:
    # The first attempt may run on the server late (after its retry was refused, even
    # after the wait ended): the request is undone, by its id, so it takes nothing then.
    ref, clock = make_ref()
    step = Stepper(semaphore_flows.try_acquire(ref, 1, 5.0))
    acquire = script_of(step.effect)
    effect = step.throw(RedisConnectionError("timed out"))
    assert isinstance(effect, Sleep)
    clock.advance(effect.seconds)
    step.send(None)  # the retry, answered:
    seen = drive_starved_wait(step, clock)  # refused, then refused until the deadline
    assert step.result is False
    undo = seen[-1]
    assert isinstance(undo, Background)
    assert script_of(next(undo.flow)).keys[-1] == acquire.keys[-1]
