"""The lock's decisions, stepped through without Redis (the flows are pure generators).

These tests play the part of the shell: they receive each effect the flow yields and
send back an outcome, so they check which script is sent with which arguments, how long
a waiter sleeps, and what is undone, independently of any server. The behaviour against
real servers is tested in tests/lock and integration/.
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import replace
from types import SimpleNamespace
from typing import Any

import pytest
from redis.exceptions import ConnectionError as RedisConnectionError

from redisson_py.core import scripts
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
from redisson_py.core.flows import lock, lock_kinds
from redisson_py.core.flows.calls import QUEUE_PAUSE
from redisson_py.core.state import losses
from redisson_py.core.state.client_state import ClientState, LockSettings
from redisson_py.errors import LockNotOwnedError, NoSyncedReplicasError
from redisson_py.sync._primitives import RUNTIME


class Target:
    """What a flow's effects are aimed at (a connection manager), as far as flows ask."""

    publish_command = "publish"

    def __init__(self, by_slot: bool = False, listening: tuple[str, ...] = ()) -> None:
        self.routes_by_slot = by_slot
        self.listening = listening

    def describe(self, name: str) -> str:
        return "redis://127.0.0.1:6379"

    def listens(self, channel: str) -> bool:
        return channel in self.listening


def make_ref(**settings: Any) -> lock_kinds.LockRef:
    state = ClientState(LockSettings(retry_attempts=2, **settings), runtime=RUNTIME)
    return lock_kinds.LockRef("res", f"{state.client_id}:1", Target(), state)


def script_of(effect: Effect) -> ScriptCommand:
    assert isinstance(effect, Call)
    command = effect.commands[0]
    assert isinstance(command, ScriptCommand)
    return command


class Stepper:
    """Drives a flow one effect at a time."""

    def __init__(self, flow: Generator[Effect, Any, Any]):
        self.flow = flow
        self.effect: Effect = next(flow)
        self.result: Any = None
        self.done = False

    def send(self, value: Any) -> Effect | None:
        try:
            self.effect = self.flow.send(value)
            return self.effect
        except StopIteration as stop:
            self.done, self.result = True, stop.value
            return None

    def throw(self, error: BaseException) -> Effect | None:
        try:
            self.effect = self.flow.throw(error)
            return self.effect
        except StopIteration as stop:
            self.done, self.result = True, stop.value
            return None


def granted(count: int = 1, *, required: int = 0, synced: int = 0) -> CallResult:
    return CallResult(([1, count],), required=required, synced=synced, address="x")


def held(ttl_ms: int) -> CallResult:
    return CallResult(([0, ttl_ms],))


def test_holds_the_owner_does_not_count_are_released_at_its_next_acquire() -> None:
    # A hold reported lost at its safe end can outlive the report on the server (by the
    # margin; on a partition's old master, for as long as it was renewed there): a
    # reentrant grant then counts it. Released at once, so one unlock ends the new hold.
    ref = make_ref()
    step = Stepper(lock.try_lock(ref, 0.0, None))
    drop = step.send(granted(3))
    assert isinstance(drop, Call) and len(drop.commands) == 2
    assert all(script_of_command(c).script is scripts.RELEASE for c in drop.commands)
    step.send(CallResult((2, 1)))
    assert step.done and step.result is True
    assert ref.state.holds.count("res", ref.owner, 0.0) == 1
    # A reentrant acquire of a hold the client counts is left alone.
    again = Stepper(lock.try_lock(ref, 0.0, None))
    again.send(granted(2))
    assert again.done and ref.state.holds.count("res", ref.owner, 0.0) == 2


def script_of_command(command: Any) -> ScriptCommand:
    assert isinstance(command, ScriptCommand), command
    return command


