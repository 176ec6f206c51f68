"""A node's refusals (NOREPLICAS, READONLY, BUSY, LOADING...): read from the reply as
Redis sent it, whichever redis-py parsed it, retried when transient, and raised as
:class:`~redisson_py.ServerRefusedError` naming the lock, the node and the refusal.

The replies are the ones Redis 6.2 and 7.0 send (measured); against real servers see
integration/lock/test_server_refusals.py.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import Any, ClassVar

import pytest
from redis._parsers.base import BaseParser
from redis.exceptions import (
    AuthenticationError,
    BusyLoadingError,
    ExecAbortError,
    NoPermissionError,
    NoScriptError,
    OutOfMemoryError,
    ReadOnlyError,
    RedisError,
    ResponseError,
)
from redis.exceptions import ConnectionError as RedisConnectionError
from test_lock_flows import Stepper, Target, granted, held, script_of

from redisson_py import ConnectError, RedissonError, ServerRefusedError
from redisson_py.config.addresses import parse_address
from redisson_py.core import scripts
from redisson_py.core.effects import Call, CallResult, Gather, Sleep, Subscribe
from redisson_py.core.flows import calls, lock, lock_kinds, multilock
from redisson_py.core.routing import failures, refusals
from redisson_py.core.routing.refusals import (
    REFUSALS,
    Refusal,
    TransientRefusal,
    error_code,
    refusal_of,
)
from redisson_py.core.routing.wire import Fail, Planned, as_refusal, interpret
from redisson_py.core.state.client_state import ClientState, LockSettings
from redisson_py.sync._primitives import RUNTIME

ADDRESS = "redis://127.0.0.1:6379"
SHA = "f6e6a984f39d99fef4b3970e896ed31bb5765662"
NOREPLICAS_TEXT = "Not enough good replicas to write."


class Redis50Parser(BaseParser):
    """redis-py 5.0's error parsing (its lower bound here): fewer codes map to classes
    (MOVED, ASK, TRYAGAIN, CLUSTERDOWN and MASTERDOWN stay plain ResponseErrors with their
    code in the message), and no error records the code it stripped."""

    EXCEPTION_CLASSES: ClassVar[dict[str, Any]] = {
        "ERR": {"max number of clients reached": RedisConnectionError},
        "OOM": OutOfMemoryError,
        "WRONGPASS": AuthenticationError,
        "EXECABORT": ExecAbortError,
        "LOADING": BusyLoadingError,
        "NOSCRIPT": NoScriptError,
        "READONLY": ReadOnlyError,
        "NOAUTH": AuthenticationError,
        "NOPERM": NoPermissionError,
    }

    @classmethod
    def parse_error(cls, response: str) -> RedisError:
        code = response.split(" ", maxsplit=1)[0]
        if code in cls.EXCEPTION_CLASSES:
            response = response[len(code) + 1 :]
            exception_class = cls.EXCEPTION_CLASSES[code]
            if isinstance(exception_class, dict):
                exception_class = exception_class.get(response, ResponseError)
            error: RedisError = exception_class(response)
            return error
        return ResponseError(response)


PARSERS = {"installed": BaseParser.parse_error, "redis-py 5.0": Redis50Parser.parse_error}


def _parse(parser: str, reply: str) -> BaseException:
    """The exception redis-py makes of the error reply ``reply`` (without its ``-``)."""
    error: BaseException = PARSERS[parser](reply)
    return error


# (reply as Redis sends it, code, text): every refusal code, in the forms Redis 6.2 and
# 7.0 give it (a command's, or a script's: 6.2 wraps a command's error in an ERR).
REFUSED = [
    (f"NOREPLICAS {NOREPLICAS_TEXT}", "NOREPLICAS", NOREPLICAS_TEXT),
    (
        f"NOREPLICAS {NOREPLICAS_TEXT} script: {SHA}, on @user_script:1.",
        "NOREPLICAS",
        f"{NOREPLICAS_TEXT} script: {SHA}, on @user_script:1.",
    ),
    (
        f"ERR Error running script (call to f_{SHA}): @user_script:1: @user_script: 1:"
        f" -NOREPLICAS {NOREPLICAS_TEXT}",
        "NOREPLICAS",
        NOREPLICAS_TEXT,
    ),
    (
        "READONLY You can't write against a read only replica.",
        "READONLY",
        "You can't write against a read only replica.",
    ),
    (
        f"ERR Error running script (call to f_{SHA}): @user_script:1: @user_script: 1:"
        " -READONLY You can't write against a read only replica.",
        "READONLY",
        "You can't write against a read only replica.",
    ),
    (
        "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.",
        "MASTERDOWN",
        "Link with MASTER is down and replica-serve-stale-data is set to 'no'.",
    ),
    ("CLUSTERDOWN The cluster is down", "CLUSTERDOWN", "The cluster is down"),
    ("CLUSTERDOWN Hash slot not served", "CLUSTERDOWN", "Hash slot not served"),
    (
        "TRYAGAIN Multiple keys request during rehashing of slot",
        "TRYAGAIN",
        "Multiple keys request during rehashing of slot",
    ),
    (
        "LOADING Redis is loading the dataset in memory",
        "LOADING",
        "Redis is loading the dataset in memory",
    ),
    (
        "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.",
        "BUSY",
        "Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.",
    ),
    (
        "OOM command not allowed when used memory > 'maxmemory'.",
        "OOM",
        "command not allowed when used memory > 'maxmemory'.",
    ),
    (
        f"ERR Error running script (call to f_{SHA}): @user_script:1: @user_script: 1:"
        " -OOM command not allowed when used memory > 'maxmemory'.",
        "OOM",
        "command not allowed when used memory > 'maxmemory'.",
    ),
    (
        "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to"
        " persist to disk.",
        "MISCONF",
        "Redis is configured to save RDB snapshots, but it's currently unable to persist to disk.",
    ),
]

# Error replies that are no refusal: the command ran, or cannot run as asked.
NOT_REFUSED = [
    ("WRONGTYPE Operation against a key holding the wrong kind of value", "WRONGTYPE"),
    (
        f"WRONGTYPE Operation against a key holding the wrong kind of value script: {SHA},"
        " on @user_script:1.",
        "WRONGTYPE",
    ),
    (
        f"ERR Error running script (call to f_{SHA}): @user_script:1: WRONGTYPE Operation"
        " against a key holding the wrong kind of value",
        "WRONGTYPE",
    ),
    (
        f"ERR Error running script (call to f_{SHA}): @user_script:1: @user_script: 1:"
        " Unknown Redis command called from Lua script",
        "ERR",
    ),
    ("ERR unknown command 'NOSUCHCMD', with args beginning with: ", "ERR"),
    ("NOSCRIPT No matching script. Please use EVAL.", "NOSCRIPT"),
    ("MOVED 3999 127.0.0.1:7002", "MOVED"),
    ("ASK 3999 127.0.0.1:7003", "ASK"),
    ("BUSYKEY Target key name already exists.", "BUSYKEY"),
    ("NOPERM this user has no permissions to run the 'evalsha' command", "NOPERM"),
    ("MYCODE raised by a script with redis.error_reply", "MYCODE"),
]


@pytest.mark.parametrize("parser", sorted(PARSERS))
@pytest.mark.parametrize(("reply", "code", "text"), REFUSED)
def test_every_refusal_is_read_from_its_reply(
    parser: str, reply: str, code: str, text: str
) -> None:
    error = _parse(parser, reply)
    assert refusal_of(error) == (code, text)
    if isinstance(error, ResponseError):
        assert error_code(error) == (code, text)
    else:  # LOADING: redis-py raises it as a connection error, while reading
        assert isinstance(error, BusyLoadingError) and code == "LOADING"


@pytest.mark.parametrize("parser", sorted(PARSERS))
@pytest.mark.parametrize(("reply", "code"), NOT_REFUSED)
def test_other_error_replies_are_no_refusal(parser: str, reply: str, code: str) -> None:
    error = _parse(parser, reply)
    assert isinstance(error, ResponseError)
    assert error_code(error)[0] == code
    assert refusal_of(error) is None


def test_what_is_transient() -> None:
    transient = {code for code, kind in REFUSALS.items() if kind.transient}
    assert transient == {
        "NOREPLICAS",
        "READONLY",
        "MASTERDOWN",
        "CLUSTERDOWN",
        "TRYAGAIN",
        "LOADING",
        "BUSY",
    }
    assert set(REFUSALS) - transient == {"OOM", "MISCONF"}
    # What the flows retry: transient refusals, with connection errors and timeouts
    # (LOADING comes as redis-py's BusyLoadingError, a ConnectionError).
    assert isinstance(refusals.refused("BUSY", "x", ADDRESS), calls.RETRYABLE)
    assert not isinstance(refusals.refused("OOM", "x", ADDRESS), calls.RETRYABLE)
    assert isinstance(BusyLoadingError("loading"), calls.RETRYABLE)
    assert set(calls.RETRYABLE) <= set(calls.WAIT_THROUGH)


def _planned() -> Planned:
    return Planned(Call(None, "res", (("GET", "res"),)), parse_address(ADDRESS))


def _refusal(reply: str, parser: str = "installed") -> BaseException:
    """What the shell throws into a flow for ``reply`` (the wire's outcome, as settle
    raises it)."""
    error = _parse(parser, reply)
    if not isinstance(error, ResponseError):
        failures.note_node(error, ADDRESS)  # as the shell does for a connection error
        return error
    outcome = interpret(_planned(), [error])
    assert isinstance(outcome, Fail)
    return outcome.error


@pytest.mark.parametrize("parser", sorted(PARSERS))
@pytest.mark.parametrize(("reply", "code", "text"), REFUSED)
def test_a_refusal_leaves_the_api_naming_lock_node_and_refusal(
    parser: str, reply: str, code: str, text: str
) -> None:
    internal = _refusal(reply, parser)
    if code != "LOADING":
        assert isinstance(internal, Refusal) and internal.address == ADDRESS
        assert isinstance(internal, TransientRefusal) == REFUSALS[code].transient
    error = failures.as_redisson_error(
        internal, "lock 'orders:42'", lock_name="orders:42", node=None
    )
    assert isinstance(error, ServerRefusedError)
    assert isinstance(error, ConnectError) and isinstance(error, ConnectionError)
    assert (error.lock_name, error.address, error.refusal, error.text) == (
        "orders:42",
        ADDRESS,
        code,
        text,
    )
    assert error.transient is REFUSALS[code].transient
    message = str(error)
    assert message.startswith(f"lock 'orders:42': {ADDRESS} refused the command: {code} {text}")
    assert "nothing was applied" in message
    assert "something other than" not in message and "cannot reach" not in message


def test_a_refusal_met_while_connecting_is_a_refusal_too() -> None:
    """redis-py's handshake on a new connection (its health-check PING, SELECT...) raises
    the reply's error itself; the shells pass it through wire.as_refusal."""
    node = parse_address(ADDRESS)
    busy = ResponseError("BUSY Redis is busy running a script. You can only call SCRIPT KILL")
    refusal = as_refusal(busy, node)
    assert isinstance(refusal, TransientRefusal)
    assert (refusal.code, refusal.address, failures.node_of(refusal)) == ("BUSY", ADDRESS, ADDRESS)
    assert as_refusal(refusal, node) is refusal
    for other in (ResponseError("ERR DB index is out of range"), RedisConnectionError("gone")):
        assert as_refusal(other, node) is other


