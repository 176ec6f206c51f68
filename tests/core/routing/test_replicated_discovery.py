"""Replicated mode's discovery (`redisson_py.core.routing.replicated`), stepped with
made-up ``ROLE`` replies: the one master found, the replicas counted for WAIT, and no
master while two nodes claim it."""

from __future__ import annotations

from typing import Any

import pytest
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError

from redisson_py.config import Config, parse_address
from redisson_py.core.effects import Gather
from redisson_py.core.routing.manager_base import ManagerBase
from redisson_py.core.routing.modes import mode_for
from redisson_py.core.routing.replicated import discover_replicated, parse_role
from redisson_py.core.routing.wire import TopologyChanged
from redisson_py.errors import ConnectError

A, B, C = (parse_address(f"redis://127.0.0.1:{port}") for port in (7000, 7001, 7002))


def _master(offset: int, *replicas: int) -> list[Any]:
    return [b"master", offset, [[b"127.0.0.1", str(p).encode(), b"0"] for p in replicas]]


def _replica(of: int, offset: int = 0) -> list[Any]:
    return [b"slave", b"127.0.0.1", of, b"connected", offset]


def _discover(*answers: Any) -> Any:
    flow = discover_replicated(None, [A, B, C], 1.0)
    effect = next(flow)
    assert isinstance(effect, Gather)
    assert [call.commands for call in effect.calls] == [(("ROLE",),)] * 3
    try:
        flow.send(
            [answer if isinstance(answer, BaseException) else (answer,) for answer in answers]
        )
    except StopIteration as done:
        return done.value
    raise AssertionError("the discovery asked for more than one round")


def test_role_replies_are_read() -> None:
    assert parse_role(_master(12, 7001, 7002)).attached == 2
    replica = parse_role(_replica(7000, 10))
    assert (replica.role, replica.following, replica.link, replica.offset) == (
        "slave",
        "127.0.0.1:7000",
        "connected",
        10,
    )
    assert parse_role([b"sentinel", [b"mymaster"]]).role == "sentinel"
    with pytest.raises(ValueError, match="not a ROLE reply"):
        parse_role(b"OK")


def test_the_master_is_whichever_says_so_and_the_others_are_its_replicas() -> None:
    discovery, roles = _discover(_replica(7001), _master(5, 7000, 7002), _replica(7001))
    view = discovery.view
    assert view.masters == (B,)
    assert view.master_for("any") == B
    assert view.replicas[B] == (A, C)
    assert view.replicas_to_wait_for(B) == 2
    assert roles[B].role == "master"


def test_a_replica_that_does_not_answer_is_named_but_not_waited_for() -> None:
    down = RedisConnectionError("Connection refused")
    discovery, _ = _discover(_master(5, 7001), _replica(7000), down)
    view = discovery.view
    assert view.replicas[A] == (B, C)  # named: a grant asks the master (ROLE) first
    assert view.replicas_to_wait_for(A) == 1
    assert discovery.errors == {C: down}


def test_when_no_replica_answers_every_configured_replica_is_waited_for() -> None:
    # Cut off with an old master that dropped its replicas (its repl-timeout): it lists
    # none attached, and neither replica answers us. A WAIT 0 would grant on a node the
    # service may have replaced: wait for both, so a grant is refused instead.
    down = RedisConnectionError("Timeout connecting")
    discovery, _ = _discover(_master(5), down, down)
    assert discovery.view.replicas_to_wait_for(A) == 2


def _discover_endpoint(answer: Any, remembered: dict[Any, int]) -> Any:
    """Only the service's primary endpoint in nodeAddresses (no replica configured)."""
    flow = discover_replicated(None, [A], 1.0, remembered)
    next(flow)
    try:
        flow.send([(answer,)])
    except StopIteration as done:
        return done.value[0].view
    raise AssertionError("the discovery asked for more than one round")


