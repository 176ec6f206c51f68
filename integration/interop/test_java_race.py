"""The chaos suite's replication race (``redisson_py.chaos.race``) with a mixed fleet, replica
sync on (``checkLockSyncedSlaves``, both clients' default): a master with one replica
grants lock X to client A while the replica is frozen and its link cut, then dies; the
replica is promoted and client B tries X. A is Java and B Python, then the other way
round. A double grant is A believing it holds X (its acquire returned success) while B
is granted it too."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from java_peer import JAVA_PEER_VERSIONS, NEWEST, JavaError
from mixed_fleet import mixed_yaml

from redisson_py import Config, NoSyncedReplicasError, Redisson
from redisson_py.chaos.common import fresh_topology, master_of, promote_replica_of
from redisson_py.testing import Topology


@pytest.fixture
def race_topology(redis_backend: str) -> Iterator[Topology]:
    """A sentinel topology of its own (a master, one replica, three sentinels) to break."""
    with fresh_topology("sentinel", redis_backend) as topology:
        yield topology


def freeze_replica_and_take(topology: Topology, name: str, take: Any) -> tuple[Any, Any]:
    """Freeze the replica, cut its link, run ``take()`` on the master, kill the master and
    promote the replica: ``take()``'s result and the exception it raised (or None)."""
    master = master_of(topology, name)
    replica = topology.replicas_of(master)[0]
    outcome, error = None, None
    replica.pause()
    try:
        master.command("CLIENT", "KILL", "TYPE", "replica")
        try:
            outcome = take()
        except (JavaError, NoSyncedReplicasError) as refusal:
            error = refusal
        master.kill()
    finally:
        replica.resume()
    promote_replica_of(topology, master)
    return outcome, error


def test_a_python_holder_and_a_java_contender(java_peers: Any, race_topology: Topology) -> None:
    name = f"mixed:race:{uuid.uuid4().hex[:10]}"
    yaml_text = mixed_yaml(race_topology)
    java = java_peers.get(NEWEST).fresh_client(yaml_text)
    with Redisson.create(Config.from_yaml(yaml_text)) as python:
        lock = python.get_lock(name)
        granted, refusal = freeze_replica_and_take(race_topology, name, lambda: lock.try_lock(0))
        # Ours refuses a grant the replica did not acknowledge, and says so.
        assert granted is None and isinstance(refusal, NoSyncedReplicasError)
        assert java.get("lock", name).call("tryLock", 5000, -1, thread="b") is True
    java.shutdown()


@pytest.mark.parametrize("version", JAVA_PEER_VERSIONS)
def test_a_java_holder_is_protected_by_redissons_rule_only(
    java_peers: Any, race_topology: Topology, version: str
) -> None:
    """Redisson waits (WAIT) only for the replicas the master reports connected, and the
    cut replica is not: the Java holder is granted X unreplicated, and our client, after
    the failover, is granted X too. redisson-py cannot protect a Java holder; this test
    shows the hazard stays Redisson's (docs/migration/redisson.md, "Replica sync is
    stricter"), as ``test_the_race_is_reproduced_without_replica_sync`` shows ours with
    sync off."""
    name = f"mixed:race:{uuid.uuid4().hex[:10]}"
    yaml_text = mixed_yaml(race_topology)
    java = java_peers.get(version).fresh_client(yaml_text)
    granted, refusal = freeze_replica_and_take(
        race_topology, name, lambda: java.get("lock", name).call("tryLock", 0, -1, thread="a")
    )
    assert (granted, refusal) == (True, None)  # no error: the Java holder believes it
    with Redisson.create(Config.from_yaml(yaml_text)) as python:
        assert python.get_lock(name).try_lock(5.0) is True  # a second holder
    java.shutdown()
