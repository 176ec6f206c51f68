"""The queued lock's waiter, stepped through without Redis (as test_lock_kinds_flows): a
grant passed on to it is taken from the message with no round trip of its own, safe
from the send of its last answered try; a message naming another request, a grant
replicas must acknowledge, or one whose safe end has passed is confirmed with a try.
Behaviour against real servers: integration/family/test_queued_lock.py."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from test_lock_flows import Stepper, granted, held
from test_lock_kinds_flows import command_of, make_ref

from redisson_py.core import keyspace
from redisson_py.core.effects import Background, Call, CallResult, Subscribe, WaitSignal
from redisson_py.core.flows import lock, lock_kinds, queued_lock
from redisson_py.core.scripts.queued_lock import (
    ACQUIRE_QUEUED,
    GRANT_TTL,
    KEEPALIVE_INTERVAL,
    RELEASE_QUEUED,
    UNDO_QUEUED,
)
from redisson_py.core.state.holds import safe_end


@dataclass
class Subscription:
    """What the flow reads of a shell's subscription."""

    last_message: str | bytes | None = None
    behind: int = 0


def waiting(
    ref: lock_kinds.LockRef, *, wait: float | None = 10.0, lease: float | None = None
) -> tuple[Stepper, str, Subscription, float]:
    """A waiter refused once, subscribed, refused again (its queue entry refreshed at the
    send time returned), now asleep on its channel."""
    clock: Any = ref.state.clock
    step = Stepper(lock.try_lock(ref, wait, lease))
    command = command_of(step.effect)
    assert command.script is ACQUIRE_QUEUED
    request_id = str(command.args[3])
    subscribe = step.send(held(20_000))
    assert isinstance(subscribe, Subscribe)
    assert subscribe.channel == f"redisson_py_queued_lock__channel:{{res}}:{ref.owner}"
    subscription = Subscription()
    clock.now += 0.01
    sent = clock.now
    assert command_of(step.send(subscription)).args[3] == request_id  # tried again
    wait_signal = step.send(held(20_000))
    assert isinstance(wait_signal, WaitSignal)
    assert wait_signal.timeout == pytest.approx(KEEPALIVE_INTERVAL)
    return step, request_id, subscription, sent


def test_a_grant_writes_the_acquire_field_the_lock_kinds_read() -> None:
    field = f"'{keyspace.ACQUIRE_FIELD_PREFIX}' .. head"
    assert field in ACQUIRE_QUEUED.source and field in RELEASE_QUEUED.source


def test_a_grant_passed_on_returns_on_the_message_without_a_round_trip() -> None:
    ref = make_ref(queued_lock.QUEUED)
    clock: Any = ref.state.clock
    step, request_id, subscription, sent = waiting(ref)
    clock.now += 0.8  # the message comes late: the hold counts from the try, not from it
    subscription.last_message = request_id.encode()
    unsubscribe = step.send(True)
    # no Call, no background work: the waiter holds the lock, and its watchdog (told by
    # the hold table) renews the grant before its TTL runs out
    assert not isinstance(unsubscribe, Call | Background)
    hold = ref.state.holds.get("res", ref.owner)
    assert hold is not None and hold.count == 1 and hold.watchdog and hold.renews
    assert hold.expires_at == pytest.approx(safe_end(sent, GRANT_TTL))
    assert request_id in hold.acquires  # a release names the grant's request
    step.send(None)
    assert step.done and step.result is True


@pytest.mark.parametrize(
    "case", ["another request's message", "replicas to wait for", "safe end passed", "long lease"]
)
def test_a_grant_that_cannot_be_counted_from_the_message_is_confirmed_by_a_try(
    case: str,
) -> None:
    ref = make_ref(queued_lock.QUEUED)
    clock: Any = ref.state.clock
    lease = 60.0 if case == "long lease" else None
    step = Stepper(lock.try_lock(ref, 10.0, lease))
    request_id = str(command_of(step.effect).args[3])
    required = 1 if case == "replicas to wait for" else 0
    refused = CallResult(([0, 20_000],), required=required, synced=required)
    step.send(refused)
    subscription = Subscription()
    step.send(subscription)
    step.send(refused)
    subscription.last_message = "r-old" if case == "another request's message" else request_id
    if case == "safe end passed":
        clock.now += GRANT_TTL
    retry = step.send(True)
    assert isinstance(retry, Call)  # the usual try, which finds the grant by its id
    assert command_of(retry).script is ACQUIRE_QUEUED
    assert command_of(retry).args[3] == request_id
    assert ref.state.holds.get("res", ref.owner) is None
    step.send(granted(1, required=required, synced=required))
    step.send(None)
    assert step.done and step.result is True


@pytest.mark.parametrize("interrupt", [KeyboardInterrupt, TimeoutError])
def test_a_waiter_interrupted_in_its_sleep_undoes_its_request_which_passes_a_grant_on(
    interrupt: type[BaseException],
) -> None:
    # Ctrl-C (or any error) while asleep, a grant perhaps on its way: the flow undoes the
    # request by its id; UNDO_QUEUED passes a grant it finds on to the next live waiter
    # (against Redis: test_a_waiter_cancelled_while_its_grant_is_in_flight_passes_...).
    ref = make_ref(queued_lock.QUEUED)
    step, request_id, _, _ = waiting(ref)
    undo = step.flow.throw(interrupt())
    assert isinstance(undo, Background)
    command = command_of(next(undo.flow))
    assert command.script is UNDO_QUEUED
    assert command.args[:3] == (ref.owner, keyspace.acquire_field(ref.owner), request_id)
    assert "pass_on(ARGV[4])" in UNDO_QUEUED.source
    step.flow.send(None)  # the unsubscribe
    with pytest.raises(interrupt):
        step.flow.send(None)
