"""The count-down latch's flows, stepped through without Redis, with a fake clock: its
channel's name (Redisson's, and the one cluster exception), a wait that ends at zero or
at its deadline and re-checks every few seconds, and a count-down retried with its
request id. Against real servers: integration/family/test_count_down_latch.py."""

from __future__ import annotations

import pytest
from redis.exceptions import ConnectionError as RedisConnectionError
from test_fake_clock import FakeClock
from test_lock_flows import Stepper
from test_semaphore_flows import make_ref, script_of

from redisson_py.core.effects import Call, CallResult, Sleep, Subscribe, Unsubscribe, WaitSignal
from redisson_py.core.flows import count_down_latch, synchronizers
from redisson_py.core.flows.calls import guarded
from redisson_py.core.flows.synchronizers import ObjectRef
from redisson_py.core.flows.waiting import RECHECK
from redisson_py.core.routing.naming import key_slot
from redisson_py.core.scripts.count_down_latch import COUNT_DOWN
from redisson_py.core.scripts.synchronizers import DELETE
from redisson_py.errors import ConnectError


def latch_ref(*, by_slot: bool = False) -> tuple[ObjectRef, FakeClock]:
    return make_ref(count_down_latch.LAYOUT, by_slot=by_slot)


@pytest.mark.parametrize("name", ["jobs", "a{b}c", "x{", "y}z", "{t}"])
def test_the_channel_is_redissons_and_in_a_cluster_shares_the_latchs_slot(name: str) -> None:
    redisson = "redisson_countdownlatch__channel__{" + name + "}"
    assert count_down_latch.LAYOUT.channel(name, False) == redisson  # always, off a cluster
    channel = count_down_latch.LAYOUT.channel(name, True)
    assert key_slot(channel) == key_slot(name)
    if key_slot(redisson) == key_slot(name):
        assert channel == redisson  # the same name wherever Redisson's shares the slot


def test_a_name_whose_braced_channel_lands_elsewhere_gets_the_slot_safe_form() -> None:
    assert (
        count_down_latch.LAYOUT.channel("a{b}c", True) == "redisson_countdownlatch__channel__a{b}c"
    )


def test_a_wait_at_zero_returns_at_once_without_subscribing() -> None:
    ref, _ = latch_ref()
    step = Stepper(count_down_latch.wait(ref, 5.0))
    assert isinstance(step.effect, Call) and step.effect.commands == (("GET", "res"),)
    step.send(CallResult((None,)))  # no key: the count is zero
    assert step.done and step.result is True


def test_a_timed_wait_rechecks_every_few_seconds_and_ends_at_its_deadline() -> None:
    ref, clock = latch_ref()
    step = Stepper(count_down_latch.wait(ref, 10.0))
    effect = step.send(CallResult((b"2",)))
    assert isinstance(effect, Subscribe) and effect.rule == "latch"
    assert effect.channel == "redisson_countdownlatch__channel__{res}"
    effect = step.send(object())
    waits = []
    while effect is not None and not isinstance(effect, Unsubscribe):
        if isinstance(effect, Call):
            effect = step.send(CallResult((b"2",)))
        else:
            assert isinstance(effect, WaitSignal)
            waits.append(effect.timeout)
            clock.advance(effect.timeout)
            effect = step.send(False)  # no message came
    step.send(None)
    assert step.result is False and clock.now == 1010.0
    assert max(waits) <= RECHECK and len(waits) == 4


def test_a_message_wakes_the_waiter_which_sees_zero() -> None:
    ref, _ = latch_ref()
    step = Stepper(count_down_latch.wait(ref, None))
    step.send(CallResult((b"1",)))
    step.send(object())
    assert isinstance(step.send(CallResult((b"1",))), WaitSignal)
    step.send(True)  # "0" was announced
    assert isinstance(step.send(CallResult((None,))), Unsubscribe)
    step.send(None)
    assert step.result is True


def test_a_wait_outlasts_connection_errors_until_its_deadline_then_raises() -> None:
    ref, clock = latch_ref()
    step = Stepper(count_down_latch.wait(ref, 1.0))
    effect = step.effect
    with pytest.raises(RedisConnectionError):
        while True:
            assert isinstance(effect, Call)
            effect = step.throw(RedisConnectionError("refused"))
            while isinstance(effect, Sleep):
                clock.advance(effect.seconds)
                effect = step.send(None)
    assert clock.now == 1001.0


def test_a_count_down_is_retried_with_its_request_id() -> None:
    ref, _ = latch_ref(by_slot=True)
    step = Stepper(count_down_latch.count_down(ref))
    first = script_of(step.effect)
    assert first.script is COUNT_DOWN
    name, channel, request = first.keys
    assert (name, channel) == ("res", "redisson_countdownlatch__channel__{res}")
    assert request.startswith("redisson_py_request:{res}:r")
    assert isinstance(step.throw(RedisConnectionError("reply lost")), Sleep)
    assert script_of(step.send(None)) == first
    step.send(CallResult((0,)))
    assert step.done


def test_deleting_announces_a_new_count_as_redisson_does() -> None:
    ref, _ = latch_ref()
    step = Stepper(synchronizers.delete(ref, "1"))
    command = script_of(step.effect)
    assert command.script is DELETE
    assert command.keys[:2] == ("res", "redisson_countdownlatch__channel__{res}")
    assert command.args[1:] == ("publish", "1")
    step.send(CallResult((1,)))
    assert step.result is True


def test_connect_errors_name_the_latch() -> None:
    ref, _ = make_ref(count_down_latch.LAYOUT, retry_attempts=0)
    step = Stepper(guarded(ref, count_down_latch.get_count(ref)))
    with pytest.raises(ConnectError, match="count-down latch 'res'"):
        step.throw(RedisConnectionError("refused"))
