"""A slot moving between cluster masters: ASK redirects while it migrates, MOVED after.

A multi-key script (a release: lock, channel, latch) on the importing node gets TRYAGAIN
while some of its keys are missing, which lasts until the slot has moved; the release
retries (retryAttempts x retryDelay) as any refused write does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from redisson_py.core.routing.naming import key_slot
from redisson_py.testing import Node, Topology
from redisson_py.testing.owners import Flavor


def _asking_exists(node: Node, key: str) -> int:
    # An importing node answers for the slot only after ASKING, on the same connection.
    pipe = node.client().pipeline(transaction=False)
    pipe.execute_command("ASKING")
    pipe.exists(key)
    return int(pipe.execute()[1])


def test_locks_follow_ask_then_moved(
    flavor: Flavor, topology_factory: Callable[..., Topology], topology_config: Any, lock_name: str
) -> None:
    topology = topology_factory("cluster")
    client = flavor.create_client(topology_config(topology))
    owner = flavor.owner("owner")
    slot = key_slot(lock_name)
    source = topology.master_for_slot(slot)
    target = next(m for m in topology.masters() if m.port != source.port)
    source_id = source.client().execute_command("CLUSTER", "MYID")
    target_id = target.client().execute_command("CLUSTER", "MYID")
    target.client().execute_command("CLUSTER", "SETSLOT", slot, "IMPORTING", source_id)
    source.client().execute_command("CLUSTER", "SETSLOT", slot, "MIGRATING", target_id)

    lock = client.get_lock(lock_name)
    # The key does not exist on the source: it answers ASK, the lock is made on the target.
    assert owner(lock.try_lock, 0.0, 30.0) is True
    assert source.client().execute_command("CLUSTER", "COUNTKEYSINSLOT", slot) == 0
    assert _asking_exists(target, lock_name) == 1
    assert owner(lock.hold_count) == 1  # a read is redirected the same way
    # (A release now would get TRYAGAIN: the target refuses a multi-key script while
    # some of its keys are still missing mid-migration, until the slot has moved.)

    # The migration ends: every master learns the slot's new owner; the client, still
    # routing to the source, gets MOVED and follows it.
    for master in topology.masters():
        master.client().execute_command("CLUSTER", "SETSLOT", slot, "NODE", target_id)
    owner(lock.unlock)
    assert target.client().exists(lock_name) == 0
    assert owner(lock.try_lock, 0.0, 30.0) is True
    assert target.client().exists(lock_name) == 1
    assert owner(lock.is_held_by_current_thread) is True
    owner(lock.unlock)
