"""The idle-connection stack a lock call takes its connection from, and when a
connection given back must go to the pool instead (a caller waits there)."""

from __future__ import annotations

from redisson_py.core.routing.pool_registry import CHECK_AFTER_IDLE, IdleConnections


def test_a_connection_given_back_is_kept_while_nobody_waits_on_the_pool() -> None:
    idle = IdleConnections()
    assert idle.take() is None
    assert idle.keeps()
    idle.give("a")
    assert idle.take() == "a"
    assert idle.take() is None


def test_while_a_caller_waits_on_the_pool_connections_go_to_the_pool() -> None:
    idle = IdleConnections()
    assert idle.enter_checkout() is None  # nothing here: it waits on the pool
    other = IdleConnections()
    assert other.keeps()  # counted per pool
    assert not idle.keeps()  # a connection given back now is released to the pool
    idle.leave_checkout()
    assert idle.keeps()


def test_a_connection_given_back_before_the_caller_was_counted_is_taken_here() -> None:
    idle = IdleConnections()
    idle.give("a")
    assert idle.enter_checkout() == "a"  # looked here once more after counting itself
    idle.leave_checkout()
    assert idle.waiting == 0


def test_only_a_connection_idle_past_the_threshold_is_to_be_checked_for_staleness() -> None:
    idle = IdleConnections()
    idle.give("fresh", 100.0)
    assert idle.take_idle(100.0 + CHECK_AFTER_IDLE / 2) == ("fresh", False)
    idle.give("idle", 100.0)
    assert idle.take_idle(100.0 + 2 * CHECK_AFTER_IDLE) == ("idle", True)
    idle.give("unstamped")  # given back without a time: checked
    assert idle.take_idle(0.0) == ("unstamped", True)
    assert idle.take_idle(0.0) == (None, False)
