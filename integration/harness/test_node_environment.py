"""Extra environment for chosen nodes (``start_topology(..., node_environment=...)``), shown
with what it was made for: a node under libfaketime whose wall clock a test jumps.

Redis rewrites its process title over its environment block, so ``/proc/PID/environ``
cannot show what a node got; its clock can: only a node started with the clock's
variables follows the jumps, also after a restart.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from redisson_py.testing import Node, Topology
from redisson_py.testing.faults.faketime import FakeClock, faketime_support

Factory = Callable[..., Topology]


@pytest.fixture
def clock(tmp_path: Path) -> Iterator[FakeClock]:
    reason = faketime_support()
    if reason is not None:
        pytest.skip(reason)
    with FakeClock(tmp_path, "master-0") as fake:
        yield fake


def seconds_ahead(node: Node) -> float:
    """How far ``node``'s wall clock (``TIME``) is ahead of ours."""
    before = time.time()
    seconds, micros = node.command("TIME")
    return float(seconds) + float(micros) / 1e6 - (before + time.time()) / 2


def shm_leftovers() -> set[str]:
    """libfaketime's objects in /dev/shm made by this process (the harness tags its own
    with its pid) or by libfaketime itself: not those of tests running beside this one
    in other processes (pytest-xdist's workers)."""
    ours = f"rpy-{os.getpid()}-"
    return {
        name
        for name in os.listdir("/dev/shm")
        if "faketime" in name and (ours in name or "rpy-" not in name)
    }


def test_a_node_on_a_fake_clock_jumps_and_keeps_its_environment_across_a_restart(
    topology_factory: Factory, clock: FakeClock
) -> None:
    before = shm_leftovers()
    topology = topology_factory(
        "master-replica",
        backend="process",
        replicas_per_master=1,
        node_environment={"master-0": clock.environment()},
    )
    master, replica = topology.node("master-0"), topology.node("replica-0-1")
    assert abs(seconds_ahead(master)) < 0.5

    master.command("SET", "lease", "held", "PX", 5000)
    clock.jump(10)
    assert 9.5 < seconds_ahead(master) < 10.5
    assert abs(seconds_ahead(replica)) < 0.5  # only the node given the variables
    assert master.command("GET", "lease") is None  # its 5 s TTL ran out at the jump

    clock.reset()
    assert abs(seconds_ahead(master)) < 0.5
    master.kill()
    master.restart()
    clock.jump(30)
    assert 29.5 < seconds_ahead(master) < 30.5  # the restarted process got them again
    clock.reset()

    topology.stop()  # nodes die by SIGKILL: libfaketime's destructors never run...
    assert shm_leftovers() == before  # ...and nothing of its was left in /dev/shm
