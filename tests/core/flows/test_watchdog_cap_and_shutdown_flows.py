"""The renewal cap (``max_hold_time``) and the releases of a shutdown, stepped through
without Redis (as test_watchdog_flows). Behaviour against real servers:
integration/lock/test_holding.py."""

from __future__ import annotations

import logging
import time
from collections.abc import Generator
from dataclasses import replace
from typing import Any

import pytest
from redis.exceptions import TimeoutError as RedisTimeoutError
from test_watchdog_flows import TARGET, finish, gather_of, make_state, script, take

from redisson_py.core.effects import CallResult, Effect, Gather, Sleep
from redisson_py.core.flows import shutdown, watchdog
from redisson_py.core.state import losses
from redisson_py.core.state.client_state import ClientState
from redisson_py.core.state.holds import HELD_PAST_CAP, Hold, Taken


class Node:
    """A target the release scripts and the warning can name."""

    routes_by_slot = False
    publish_command = "PUBLISH"

    def describe(self, name: str) -> str:
        return "127.0.0.9:6379"


NODE = Node()


def capped(state: ClientState, lost: list[tuple[Hold, str]], name: str, cap: float) -> Hold:
    hold = take(state, lost, name, None)
    state.holds.acquired(
        name,
        hold.owner,
        1,
        target=TARGET,
        lease=None,
        ttl=state.settings.watchdog_timeout,
        now=time.monotonic() - cap,  # acquired cap seconds ago: the cap is reached
        on_lost=hold.on_lost,
        max_hold=cap,
    )
    return hold


def test_a_hold_past_its_cap_is_only_checked_then_reported_held_past_max_hold_time() -> None:
    state, lost = make_state()
    take(state, lost, "free", None)
    hold = capped(state, lost, "capped", 1.0)
    flow = watchdog.renew_round(state)
    command = script(gather_of(flow, next(flow)))
    assert command.keys == ("free", "capped")
    assert command.args[3:] == ("1", "0")  # renew the uncapped one, only check the capped
    outcome = finish(flow, [CallResult(([1, 1],))])
    assert outcome.renewed == 1 and lost == []
    assert hold.capped
    losses.report_expired(state, hold.expires_at + 0.01)
    assert [h.name for h, _ in lost] == ["capped"]
    assert lost[0][1].startswith(HELD_PAST_CAP)
    gone = state.holds.gone_reason("capped", hold.owner, time.monotonic())
    assert gone is not None and HELD_PAST_CAP in gone


def test_a_reentrant_acquire_cannot_lift_the_cap() -> None:
    state, lost = make_state()
    hold = capped(state, lost, "a", 5.0)
    until = hold.renew_until
    state.holds.acquired(
        "a",
        hold.owner,
        2,
        target=TARGET,
        lease=None,
        ttl=3.0,
        now=time.monotonic(),
        on_lost=hold.on_lost,
        max_hold=60.0,
    )
    assert hold.renew_until == until and hold.max_hold == 5.0


def run_releases(flow: Generator[Effect, Any, None], outcomes: list[Any]) -> list[Effect]:
    """Step ``flow``, answering each Gather with the next of ``outcomes`` (a function of
    the Gather; the last one answers every later Gather) and sleeping each Sleep; the
    effects it yielded."""
    seen: list[Effect] = []
    effect = next(flow)
    try:
        while True:
            seen.append(effect)
            if isinstance(effect, Sleep):
                time.sleep(effect.seconds)
                effect = flow.send(None)
            else:
                assert isinstance(effect, Gather)
                answer = outcomes.pop(0) if len(outcomes) > 1 else outcomes[0]
                effect = flow.send(answer(effect))
    except StopIteration:
        return seen


def test_shutdown_releases_every_hold_and_retries_a_timeout_within_its_deadline(
    caplog: pytest.LogCaptureFixture,
) -> None:
    state, lost = make_state()
    take(state, lost, "a", None).target = NODE
    reentered = take(state, lost, "b", None)
    reentered.count, reentered.target = 2, NODE
    state.taken.took(("sem", ""), Taken("semaphore 'sem'", NODE, "sem", 3, lambda n: ("N", n)))
    releases = shutdown.plan(state)
    assert [r.call.route for r in releases] == ["a", "b", "sem"]
    assert len(releases[1].call.commands) == 2  # both holds of b
    assert releases[2].call.commands == (("N", 3),)
    assert state.taken.drain() == []
    flow = shutdown.release_all(state, releases, time.monotonic() + 10.0)
    first = [
        lambda g: [CallResult((1,)), RedisTimeoutError("frozen"), CallResult((4,))],
        lambda g: [CallResult((1, 0))],
    ]
    state.settings = replace(state.settings, retry_delay=lambda attempt: 0.01)
    seen = run_releases(flow, first)
    assert [type(e) for e in seen] == [Gather, Sleep, Gather]
    assert isinstance(seen[2], Gather) and [c.route for c in seen[2].calls] == ["b"]
    assert all(r.done for r in releases)
    assert shutdown.warn_unreleased(releases) == 0


def test_a_release_still_failing_at_the_deadline_is_warned_about(
    caplog: pytest.LogCaptureFixture,
) -> None:
    state, lost = make_state()
    take(state, lost, "stuck", None).target = NODE
    releases = shutdown.plan(state)
    flow = shutdown.release_all(state, releases, time.monotonic() + 0.05)
    seen = run_releases(flow, [lambda g: [RedisTimeoutError("frozen")]])
    gathers = [e for e in seen if isinstance(e, Gather)]
    assert gathers and all(c.timeout is not None and c.timeout <= 0.05 for c in gathers[0].calls)
    caplog.set_level(logging.WARNING)
    assert shutdown.warn_unreleased(releases) == 1
    message = caplog.records[-1].getMessage()
    assert "'stuck'" in message and "127.0.0.9:6379" in message and "frozen" in message


def test_the_last_renewal_before_the_cap_makes_the_key_expire_at_the_cap() -> None:
    state, lost = make_state()
    hold = take(state, lost, "a", None)  # watchdog timeout 3 s
    hold.renew_until, hold.max_hold = time.monotonic() + 1.0, 5.0  # 1 s of the cap left
    hold.expires_at = time.monotonic() + 0.5  # as the renewal before left it
    flow = watchdog.renew_round(state)
    ttl_ms = script(gather_of(flow, next(flow))).args[0]
    assert isinstance(ttl_ms, int) and 900 <= ttl_ms <= 1000  # not 3000
    finish(flow, [CallResult(([1],))])
    assert hold.capped and not hold.renews  # never renewed again
    assert hold.renew_until - 0.1 < hold.expires_at < hold.renew_until


def test_a_cap_shorter_than_the_watchdog_timeout_is_the_first_ttl() -> None:
    state, lost = make_state()
    hold = capped(state, lost, "short", 0.5)
    assert hold.capped  # the acquire's TTL already ends at the cap: nothing to renew
