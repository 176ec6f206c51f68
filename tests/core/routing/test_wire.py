"""What a call sends and what its replies mean."""

from __future__ import annotations

from typing import Any

import pytest
import redis.connection
from redis.exceptions import NoScriptError, OutOfMemoryError, ResponseError, TryAgainError

from redisson_py.config.addresses import parse_address
from redisson_py.core import scripts
from redisson_py.core.effects import Call, CallResult, Direct, ScriptCommand
from redisson_py.core.routing import wire
from redisson_py.core.routing.failures import node_of
from redisson_py.core.routing.manager_base import Group
from redisson_py.core.routing.refusals import Refusal, TransientRefusal
from redisson_py.core.routing.topology import attached_replicas
from redisson_py.core.routing.wire import (
    Done,
    Fail,
    Planned,
    Resend,
    finished,
    interpret,
    pack,
)

NODE = parse_address("redis://127.0.0.1:7000")
ACQUIRE = ScriptCommand(scripts.ACQUIRE, ("k",), (30000, "c:1", "0"))


def test_scripts_go_by_sha_and_wait_follows_the_write() -> None:
    planned = Planned(Call(None, "k", (ACQUIRE,), sync_replicas=1.0), NODE, required=2)
    assert planned.commands() == [
        ("EVALSHA", scripts.ACQUIRE.sha, 1, "k", 30000, "c:1", "0"),
        ("WAIT", 2, 1000),
    ]
    outcome = interpret(planned, [[1, 1], 1])
    assert outcome == Done(CallResult(([1, 1],), required=2, synced=1, address=str(NODE)))


def test_waitaof_asks_for_the_masters_fsync_and_n_replicas() -> None:
    call = Call(None, "k", (ACQUIRE,), sync_replicas=0.5)
    planned = Planned(call, NODE, required=1, aof=True)
    assert planned.commands()[-1] == ("WAITAOF", 1, 1, 500)
    assert interpret(planned, [[1, 1], [1, 1]]) == Done(
        CallResult(([1, 1],), required=1, synced=1, address=str(NODE))
    )
    # The master did not fsync: below any requirement, the grant is undone.
    result = interpret(planned, [[1, 1], [0, 1]])
    assert isinstance(result, Done) and isinstance(result.value, CallResult)
    assert result.value.synced < result.value.required
    # With no replica, WAITAOF still confirms the master's own fsync.
    alone = Planned(call, NODE, required=0, aof=True)
    assert alone.commands()[-1] == ("WAITAOF", 1, 0, 500)
    lost = interpret(alone, [[1, 1], [0, 0]])
    assert isinstance(lost, Done) and isinstance(lost.value, CallResult)
    assert lost.value.synced < lost.value.required


def test_a_wait_that_fails_after_the_write_leaves_it_unconfirmed() -> None:
    # The script ran; its WAIT was refused (renamed away, an ACL, a proxy): the call is
    # done, below any requirement, so the flow undoes the write; the error is kept.
    planned = Planned(Call(None, "k", (ACQUIRE,), sync_replicas=1.0), NODE, required=1)
    refused = ResponseError("unknown command 'WAIT', with args beginning with: '1' '1000'")
    outcome = interpret(planned, [[1, 1], refused])
    assert isinstance(outcome, Done) and isinstance(outcome.value, CallResult)
    assert outcome.value.replies == ([1, 1],)
    assert outcome.value.synced < outcome.value.required
    assert outcome.value.wait_error.startswith("WAIT failed: unknown command 'WAIT'")
    # An error of the write itself still fails the call, whatever the WAIT said.
    failed = ResponseError("ERR something")
    assert isinstance(interpret(planned, [failed, refused]), Fail)


def test_no_wait_without_replicas_in_wait_mode() -> None:
    planned = Planned(Call(None, "k", (ACQUIRE,), sync_replicas=0.5), NODE, required=0)
    assert [c[0] for c in planned.commands()] == ["EVALSHA"]


def test_noscript_resends_the_source() -> None:
    planned = Planned(Call(None, "k", (ACQUIRE,)), NODE)
    outcome = interpret(planned, [NoScriptError("No matching script")])
    assert isinstance(outcome, Resend)
    assert outcome.planned.commands()[0][0] == "EVAL"
    assert outcome.planned.commands()[0][1] == scripts.ACQUIRE.source


def test_moved_and_ask_redirect() -> None:
    planned = Planned(Call(None, "k", (ACQUIRE,)), NODE)
    moved = interpret(planned, [ResponseError("MOVED 3999 127.0.0.1:7002")])
    assert isinstance(moved, Resend) and moved.moved
    assert moved.planned.address.port == 7002 and not moved.planned.asking
    ask = interpret(planned, [ResponseError("ASK 3999 127.0.0.1:7003")])
    assert isinstance(ask, Resend) and not ask.moved
    assert ask.planned.commands()[0] == ("ASKING",)
    # the ASKING reply is not one of the call's replies
    assert interpret(ask.planned, ["OK", [1, 1]]) == Done(
        CallResult(([1, 1],), address="redis://127.0.0.1:7003")
    )


