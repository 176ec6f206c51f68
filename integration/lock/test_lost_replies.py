"""A reply lost after the server executed the command: the retry must not count twice.

A loopback proxy (redisson_py.testing.faults.proxy) forwards the client's connections to the
single server and cuts one just after the server executed the chosen script, so the
client sees a connection error and retries on a fresh connection.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from redisson_py import Config
from redisson_py.config import ConstantDelay
from redisson_py.core import scripts
from redisson_py.testing import Topology
from redisson_py.testing.faults.proxy import ReplyDropper
from redisson_py.testing.owners import Flavor


@pytest.fixture
def proxy(single_topology: Topology) -> Iterator[ReplyDropper]:
    with ReplyDropper(single_topology.master().port) as dropper:
        yield dropper


def client_through(flavor: Flavor, proxy: ReplyDropper) -> object:
    config = Config()
    section = config.use_single_server(address=f"redis://127.0.0.1:{proxy.port}")
    section.retry_delay = ConstantDelay(0.05)
    return flavor.create_client(config)


def test_a_retried_release_releases_once(
    flavor: Flavor, proxy: ReplyDropper, single_topology: Topology, lock_name: str
) -> None:
    lock = client_through(flavor, proxy).get_lock(lock_name)  # type: ignore[attr-defined]
    alice, bob = flavor.owner("alice"), flavor.owner("bob")
    alice(lock.lock)
    alice(lock.lock)
    proxy.drop_reply_of(scripts.RELEASE.sha)
    alice(lock.unlock)  # reply lost, retried with the same request id
    assert proxy.dropped == 1
    assert alice(lock.hold_count) == 1  # not 0: the release was applied once
    assert bob(lock.try_lock) is False
    proxy.drop_reply_of(scripts.RELEASE.sha)
    alice(lock.unlock)
    assert proxy.dropped == 2
    assert single_topology.master().client().exists(lock_name) == 0
    assert bob(lock.try_lock) is True
    bob(lock.unlock)


def test_a_retried_acquire_counts_once(
    flavor: Flavor, proxy: ReplyDropper, single_topology: Topology, lock_name: str
) -> None:
    lock = client_through(flavor, proxy).get_lock(lock_name)  # type: ignore[attr-defined]
    alice = flavor.owner("alice")
    proxy.drop_reply_of(scripts.ACQUIRE.sha)
    alice(lock.lock)
    assert proxy.dropped == 1
    assert alice(lock.hold_count) == 1  # not 2
    alice(lock.unlock)
    assert single_topology.master().client().exists(lock_name) == 0
