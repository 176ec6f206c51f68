"""DNS monitoring's decisions (`redisson_py.core.routing.dns`): which names are watched,
how often, what counts as a move, and when a failure is worth a warning."""

from __future__ import annotations

from redisson_py import Config
from redisson_py.config.addresses import parse_address
from redisson_py.core.routing.dns import (
    WARN_EVERY,
    DnsWatch,
    Moved,
    is_ip_literal,
    monitoring_interval,
    watched_hosts,
)


def test_ip_literals_are_told_from_names() -> None:
    assert is_ip_literal("127.0.0.1")
    assert is_ip_literal("::1")
    assert is_ip_literal("fe80::1%eth0")
    assert not is_ip_literal("redis-primary.test")
    assert not is_ip_literal("localhost")
    assert not is_ip_literal("127.0.5.1.example")


def test_only_host_names_are_watched_each_once_in_order() -> None:
    addresses = [
        parse_address(text)
        for text in (
            "redis://127.0.0.1:6379",
            "redis://b.test:7000",
            "rediss://a.test:7001",
            "redis://[::1]:6379",
            "redis://b.test:7002",
        )
    ]
    assert watched_hosts(addresses) == {"b.test": 7000, "a.test": 7001}
    assert watched_hosts([parse_address("redis://127.0.0.1:6379")]) == {}


def test_the_interval_is_dns_monitoring_interval_and_minus_one_turns_it_off() -> None:
    single = Config.from_yaml("singleServerConfig:\n  address: redis://h.test:6379\n")
    assert monitoring_interval(single.server_config) == 5.0  # Redisson's default
    fast = Config.from_yaml(
        "singleServerConfig:\n  address: redis://h.test:6379\n  dnsMonitoringInterval: 250\n"
    )
    assert monitoring_interval(fast.server_config) == 0.25
    off = Config.from_yaml(
        "singleServerConfig:\n  address: redis://h.test:6379\n  dnsMonitoringInterval: -1\n"
    )
    assert monitoring_interval(off.server_config) is None
    cluster = Config.from_yaml(
        "clusterServersConfig:\n  nodeAddresses: [redis://h.test:7000]\n"
        "  dnsMonitoringInterval: 1000\n"
    )
    assert monitoring_interval(cluster.server_config) == 1.0


def test_replicated_mode_monitors_at_each_scan_only_with_monitor_ip_changes() -> None:
    base = "replicatedServersConfig:\n  nodeAddresses: [redis://h.test:6379]\n  scanInterval: 700\n"
    assert monitoring_interval(Config.from_yaml(base).server_config) is None  # default false
    on = Config.from_yaml(base + "  monitorIPChanges: true\n")
    assert monitoring_interval(on.server_config) == 0.7


def test_the_first_answer_is_the_baseline_and_a_new_one_is_a_move() -> None:
    watch = DnsWatch()
    assert watch.known("h.test") is None
    assert watch.resolved("h.test", ["127.0.5.1"]) is None
    assert watch.resolved("h.test", ["127.0.5.1"]) is None
    moved = watch.resolved("h.test", ["127.0.5.2"])
    assert moved == Moved("h.test", frozenset({"127.0.5.1"}), frozenset({"127.0.5.2"}))
    assert str(moved) == "host h.test moved from 127.0.5.1 to 127.0.5.2"
    assert watch.known("h.test") == {"127.0.5.2"}
    # Hosts are tracked apart.
    assert watch.resolved("other.test", ["127.0.5.1"]) is None


def test_round_robin_order_is_not_a_move_but_a_changed_set_is() -> None:
    watch = DnsWatch()
    watch.resolved("h.test", ["127.0.5.1", "127.0.5.2"])
    assert watch.resolved("h.test", ["127.0.5.2", "127.0.5.1", "127.0.5.2"]) is None
    moved = watch.resolved("h.test", ["127.0.5.2", "127.0.5.3"])
    assert moved is not None and moved.new == {"127.0.5.2", "127.0.5.3"}


def test_an_empty_answer_keeps_the_last_addresses() -> None:
    watch = DnsWatch()
    watch.resolved("h.test", ["127.0.5.1"])
    assert watch.resolved("h.test", []) is None
    assert watch.known("h.test") == {"127.0.5.1"}
    assert watch.resolved("h.test", ["127.0.5.1"]) is None  # not a move back either


def test_failures_keep_the_address_and_warn_once_per_period() -> None:
    watch = DnsWatch()
    watch.resolved("h.test", ["127.0.5.1"])
    assert watch.failed("h.test", now=100.0) is True  # the first of a run: said
    assert watch.failed("h.test", now=101.0) is False
    assert watch.failed("h.test", now=100.0 + WARN_EVERY - 0.1) is False
    assert watch.failed("h.test", now=100.0 + WARN_EVERY) is True
    assert watch.known("h.test") == {"127.0.5.1"}
    # Resolving again is said once, and the next failure is said at once.
    assert watch.recovered("h.test") is True
    assert watch.recovered("h.test") is False
    assert watch.resolved("h.test", ["127.0.5.1"]) is None
    assert watch.failed("h.test", now=100.0 + WARN_EVERY + 1.0) is True


def test_a_host_that_never_resolved_fails_without_a_baseline() -> None:
    watch = DnsWatch()
    assert watch.failed("h.test", now=0.0) is True
    assert watch.known("h.test") is None
    assert watch.recovered("h.test") is True
    # Its first answer is the baseline, not a move.
    assert watch.resolved("h.test", ["127.0.5.1"]) is None