def test_redirect_loops_end() -> None:
    planned = Planned(Call(None, "k", (ACQUIRE,)), NODE, hops=5)
    outcome = interpret(planned, [ResponseError("MOVED 3999 127.0.0.1:7002")])
    assert isinstance(outcome, Fail) and outcome.suspect


def test_readonly_means_the_view_is_stale() -> None:
    planned = Planned(Call(None, "k", (ACQUIRE,)), NODE)
    readonly = ResponseError("READONLY You can't write against a read only replica.")
    outcome = interpret(planned, [readonly])
    assert isinstance(outcome, Fail) and outcome.suspect
    # A refusal, retried by the flows, naming the node that refused; redis-py's error
    # is its cause.
    assert isinstance(outcome.error, TransientRefusal)
    assert (outcome.error.code, outcome.error.address) == ("READONLY", str(NODE))
    assert outcome.error.text == "You can't write against a read only replica."
    assert outcome.error.__cause__ is readonly
    assert node_of(outcome.error) == str(NODE)


def test_refusals_fail_as_refusals_and_only_stale_views_ask_for_a_refresh() -> None:
    planned = Planned(Call(None, "k", (ACQUIRE,), sync_replicas=0.5), NODE, required=1)
    noreplicas = ResponseError("NOREPLICAS Not enough good replicas to write.")
    outcome = interpret(planned, [noreplicas, 0])  # the WAIT after it answers too
    assert isinstance(outcome, Fail) and not outcome.suspect
    assert isinstance(outcome.error, TransientRefusal) and outcome.error.code == "NOREPLICAS"
    busy = interpret(planned, [ResponseError("BUSY Redis is busy running a script."), 0])
    assert isinstance(busy, Fail) and isinstance(busy.error, TransientRefusal)
    # A lasting refusal is a Refusal the flows do not retry.
    oom = interpret(planned, [OutOfMemoryError("command not allowed when used memory"), 0])
    assert isinstance(oom, Fail) and isinstance(oom.error, Refusal)
    assert not isinstance(oom.error, TransientRefusal) and oom.error.code == "OOM"
    # A view that is stale is refreshed, whichever redis-py version parsed the reply.
    for error in (TryAgainError("Multiple keys request"), ResponseError("TRYAGAIN Multiple")):
        tryagain = interpret(planned, [error, 0])
        assert isinstance(tryagain, Fail) and tryagain.suspect
        assert isinstance(tryagain.error, TransientRefusal) and tryagain.error.code == "TRYAGAIN"


def test_other_errors_fail_as_they_are() -> None:
    planned = Planned(Direct(None, NODE, (("PING",),)), NODE)
    error = ResponseError("WRONGTYPE Operation against a key holding the wrong kind of value")
    outcome = interpret(planned, [error])
    assert isinstance(outcome, Fail) and outcome.error is error and not outcome.suspect
    assert node_of(error) == str(NODE)  # the node that answered, for the message
    assert interpret(planned, ["PONG"]) == Done(("PONG",))


