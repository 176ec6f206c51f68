"""MultiLock/RedLock ``extend`` and ``remaining_validity``, stepped with a fake clock:
Redlock's arithmetic (validity counted from the round's start, less drift), the
majority rule, a round too slow for its lease, and what a failed extension leaves. Their
behaviour on five real masters is in integration/multilock/test_group_extend.py."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from test_fake_clock import FakeClock
from test_lock_flows import Stepper, Target

from redisson_py.core.effects import CallResult, Gather, ScriptCommand
from redisson_py.core.flows import lock_kinds, multilock, quorum
from redisson_py.core.state.client_state import ClientState, LockSettings
from redisson_py.core.state.group_holds import GroupState
from redisson_py.errors import ArgumentError, GroupExtendError, LockNotOwnedError
from redisson_py.sync._primitives import RUNTIME


def redlock(members: int = 5, kind: str = "RedLock") -> tuple[GroupState, list[Any], FakeClock]:
    clock = FakeClock()
    runtime = replace(RUNTIME, clock=clock)
    refs = []
    for i in range(members):
        state = ClientState(LockSettings(retry_attempts=1), runtime=runtime)
        refs.append(lock_kinds.LockRef(f"m{i}", f"{state.client_id}:1", Target(), state))
    need = quorum.quorum(members) if kind == "RedLock" else members
    group = GroupState(kind, [r.name for r in refs], need, runtime)
    return group, refs, clock


def acquire(group: GroupState, refs: list[Any], lease: float | None) -> None:
    step = Stepper(multilock.try_lock(group, refs, "o", 0.0, lease))
    while not step.done:  # a MultiLock's round takes its leader first, then the rest
        assert isinstance(step.effect, Gather)
        step.send([CallResult(([1, 1],)) for _ in step.effect.calls])
    assert step.result is True


def test_validity_is_the_lease_less_the_round_and_drift_and_extend_restarts_it() -> None:
    group, refs, clock = redlock()
    step = Stepper(multilock.try_lock(group, refs, "o", 0.0, 10.0))
    clock.advance(0.3)  # the round takes 0.3 s
    step.send([CallResult(([1, 1],)) for _ in refs])
    assert step.done and step.result is True
    drift = quorum.clock_drift(10.0)
    assert multilock.remaining_validity(group, refs, "o") == pytest.approx(10.0 - 0.3 - drift)
    clock.advance(4.0)
    assert multilock.remaining_validity(group, refs, "o") == pytest.approx(5.7 - drift)
    step = Stepper(multilock.extend(group, refs, "o", 20.0))
    assert isinstance(step.effect, Gather)
    commands = [call.commands[0] for call in step.effect.calls]
    assert all(
        isinstance(c, ScriptCommand) and c.args == (20000, r.owner)
        for c, r in zip(commands, refs, strict=True)
    )
    clock.advance(0.2)
    # Three of five still ours, two gone: a majority, so extended.
    step.send([CallResult((1,))] * 3 + [CallResult((None,))] * 2)
    assert step.done
    expected = 20.0 - 0.2 - quorum.clock_drift(20.0)
    assert multilock.remaining_validity(group, refs, "o") == pytest.approx(expected)
    clock.advance(30.0)
    assert multilock.remaining_validity(group, refs, "o") == 0.0


def test_a_minority_or_a_slow_round_fails_and_keeps_the_former_validity() -> None:
    group, refs, clock = redlock()
    acquire(group, refs, 10.0)
    before = multilock.remaining_validity(group, refs, "o")
    step = Stepper(multilock.extend(group, refs, "o", 20.0))
    with pytest.raises(GroupExtendError) as caught:
        step.send([CallResult((1,))] * 2 + [TimeoutError("frozen")] + [CallResult((None,))] * 2)
    assert len(caught.value.errors) == 3 and len(caught.value.extended) == 2
    assert "2 of 5 members extended, 3 needed" in str(caught.value)
    assert any(isinstance(e, LockNotOwnedError) for e in caught.value.errors.values())
    assert multilock.remaining_validity(group, refs, "o") == before  # a longer lease
    # Every member answers, but the round outlasted the new lease's validity.
    step = Stepper(multilock.extend(group, refs, "o", 1.0))
    clock.advance(1.0)
    with pytest.raises(GroupExtendError, match="leaving no validity"):
        step.send([CallResult((1,))] * 5)
    # The members now expire sooner than the former validity: it is brought forward.
    assert multilock.remaining_validity(group, refs, "o") == 0.0
    # The members extended were recorded with their new lease (the owner still holds them).
    assert refs[0].state.holds.get("m0", refs[0].owner).lease == 1.0


def test_a_multilock_needs_every_member_and_a_watchdog_hold_has_nothing_to_extend() -> None:
    group, refs, _ = redlock(3, kind="MultiLock")
    with pytest.raises(LockNotOwnedError):
        Stepper(multilock.extend(group, refs, "o", 5.0))
    assert multilock.remaining_validity(group, refs, "o") == 0.0
    acquire(group, refs, None)
    watchdog = refs[0].state.settings.watchdog_timeout
    assert 0 < multilock.remaining_validity(group, refs, "o") <= watchdog
    with pytest.raises(ArgumentError, match="watchdog"):
        Stepper(multilock.extend(group, refs, "o", 5.0))
    other, refs, _ = redlock(3, kind="MultiLock")
    acquire(other, refs, 10.0)
    step = Stepper(multilock.extend(other, refs, "o", 5.0))
    with pytest.raises(GroupExtendError, match="2 of 3 members extended, 3 needed"):
        step.send([CallResult((1,))] * 2 + [CallResult((None,))])
