"""The lock kinds' decisions, stepped through without Redis (as test_lock_flows): each
kind runs its own scripts on its own keys through the one set of lock flows, a fair
waiter queues and leaves the queue when it gives up, a spin lock polls with its back-off
instead of subscribing, a non-reentrant lock refuses its holder at once, and the
watchdog renews read holds with the read-lock script. Behaviour against real servers:
integration/family/."""

from __future__ import annotations

import itertools
from dataclasses import replace
from typing import Any

import pytest
from test_fake_clock import FakeClock
from test_lock_flows import Stepper, Target, granted, held

from redisson_py.core import keyspace
from redisson_py.core.effects import (
    Background,
    Call,
    CallResult,
    Effect,
    Gather,
    ScriptCommand,
    Sleep,
    Subscribe,
    Unsubscribe,
    WaitSignal,
    to_millis,
)
from redisson_py.core.flows import lock, lock_kinds, queued_lock, watchdog
from redisson_py.core.flows.backoff import ConstantBackOff, ExponentialBackOff
from redisson_py.core.scripts import fair_lock, read_write_lock
from redisson_py.core.state.client_state import ClientState, LockSettings
from redisson_py.errors import ArgumentError, LockReentryError
from redisson_py.sync._primitives import RUNTIME


def make_ref(kind: lock_kinds.LockKind, **settings: Any) -> lock_kinds.LockRef:
    state = ClientState(
        LockSettings(retry_attempts=2, **settings),
        runtime=replace(RUNTIME, clock=FakeClock(), wall_clock=lambda: 1000.0),
    )
    owner = f"{state.client_id}:1{kind.owner_suffix}"
    return lock_kinds.LockRef("res", owner, Target(), state, kind=kind)


def command_of(effect: Effect | None) -> ScriptCommand:
    assert isinstance(effect, Call), effect
    command = effect.commands[0]
    assert isinstance(command, ScriptCommand)
    return command


def test_a_fair_waiter_queues_listens_on_its_own_channel_and_leaves_the_queue() -> None:
    ref = make_ref(lock_kinds.FAIR, fair_lock_wait_timeout=300.0)
    clock = ref.state.clock
    assert isinstance(clock, FakeClock)
    step = Stepper(lock.try_lock(ref, 2.0, None))
    command = command_of(step.effect)
    assert command.script is fair_lock.ACQUIRE_FAIR
    assert command.keys == (
        "res",
        "redisson_lock_queue:{res}",
        "redisson_lock_timeout:{res}",
        "redisson_py_fair_alive:{res}",
    )
    lease, owner, _latch, request_id, wait_ms, now_ms, queue, reentrant, alive = command.args
    assert (lease, owner, wait_ms, now_ms, queue, reentrant, alive) == (
        30000,
        ref.owner,
        2000,  # a try_lock's wait is its place's timeout, as Redisson's
        1000000,
        "1",
        "1",
        5000,  # its keepalive window
    )
    subscribe = step.send(held(500))
    assert isinstance(subscribe, Subscribe)
    assert subscribe.channel == f"redisson_lock__channel:{{res}}:{ref.owner}"
    step.send(object())  # subscribed: tries again
    wait = step.send(held(500))
    assert isinstance(wait, WaitSignal) and wait.timeout == pytest.approx(0.5)
    clock.now += 2.0  # the wait runs out
    step.send(False)
    assert command_of(step.effect).script is fair_lock.ACQUIRE_FAIR  # one last try
    leave = step.send(held(500))
    # Not granted: the waiter leaves the queue, in the background, though every attempt
    # was answered (a queued waiter would otherwise block the ones behind it).
    assert isinstance(leave, Background)
    undo = command_of(next(leave.flow))
    assert (
        undo.script is fair_lock.UNDO_FAIR and undo.args[2] == request_id and undo.args[5] == 2000
    )
    assert isinstance(step.send(None), Unsubscribe)
    step.send(None)
    assert step.done and step.result is False