@pytest.mark.parametrize("writer", ["python", "hiredis"])
def test_pack_writes_the_bytes_redis_py_writes(
    writer: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The hand-written RESP packer, and hiredis's C writer where the ``hiredis`` extra
    is installed, send exactly what redis-py's pure-Python writer would."""
    if writer == "hiredis":
        if wire._C_PACK is None:
            pytest.skip("the hiredis extra is not installed")
    else:
        monkeypatch.setattr(wire, "_C_PACK", None)
    connection = redis.connection.Connection()
    connection._command_packer = redis.connection.PythonRespSerializer(
        connection._buffer_cutoff, connection.encoder.encode
    )
    cases: list[list[tuple[Any, ...]]] = [
        [("EVALSHA", "a" * 40, 1, "lock", 30000, "id:1", 1.5, b"\x00\xff")],
        [("CONFIG GET", "maxmemory")],
        [("INFO", "replication"), ("WAIT", 1, 100)],
        [("SET", "ключ", "ä"), ("X", -5, 0.1, 10**20)],
        [("SET", "k" * 300, "v" * 70_000), ("GET", "k" * 300)],  # too long to be kept
        [("X", 1, "1", 1.0, b"1", "1")],  # equal values of other types pack apart
    ]
    for _ in range(2):  # the second time from the kept arguments
        for commands in cases:
            assert pack(commands) == b"".join(connection.pack_commands(commands))
    # A full table starts again, and what it packs stays right.
    monkeypatch.setattr(wire, "SEGMENTS_KEPT", 3)
    monkeypatch.setattr(wire, "_SEGMENTS", {})
    for commands in cases:
        assert pack(commands) == b"".join(connection.pack_commands(commands))
        assert len(wire._SEGMENTS) <= 3
    with pytest.raises(TypeError, match="must be str"):
        pack([("SET", "k", True)])


def test_finished_agrees_with_interpret_when_nothing_is_to_resend() -> None:
    """The fast path a shell takes for first replies returns what the re-send loop
    would, and leaves to it every reply that needs a decision."""
    plain = Planned(Call(None, "k", (ACQUIRE, ("PTTL", "k"))), NODE)
    waited = Planned(Call(None, "k", (ACQUIRE,), sync_replicas=1.0), NODE, required=1)
    direct = Planned(Direct(None, NODE, (("PING",),)), NODE)
    for planned, replies in ((plain, [[1, 1], 100]), (waited, [[1, 1], 0]), (direct, ["PONG"])):
        outcome = interpret(planned, replies)
        assert isinstance(outcome, Done)
        assert finished(planned, replies) == outcome.value
    assert finished(waited, [[1, 1], 0]) == CallResult(
        ([1, 1],), required=1, synced=0, address=str(NODE)
    )
    assert finished(plain, [NoScriptError("No matching script"), 1]) is None
    assert finished(plain, [[1, 1], ResponseError("WRONGTYPE")]) is None
    asking = Planned(Call(None, "k", (ACQUIRE,)), NODE, asking=True)
    assert finished(asking, ["OK", [1, 1]]) is None


def test_a_group_sends_its_calls_back_to_back_and_gives_each_its_own_replies() -> None:
    plain = Planned(Call(None, "a", (ACQUIRE, ("PTTL", "a"))), NODE)
    waited = Planned(Call(None, "b", (ACQUIRE,), sync_replicas=1.0), NODE, required=1)
    group = Group()
    group.add(3, plain)
    group.add(0, waited)
    assert group.commands == plain.commands() + waited.commands()
    shares = list(group.shares(["r1", "r2", "r3", "r4"]))
    assert shares == [(3, plain, ["r1", "r2"]), (0, waited, ["r3", "r4"])]
    outcomes: list[Any] = [None] * 4
    error = ConnectionError("gone")
    group.fail(outcomes, error)
    assert outcomes == [error, None, None, error]


def test_calls_of_a_group_that_wait_for_replicas_share_one_wait_at_the_end() -> None:
    # A WAIT covers every write sent before it on its connection: one per node confirms
    # a whole renewal round, and costs one sync timeout, not one per chunk, when the
    # replicas do not answer.
    first = Planned(Call(None, "a", (ACQUIRE,), sync_replicas=0.5), NODE, required=1)
    plain = Planned(Call(None, "b", (ACQUIRE,)), NODE)
    second = Planned(Call(None, "c", (ACQUIRE,), sync_replicas=0.5), NODE, required=1)
    group = Group()
    for index, planned in enumerate((first, plain, second)):
        group.add(index, planned)
    evalsha = ACQUIRE.evalsha()
    assert group.commands == [evalsha, evalsha, evalsha, ("WAIT", 1, 500)]
    shares = list(group.shares(["r1", "r2", "r3", 0]))
    assert shares == [(0, first, ["r1", 0]), (1, plain, ["r2"]), (2, second, ["r3", 0])]
    # Each waiting call reads the shared reply as its own: 0 of 1 replicas acknowledged.
    assert finished(first, ["r1", 0]) == CallResult(("r1",), 1, 0, str(NODE))


def test_a_group_raises_its_wait_to_the_replicas_the_master_has_attached() -> None:
    # The view flagged the master's replica down (WAIT 0, or none), but its ROLE lists
    # one attached again: every call that asks for sync waits for it.
    syncing = Planned(Call(None, "a", (ACQUIRE,), sync_replicas=0.5), NODE, probe=True)
    plain = Planned(Call(None, "b", (ACQUIRE,)), NODE)
    group = Group()
    group.add(0, syncing)
    group.add(1, plain)
    assert group.probes and group.commands == [ACQUIRE.evalsha(), ACQUIRE.evalsha()]
    group.raise_required(attached_replicas([b"master", 10, [[b"127.0.0.1", b"7001", b"9"]]]))
    assert group.commands[-1] == ("WAIT", 1, 500)
    shares = list(group.shares(["r1", "r2", 0]))
    assert shares[0][1].required == 1 and shares[0][2] == ["r1", 0]
    assert shares[1][2] == ["r2"]  # a call that did not ask for sync waits for nothing
    assert finished(shares[0][1], ["r1", 0]) == CallResult(("r1",), 1, 0, str(NODE))


def test_the_attached_replicas_of_a_role_reply() -> None:
    assert attached_replicas(["master", 5, [["h", "1", "5"], ["h", "2", "5"]]]) == 2
    assert attached_replicas(["slave", "h", 1, "connected", 5]) == 0
    assert attached_replicas(ResponseError("NOPERM")) == 0  # an ACL user without ROLE