def test_uncontended_acquire_is_one_call_and_records_the_hold() -> None:
    ref = make_ref()
    step = Stepper(lock.try_lock(ref, 0.0, None))
    command = script_of(step.effect)
    assert command.script is scripts.ACQUIRE
    lease, owner, latch, request_id = command.args
    assert (lease, owner, latch) == (30000, ref.owner, f"redisson_py_acquire:{ref.owner}")
    assert command.keys == ("res",)  # one key: it runs in a migrating slot too
    # A letter and 32 hex digits: Lua's tonumber never reads it as a hold count.
    assert isinstance(request_id, str) and len(request_id) == 33 and request_id[0] == "r"
    step.send(granted())
    assert step.done and step.result is True
    assert ref.state.holds.count("res", ref.owner, 0.0) == 1


def test_a_waiter_subscribes_then_sleeps_at_most_the_holders_ttl() -> None:
    ref = make_ref()
    step = Stepper(lock.try_lock(ref, 5.0, 10.0))
    effect = step.send(held(200))
    assert isinstance(effect, Subscribe) and effect.channel == "redisson_lock__channel:{res}"
    subscription = object()
    effect = step.send(subscription)
    assert script_of(effect).script is scripts.ACQUIRE  # retried after subscribing
    effect = step.send(held(200))
    assert isinstance(effect, WaitSignal) and effect.timeout <= 0.2
    effect = step.send(True)  # woken by the unlock message
    step.send(granted())
    assert isinstance(step.effect, Unsubscribe) and step.effect.subscription is subscription
    step.send(None)
    assert step.done and step.result is True


CHANNEL = "redisson_lock__channel:{res}"


def listening_ref() -> lock_kinds.LockRef:
    """A lock whose client listens on its channel already (another waiter)."""
    state = ClientState(LockSettings(retry_attempts=2), runtime=RUNTIME)
    return lock_kinds.LockRef("res", f"{state.client_id}:1", Target(listening=(CHANNEL,)), state)


def joined(behind: int = 0) -> SimpleNamespace:
    """A subscription joined with ``behind`` of the client's waiters asleep on it."""
    return SimpleNamespace(behind=behind)


def test_a_waiter_joins_a_live_subscription_before_its_first_try_and_tries_once() -> None:
    ref = listening_ref()
    step = Stepper(lock.try_lock(ref, 5.0, 10.0))
    effect = step.effect
    assert isinstance(effect, Subscribe) and effect.channel == CHANNEL and effect.live_only
    subscription = joined()
    effect = step.send(subscription)
    assert script_of(effect).script is scripts.ACQUIRE
    # Refused: it sleeps at once (a release after that try signals the subscription it
    # joined before it), where a waiter that subscribes after its try tries again first.
    effect = step.send(held(200))
    assert isinstance(effect, WaitSignal) and effect.subscription is subscription
    step.send(True)
    step.send(granted())
    assert isinstance(step.effect, Unsubscribe) and step.effect.subscription is subscription
    step.send(None)
    assert step.done and step.result is True


def test_a_live_subscription_gone_before_the_join_leaves_the_usual_path() -> None:
    step = Stepper(lock.try_lock(listening_ref(), 5.0, 10.0))
    assert isinstance(step.effect, Subscribe) and step.effect.live_only
    effect = step.send(None)  # no longer live: nothing joined
    assert script_of(effect).script is scripts.ACQUIRE
    effect = step.send(held(200))
    assert isinstance(effect, Subscribe) and not effect.live_only
    effect = step.send(object())
    assert script_of(effect).script is scripts.ACQUIRE  # retried after subscribing


def test_an_early_joiner_that_gets_the_lock_at_once_leaves_the_subscription() -> None:
    ref = listening_ref()
    step = Stepper(lock.try_lock(ref, 5.0, None))
    subscription = joined()
    step.send(subscription)
    step.send(granted())
    assert isinstance(step.effect, Unsubscribe) and step.effect.subscription is subscription
    step.send(None)
    assert step.done and step.result is True


def test_a_waiter_behind_its_clients_sleepers_lets_them_go_first() -> None:
    ref = listening_ref()
    step = Stepper(lock.try_lock(ref, 5.0, None))
    subscription = joined(behind=2)
    effect = step.send(subscription)
    # No try yet: it sleeps on the subscription, QUEUE_PAUSE at most, then tries.
    assert isinstance(effect, WaitSignal) and effect.timeout == QUEUE_PAUSE
    assert script_of(step.send(True)).script is scripts.ACQUIRE
    step.send(granted())
    assert isinstance(step.effect, Unsubscribe)


