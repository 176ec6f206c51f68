"""The fenced resource's flows and the fenced lock's fence, stepped through without Redis:
which script runs on which keys (all in the resource's slot) with which arguments, what
each reply means (accepted, refused as stale, refused as a tie), that a write retried
after a lost reply keeps its request id (its latch), and the argument checks. The
script's rule itself runs against real servers in integration/family/test_fenced_resource.py.
"""

from __future__ import annotations

from typing import Any

import pytest
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError
from test_lock_flows import Stepper

from redisson_py.core.effects import Call, CallResult, ScriptCommand, Sleep
from redisson_py.core.flows import calls, fenced_lock, fenced_resource, lock_kinds
from redisson_py.core.flows.fenced_resource import Fence, ResourceRef
from redisson_py.core.flows.lock_kinds import FENCED
from redisson_py.core.routing.naming import key_slot
from redisson_py.core.scripts.fenced_lock import FENCE_OF_HOLDER
from redisson_py.core.scripts.fenced_resource import FENCED_WRITE, HSET, SET
from redisson_py.core.state.client_state import ClientState, LockSettings
from redisson_py.errors import (
    ArgumentError,
    ArgumentTypeError,
    ClientClosedError,
    ConnectError,
    LockNotOwnedError,
    RedissonError,
    StaleTokenError,
)
from redisson_py.sync._primitives import RUNTIME

ADDRESS = "redis://127.0.0.1:7000"


class Target:
    publish_command = "publish"

    def __init__(self, routes_by_slot: bool = True) -> None:
        self.routes_by_slot = routes_by_slot

    def describe(self, name: str) -> str:
        return ADDRESS


def make_ref(name: str = "ledger", *, by_slot: bool = True) -> ResourceRef:
    state = ClientState(
        LockSettings(retry_attempts=2, retry_delay=lambda attempt: 0.05), runtime=RUNTIME
    )
    return ResourceRef(name, f"{state.client_id}:1", Target(by_slot), state)


def script_of(effect: Any) -> ScriptCommand:
    assert isinstance(effect, Call), effect
    [command] = effect.commands
    assert isinstance(command, ScriptCommand)
    return command


def accepted() -> CallResult:
    return CallResult(([1],), address=ADDRESS)


def refused(highest: int, tie: bool) -> CallResult:
    return CallResult(([0, str(highest).encode(), int(tie)],), address=ADDRESS)


def test_a_write_runs_the_fenced_script_on_keys_of_one_slot() -> None:
    ref = make_ref()
    step = Stepper(fenced_resource.write(ref, 7, SET, ("100",)))
    command = script_of(step.effect)
    assert command.script is FENCED_WRITE
    resource, record, latch = command.keys
    assert resource == "ledger" and record == "redisson_py_fence:{ledger}"
    assert latch.startswith("redisson_py_fence_latch:{ledger}:r")
    assert len({key_slot(key) for key in command.keys}) == 1
    token, writer, latch_ms, operation, value = command.args
    assert (token, writer, operation, value) == ("7", ref.writer, "set", "100")
    assert latch_ms == round(ref.state.settings.latch_ttl * 1000)
    assert step.send(accepted()) is None and step.done and step.result is None


@pytest.mark.parametrize("name", ["a{tag}b", "a}b", "foo{}{bar}", "{x"])
def test_names_with_braces_keep_every_key_in_the_resource_slot(name: str) -> None:
    command = script_of(Stepper(fenced_resource.write(make_ref(name), 1, SET, ("v",))).effect)
    assert {key_slot(key) for key in command.keys} == {key_slot(name)}


def test_off_a_cluster_the_record_has_redissons_form() -> None:
    assert make_ref("a}b", by_slot=False).record == "redisson_py_fence:{a}b}"


def test_a_fence_writes_as_the_lock_owner_it_names() -> None:
    fence = Fence(12, "lock-client:42")
    command = script_of(Stepper(fenced_resource.write(make_ref(), fence, SET, ("x",))).effect)
    assert command.args[:2] == ("12", "lock-client:42")


def test_an_hset_sends_its_pairs_and_a_delete_nothing() -> None:
    pairs = fenced_resource.hset_arguments("ledger", {"balance": 100, b"note": "x"})
    command = script_of(Stepper(fenced_resource.write(make_ref(), 3, HSET, pairs)).effect)
    assert command.args[3:] == ("hset", "balance", 100, b"note", "x")
    command = script_of(Stepper(fenced_resource.write(make_ref(), 3, "del")).effect)
    assert command.args[3:] == ("del",)


@pytest.mark.parametrize(
    ("reply", "tie", "why"),
    [
        (refused(9, tie=False), False, "a write with token 9 was accepted before"),
        (refused(7, tie=True), True, "token 7 was first written by another owner"),
    ],
)
def test_a_refused_write_raises_stale_token_error(reply: CallResult, tie: bool, why: str) -> None:
    step = Stepper(fenced_resource.write(make_ref(), 7, SET, ("x",)))
    with pytest.raises(StaleTokenError, match=why) as raised:
        step.send(reply)
    error = raised.value
    assert (error.resource, error.token, error.tie, error.address) == ("ledger", 7, tie, ADDRESS)
    assert error.highest == (7 if tie else 9)
    assert "fenced resource 'ledger' on redis://127.0.0.1:7000" in str(error)