def test_a_fair_lock_tried_once_never_queues_and_lock_waits_use_the_wait_timeout() -> None:
    ref = make_ref(lock_kinds.FAIR, fair_lock_wait_timeout=7.0)
    step = Stepper(lock.try_lock(ref, 0.0, None))
    assert command_of(step.effect).args[6] == "0"
    step.send(held(100))
    assert step.done and step.result is False  # nothing to leave: no Background undo
    forever = Stepper(lock.try_lock(ref, None, None))
    args = command_of(forever.effect).args
    assert args[4] == 7000 and args[6] == "1"


def test_a_queued_fair_waiter_tries_every_keepalive_interval_however_long_the_ttl() -> None:
    ref = make_ref(lock_kinds.FAIR)
    step = Stepper(lock.try_lock(ref, None, None))
    assert isinstance(step.send(held(30_000)), Subscribe)
    step.send(object())
    for _ in range(3):
        wait = step.send(held(30_000))  # the holder's TTL: 30 s
        # each try refreshes the waiter's alive entry: it sleeps 1 s at most
        assert isinstance(wait, WaitSignal) and wait.timeout == fair_lock.KEEPALIVE_INTERVAL
        assert command_of(step.send(False)).script is fair_lock.ACQUIRE_FAIR
    # a reentrant lock's waiter sleeps the holder's TTL
    plain = Stepper(lock.try_lock(make_ref(lock_kinds.LockKind()), None, None))
    plain.send(held(30_000))
    plain.send(object())
    wait = plain.send(held(30_000))
    assert isinstance(wait, WaitSignal) and wait.timeout == pytest.approx(30.0)


def test_a_spin_lock_polls_with_its_backoff_and_never_subscribes() -> None:
    ref = make_ref(lock_kinds.SpinKind(ConstantBackOff(0.05)))
    step = Stepper(lock.try_lock(ref, 1.0, None))
    sleeps = []
    for _ in range(3):
        effect = step.send(held(30_000))
        assert isinstance(effect, Sleep), effect
        sleeps.append(effect.seconds)
        step.send(None)
    assert sleeps == [0.05, 0.05, 0.05]  # the back-off, not the holder's TTL
    assert command_of(step.effect).script.name == "acquire"
    assert step.send(granted()) is None and step.result is True


def test_the_exponential_backoff_doubles_up_to_its_maximum() -> None:
    delays = ExponentialBackOff(initial_delay=0.001, max_delay=0.128).delays()
    first = [next(delays) for _ in range(12)]
    assert first[0] == 0.001
    assert all(b >= a for a, b in itertools.pairwise(first))
    assert first[-1] == 0.128
    with pytest.raises(ArgumentError):
        ExponentialBackOff(max_delay=0)


def test_a_spin_lock_release_publishes_nothing() -> None:
    ref = make_ref(lock_kinds.SpinKind())
    release = ref.kind.release(ref)
    assert release.args[2] == ""  # the script's publish command: none


@pytest.mark.parametrize("kind", [lock_kinds.NON_REENTRANT, lock_kinds.NON_REENTRANT_FAIR])
def test_a_non_reentrant_lock_refuses_its_holder_at_once(kind: lock_kinds.LockKind) -> None:
    ref = make_ref(kind)
    first = Stepper(lock.try_lock(ref, 5.0, None))
    first.send(granted())
    assert first.done and first.result is True
    step = Stepper(lock.try_lock(ref, 5.0, None))
    with pytest.raises(LockReentryError, match="not reentrant"):
        step.send(CallResult(([3, 0],)))