def test_a_holders_reentrant_acquire_does_not_wait_behind_sleepers() -> None:
    ref = listening_ref()
    first = Stepper(lock.try_lock(ref, 0.0, None))
    first.send(granted())
    assert first.result is True
    again = Stepper(lock.try_lock(ref, 5.0, None))
    effect = again.send(joined(behind=3))
    assert script_of(effect).script is scripts.ACQUIRE  # at once
    again.send(granted(2))
    again.send(None)  # leaves the subscription
    assert again.done and again.result is True


def test_a_short_wait_behind_sleepers_still_tries_at_its_deadline() -> None:
    step = Stepper(lock.try_lock(listening_ref(), 0.05, None))
    effect = step.send(joined(behind=1))
    assert isinstance(effect, WaitSignal) and effect.timeout <= 0.05
    assert script_of(step.send(False)).script is scripts.ACQUIRE


def test_no_join_for_a_try_that_does_not_wait() -> None:
    step = Stepper(lock.try_lock(listening_ref(), 0.0, None))
    assert script_of(step.effect).script is scripts.ACQUIRE
    step.send(held(5000))
    assert step.done and step.result is False


def test_try_lock_without_wait_gives_up_at_once() -> None:
    step = Stepper(lock.try_lock(make_ref(), 0.0, None))
    step.send(held(5000))
    assert step.done and step.result is False


def test_every_attempt_of_one_acquire_carries_its_request_id() -> None:
    ref = make_ref()
    step = Stepper(lock.try_lock(ref, None, None))  # lock(): waits through errors
    first = script_of(step.effect)
    # Past the per-command retries (2 here) and on into the waiting loop: a late run of
    # any earlier attempt must find the same latch, or it would count a second hold.
    for _ in range(7):
        assert isinstance(step.throw(RedisConnectionError("reset")), Sleep)
        again = script_of(step.send(None))
        assert again.keys == first.keys and again.args == first.args
    step.send(granted())
    assert step.result is True


def test_a_stale_request_starts_a_new_one_at_once() -> None:
    ref = make_ref()
    step = Stepper(lock.try_lock(ref, 5.0, None))
    first = script_of(step.effect)
    # {2, 0}: an earlier attempt was applied, but its hold is gone (or it was undone).
    again = script_of(step.send(CallResult(([2, 0],))))
    assert again.args[3] != first.args[3]  # a new request id
    step.send(granted())
    assert step.result is True


def test_a_wait_that_ends_on_an_unanswered_attempt_undoes_it_in_the_background() -> None:
    ref = make_ref()
    step = Stepper(lock.try_lock(ref, 0.0, None))
    request_id = script_of(step.effect).args[3]
    effect = step.throw(RedisConnectionError("no reply"))  # deadline already reached
    assert isinstance(effect, Background)
    undo = script_of(next(effect.flow))
    assert undo.script is scripts.UNDO_ACQUIRE and undo.args[2] == request_id
    with pytest.raises(RedisConnectionError):
        step.send(None)


def test_a_wait_that_ends_after_a_refusal_leaves_nothing_to_undo() -> None:
    step = Stepper(lock.try_lock(make_ref(), 0.0, None))
    assert step.send(held(5000)) is None
    assert step.done and step.result is False


def test_a_refusal_after_an_unanswered_attempt_still_undoes_the_request() -> None:
    # The unanswered attempt may reach the server after its answered retry (both
    # sockets read once a frozen server resumes): it could still grant the lock then.
    now = [0.0]
    state = ClientState(
        LockSettings(retry_delay=lambda attempt: 0.5),
        runtime=replace(RUNTIME, clock=lambda: now[0]),
    )
    ref = lock_kinds.LockRef("res", f"{state.client_id}:1", Target(), state)
    step = Stepper(lock.try_lock(ref, 1.0, None))
    request_id = script_of(step.effect).args[3]
    assert isinstance(step.throw(RedisConnectionError("no reply")), Sleep)
    now[0] = 1.0  # the retry is the wait's last try
    retry = step.send(None)
    assert script_of(retry).args[3] == request_id
    effect = step.send(held(5000))  # refused: another owner holds it now
    assert isinstance(effect, Background)
    undo = script_of(next(effect.flow))
    assert undo.script is scripts.UNDO_ACQUIRE and undo.args[2] == request_id
    assert step.send(None) is None and step.done and step.result is False


