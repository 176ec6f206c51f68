"""Topology views from CLUSTER NODES and SENTINEL replies."""

from __future__ import annotations

from typing import Any

from redisson_py.config import Config
from redisson_py.config.addresses import parse_address
from redisson_py.core.effects import Gather
from redisson_py.core.routing.discovery import discover_sentinel
from redisson_py.core.routing.modes import mode_for
from redisson_py.core.routing.naming import key_slot
from redisson_py.core.routing.topology import (
    TopologyView,
    keeps_replication_backlog,
    master_replica_count,
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


def test_sentinel_report_waits_for_every_replica_not_flagged_down() -> None:
    # A link status of err (sentinel's INFO snapshot is up to 10 s old) or a replica in
    # its initial sync means "wait for it"; only the down/disconnected flags drop one.
    replicas = [
        ["ip", "127.0.0.1", "port", "7001", "flags", "slave", "master-link-status", "ok"],
        ["ip", "127.0.0.1", "port", "7002", "flags", "s_down,slave", "master-link-status", "ok"],
        ["ip", "127.0.0.1", "port", "7003", "flags", "slave", "master-link-status", "err"],
        ["ip", "127.0.0.1", "port", "7004", "flags", "o_down,slave", "master-link-status", "ok"],
        ["ip", "127.0.0.1", "port", "7005", "flags", "slave,disconnected"],
    ]
    sentinels = [{"ip": "127.0.0.1", "port": "26380", "flags": "sentinel"}]
    sentinel = parse_address("redis://127.0.0.1:26379")
    for require_link_ok in (True, False):
        report = parse_sentinel_report(
            [b"127.0.0.1", b"7000"],
            replicas,
            sentinels,
            sentinel,
            SEED,
            require_link_ok=require_link_ok,
        )
        assert report.master is not None and report.master.port == 7000
        assert report.healthy_replicas == 2  # 7001 and 7003 (link err)
        assert len(report.replicas) == 5
        assert [s.port for s in report.sentinels] == [26380]


def test_only_an_err_linked_replica_is_still_waited_for() -> None:
    # The stale view: the one replica shows master-link-status err.
    replicas = [["ip", "127.0.0.1", "port", "7001", "flags", "slave", "master-link-status", "err"]]
    sentinel = parse_address("redis://127.0.0.1:26379")
    report = parse_sentinel_report([b"127.0.0.1", b"7000"], replicas, [], sentinel, SEED)
    assert report.healthy_replicas == 1


def test_cluster_counts_flags_not_the_bus_link() -> None:
    text = """\
aaa 127.0.0.1:7000@17000 myself,master - 0 0 1 connected 0-8000
bbb 127.0.0.1:7001@17001 master - 0 0 2 connected 8001-16383
ccc 127.0.0.1:7002@17002 slave aaa 0 0 1 disconnected
ddd 127.0.0.1:7003@17003 slave,fail? aaa 0 0 1 connected
eee 127.0.0.1:7004@17004 slave bbb 0 0 2 disconnected
fff 127.0.0.1:7005@17005 slave,noaddr bbb 0 0 2 disconnected
"""
    view = parse_cluster_nodes(text, SEED)
    by_port = {a.port: a for a in view.masters}
    assert view.replicas_to_wait_for(by_port[7000]) == 1  # 7002 (link down), not 7003
    assert view.replicas_to_wait_for(by_port[7001]) == 1  # 7004, not the noaddr one


def test_master_replica_count_reads_info_replication() -> None:
    info = (
        "# Replication\r\nrole:master\r\nconnected_slaves:1\r\n"
        "slave0:ip=127.0.0.1,port=7001,state=online,offset=10,lag=0\r\n"
        "slave1:ip=127.0.0.1,port=7002,state=wait_bgsave,offset=0,lag=0\r\n"
        "master_failover_state:no-failover\r\n"
    )
    assert master_replica_count(info) == 2  # a replica still syncing counts
    assert master_replica_count(b"role:master\r\nconnected_slaves:3\r\n") == 3
    assert master_replica_count("role:master\r\nconnected_slaves:0\r\n") == 0


def test_the_masters_own_count_raises_but_never_lowers() -> None:
    replica = parse_address("redis://127.0.0.1:7001")
    view = TopologyView.single_master(SEED, [replica], healthy=0)
    assert view.with_master_counts({SEED: 2}).replicas_to_wait_for(SEED) == 2
    settled = TopologyView.single_master(SEED, [replica], healthy=1)
    assert settled.with_master_counts({SEED: 0}).replicas_to_wait_for(SEED) == 1
    other = parse_address("redis://127.0.0.1:9999")
    assert settled.with_master_counts({other: 5}) == settled  # not a master of the view


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


def _drive(flow: Any, *replies: Any) -> Any:
    """Run a discovery flow, answering each Gather with the next of ``replies``."""
    effect = next(flow)
    try:
        for reply in replies:
            assert isinstance(effect, Gather)
            effect = flow.send(reply)
    except StopIteration as done:
        return done.value
    raise AssertionError(f"the flow asked for more: {effect!r}")


def test_sentinel_discovery_keeps_a_replica_the_master_showed() -> None:
    # Sentinel does not list the replica yet (it learns replicas from the master's INFO
    # every 10 s); the master lists it, then loses it when its link is cut.
    sentinel = parse_address("redis://127.0.0.1:26379")
    answer = ([b"127.0.0.1", b"7000"], [], [])
    remembered: dict[Any, int] = {}

    def discover(info: str) -> TopologyView:
        flow = discover_sentinel(
            None,
            [sentinel],
            "mymaster",
            SEED,
            nat=lambda h, p: (h, p),
            require_link_ok=True,
            timeout=1.0,
            remembered=remembered,
        )
        discovery = _drive(flow, [answer], [(info,)])
        assert discovery.view is not None
        return discovery.view

    attached = "role:master\r\nconnected_slaves:1\r\nslave0:ip=127.0.0.1,port=7001,state=online\r\n"
    assert discover(attached).replicas_to_wait_for(SEED) == 1
    cut = "role:master\r\nconnected_slaves:0\r\n"
    assert discover(cut).replicas_to_wait_for(SEED) == 1  # still waited for
    # Once sentinel lists it, its flags decide.
    down = [["ip", "127.0.0.1", "port", "7001", "flags", "s_down,slave"]]
    flow = discover_sentinel(
        None,
        [sentinel],
        "mymaster",
        SEED,
        nat=lambda h, p: (h, p),
        require_link_ok=True,
        timeout=1.0,
        remembered=remembered,
    )
    discovery = _drive(flow, [([b"127.0.0.1", b"7000"], down, [])], [(cut,)])
    assert discovery.view is not None
    assert discovery.view.replicas_to_wait_for(SEED) == 0


def test_a_kept_replication_backlog_means_a_replica_attached_recently() -> None:
    info = "# Replication\r\nrole:master\r\nconnected_slaves:0\r\nrepl_backlog_active:1\r\n"
    assert keeps_replication_backlog(info)
    assert not keeps_replication_backlog(info.replace("active:1", "active:0"))
    assert not keeps_replication_backlog("role:master\r\n")


def test_a_promoted_replica_keeps_a_backlog_but_had_no_replica_of_its_own() -> None:
    info = "role:master\r\nconnected_slaves:0\r\nrepl_backlog_active:1\r\n"
    promoted = info + "second_repl_offset:1234\r\n"
    assert keeps_replication_backlog(info + "second_repl_offset:-1\r\n", never_promoted=True)
    assert not keeps_replication_backlog(promoted, never_promoted=True)
    assert keeps_replication_backlog(promoted)


def test_a_view_that_cannot_be_refreshed_counts_every_replica_it_names() -> None:
    replica = parse_address("redis://127.0.0.1:7001")
    down = TopologyView.single_master(SEED, [replica], healthy=0)  # flagged down
    assert down.replicas_to_wait_for(SEED) == 0
    assert down.counting_every_replica().replicas_to_wait_for(SEED) == 1
    up = TopologyView.single_master(SEED, [replica])
    assert up.counting_every_replica() is up


def test_a_sentinel_refresh_with_no_sentinel_answering_waits_for_every_known_replica() -> None:
    # The nemesis's finding (seed 101): the client is left with the master, the
    # sentinels with a replica they had flagged down and now promote before it is in sync.
    config = Config()
    config.use_sentinel_servers(
        master_name="mymaster", sentinel_addresses=["redis://127.0.0.1:26379"]
    )
    mode = mode_for(config)
    replica = parse_address("redis://127.0.0.1:7001")
    stale = TopologyView.single_master(SEED, [replica], healthy=0)
    flow = mode.refresh(None, stale)
    effect = next(flow)
    assert isinstance(effect, Gather)
    effect = flow.send([ConnectionError("timed out")])  # no sentinel answers
    assert isinstance(effect, Gather)  # the master's own INFO replication, then
    try:
        flow.send([("role:master\r\nconnected_slaves:0\r\n",)])
    except StopIteration as done:
        view = done.value
    else:
        raise AssertionError("the refresh asked for more")
    assert view.replicas_to_wait_for(SEED) == 1