def test_a_master_seen_with_replicas_that_now_has_none_is_waited_on_for_one() -> None:
    # Only the endpoint is configured: the master's ROLE is all the client knows. The
    # service promoted a replica and re-pointed the other; the endpoint still reaches
    # the old master, which lists no replica now. Counting none would confirm renewals
    # there beside a holder on the promoted node (the nemesis with DNS moves, seed 401).
    remembered: dict[Any, int] = {}
    assert _discover_endpoint(_master(5, 7001, 7002), remembered).replicas_to_wait_for(A) == 2
    assert _discover_endpoint(_master(9), remembered).replicas_to_wait_for(A) == 1
    # One replica back: its acknowledgement is what counts, as before.
    assert _discover_endpoint(_master(9, 7001), remembered).replicas_to_wait_for(A) == 1


def test_a_master_never_seen_with_replicas_is_not_waited_on() -> None:
    assert _discover_endpoint(_master(5), {}).replicas_to_wait_for(A) == 0
    assert _discover_endpoint(_master(5), None).replicas_to_wait_for(A) == 0


def test_the_masters_own_list_raises_the_count() -> None:
    # Only one replica answers us, but the master lists two attached: wait for two.
    down = RedisConnectionError("Connection refused")
    discovery, _ = _discover(_master(5, 7001, 7002), _replica(7000), down)
    assert discovery.view.replicas_to_wait_for(A) == 2


def test_two_masters_at_once_route_nothing_and_say_why() -> None:
    discovery, _ = _discover(_master(5, 7002), _master(6), _replica(7000))
    view = discovery.view
    assert view.masters == ()
    assert view.master_for("any") is None
    assert "2 nodes claim master" in view.unavailable
    assert str(A) in view.unavailable and str(B) in view.unavailable
    # A call routed meanwhile fails naming both, before anything is sent.
    config = Config()
    config.use_replicated_servers([str(A), str(B), str(C)])
    manager = ManagerBase(config)
    manager.view = view
    with pytest.raises(TopologyChanged, match="claim master") as raised:
        manager.master_address("lock")
    assert str(A) in str(raised.value) and str(B) in str(raised.value)


def test_no_master_among_those_that_answered_routes_nothing() -> None:
    down = RedisConnectionError("Connection refused")
    discovery, _ = _discover(_replica(7001), down, _replica(7001))
    assert discovery.view.masters == ()
    assert "no node of nodeAddresses is master" in discovery.view.unavailable


def test_no_answer_keeps_the_last_view() -> None:
    down = RedisConnectionError("Connection refused")
    discovery, roles = _discover(down, down, down)
    assert discovery.view is None
    assert roles == {}
    assert set(discovery.errors) == {A, B, C}


def _mode(**settings: Any) -> Any:
    config = Config(**settings)
    config.use_replicated_servers([str(A), str(B), str(C)])
    return mode_for(config)


def _startup(mode: Any, *rounds: list[Any]) -> Any:
    flow = mode.startup(None)
    effect = next(flow)
    try:
        for answers in rounds:
            assert isinstance(effect, Gather)
            effect = flow.send(answers)
    except StopIteration as done:
        return done.value
    raise AssertionError(f"the startup asked for more: {effect!r}")


def test_startup_finds_the_master_then_checks_wait() -> None:
    mode = _mode()
    assert (mode.kind, mode.scan_interval, mode.seeds()) == ("replicated", 1.0, [A, B, C])
    roles = [(_replica(7001),), (_master(5, 7000, 7002),), (_replica(7001),)]
    waits = [(0,), ResponseError("WAIT cannot be used with replica instances")] * 2
    view = _startup(mode, roles, [waits[0], waits[1], waits[1]])
    assert view.masters == (B,)


def test_startup_with_no_master_names_every_node_and_its_role() -> None:
    down = RedisConnectionError("Connection refused")
    with pytest.raises(ConnectError, match="no node of nodeAddresses is master") as raised:
        _startup(_mode(), [(_replica(7001),), down, (_replica(7001),)])
    assert raised.value.attempts[str(A)] == "role slave"
    assert "Connection refused" in raised.value.attempts[str(B)]


def test_startup_with_no_node_answering_lists_them() -> None:
    down = RedisConnectionError("Connection refused")
    with pytest.raises(ConnectError, match="cannot reach any node of nodeAddresses"):
        _startup(_mode(), [down, down, down])