def test_an_unsynced_grant_is_undone_and_reported() -> None:
    ref = make_ref()
    step = Stepper(lock.try_lock(ref, 0.0, None))
    assert isinstance(step.effect, Call) and step.effect.sync_replicas == 1.0
    request_id = script_of(step.effect).args[3]
    undo = step.send(granted(required=1, synced=0))
    command = script_of(undo)
    assert command.script is scripts.UNDO_ACQUIRE and command.args[2] == request_id
    with pytest.raises(NoSyncedReplicasError, match="0 of 1 replicas"):
        step.send(CallResult((1,)))
    assert ref.state.holds.count("res", ref.owner, 0.0) == 0


def test_sync_can_be_switched_off() -> None:
    step = Stepper(lock.try_lock(make_ref(check_lock_synced_slaves=False), 0.0, None))
    assert isinstance(step.effect, Call) and step.effect.sync_replicas is None


def test_an_interrupted_acquire_is_undone_if_it_applied() -> None:
    ref = make_ref()
    step = Stepper(lock.try_lock(ref, 0.0, None))
    request_id = script_of(step.effect).args[3]
    effect = step.throw(KeyboardInterrupt())
    assert isinstance(effect, Background)
    command = script_of(next(effect.flow))
    assert command.script is scripts.UNDO_ACQUIRE and command.args[2] == request_id
    with pytest.raises(KeyboardInterrupt):
        step.send(None)


def test_unlock_of_nothing_raises() -> None:
    step = Stepper(lock.unlock(make_ref()))
    assert script_of(step.effect).script is scripts.RELEASE
    with pytest.raises(LockNotOwnedError, match="not locked by this owner"):
        step.send(CallResult((None,)))


def test_a_retried_release_reuses_its_request_id() -> None:
    step = Stepper(lock.unlock(make_ref()))
    first = script_of(step.effect)
    step.throw(RedisConnectionError("reply lost"))
    again = script_of(step.send(None))
    assert again.keys == first.keys  # the same latch key: the same request
    step.send(CallResult((0,)))
    assert step.done


def test_a_waiting_acquire_outlasts_a_failover() -> None:
    step = Stepper(lock.try_lock(make_ref(), None, None))  # lock(): no deadline
    for _ in range(6):  # three times the per-command retries
        assert isinstance(step.throw(RedisConnectionError("master gone")), Sleep)
        step.send(None)
    step.send(granted())
    assert step.done and step.result is True


def test_unlock_of_a_hold_reported_lost_raises_lock_not_owned_whatever_the_release_met() -> None:
    # A cluster's minority master refuses the release (CLUSTERDOWN), a partition makes
    # it time out: the owner was told its hold was lost, and that is what unlock says.
    ref = make_ref()
    step = Stepper(lock.try_lock(ref, 0.0, None))
    step.send(granted())
    hold = ref.state.holds.get("res", ref.owner)
    assert hold is not None
    losses.report_expired(ref.state, hold.expires_at)
    unlock = Stepper(lock.unlock(ref))
    assert isinstance(unlock.effect, Call)
    with pytest.raises(LockNotOwnedError, match="reported lost") as raised:
        unlock.throw(RedisConnectionError("Timeout connecting"))  # one try, no retry
    assert "releasing what may be left of it failed too" in str(raised.value)
    assert isinstance(raised.value.__cause__, RedisConnectionError)
    # Told once: the next unlock finds nothing of it.
    again = Stepper(lock.unlock(ref))
    with pytest.raises(LockNotOwnedError, match="not locked by this owner"):
        again.send(CallResult((None,)))
