"""Topology views from CLUSTER NODES and SENTINEL replies."""

from __future__ import annotations

from redisson_py.config.addresses import parse_address
from redisson_py.core.naming import key_slot
from redisson_py.core.topology import (
    TopologyView,
    parse_cluster_nodes,
    parse_sentinel_report,
    parse_switch_master,
    sentinel_records,
)

SEED = parse_address("redis://127.0.0.1:7000")

CLUSTER_NODES = """\
aaa 127.0.0.1:7000@17000 myself,master - 0 0 1 connected 0-5460
bbb 127.0.0.1:7001@17001 master - 0 1700000000000 2 connected 5461-10922
ccc 127.0.0.1:7002@17002 master - 0 1700000000000 3 connected 10923-16383 [16000->-bbb]
ddd 127.0.0.1:7003@17003 slave aaa 0 1700000000000 1 connected
eee 127.0.0.1:7004@17004 slave bbb 0 1700000000000 2 connected
fff 127.0.0.1:7005@17005 slave,fail ccc 0 1700000000000 3 disconnected
"""


def test_cluster_nodes_give_the_slot_map() -> None:
    view = parse_cluster_nodes(CLUSTER_NODES, SEED)
    assert [a.port for a in view.masters] == [7000, 7001, 7002]
    assert view.master_for_slot(0).port == 7000  # type: ignore[union-attr]
    assert view.master_for_slot(5461).port == 7001  # type: ignore[union-attr]
    assert view.master_for_slot(16383).port == 7002  # type: ignore[union-attr]
    assert view.uncovered_ranges() == []
    assert view.master_for("123456789").port == 7002  # type: ignore[union-attr]
    assert key_slot("123456789") == 12739


def test_cluster_replica_health_comes_from_flags() -> None:
    view = parse_cluster_nodes(CLUSTER_NODES, SEED)
    by_port = {a.port: a for a in view.masters}
    assert view.replicas_to_wait_for(by_port[7000]) == 1
    assert view.replicas_to_wait_for(by_port[7002]) == 0  # its replica is failed
    assert [r.port for r in view.replicas[by_port[7002]]] == [7005]


def test_uncovered_slots_are_reported() -> None:
    text = "aaa 127.0.0.1:7000@17000 myself,master - 0 0 1 connected 0-100 200-16383\n"
    view = parse_cluster_nodes(text, SEED)
    assert view.uncovered_ranges() == [(101, 199)]
    assert view.master_for_slot(150) is None


def test_unknown_own_address_is_the_queried_one_and_nat_applies() -> None:
    text = "aaa :7000@17000 myself,master - 0 0 1 connected 0-16383\n"
    view = parse_cluster_nodes(text, SEED, nat=lambda h, p: ("127.0.0.1", p + 1))
    assert str(view.masters[0]) == "redis://127.0.0.1:7001"


def test_single_master_view_owns_everything() -> None:
    view = TopologyView.single_master(SEED, [parse_address("redis://127.0.0.1:7001")], healthy=0)
    assert view.master_for("anything") == SEED
    assert view.replicas_to_wait_for(SEED) == 0


def test_sentinel_report_counts_only_healthy_linked_replicas() -> None:
    replicas = [
        ["ip", "127.0.0.1", "port", "7001", "flags", "slave", "master-link-status", "ok"],
        ["ip", "127.0.0.1", "port", "7002", "flags", "s_down,slave", "master-link-status", "ok"],
        ["ip", "127.0.0.1", "port", "7003", "flags", "slave", "master-link-status", "err"],
    ]
    sentinels = [{"ip": "127.0.0.1", "port": "26380", "flags": "sentinel"}]
    sentinel = parse_address("redis://127.0.0.1:26379")
    report = parse_sentinel_report(
        [b"127.0.0.1", b"7000"], replicas, sentinels, sentinel, SEED, require_link_ok=True
    )
    assert report.master is not None and report.master.port == 7000
    assert report.healthy_replicas == 1
    assert [s.port for s in report.sentinels] == [26380]
    lax = parse_sentinel_report(
        [b"127.0.0.1", b"7000"], replicas, [], sentinel, SEED, require_link_ok=False
    )
    assert lax.healthy_replicas == 2


def test_sentinel_records_read_resp2_and_resp3() -> None:
    assert sentinel_records([[b"ip", b"h", b"port", b"1"]]) == [{"ip": "h", "port": "1"}]
    assert sentinel_records([{b"ip": b"h"}]) == [{"ip": "h"}]


def test_switch_master_message() -> None:
    assert parse_switch_master("mymaster 127.0.0.1 7000 127.0.0.1 7001") == (
        "mymaster",
        "127.0.0.1",
        7001,
    )
    assert parse_switch_master("garbage") is None
