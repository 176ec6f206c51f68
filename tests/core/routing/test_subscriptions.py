"""The wake-up bookkeeping shared by both pub/sub shells: how many waiters a message
wakes for each kind of channel, that a single wake-up goes to the waiter asleep longest
and stays its own, and that a wake-all reaches every waiter once, even one that wakes,
retries and waits again before the others run (it cannot use up their wake-ups).
Behaviour against real servers: integration/lock and integration/family."""

from __future__ import annotations

import pytest

from redisson_py.config.addresses import parse_address
from redisson_py.core.routing.subscriptions import ALL, SubscriptionTable, Waiter, wake_count


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
        sub, _created = table.join("ch", "lock")
    assert sub is not None
    return [Waiter(sub) for _ in range(waiters)]


def test_a_wake_all_wakes_every_waiter_once_even_one_that_waits_again_first() -> None:
    writer, reader_a, reader_b = join(SubscriptionTable(), 3)
    sub = writer.sub
    assert not writer.woken()
    for waiter in (writer, reader_a, reader_b):
        waiter.sleep()
    assert sub.signal(ALL) == [writer, reader_a, reader_b]  # every sleeper, to wake
    assert not sub.sleepers
    assert writer.woken()  # the writer wakes, is refused, and waits again at once:
    assert not writer.woken()  # it does not take the readers' wake-ups
    assert reader_a.woken() and reader_b.woken()
    assert not reader_a.woken() and not reader_b.woken()


def test_a_wake_up_goes_to_the_waiter_asleep_longest_and_is_its_own() -> None:
    first, second, newcomer = join(SubscriptionTable(), 3)
    sub = first.sub
    first.sleep()
    second.sleep()
    assert sub.signal(1) == [first]  # the shell wakes it
    # Before it runs, a waiter just refused comes to wait: nothing there for it.
    assert not newcomer.woken()
    assert first.woken() and not first.woken()
    first.awake()  # back from its sleep: not queued twice
    assert list(sub.sleepers) == [second]
    assert sub.signal(1) == [second] and second.woken()


def test_wake_ups_with_nobody_asleep_are_permits_capped_at_the_waiters() -> None:
    first, second = join(SubscriptionTable(), 2)
    sub = first.sub
    assert sub.signal(1) == []  # both busy retrying: kept
    assert sub.signal(5) == []
    assert sub.permits == 2
    assert first.woken() and second.woken() and not first.woken()


def test_a_sleeper_that_timed_out_leaves_the_queue() -> None:
    first, second = join(SubscriptionTable(), 2)
    first.sleep()
    second.sleep()
    first.awake()  # its wait ran out, nothing handed to it
    assert first.sub.signal(1) == [second]
    assert not first.woken() and second.woken()


def test_a_wake_up_handed_to_a_waiter_that_leaves_passes_on() -> None:
    first, second = join(SubscriptionTable(), 2)
    sub = first.sub
    first.sleep()
    second.sleep()
    assert sub.signal(1) == [first]
    # Cancelled before it could retry: the next sleeper gets the wake-up, so the
    # release it announced is not left unanswered.
    assert first.leave() == [second]
    assert second.woken()
    # With nobody asleep it is kept for the next waiter.
    third, fourth = join(SubscriptionTable(), 2)
    third.sleep()
    assert third.sub.signal(1) == [third]
    assert third.leave() == [] and third.sub.permits == 1
    assert fourth.woken()
    assert Waiter(third.sub).leave() == []  # nothing handed to it: nothing passes on


def test_a_waiter_that_joins_after_a_wake_all_is_not_woken_by_it() -> None:
    table = SubscriptionTable()
    (early,) = join(table, 1)
    early.sub.signal_all()
    late = Waiter(early.sub)
    assert early.woken() and not late.woken()


def test_a_message_wakes_no_more_sleepers_than_it_says_and_none_on_an_unknown_channel() -> None:
    table = SubscriptionTable()
    first, second = join(table, 2)
    first.sub.rule = "permits"
    first.sleep()
    second.sleep()
    assert table.deliver("ch", b"1") == [first]
    assert table.deliver("ch", b"5") == [second]  # 5 permits, 1 sleeper left
    assert first.sub.permits == 2  # the rest kept, capped at the waiters
    assert table.deliver("other", b"0") == []


def test_a_lost_node_forgets_its_idle_channels_and_wakes_every_waiter_of_the_others() -> None:
    node, other = parse_address("redis://127.0.0.1:7000"), parse_address("redis://127.0.0.1:7001")
    table = SubscriptionTable()
    (waiting,) = join(table, 1)
    waiting.sleep()
    idle, _ = table.join("idle")
    table.leave(idle, now=0.0)
    elsewhere, _ = table.join("elsewhere")
    waiting.sub.address = idle.address = node
    elsewhere.address = other
    assert table.node_lost(node) == [waiting]  # asleep: to wake
    assert waiting.sub.address is None  # placed again from the next view
    assert waiting.woken()  # messages may have been lost: it retries at once
    assert table.get("idle") is None and table.get("elsewhere") is elsewhere
    assert elsewhere.address == other


def test_a_node_is_reported_back_once_after_it_was_lost_and_never_before() -> None:
    node = parse_address("redis://127.0.0.1:7000")
    table = SubscriptionTable()
    assert not table.node_back(node)  # a first subscription is not a comeback
    table.node_lost(node)
    assert table.node_back(node)
    assert not table.node_back(node)
