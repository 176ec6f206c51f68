"""Topology specs: the shipped ones load as documented; bad ones fail with one sentence
per problem naming the file and the field."""

from __future__ import annotations

from pathlib import Path

import pytest

from redisson_py.testing import TopologyError
from redisson_py.testing.topologies.spec import (
    SpecError,
    known_topologies,
    load_spec,
    parse_spec,
    topologies_dir,
)


def write_spec(directory: Path, name: str, text: str) -> Path:
    path = directory / f"{name}.yaml"
    path.write_text(text)
    return path


def test_the_six_topologies_ship() -> None:
    assert known_topologies() == [
        "cluster",
        "master-replica",
        "redlock",
        "replicated",
        "sentinel",
        "single",
    ]


@pytest.mark.parametrize(
    ("name", "layout", "masters", "replicas", "sentinels"),
    [
        ("single", "standalone", 1, 0, 0),
        ("master-replica", "replication", 1, 2, 0),
        ("replicated", "replication", 1, 2, 0),
        ("sentinel", "sentinel", 1, 2, 3),
        ("cluster", "cluster", 3, 1, 0),
        ("redlock", "standalone", 5, 0, 0),
    ],
)
def test_shipped_spec_shape(
    name: str, layout: str, masters: int, replicas: int, sentinels: int
) -> None:
    spec = load_spec(name)
    assert (spec.name, spec.layout) == (name, layout)
    assert (spec.masters, spec.replicas_per_master, spec.sentinels) == (
        masters,
        replicas,
        sentinels,
    )
    # Tests want no persistence.
    assert spec.redis_conf["save"] == ""
    assert spec.redis_conf["appendonly"] == "no"


def test_sentinel_and_cluster_timeouts_are_short() -> None:
    sentinel = load_spec("sentinel").sentinel
    assert sentinel is not None
    assert sentinel.quorum == 2
    assert sentinel.down_after_ms <= 2000
    assert sentinel.failover_timeout_ms <= 3000
    cluster = load_spec("cluster").cluster
    assert cluster is not None
    assert 1000 <= cluster.node_timeout_ms <= 2000


def test_unknown_topology_lists_the_known_ones() -> None:
    with pytest.raises(SpecError) as caught:
        load_spec("clustr")
    message = str(caught.value)
    assert "unknown topology 'clustr'" in message
    assert "did you mean 'cluster'" in message
    assert "cluster, master-replica, redlock, replicated, sentinel, single" in message
    assert isinstance(caught.value, TopologyError)


def test_overrides_merge_into_sections() -> None:
    spec = load_spec(
        "sentinel",
        {"replicas_per_master": 1, "sentinel": {"down_after_ms": 3000}, "redis_conf": {"x": 1}},
    )
    assert spec.replicas_per_master == 1
    assert spec.sentinel is not None
    assert spec.sentinel.down_after_ms == 3000
    assert spec.sentinel.quorum == 2  # kept from the file
    assert spec.redis_conf["x"] == "1"
    assert spec.redis_conf["save"] == ""


def test_unknown_override_suggests_the_right_one() -> None:
    with pytest.raises(
        SpecError, match=r"unknown override 'replica_per_master'.*'replicas_per_master'"
    ):
        load_spec("sentinel", {"replica_per_master": 1})


def test_name_and_layout_cannot_be_overridden() -> None:
    with pytest.raises(SpecError, match="unknown override 'layout'"):
        load_spec("single", {"layout": "cluster"})


def test_missing_field_names_file_and_field(tmp_path: Path) -> None:
    write_spec(tmp_path, "mine", "name: mine\nlayout: replication\nmasters: 1\n")
    with pytest.raises(SpecError) as caught:
        load_spec("mine", directory=tmp_path)
    assert caught.value.problems == [
        f"missing field 'replicas_per_master' in {tmp_path / 'mine.yaml'}; add it."
    ]


def test_mistyped_field_names_file_and_field(tmp_path: Path) -> None:
    path = write_spec(tmp_path, "mine", "name: mine\nlayout: standalone\nmasters: three\n")
    with pytest.raises(SpecError) as caught:
        load_spec(path)
    assert caught.value.problems == [
        f"field 'masters' in {path} must be an integer, not a string ('three')."
    ]


