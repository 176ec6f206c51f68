"""The fenced lock's flows, stepped through without Redis: the acquire runs the fenced
script on the lock and its token counter (one slot) and returns the grant's token."""

from __future__ import annotations

from typing import Any

from redisson_py.core.effects import Call, CallResult, ScriptCommand, Subscribe, Unsubscribe
from redisson_py.core.flows import fenced_lock, lock_kinds
from redisson_py.core.flows.lock_kinds import FENCED
from redisson_py.core.routing.naming import key_slot
from redisson_py.core.scripts.fenced_lock import ACQUIRE_FENCED
from redisson_py.core.state.client_state import ClientState, LockSettings
from redisson_py.sync._primitives import RUNTIME


class Target:
    publish_command = "publish"
    routes_by_slot = True

    def describe(self, name: str) -> str:
        return "redis://127.0.0.1:6379"

    def listens(self, channel: str) -> bool:
        return False


def make_ref() -> lock_kinds.LockRef:
    state = ClientState(LockSettings(), runtime=RUNTIME)
    return lock_kinds.LockRef("res", f"{state.client_id}:1", Target(), state, kind=FENCED)


def finish(flow: Any, value: Any) -> Any:
    try:
        flow.send(value)
    except StopIteration as stop:
        return stop.value
    raise AssertionError("the flow yielded more")


def test_the_acquire_sends_the_fenced_script_and_returns_the_token() -> None:
    ref = make_ref()
    flow = fenced_lock.try_lock_and_get_token(ref, 0.0, None)
    call = next(flow)
    assert isinstance(call, Call)
    command = call.commands[0]
    assert isinstance(command, ScriptCommand) and command.script is ACQUIRE_FENCED
    assert command.keys == ("res", "redisson_lock_token:{res}")
    assert key_slot(command.keys[0]) == key_slot(command.keys[1])
    assert finish(flow, CallResult(([1, 1, 7],))) == 7


def test_a_refused_acquire_returns_no_token() -> None:
    flow = fenced_lock.try_lock_and_get_token(make_ref(), 0.0, None)
    next(flow)
    assert finish(flow, CallResult(([0, 5000],))) is None


def test_a_waiting_acquire_returns_the_token_of_the_grant_it_got() -> None:
    flow = fenced_lock.try_lock_and_get_token(make_ref(), 5.0, None)
    next(flow)
    assert isinstance(flow.send(CallResult(([0, 100],))), Subscribe)
    flow.send(object())  # subscribed: tries again
    assert isinstance(flow.send(CallResult(([1, 1, 12],))), Unsubscribe)
    assert finish(flow, None) == 12
