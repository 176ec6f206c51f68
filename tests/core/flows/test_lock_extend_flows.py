"""``lock.extend``'s flow, stepped without Redis: the watchdog-facing half of its contract
(the race of an old lease ending while the extension is in flight), which a real server
cannot be made to show on demand. Its behaviour on Redis is in
integration/lock/test_conveniences.py."""

from __future__ import annotations

import time

import pytest
from test_lock_flows import Stepper, granted, make_ref

from redisson_py.core import scripts
from redisson_py.core.effects import Call, CallResult, ScriptCommand
from redisson_py.core.flows import lock, lock_kinds
from redisson_py.core.state import losses
from redisson_py.errors import ArgumentError, LockNotOwnedError


def leased_hold(lease: float) -> lock_kinds.LockRef:
    ref = make_ref()
    step = Stepper(lock.try_lock(ref, 0.0, lease))
    step.send(granted())
    assert step.done and step.result is True
    return ref


def test_an_old_lease_ending_while_the_extension_is_in_flight_is_not_a_loss() -> None:
    ref = leased_hold(0.05)
    lost: list[str] = []
    hold = ref.state.holds.all_holds()[0]
    hold.on_lost = lambda hold, reason: lost.append(reason)
    step = Stepper(lock.extend(ref, 5.0))
    assert isinstance(step.effect, Call)
    command = step.effect.commands[0]
    assert isinstance(command, ScriptCommand) and command.script is scripts.EXTEND
    assert command.keys == ("res",) and command.args == (5000, ref.owner)
    # The watchdog wakes at the old lease's end while the reply is still out.
    losses.report_expired(ref.state, time.monotonic() + 0.1)
    assert lost == []
    step.send(CallResult((2,)))
    assert step.done
    expires_at = ref.state.holds.expires_at("res", ref.owner)
    assert expires_at is not None and expires_at > time.monotonic() + 4.5
    assert losses.report_expired(ref.state, time.monotonic() + 1.0) == 0  # not due
    assert ref.state.holds.count("res", ref.owner, time.monotonic()) == 2
    assert hold.lease == 5.0 and lost == []
    # At the new end it is reported, as any lease that runs out while held.
    losses.report_expired(ref.state, time.monotonic() + 5.1)
    assert len(lost) == 1 and "5 s" in lost[0]


def test_a_hold_gone_at_the_extension_is_left_for_the_watchdog_to_report() -> None:
    ref = leased_hold(10.0)
    step = Stepper(lock.extend(ref, 5.0))
    with pytest.raises(LockNotOwnedError, match="vanished"):
        step.send(CallResult((None,)))
    assert ref.state.holds.expires_at("res", ref.owner) is not None  # still to report


def test_a_watchdog_hold_is_refused_before_any_call() -> None:
    ref = make_ref()
    step = Stepper(lock.try_lock(ref, 0.0, None))
    step.send(granted())
    with pytest.raises(ArgumentError, match="watchdog"):
        next(lock.extend(ref, 5.0))
