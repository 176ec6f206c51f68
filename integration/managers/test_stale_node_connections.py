"""A reply that says the node is no longer the one to write to (``READONLY`` from a
demoted master; ``MASTERDOWN`` and ``LOADING`` alike) closes the connection it came on
instead of pooling it, in every mode, and asks for a topology refresh at once.

Why it matters: a client configured with a managed service's primary endpoint
(``singleServerConfig`` on a host name the service re-points at a failover) reaches the
new master only through a new connection; a pooled one stays on the demoted node.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest

from redisson_py import Config
from redisson_py.errors import ServerRefusedError
from redisson_py.testing import Node, Topology
from redisson_py.testing.owners import Flavor

NAME = "stale-node-test"


def _writes_on(node: Node) -> list[dict[str, Any]]:
    """Our client's connections on ``node`` whose last command was a lock write (not the
    topology probes, which keep their own pooled connections)."""
    listed = node.client().client_list()
    return [c for c in listed if c.get("name") == NAME and c.get("cmd") in ("evalsha", "eval")]


@pytest.mark.parametrize("mode", ["single", "replicated"])
def test_a_readonly_reply_closes_its_connection(
    mode: str,
    flavor: Flavor,
    topology_factory: Callable[..., Topology],
    topology_config: Any,
    lock_name: str,
) -> None:
    topology = topology_factory("replicated")
    old = topology.master()
    if mode == "single":
        # What a managed service's primary endpoint looks like to a client.
        config = Config()
        config.use_single_server(old.address, retry_attempts=0)
    else:
        config = topology_config(topology)
        config.server_config.scan_interval = 60.0  # only the refusal can refresh
        config.server_config.retry_attempts = 0
    # No WAIT after the writes: a write's connection is then the one whose last command
    # is the write.
    config.check_lock_synced_slaves = False
    config.server_config.client_name = NAME
    client = flavor.create_client(config)
    owner = flavor.owner("alice")
    # One write, so one pooled connection on the master (a lease: no watchdog).
    assert owner(client.get_lock(lock_name + ":first").try_lock, 0.0, 30.0) is True
    assert len(_writes_on(old)) == 1, "the write's connection is pooled while it is master"
    lock = client.get_lock(lock_name)

    topology.failover(old)
    if mode == "single":
        with pytest.raises(ServerRefusedError) as refused:
            owner(lock.try_lock, 0.0, 30.0)
        assert refused.value.refusal == "READONLY"
    else:
        # The refusal refreshes the view at once; the call may land on the new master.
        try:
            owner(lock.try_lock, 0.0, 30.0)
        except ServerRefusedError as error:
            assert error.refusal == "READONLY"
        deadline = time.monotonic() + 2.0
        while client.connection_manager.view.masters[0].port == old.port:
            assert time.monotonic() < deadline, "no refresh after READONLY"
            time.sleep(0.01)
    # Closed at once, not given back to the pool.
    assert _writes_on(old) == []


def test_a_masterdown_reply_closes_its_connection(
    flavor: Flavor, topology_factory: Callable[..., Topology], lock_name: str
) -> None:
    # A replica that serves nothing while cut from its master, as a managed service's
    # endpoint can be during a failover: it answers MASTERDOWN.
    topology = topology_factory("replicated")
    master = topology.master()
    replica = topology.replicas_of(master)[0]
    replica.command("CONFIG", "SET", "replica-serve-stale-data", "no")
    config = Config()
    config.use_single_server(replica.address, retry_attempts=0, client_name=NAME)
    config.check_lock_synced_slaves = False
    client = flavor.create_client(config)
    owner = flavor.owner("alice")
    lock = client.get_lock(lock_name)
    # A read while the master is up: the lock calls' connection is open and pooled, so
    # the refusal below comes as a reply on it (not from a new connection's handshake).
    assert owner(lock.is_locked) is False
    master.kill()
    deadline = time.monotonic() + 10.0
    while replica.info("replication").get("master_link_status") != "down":
        assert time.monotonic() < deadline, "the replica never saw its master go"
        time.sleep(0.05)
    with pytest.raises(ServerRefusedError) as refused:
        owner(lock.try_lock, 0.0, 30.0)
    assert refused.value.refusal == "MASTERDOWN"
    assert _writes_on(replica) == []
