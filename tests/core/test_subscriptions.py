"""The wake-up bookkeeping shared by both pub/sub shells: how many waiters a message
wakes for each kind of channel, and that a wake-all reaches every waiter once, even one
that wakes, retries and waits again before the others run (it cannot use up their
wake-ups). Behaviour against real servers: integration/lock and integration/family."""

from __future__ import annotations

from typing import Any

import pytest

from redisson_py.config.addresses import parse_address
from redisson_py.core.routing.subscriptions import (
    ALL,
    ChannelSub,
    SubscriptionTable,
    Waiter,
    wake_count,
)


@pytest.mark.parametrize(
    ("rule", "message", "count"),
    [
        ("lock", b"0", 1),  # an unlock: one waiter retries
        ("lock", b"1", ALL),  # a write unlock: readers may all enter
        ("permits", b"3", 3),
        ("permits", b"0", 0),
        ("latch", b"0", ALL),  # the count reached zero
        ("latch", b"1", 0),  # a new count
        ("lock", b"junk", 1),
        ("permits", "junk", 0),
    ],
)
def test_each_rule_wakes_as_many_waiters_as_its_message_says(
    rule: str, message: bytes | str, count: int
) -> None:
    assert wake_count(rule, message) == count  # type: ignore[arg-type]


def join(table: SubscriptionTable, waiters: int) -> list[Waiter]:
    sub = None
    for _ in range(waiters):
        sub, _created = table.join("ch", lambda: None, "lock", 0.0)
    assert sub is not None
    return [Waiter(sub) for _ in range(waiters)]


def test_a_wake_all_wakes_every_waiter_once_even_one_that_waits_again_first() -> None:
    writer, reader_a, reader_b = join(SubscriptionTable(), 3)
    sub = writer.sub
    assert not writer.woken()
    sub.signal(ALL, 1.0)
    assert writer.woken()  # the writer wakes, is refused, and waits again at once:
    assert not writer.woken()  # it does not take the readers' wake-ups
    assert reader_a.woken() and reader_b.woken()
    assert not reader_a.woken() and not reader_b.woken()


def test_single_wakes_are_permits_capped_at_the_waiters_and_kept_for_a_busy_waiter() -> None:
    first, second = join(SubscriptionTable(), 2)
    sub = first.sub
    assert sub.signal(1, 1.0) == 1
    assert sub.signal(5, 1.0) == 5  # asks the shell to notify; permits stay capped
    assert sub.permits == 2
    assert first.woken() and second.woken() and not first.woken()


def test_a_waiter_that_joins_after_a_wake_all_is_not_woken_by_it() -> None:
    table = SubscriptionTable()
    (early,) = join(table, 1)
    early.sub.signal_all(1.0)
    late = Waiter(early.sub)
    assert early.woken() and not late.woken()


def test_a_message_notifies_no_more_waiters_than_wait_and_none_on_an_unknown_channel() -> None:
    table = SubscriptionTable()
    first, _second = join(table, 2)
    first.sub.rule = "permits"
    assert table.deliver("ch", b"5", 1.0) == (first.sub, 2)  # 5 permits, 2 waiters
    assert table.deliver("ch", b"1", 1.0) == (first.sub, 1)
    assert table.deliver("other", b"0", 1.0) is None


def test_a_lost_node_forgets_its_idle_channels_and_wakes_every_waiter_of_the_others() -> None:
    node, other = parse_address("redis://127.0.0.1:7000"), parse_address("redis://127.0.0.1:7001")
    table = SubscriptionTable()
    (waiting,) = join(table, 1)
    idle, _ = table.join("idle", lambda: None, "lock", 0.0)
    table.leave(idle, now=0.0)
    elsewhere, _ = table.join("elsewhere", lambda: None, "lock", 0.0)
    waiting.sub.address = idle.address = node
    elsewhere.address = other
    assert table.node_lost(node, 1.0) == [waiting.sub]
    assert waiting.sub.address is None  # placed again from the next view
    assert waiting.woken()  # messages may have been lost: it retries at once
    assert table.get("idle") is None and table.get("elsewhere") is elsewhere
    assert elsewhere.address == other


def test_a_node_is_reported_back_once_after_it_was_lost_and_never_before() -> None:
    node = parse_address("redis://127.0.0.1:7000")
    table = SubscriptionTable()
    assert not table.node_back(node, "ch", 1.0)  # a first subscription is not a comeback
    table.node_lost(node, 2.0)
    assert table.node_back(node, "ch", 3.0)
    assert not table.node_back(node, "ch", 4.0)


def _confirmed(table: SubscriptionTable, at: float) -> ChannelSub:
    node = parse_address("redis://127.0.0.1:7000")
    sub, created = table.join("ch", lambda: None, "lock", at - 1.0)
    assert created
    sub.address = node  # placed, then confirmed by the node
    table.node_back(node, "ch", at)
    return sub


def test_a_subscription_confirmed_before_a_try_and_quiet_since_needs_no_second_try() -> None:
    table = SubscriptionTable()
    sub = _confirmed(table, at=10.0)
    assert sub.quiet_since(10.5)  # tried at 10.5, joined after: a release is still told
    assert not sub.quiet_since(10.0)  # confirmed as the try started: it may have missed it
    assert not sub.quiet_since(9.0)


@pytest.mark.parametrize(
    "stir",
    [
        lambda table, sub: table.deliver("ch", b"0", 11.0),  # an unlock it may have missed
        lambda table, sub: table.deliver("ch", b"1", 11.0),  # a wake-all before it joined
        lambda table, sub: sub.signal_all(11.0),  # a re-placement woke everyone
        lambda table, sub: table.node_back(sub.address, "ch", 11.0),  # confirmed again
        lambda table, sub: table.node_lost(sub.address, 11.0),  # no node now
    ],
    ids=["message", "wake-all", "re-placed", "confirmed again", "node lost"],
)
def test_anything_that_happens_to_a_subscription_after_a_try_means_try_again(
    stir: Any,
) -> None:
    table = SubscriptionTable()
    sub = _confirmed(table, at=10.0)
    stir(table, sub)
    assert not sub.quiet_since(10.5)
    assert sub.quiet_since(11.5) == (sub.address is not None)


def test_a_new_subscription_or_one_on_no_node_is_never_quiet() -> None:
    table = SubscriptionTable()
    new, created = table.join("new", lambda: None, "lock", 5.0)
    assert created and not new.quiet_since(100.0)  # on no node until confirmed
    new.address = parse_address("redis://127.0.0.1:7000")
    assert not new.quiet_since(5.0)  # made as the try started