@pytest.mark.parametrize("kind", [lock_kinds.NON_REENTRANT, lock_kinds.NON_REENTRANT_FAIR])
def test_a_leftover_the_owner_does_not_count_is_released_and_the_acquire_retried(
    kind: lock_kinds.LockKind,
) -> None:
    # The server still has a hold this client reported lost (told at its safe end, a
    # moment before its key expires): not a reentry, a leftover to drop.
    ref = make_ref(kind)
    step = Stepper(lock.try_lock(ref, 5.0, None))
    drop = step.send(CallResult(([3, 0],)))
    assert isinstance(drop, Call)
    [release] = drop.commands
    assert isinstance(release, ScriptCommand) and release.script.name.startswith("release")
    again = step.send(CallResult((0,)))
    assert command_of(again).script.name.startswith("acquire")
    step.send(granted())
    assert step.done and step.result is True
    assert ref.state.holds.count("res", ref.owner, 0.0) == 1


def test_read_and_write_holds_use_their_fields_and_the_read_holds_their_timeout_keys() -> None:
    read = make_ref(lock_kinds.READ)
    command = command_of(Stepper(lock.try_lock(read, 0.0, None)).effect)
    assert command.script is read_write_lock.ACQUIRE_READ
    latches = "redisson_py_acquire:{res}"  # the request ids, out of the lock's hash
    assert command.keys == ("res", f"{{res}}:{read.owner}:rwlock_timeout", latches)
    assert command.args[4] == read.owner + ":write"
    assert read.channel == "redisson_rwlock:{res}"
    write = make_ref(lock_kinds.WRITE)
    command = command_of(Stepper(lock.try_lock(write, 0.0, None)).effect)
    assert command.script is read_write_lock.ACQUIRE_WRITE and command.args[1].endswith(":write")
    assert command.keys == ("res", latches)
    assert write.kind.release(write).args[0] == "1"  # a write unlock wakes every waiter


def test_the_watchdog_renews_read_holds_with_the_read_script_in_their_own_call() -> None:
    state = ClientState(LockSettings(watchdog_timeout=3.0), runtime=RUNTIME)
    target = Target()
    for name, kind in (("a", lock_kinds.REENTRANT), ("b", lock_kinds.READ), ("c", lock_kinds.FAIR)):
        state.holds.acquired(
            name,
            f"{state.client_id}:1",
            1,
            target=target,
            lease=None,
            ttl=3.0,
            now=state.clock(),
            on_lost=lambda hold, reason: None,
            kind=kind,
        )
    gather = next(watchdog.renew_round(state))
    assert isinstance(gather, Gather)
    scripts_sent = sorted(
        (c.commands[0].script.name, c.commands[0].keys)  # type: ignore[union-attr]
        for c in gather.calls
    )
    # The read lock's acquire-latch hash is renewed with it (it outlives the lock).
    assert scripts_sent == [("renew", ("a", "c")), ("renew_read", ("b", "redisson_py_acquire:{b}"))]
    read_call = next(c for c in gather.calls if c.commands[0].keys[0] == "b")  # type: ignore[union-attr]
    command = read_call.commands[0]
    assert isinstance(command, ScriptCommand)
    assert command.args == (3000, f"{state.client_id}:1", "{b}")


@pytest.mark.parametrize(
    "kind",
    [
        lock_kinds.REENTRANT,
        lock_kinds.FAIR,
        lock_kinds.READ,
        lock_kinds.WRITE,
        lock_kinds.FencedKind(),
        lock_kinds.SpinKind(),
    ],
)
def test_a_release_carries_the_request_ids_of_the_hold_it_releases(
    kind: lock_kinds.LockKind,
) -> None:
    # So that one the server runs late (held up by a partition) releases nothing of a
    # later hold of the same owner (old_hold_check).
    ref = make_ref(kind)
    sent = []
    for count in (1, 2):
        step = Stepper(lock.try_lock(ref, 0.0, None))
        sent.append(command_of(step.effect).args)
        step.send(granted(count))
    ids = ref.state.holds.acquire_ids("res", ref.owner)
    assert len(ids) == 2
    assert all(request_id in args for request_id, args in zip(ids, sent, strict=True))
    release = lock.release_command(ref)
    field = keyspace.acquire_field(ref.owner)
    assert release.args[release.args.index(field) + 1 :] == ids
    assert kind.release(ref).args[-1] == field  # no ids: no check