def test_a_write_retried_after_a_lost_reply_keeps_its_request_id() -> None:
    step = Stepper(fenced_resource.write(make_ref(), 7, SET, ("x",)))
    first = script_of(step.effect)
    assert isinstance(step.throw(RedisConnectionError("reply lost")), Sleep)
    second = script_of(step.send(None))
    assert second == first  # the same latch key: an applied attempt is found, not redone
    assert step.send(accepted()) is None and step.done


def test_a_write_gives_up_after_the_configured_retries_with_an_error_naming_the_resource() -> None:
    ref = make_ref()
    step = Stepper(calls.guarded(ref, fenced_resource.write(ref, 7, SET, ("x",))))
    for _ in range(2):
        assert isinstance(step.throw(RedisConnectionError("down")), Sleep)
        step.send(None)
    with pytest.raises(ConnectError, match="fenced resource 'ledger': cannot reach") as raised:
        step.throw(RedisConnectionError("down"))
    assert raised.value.address == ADDRESS and raised.value.lock_name == "ledger"


def test_an_error_reply_is_a_redisson_error_naming_the_resource_and_node() -> None:
    ref = make_ref()
    step = Stepper(calls.guarded(ref, fenced_resource.write(ref, 7, HSET, ("f", "v"))))
    with pytest.raises(
        RedissonError,
        match=f"fenced resource 'ledger': {ADDRESS} answered with an error: WRONGTYPE",
    ):
        step.throw(ResponseError("WRONGTYPE Operation against a key"))


def test_a_shut_down_client_refuses_the_write() -> None:
    ref = make_ref()
    ref.state.closed = True
    with pytest.raises(ClientClosedError, match="fenced resource 'ledger'"):
        next(fenced_resource.write(ref, 7, SET, ("x",)))


@pytest.mark.parametrize(
    ("token", "error"),
    [
        (0, ArgumentError),
        (-3, ArgumentError),
        (2**63, ArgumentError),
        (True, ArgumentTypeError),
        ("7", ArgumentTypeError),
        (7.0, ArgumentTypeError),
        (Fence(0, "a:1"), ArgumentError),
        (Fence(7, ""), ArgumentError),
    ],
)
def test_bad_tokens_are_refused_before_any_command(token: object, error: type) -> None:
    with pytest.raises(error, match="fenced resource 'ledger'"):
        next(fenced_resource.write(make_ref(), token, SET, ("x",)))  # type: ignore[arg-type]


def test_the_largest_token_is_sent_exactly() -> None:
    command = script_of(Stepper(fenced_resource.write(make_ref(), 2**63 - 1, SET, ("x",))).effect)
    assert command.args[0] == "9223372036854775807"


@pytest.mark.parametrize(
    ("mapping", "error"),
    [({}, ArgumentError), ([("a", 1)], ArgumentTypeError), ({"a": None}, ArgumentTypeError)],
)
def test_bad_hset_mappings_are_refused(mapping: object, error: type) -> None:
    with pytest.raises(error, match="fenced resource 'ledger'"):
        fenced_resource.hset_arguments("ledger", mapping)


def test_reads_decode_their_replies() -> None:
    ref = make_ref()
    step = Stepper(fenced_resource.get(ref))
    assert isinstance(step.effect, Call) and step.effect.commands == (("GET", "ledger"),)
    step.send(CallResult((b"100",)))
    assert step.result == b"100"
    step = Stepper(fenced_resource.highest_token(ref))
    assert isinstance(step.effect, Call)
    assert step.effect.commands == (("HGET", "redisson_py_fence:{ledger}", "token"),)
    step.send(CallResult((None,)))
    assert step.done and step.result is None
    for reply in ([b"a", b"1", b"b", b"2"], {b"a": b"1", b"b": b"2"}):  # RESP2, RESP3
        step = Stepper(fenced_resource.hgetall(ref))
        step.send(CallResult((reply,)))
        assert step.result == {b"a": b"1", b"b": b"2"}


def make_lock_ref() -> lock_kinds.LockRef:
    state = ClientState(LockSettings(), runtime=RUNTIME)
    return lock_kinds.LockRef("ledger", f"{state.client_id}:1", Target(), state, kind=FENCED)


def test_the_fence_is_the_holders_token_and_owner_read_in_one_script() -> None:
    ref = make_lock_ref()
    step = Stepper(fenced_lock.fence(ref))
    command = script_of(step.effect)
    assert command.script is FENCE_OF_HOLDER
    assert command.keys == ("ledger", "redisson_lock_token:{ledger}")
    assert command.args == (ref.owner,)
    step.send(CallResult(([1, b"41"],)))
    assert step.result == Fence(41, ref.owner)


@pytest.mark.parametrize(
    ("reply", "why"), [([0], "it does not hold the lock"), ([1], "taken as a plain lock")]
)
def test_no_fence_without_a_fenced_hold(reply: list[int], why: str) -> None:
    step = Stepper(fenced_lock.fence(make_lock_ref()))
    with pytest.raises(LockNotOwnedError, match=why):
        step.send(CallResult((reply,)))