def test_wrongtype_alone_carries_the_hint() -> None:
    for reply in (
        "WRONGTYPE Operation against a key holding the wrong kind of value",
        f"ERR Error running script (call to f_{SHA}): @user_script:1: WRONGTYPE Operation"
        " against a key holding the wrong kind of value",
    ):
        error = failures.as_redisson_error(_refusal(reply), "lock 'x'", lock_name="x", node=None)
        assert type(error) is RedissonError
        assert str(error) == (
            f"lock 'x': {ADDRESS} answered with an error: WRONGTYPE Operation against a key"
            " holding the wrong kind of value (is the key used by something other than a lock?)"
        )
    semaphore = failures.as_redisson_error(
        _refusal("WRONGTYPE Operation against a key"), "semaphore 's'", lock_name="s", node=None
    )
    assert str(semaphore).endswith("(is the key used by something other than a semaphore?)")
    other = failures.as_redisson_error(
        _refusal("ERR unknown command 'EVALSHA', with args beginning with: "),
        "lock 'x'",
        lock_name="x",
        node=None,
    )
    assert type(other) is RedissonError
    assert str(other) == (
        f"lock 'x': {ADDRESS} answered with an error: ERR unknown command 'EVALSHA', with"
        " args beginning with: "
    )


# --- the flows: what is retried, for how long, and what is left to undo ---------------


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def make_ref(clock: Clock, **settings: Any) -> lock_kinds.LockRef:
    settings.setdefault("retry_delay", lambda attempt: 0.5)
    state = ClientState(LockSettings(**settings), runtime=replace(RUNTIME, clock=clock))
    return lock_kinds.LockRef("res", f"{state.client_id}:1", Target(), state)


