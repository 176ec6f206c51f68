"""Fixtures of the mixed-fleet suite: the real Redisson (``java_peer.py``) and redisson-py on
one topology, both reading the same Redisson YAML file (``mixed_fleet.py`` says which
cells). One JVM per version and test module, one Java client per topology in it; every
test uses Java threads and lock names of its own.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from java_peer import JavaPeer, build
from mixed_fleet import CELLS, Cell, mixed_yaml

from redisson_py import Config
from redisson_py.testing import Topology
from redisson_py.testing.owners import Flavor


class _Peers:
    """The module's JVMs, one per version, started on first use."""

    def __init__(self, log_dir: Path):
        self._log_dir = log_dir
        self._peers: dict[str, JavaPeer] = {}

    def get(self, version: str) -> JavaPeer:
        if version not in self._peers:
            self._peers[version] = JavaPeer(version, build(version), self._log_dir)
        return self._peers[version]

    def close(self) -> None:
        for peer in self._peers.values():
            peer.close()


@pytest.fixture(scope="module")
def java_peers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[_Peers]:
    peers = _Peers(tmp_path_factory.mktemp("java-peer"))
    yield peers
    peers.close()


@pytest.fixture(params=CELLS, ids=[f"{kind}-{version}" for kind, version in CELLS])
def cell(
    request: pytest.FixtureRequest,
    java_peers: _Peers,
    flavor: Flavor,
    tmp_path: Path,
) -> Cell:
    kind, version = request.param
    topology: Topology = request.getfixturevalue(f"{kind}_topology")
    text = mixed_yaml(topology)
    # Both clients read the same file: the config format is tested both ways too.
    java = java_peers.get(version).client(text)
    path = tmp_path / "redisson.yaml"
    path.write_text(text)
    py = flavor.create_client(Config.from_yaml(path, env=topology.environment()))
    return Cell(topology, version, path, java, py, flavor)
