"""Parsing raw Redis replies."""

from __future__ import annotations

import itertools

from redisson_py.testing.topologies.cluster_setup import slot_ranges
from redisson_py.testing.topologies.replies import (
    parse_cluster_nodes,
    parse_cluster_slots,
    parse_info,
    parse_pairs,
    parse_replica_entries,
)

INFO = """# Replication\r
role:master\r
connected_slaves:2\r
slave0:ip=127.0.0.1,port=12001,state=online,offset=42,lag=0\r
slave1:ip=127.0.0.1,port=12002,state=wait_bgsave,offset=0,lag=0\r
master_repl_offset:42\r
"""


def test_info_and_replica_entries() -> None:
    info = parse_info(INFO)
    assert info["role"] == "master"
    assert info["connected_slaves"] == "2"
    entries = parse_replica_entries(info)
    assert [(e["port"], e["state"]) for e in entries] == [
        ("12001", "online"),
        ("12002", "wait_bgsave"),
    ]


def test_pairs_from_list_or_map() -> None:
    assert parse_pairs(["a", "1", "b", "2"]) == {"a": "1", "b": "2"}
    assert parse_pairs({"a": 1}) == {"a": "1"}


def test_cluster_slots_sorted() -> None:
    reply = [
        [5461, 10922, ["127.0.0.1", 12001, "id1"], ["127.0.0.1", 12004, "id4"]],
        [0, 5460, ["127.0.0.1", 12000, "id0"]],
    ]
    ranges = parse_cluster_slots(reply)
    assert [(r.start, r.end, r.master_port, r.replica_ports) for r in ranges] == [
        (0, 5460, 12000, ()),
        (5461, 10922, 12001, (12004,)),
    ]


def test_cluster_nodes() -> None:
    text = (
        "aaa 127.0.0.1:12000@22000 myself,master - 0 0 1 connected 0-5460\n"
        "bbb 127.0.0.1:12003@22003,host slave aaa 0 0 1 connected\n"
        "ccc 127.0.0.1:12001@22001 master,fail - 0 0 2 disconnected\n"
    )
    entries = parse_cluster_nodes(text)
    assert [(e.node_id, e.port, e.is_master, e.master_id) for e in entries] == [
        ("aaa", 12000, True, None),
        ("bbb", 12003, False, "aaa"),
        ("ccc", 12001, True, None),
    ]
    assert entries[2].failed and not entries[2].connected
    assert not entries[0].failed


def test_slot_ranges_cover_every_slot_once() -> None:
    for shards in (1, 3, 5, 7):
        ranges = slot_ranges(shards)
        assert ranges[0][0] == 0 and ranges[-1][1] == 16383
        assert sum(end - start + 1 for start, end in ranges) == 16384
        assert all(a[1] + 1 == b[0] for a, b in itertools.pairwise(ranges))