NOREPLICAS = f"NOREPLICAS {NOREPLICAS_TEXT}"


def _refuse_until_the_deadline(step: Stepper, clock: Clock, reply: str) -> int:
    """Answer every acquire with ``reply``, let every pause run, until the flow stops
    asking; how many attempts were refused."""
    refused = 0
    while not step.done:
        effect = step.effect
        if isinstance(effect, Call):
            assert script_of(effect).script is scripts.ACQUIRE
            refused += 1
            step.throw(_refusal(reply))
        elif isinstance(effect, Sleep):
            clock.now += effect.seconds
            step.send(None)
        else:
            raise AssertionError(f"unexpected {effect}")
    return refused


def test_a_wait_retries_a_refusal_to_its_deadline_and_names_it() -> None:
    clock = Clock()
    # Every retry is the wait's own (outlast_failures): see the next test for the
    # call's own retries.
    ref = make_ref(clock, retry_attempts=0)
    step = Stepper(calls.guarded(ref, lock.try_lock(ref, 2.0, None)))
    with pytest.raises(ServerRefusedError) as raised:
        _refuse_until_the_deadline(step, clock, NOREPLICAS)
    assert clock.now == pytest.approx(2.0)  # every pause, cut to the deadline
    error = raised.value
    assert (error.lock_name, error.address, error.refusal) == ("res", ADDRESS, "NOREPLICAS")
    assert error.transient and str(error).startswith(f"lock 'res': {ADDRESS} refused the command")
    # Refused, never in flight: the wait gave up without an undo (the helper fails on
    # any effect but an acquire or a pause).


