"""A forked child inherits neither its parent's holds nor its renewals."""

from __future__ import annotations

import multiprocessing
import multiprocessing.connection
from typing import Any

from redisson_py import LockNotOwnedError, Redisson
from redisson_py.testing import Topology


def _child(
    client: Redisson, name: str, config: Any, out: multiprocessing.connection.Connection
) -> None:
    lock = client.get_lock(name)
    report: dict[str, object] = {
        "child_id_differs": client.id,
        "holds_inherited": len(client._state.holds),
        "held_by_child": lock.is_held_by_current_thread(),
    }
    try:
        lock.unlock()
        report["unlock"] = "released the parent's lock"
    except LockNotOwnedError:
        report["unlock"] = "refused"
    with Redisson.create(config) as fresh:
        report["fresh_client_gets_it"] = fresh.get_lock(name).try_lock(0.0)
    out.send(report)


def test_a_forked_child_holds_nothing(
    single_topology: Topology, topology_config: Any, lock_name: str
) -> None:
    config = topology_config(single_topology)
    with Redisson.create(config) as client:
        lock = client.get_lock(lock_name)
        lock.lock()  # watchdog hold, renewed by the parent only
        receive, send = multiprocessing.Pipe(duplex=False)
        child = multiprocessing.get_context("fork").Process(
            target=_child, args=(client, lock_name, config, send)
        )
        child.start()
        child.join(timeout=60)
        report = receive.recv()
        assert child.exitcode == 0
        assert report["child_id_differs"] != client.id
        assert report["holds_inherited"] == 0
        assert report["held_by_child"] is False
        assert report["unlock"] == "refused"
        assert report["fresh_client_gets_it"] is False
        assert lock.is_held_by_current_thread() is True  # the parent's hold is intact
        lock.unlock()
