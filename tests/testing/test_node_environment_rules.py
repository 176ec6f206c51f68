"""``start_topology(..., node_environment=...)``: what is accepted, and the one sentence
for what is not (checked before any node starts)."""

from __future__ import annotations

import pytest

from redisson_py.testing import TopologyError
from redisson_py.testing.topologies.node_environment import node_environments

NODES = ["master-0", "replica-0-1", "sentinel-0"]


def test_each_named_node_gets_its_variables_as_pairs_in_order() -> None:
    got = node_environments(
        NODES, {"replica-0-1": {"B": "2", "A": "1"}, "master-0": {}}, backend="process"
    )
    assert got == {"replica-0-1": (("B", "2"), ("A", "1")), "master-0": ()}
    assert node_environments(NODES, None, backend="container") == {}
    assert node_environments(NODES, {}, backend="container") == {}


@pytest.mark.parametrize(
    ("requested", "backend", "message"),
    [
        ({"master-0": {"A": "1"}}, "container", "needs the process backend, not container"),
        ({"master-9": {"A": "1"}}, "process", "'master-9', which is not a node"),
        ({"master-0": {"": "1"}}, "process", "not a usable environment variable"),
        ({"master-0": {"A=B": "1"}}, "process", "not a usable environment variable"),
        ({"master-0": {"A": "x\0y"}}, "process", "not a usable environment variable"),
        ({"master-0": {"A": 1}}, "process", "names and values are strings"),
        ({"master-0": ["A"]}, "process", "must map variable names to values, not list"),
    ],
)
def test_refusals_say_what_is_wrong(requested: object, backend: str, message: str) -> None:
    with pytest.raises(TopologyError, match=message):
        node_environments(NODES, requested, backend=backend)  # type: ignore[arg-type]
