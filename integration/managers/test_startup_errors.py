"""What a client says when it cannot start: every address tried, and why."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from redisson_py import Config, ConnectError
from redisson_py.testing import Topology
from redisson_py.testing.owners import Flavor


def test_an_unreachable_server_is_named_with_its_reason(
    flavor: Flavor, unused_port: Callable[[], int]
) -> None:
    port = unused_port()
    config = Config()
    config.use_single_server(
        address=f"redis://127.0.0.1:{port}", retry_attempts=0, connect_timeout=1.0
    )
    with pytest.raises(ConnectError) as caught:
        flavor.create_client(config)
    assert f"redis://127.0.0.1:{port}" in str(caught.value)
    assert "refused" in str(caught.value).lower()
    assert list(caught.value.attempts) == [f"redis://127.0.0.1:{port}"]


def test_every_sentinel_tried_is_listed(flavor: Flavor, unused_port: Callable[[], int]) -> None:
    ports = [unused_port(), unused_port()]
    config = Config()
    config.use_sentinel_servers(
        master_name="mymaster",
        sentinel_addresses=[f"redis://127.0.0.1:{p}" for p in ports],
        connect_timeout=1.0,
    )
    with pytest.raises(ConnectError) as caught:
        flavor.create_client(config)
    for port in ports:
        assert f"redis://127.0.0.1:{port}" in str(caught.value)


def test_one_answering_sentinel_is_refused_unless_allowed(
    flavor: Flavor, sentinel_topology: Topology, lock_name: str, unused_port: Callable[[], int]
) -> None:
    dead = unused_port()
    config = Config()
    section = config.use_sentinel_servers(
        master_name=sentinel_topology.master_name,
        sentinel_addresses=[sentinel_topology.sentinels[0].address, f"redis://127.0.0.1:{dead}"],
        sentinels_discovery=False,
        connect_timeout=1.0,
    )
    with pytest.raises(ConnectError, match="only 1 sentinel"):
        flavor.create_client(config)
    section.check_sentinels_list = False
    client = flavor.create_client(config)
    owner = flavor.owner("owner")
    assert owner(client.get_lock(lock_name).try_lock) is True
    owner(client.get_lock(lock_name).unlock)


def test_an_unknown_master_name_is_said(flavor: Flavor, sentinel_topology: Topology) -> None:
    config = Config()
    config.use_sentinel_servers(
        master_name="nosuchmaster",
        sentinel_addresses=[s.address for s in sentinel_topology.sentinels],
    )
    with pytest.raises(ConnectError, match="nosuchmaster"):
        flavor.create_client(config)


def test_uncovered_slots_stop_the_start_unless_allowed(
    flavor: Flavor, topology_factory: Callable[..., Topology], lock_name: str
) -> None:
    topology = topology_factory("cluster")
    master = topology.masters()[0]
    first, _ = topology.slots_of(master)[0]
    # DELSLOTS (not 7.0's DELSLOTSRANGE): the suite also runs on Redis 6.2.
    master.client().execute_command("CLUSTER", "DELSLOTS", *range(first, first + 10))
    config = Config.from_yaml(topology.redisson_yaml())
    with pytest.raises(ConnectError, match=f"uncovered: {first}-{first + 9}"):
        flavor.create_client(config)
    config.server_config.check_slots_coverage = False
    flavor.create_client(config)