def test_the_release_of_a_hold_reported_lost_still_carries_its_request_ids() -> None:
    # Its unlock still sends one release (for what an old master may keep of the hold);
    # held up in a partition and run after the owner's next acquire, without the ids it
    # would release that new hold (found by the nemesis, cluster, seed 102).
    ref = make_ref(lock_kinds.REENTRANT)
    step = Stepper(lock.try_lock(ref, 0.0, None))
    step.send(granted(1))
    holds = ref.state.holds
    hold = holds.get("res", ref.owner)
    assert hold is not None
    ids = hold.acquires
    assert holds.take_lost(hold, "gone")
    assert holds.acquire_ids("res", ref.owner) == ids
    field = keyspace.acquire_field(ref.owner)
    release = lock.release_command(ref)
    assert release.args[release.args.index(field) + 1 :] == ids
    holds.released("res", ref.owner, 0)  # the unlock is done: nothing is known any more
    assert holds.acquire_ids("res", ref.owner) == ()


LATCH = "<the release's unlock latch>"


@pytest.mark.parametrize(
    ("kind", "keys", "message"),
    [
        (lock_kinds.REENTRANT, ("res", "redisson_lock__channel:{res}", LATCH), "0"),
        (lock_kinds.SpinKind(), ("res", "redisson_lock__channel:{res}", LATCH), "0"),
        (
            lock_kinds.FAIR,
            (
                "res",
                "redisson_lock_queue:{res}",
                "redisson_lock_timeout:{res}",
                "redisson_py_fair_alive:{res}",
                "redisson_lock__channel:{res}",
                LATCH,
            ),
            "0",
        ),
        (
            lock_kinds.READ,
            (
                "res",
                "redisson_rwlock:{res}",
                "{res}:<owner>:rwlock_timeout",
                "{res}",
                LATCH,
                "redisson_py_acquire:{res}",
            ),
            "0",
        ),
        (
            lock_kinds.WRITE,
            ("res", "redisson_rwlock:{res}", LATCH, "redisson_py_acquire:{res}"),
            "1",
        ),
        (
            queued_lock.QUEUED,
            (
                "res",
                "redisson_py_queued_lock_queue:{res}",
                "redisson_py_queued_lock_alive:{res}",
                "redisson_py_queued_lock_entries:{res}",
                "redisson_py_queued_lock__channel:{res}",
                LATCH,
            ),
            None,
        ),
    ],
    ids=lambda value: value.label if isinstance(value, lock_kinds.LockKind) else "",
)
def test_every_kind_releases_through_one_body_with_its_own_keys(
    kind: lock_kinds.LockKind, keys: tuple[str, ...], message: str | None
) -> None:
    # One release body (a request id of its own, its unlock latch, the owner's acquire
    # field and the hold's acquires last); a kind says only its script, keys and the
    # arguments before the field.
    assert type(kind).release is lock_kinds.LockKind.release
    ref = make_ref(kind)
    command = kind.release(ref, ("r1", "r2"))
    assert command.script is kind.release_script
    latch = command.keys[keys.index(LATCH)]
    assert latch.startswith("redisson_unlock_latch:{res}:r") and len(latch) == 61
    expected = tuple(latch if key == LATCH else key.replace("<owner>", ref.owner) for key in keys)
    assert command.keys == expected
    publish = kind.publish_command(ref)
    latch_ms = to_millis(ref.state.settings.latch_ttl)
    head = (ref.owner, publish, latch_ms) if message is None else (message, ref.owner, publish)
    assert command.args[: len(head)] == head
    assert command.args[-3:] == (keyspace.acquire_field(ref.owner), "r1", "r2")
    again = kind.release(ref, ("r1", "r2"))
    assert again.keys != command.keys  # each release is a request of its own