def test_a_refusal_retried_within_one_call_leaves_nothing_to_undo() -> None:
    clock = Clock()
    ref = make_ref(clock, retry_attempts=4)  # the call's own retries, before the wait's
    step = Stepper(calls.guarded(ref, lock.try_lock(ref, 1.0, None)))
    with pytest.raises(ServerRefusedError):
        _refuse_until_the_deadline(step, clock, NOREPLICAS)


def test_a_wait_that_sees_the_refusal_end_gets_the_lock() -> None:
    clock = Clock()
    ref = make_ref(clock, retry_attempts=0)
    step = Stepper(lock.try_lock(ref, 5.0, None))
    for _ in range(3):
        assert isinstance(step.throw(_refusal(NOREPLICAS)), Sleep)
        clock.now += 0.5
        step.send(None)
    step.send(granted())
    assert step.done and step.result is True
    assert ref.state.holds.count("res", ref.owner, clock.now) == 1


def test_a_refusal_at_the_last_try_leaves_nothing_to_undo() -> None:
    """A wait that ends on a refusal after a contended answer sends no undo: neither
    attempt can have applied anything (an unanswered one would: see test_lock_flows)."""
    clock = Clock()
    ref = make_ref(clock, retry_attempts=0)
    step = Stepper(lock.try_lock(ref, 1.0, None))
    effect = step.send(held(5000))
    assert isinstance(effect, Subscribe)
    effect = step.throw(RedisConnectionError("no pub/sub"))  # polls instead
    assert isinstance(effect, Call)
    clock.now = 1.0  # the wait's last try
    with pytest.raises(TransientRefusal):
        step.throw(_refusal("BUSY Redis is busy running a script."))


