"""Redisson-format client configs built by the harness."""

from __future__ import annotations

import yaml

from redisson_py.testing.topologies import redisson_config as rc


def test_single() -> None:
    assert yaml.safe_load(rc.dump_yaml([rc.single_config("redis://127.0.0.1:1")])) == {
        "singleServerConfig": {"address": "redis://127.0.0.1:1"}
    }


def test_master_slave() -> None:
    config = rc.master_slave_config("redis://127.0.0.1:1", ["redis://127.0.0.1:2"])
    assert config == {
        "masterSlaveServersConfig": {
            "masterAddress": "redis://127.0.0.1:1",
            "slaveAddresses": ["redis://127.0.0.1:2"],
        }
    }


def test_sentinel_checks_the_sentinel_list_only_with_two_or_more() -> None:
    three = rc.sentinel_config(
        ["redis://127.0.0.1:1", "redis://127.0.0.1:2", "redis://127.0.0.1:3"], "m"
    )
    assert three["sentinelServersConfig"]["masterName"] == "m"
    assert three["sentinelServersConfig"]["checkSentinelsList"] is True
    one = rc.sentinel_config(["redis://127.0.0.1:1"], "m")
    assert one["sentinelServersConfig"]["checkSentinelsList"] is False


def test_cluster_scans_every_second() -> None:
    config = rc.cluster_config(["redis://127.0.0.1:1"])
    assert config["clusterServersConfig"]["scanInterval"] == 1000


def test_several_configs_are_several_documents() -> None:
    text = rc.dump_yaml([rc.single_config(f"redis://127.0.0.1:{p}") for p in (1, 2, 3)])
    documents = list(yaml.safe_load_all(text))
    assert [d["singleServerConfig"]["address"] for d in documents] == [
        "redis://127.0.0.1:1",
        "redis://127.0.0.1:2",
        "redis://127.0.0.1:3",
    ]


def test_replicated_lists_every_node_and_scans_every_second() -> None:
    config = rc.replicated_config(["redis://127.0.0.1:1", "redis://127.0.0.1:2"])
    assert config == {
        "replicatedServersConfig": {
            "nodeAddresses": ["redis://127.0.0.1:1", "redis://127.0.0.1:2"],
            "scanInterval": 1000,
        }
    }