def test_every_problem_is_reported_once(tmp_path: Path) -> None:
    path = write_spec(
        tmp_path,
        "bad",
        "name: bad\nlayout: sentinel\nmasters: 2\nreplicas_per_master: 1\nsentinels: 1\n"
        "sentinel: {master_name: m, quorum: 2, down_after_ms: 1000, failover_timeout_ms: 0,"
        " parallel_syncs: 1, extra: 1}\nsentinal_conf: {}\n",
    )
    with pytest.raises(SpecError) as caught:
        load_spec(path)
    problems = caught.value.problems
    assert len(problems) == 5, problems
    assert any("unknown field 'sentinal_conf'" in p and "'sentinel_conf'" in p for p in problems)
    assert any("unknown field 'sentinel.extra'" in p for p in problems)
    assert any("'sentinel.failover_timeout_ms'" in p and "at least 1" in p for p in problems)
    assert any("'sentinel.quorum'" in p and "only 1 sentinels" in p for p in problems)
    assert any("'masters'" in p and "must be 1" in p for p in problems)
    assert all(str(path) in p for p in problems)
    assert str(caught.value) == "\n".join(problems)


def test_yaml_syntax_error_names_the_line(tmp_path: Path) -> None:
    path = write_spec(tmp_path, "broken", "name: broken\nlayout: [standalone\nmasters: 1\n")
    with pytest.raises(SpecError, match=r"is not valid YAML at line \d"):
        load_spec(path)


def test_name_must_match_the_file(tmp_path: Path) -> None:
    path = write_spec(tmp_path, "one", "name: two\nlayout: standalone\nmasters: 1\n")
    with pytest.raises(SpecError, match=r"is 'two' but the file is named one\.yaml"):
        load_spec(path)


def test_directives_the_harness_owns_are_refused() -> None:
    with pytest.raises(SpecError, match=r"'redis_conf\.port'.*harness controls"):
        parse_spec({"name": "x", "layout": "standalone", "masters": 1, "redis_conf": {"port": 1}})


def test_yaml_booleans_become_redis_words() -> None:
    spec = parse_spec(
        {"name": "x", "layout": "standalone", "masters": 1, "redis_conf": {"appendonly": False}}
    )
    assert spec.redis_conf == {"appendonly": "no"}


def test_layout_rules() -> None:
    with pytest.raises(SpecError, match="must be 0 with layout 'standalone'"):
        parse_spec({"name": "x", "layout": "standalone", "masters": 1, "replicas_per_master": 1})
    with pytest.raises(SpecError, match="must be 0 unless the layout is 'sentinel'"):
        parse_spec(
            {
                "name": "x",
                "layout": "cluster",
                "masters": 3,
                "replicas_per_master": 0,
                "sentinels": 1,
                "cluster": {"node_timeout_ms": 1000, "replica_validity_factor": 0},
            }
        )
    with pytest.raises(SpecError, match="it must be one of: standalone, replication"):
        parse_spec({"name": "x", "layout": "clusterr", "masters": 1})


def test_topologies_dir_can_be_redirected(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REDISSON_PY_TOPOLOGIES", str(tmp_path))
    assert topologies_dir() == tmp_path
    assert known_topologies() == []
    with pytest.raises(SpecError, match="no specs found in"):
        load_spec("single")


def test_the_client_config_is_chosen_where_the_layout_offers_a_choice() -> None:
    assert load_spec("master-replica").client == "master_slave"
    assert load_spec("replicated").client == "replicated"
    assert load_spec("sentinel").client == ""


def test_a_client_config_the_layout_has_not_is_refused(tmp_path: Path) -> None:
    base = "layout: {layout}\nmasters: 1\nreplicas_per_master: 1\nclient: {client}\n"
    write_spec(tmp_path, "odd", "name: odd\n" + base.format(layout="replication", client="cluster"))
    with pytest.raises(SpecError, match=r"field 'client' .* is 'cluster'; it must be one of"):
        load_spec("odd", directory=tmp_path)
    write_spec(tmp_path, "odder", "name: odder\n" + base.format(layout="cluster", client="x"))
    with pytest.raises(SpecError, match="has only one client config"):
        load_spec("odder", directory=tmp_path)