def test_loading_is_a_refusal_not_an_unanswered_acquire() -> None:
    clock = Clock()
    ref = make_ref(clock, retry_attempts=0)
    step = Stepper(calls.guarded(ref, lock.try_lock(ref, 1.0, None)))
    with pytest.raises(ServerRefusedError) as raised:
        _refuse_until_the_deadline(step, clock, "LOADING Redis is loading the dataset in memory")
    assert (raised.value.refusal, raised.value.address) == ("LOADING", ADDRESS)
    assert "cannot reach" not in str(raised.value)


def test_a_lasting_refusal_is_raised_at_once() -> None:
    clock = Clock()
    ref = make_ref(clock)
    step = Stepper(calls.guarded(ref, lock.try_lock(ref, 5.0, None)))
    with pytest.raises(ServerRefusedError) as raised:
        step.throw(_refusal("OOM command not allowed when used memory > 'maxmemory'."))
    assert raised.value.refusal == "OOM" and not raised.value.transient
    assert clock.now == 0.0


def test_a_key_of_another_type_fails_at_once_with_the_hint() -> None:
    clock = Clock()
    ref = make_ref(clock)
    step = Stepper(calls.guarded(ref, lock.try_lock(ref, 5.0, None)))
    with pytest.raises(RedissonError, match="something other than a lock") as raised:
        step.throw(_refusal("WRONGTYPE Operation against a key holding the wrong kind of value"))
    assert not isinstance(raised.value, ServerRefusedError)


def test_lock_waits_through_refusals_for_ever_and_says_so(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = Clock()
    ref = make_ref(clock, retry_attempts=0)
    step = Stepper(lock.try_lock(ref, None, None))  # lock(): no deadline
    with caplog.at_level(logging.WARNING, logger="redisson_py.lock"):
        for _ in range(12):
            assert isinstance(step.throw(_refusal(NOREPLICAS)), Sleep)
            step.send(None)
    warnings = [r.getMessage() for r in caplog.records if r.name == "redisson_py.lock"]
    assert len(warnings) == 2  # the 1st and the 11th failure
    assert f"{ADDRESS} refused the command: NOREPLICAS" in warnings[0]
    step.send(granted())
    assert step.done and step.result is True


def test_unlock_retries_a_refusal_through_its_retries_then_names_it() -> None:
    clock = Clock()
    ref = make_ref(clock, retry_attempts=3)
    take = Stepper(lock.try_lock(ref, 0.0, 10.0))
    take.send(granted())
    assert take.result is True
    step = Stepper(calls.guarded(ref, lock.unlock(ref)))
    pauses = []
    with pytest.raises(ServerRefusedError) as raised:
        while True:
            assert script_of(step.effect).script is scripts.RELEASE
            effect = step.throw(_refusal(NOREPLICAS))
            assert isinstance(effect, Sleep)
            pauses.append(effect.seconds)
            clock.now += effect.seconds
            step.send(None)
    assert pauses == [0.5, 0.5, 0.5]  # retryAttempts retries, retryDelay apart
    assert (raised.value.refusal, raised.value.lock_name) == ("NOREPLICAS", "res")
    # Not released, but no longer renewed: the hold expires by itself, as after a
    # connection error.
    assert ref.state.holds.count("res", ref.owner, clock.now) == 0


def test_an_undo_retries_a_refusal_until_it_is_answered() -> None:
    clock = Clock()
    ref = make_ref(clock)
    command = lock.AcquireRequest(ref, None).undo_command()
    step = Stepper(calls.undo_in_background(ref, command, 30.0))
    assert script_of(step.effect) is command
    assert isinstance(step.throw(_refusal("BUSY Redis is busy running a script.")), Sleep)
    assert isinstance(step.send(None), Call)
    step.send(CallResult((0,)))
    assert step.done


def test_a_refused_member_of_a_group_is_not_undone() -> None:
    clock = Clock()
    refs = [make_ref(clock), make_ref(clock)]
    outcomes = [
        multilock._Outcome(None, _refusal(NOREPLICAS), lock.AcquireRequest(refs[0], None)),
        multilock._Outcome(None, RedisConnectionError("lost"), lock.AcquireRequest(refs[1], None)),
    ]
    step = Stepper(multilock._undo_round(refs, outcomes, 1.0))
    assert isinstance(step.effect, Gather)
    assert [call.route for call in step.effect.calls] == [refs[1].name]  # the unanswered one
    assert step.send([CallResult((0,))]) is None and step.done
