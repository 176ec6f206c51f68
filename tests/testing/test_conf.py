"""Rendered node configs: 127.0.0.1 only, the spec's settings, nothing persistent."""

from __future__ import annotations

import re
from pathlib import Path

from redisson_py.testing.topologies.conf import render_redis_conf, render_sentinel_conf
from redisson_py.testing.topologies.spec import load_spec


def addresses(text: str) -> set[str]:
    return set(re.findall(r"\b\d{1,3}(?:\.\d{1,3}){3}\b", text))


def test_data_node_binds_and_announces_loopback_only(tmp_path: Path) -> None:
    text = render_redis_conf(
        load_spec("master-replica"), port=12000, directory=tmp_path, replica_of=12001
    )
    lines = text.splitlines()
    assert "port 12000" in lines
    assert "bind 127.0.0.1" in lines
    assert "replicaof 127.0.0.1 12001" in lines
    assert "replica-announce-ip 127.0.0.1" in lines
    assert 'save ""' in lines
    assert "appendonly no" in lines
    assert "repl-diskless-sync-delay 0" in lines
    assert addresses(text) == {"127.0.0.1"}


def test_cluster_node_config(tmp_path: Path) -> None:
    text = render_redis_conf(load_spec("cluster"), port=12000, directory=tmp_path)
    lines = text.splitlines()
    assert "cluster-enabled yes" in lines
    assert "cluster-announce-ip 127.0.0.1" in lines
    assert "cluster-node-timeout 1500" in lines
    assert "cluster-replica-validity-factor 0" in lines
    assert not any(line.startswith("replicaof") for line in lines)
    assert addresses(text) == {"127.0.0.1"}


def test_sentinel_config_knows_the_topology(tmp_path: Path) -> None:
    spec = load_spec("sentinel")
    text = render_sentinel_conf(
        spec,
        port=12010,
        directory=tmp_path,
        my_id="a" * 40,
        master_port=12000,
        replica_ports=[12001, 12002],
        peers=[(12011, "b" * 40), (12012, "c" * 40)],
    )
    lines = text.splitlines()
    assert "sentinel monitor mymaster 127.0.0.1 12000 2" in lines
    assert "sentinel down-after-milliseconds mymaster 1000" in lines
    assert "sentinel failover-timeout mymaster 2000" in lines
    assert "sentinel announce-ip 127.0.0.1" in lines
    assert "sentinel known-replica mymaster 127.0.0.1 12002" in lines
    assert f"sentinel known-sentinel mymaster 127.0.0.1 12012 {'c' * 40}" in lines
    assert f"sentinel myid {'a' * 40}" in lines
    assert addresses(text) == {"127.0.0.1"}


def test_directory_with_spaces_is_quoted(tmp_path: Path) -> None:
    directory = tmp_path / "a dir"
    text = render_redis_conf(load_spec("single"), port=12000, directory=directory)
    assert f'dir "{directory}"' in text.splitlines()
