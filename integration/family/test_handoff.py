"""Handing a hold to another client or process: ``lock.export_hold()`` and
``client.adopt_hold(token)`` (docs/handoff.md), sync and asyncio, single and cluster.

What a user relies on: after adoption the adopter holds the lock (its watchdog renews
it past the watchdog timeout, its unlock frees it for others), the exporter neither
renews nor releases it, the hash field stays Redisson's ``<client id>:<owner id>``,
and whatever goes wrong (a token adopted twice, a hold gone, the server frozen between
export and adoption) ends in a typed error and never in two holders.
"""

from __future__ import annotations

import json
import select
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from redisson_py import (
    ArgumentError,
    Config,
    HandOffError,
    LockNotOwnedError,
    RedissonError,
    current_owner_id,
)
from redisson_py import asyncio as aio
from redisson_py.config import ConstantDelay
from redisson_py.testing import Topology
from redisson_py.testing.owners import Flavor

WATCHDOG = 1.5

COMMAND_TIMEOUT = 0.5
"""The frozen-server tests' command timeout (seconds)."""

SLACK = 1.0
"""Allowance on top of a promised bound on a loaded 2-core machine."""


def _frozen_config(topology: Topology, watchdog: float) -> Config:
    config = Config.from_yaml(topology.redisson_yaml())
    config.lock_watchdog_timeout = watchdog
    server = config.server_config
    server.timeout = COMMAND_TIMEOUT
    server.retry_attempts = 2
    server.retry_delay = ConstantDelay(0.2)
    return config


def _owner_id(flavor: Flavor) -> Callable[[], int]:
    """The function that gives the calling owner's id (thread or task)."""
    return current_owner_id if flavor.name == "sync" else aio.current_owner_id


def _fields(flavor: Flavor, client: Any, name: str) -> set[str]:
    """The lock hash's fields, read with a plain redis-py client."""
    raw = flavor.run(client.redis(name).hkeys(name))
    return {k.decode() if isinstance(k, bytes) else k for k in raw}


def test_adopter_holds_renews_and_releases_and_exporter_lets_go(
    flavor: Flavor, make_client: Callable[..., Any], lock_name: str
) -> None:
    exporter = make_client(lock_watchdog_timeout=WATCHDOG)
    adopter = make_client(lock_watchdog_timeout=WATCHDOG)
    lock = exporter.get_lock(lock_name)
    alice, bob, carol = flavor.owner("alice"), flavor.owner("bob"), flavor.owner("carol")
    alice(lock.lock)
    field = f"{exporter.id}:{alice(_owner_id(flavor))}"
    token = alice(lock.export_hold)
    data = json.loads(token)
    assert data["client"] == exporter.id and data["lock"] == lock_name
    assert data["kind"] == "reentrant" and data["lease"] is None
    assert f"{data['client']}:{data['owner']}" == field
    assert 0 < data["ttl_ms"] <= WATCHDOG * 1000
    assert "password" not in token.lower()

    adopted = bob(adopter.adopt_hold, token)
    # The adopter holds it past several watchdog timeouts: its watchdog renews it.
    time.sleep(2.5 * WATCHDOG)
    assert bob(adopted.is_held_by_current_thread) is True
    assert carol(exporter.get_lock(lock_name).try_lock) is False
    assert field in _fields(flavor, adopter, lock_name)  # Redisson's wire: the same field
    # The exporter forgot it: its owner's unlock raises, and touches nothing.
    with pytest.raises(LockNotOwnedError, match="exported"):
        alice(lock.unlock)
    with pytest.raises(HandOffError) as refused:
        alice(lock.try_lock)
    assert refused.value.reason == "exported"
    bob(adopted.unlock)
    assert carol(exporter.get_lock(lock_name).try_lock) is True
    carol(exporter.get_lock(lock_name).unlock)
    # Once released, the adopted view takes nothing anew; the exporter's owner may.
    with pytest.raises(HandOffError) as again:
        bob(adopted.try_lock)
    assert again.value.reason == "adopted-released"
    assert alice(lock.try_lock) is True
    alice(lock.unlock)


def test_a_token_is_adopted_once(
    flavor: Flavor, make_client: Callable[..., Any], lock_name: str
) -> None:
    """A token copied to two adopters (or adopted twice) makes one holder: the second
    adoption is refused, "gone"."""
    exporter, first, second = (make_client(lock_watchdog_timeout=WATCHDOG) for _ in range(3))
    alice, bob, carol = flavor.owner("alice"), flavor.owner("bob"), flavor.owner("carol")
    alice(exporter.get_lock(lock_name).lock)
    token = alice(exporter.get_lock(lock_name).export_hold)
    racing = [bob.start(first.adopt_hold, token), carol.start(second.adopt_hold, token)]
    outcomes: list[Any] = []
    for pending in racing:
        try:
            outcomes.append(pending.result(timeout=30))
        except HandOffError as error:
            outcomes.append(error)
    refused = [o for o in outcomes if isinstance(o, HandOffError)]
    assert len(refused) == 1 and refused[0].reason == "gone", outcomes
    assert lock_name in str(refused[0])
    winner = next(o for o in outcomes if not isinstance(o, HandOffError))
    with pytest.raises(HandOffError):
        bob(first.adopt_hold, token)
    flavor.owner("dave")(winner.unlock)


def test_a_leased_hold_keeps_its_lease_end(
    flavor: Flavor, make_client: Callable[..., Any], lock_name: str
) -> None:
    """A leased hold is adopted with its lease: not renewed, it expires when the lease
    ends, and the adopter's unlock then says so."""
    exporter, adopter = make_client(), make_client()
    alice, bob, carol = flavor.owner("alice"), flavor.owner("bob"), flavor.owner("carol")
    lock = exporter.get_lock(lock_name)
    assert alice(lock.try_lock, 0, 2.0) is True
    token = alice(lock.export_hold)
    assert json.loads(token)["lease"] == 2.0
    adopted = bob(adopter.adopt_hold, token)
    assert bob(adopted.is_held_by_current_thread) is True
    assert 0 < bob(adopted.remain_time_to_live) <= 2.0
    assert carol(exporter.get_lock(lock_name).try_lock, 5.0) is True  # the lease ran out
    with pytest.raises(LockNotOwnedError):
        bob(adopted.unlock)
    carol(exporter.get_lock(lock_name).unlock)


def test_refusals_are_typed_and_leave_the_hold_where_it_was(
    flavor: Flavor, make_client: Callable[..., Any], lock_name: str
) -> None:
    client = make_client(lock_watchdog_timeout=WATCHDOG)
    adopter = make_client(lock_watchdog_timeout=WATCHDOG)
    alice, bob = flavor.owner("alice"), flavor.owner("bob")
    lock = client.get_lock(lock_name)
    with pytest.raises(HandOffError) as nothing:
        alice(lock.export_hold)
    assert nothing.value.reason == "not-held" and lock_name in str(nothing.value)

    # A MultiLock member: the group's hold is not a member's to hand away.
    a, b = client.get_lock(f"{lock_name}:a"), client.get_lock(f"{lock_name}:b")
    group = flavor.multilock(a, b)
    alice(group.lock)
    with pytest.raises(HandOffError) as member:
        alice(a.export_hold)
    assert member.value.reason == "group"
    alice(group.unlock)

    # A write hold whose owner also holds the read lock.
    rw = client.get_read_write_lock(f"{lock_name}:rw")
    alice(rw.write_lock().lock)
    alice(rw.read_lock().lock)
    with pytest.raises(HandOffError) as inside:
        alice(rw.write_lock().export_hold)
    assert inside.value.reason == "readers-inside"
    assert alice(rw.write_lock().is_held_by_current_thread) is True  # still alice's
    alice(rw.read_lock().unlock)
    token = alice(rw.write_lock().export_hold)  # alone, the write hold goes
    adopted = bob(adopter.adopt_hold, token)
    assert json.loads(token)["kind"] == "write"
    assert bob(adopted.is_held_by_current_thread) is True
    bob(adopted.unlock)
    assert bob(adopter.get_read_write_lock(f"{lock_name}:rw").write_lock().try_lock) is True

    # Not a token at all.
    for junk in ("", "{}", "not json", json.dumps({"type": "redisson-py-hold", "v": 9})):
        with pytest.raises(ArgumentError):
            bob(adopter.adopt_hold, junk)


def test_a_client_may_adopt_its_own_export(
    flavor: Flavor, make_client: Callable[..., Any], lock_name: str
) -> None:
    """Export and adoption in one client (a hand-off between its threads or tasks that
    outlives the exporter): the adopted lock renews and releases as any other."""
    client = make_client(lock_watchdog_timeout=WATCHDOG)
    alice, bob, carol = flavor.owner("alice"), flavor.owner("bob"), flavor.owner("carol")
    alice(client.get_lock(lock_name).lock)
    adopted = bob(client.adopt_hold, alice(client.get_lock(lock_name).export_hold))
    time.sleep(2 * WATCHDOG)
    assert carol(client.get_lock(lock_name).try_lock) is False
    bob(adopted.unlock)
    assert carol(client.get_lock(lock_name).try_lock) is True
    carol(client.get_lock(lock_name).unlock)


def test_a_token_not_adopted_in_time_is_gone(
    flavor: Flavor, make_client: Callable[..., Any], lock_name: str
) -> None:
    """The window: the exporter stops renewing at export, so a token adopted after the
    hold's TTL finds nothing, and the lock was free for others meanwhile."""
    exporter = make_client(lock_watchdog_timeout=1.0)
    adopter = make_client(lock_watchdog_timeout=1.0)
    alice, bob, carol = flavor.owner("alice"), flavor.owner("bob"), flavor.owner("carol")
    alice(exporter.get_lock(lock_name).lock)
    token = alice(exporter.get_lock(lock_name).export_hold)
    assert carol(adopter.get_lock(lock_name).try_lock, 5.0) is True  # expired unrenewed
    carol(adopter.get_lock(lock_name).unlock)
    with pytest.raises(HandOffError) as late:
        bob(adopter.adopt_hold, token)
    assert late.value.reason == "gone"


def test_server_frozen_between_export_and_adoption_makes_no_two_holders(
    flavor: Flavor, topology_factory: Callable[..., Topology], lock_name: str
) -> None:
    """The worst moment: the server freezes after the export and before the adoption.
    The adoption fails with one of our errors within its retry budget, and then nobody
    holds the lock: it is free for a third client once the window has passed."""
    topology = topology_factory("single")  # its own: this test freezes its node
    watchdog = 3.0
    exporter = flavor.create_client(_frozen_config(topology, watchdog))
    adopter = flavor.create_client(_frozen_config(topology, watchdog))
    third = flavor.create_client(_frozen_config(topology, watchdog))
    alice, bob, carol = flavor.owner("alice"), flavor.owner("bob"), flavor.owner("carol")
    lock = exporter.get_lock(lock_name)
    alice(lock.lock)
    assert carol(third.get_lock(lock_name).is_locked) is True  # connections warm
    token = alice(lock.export_hold)
    exported = time.monotonic()
    master = topology.master()
    master.pause()
    try:
        started = time.monotonic()
        with pytest.raises(RedissonError) as failed:
            bob(adopter.adopt_hold, token)
        elapsed = time.monotonic() - started
    finally:
        master.resume()
    # (retry attempts + 1) command timeouts and the delays between them.
    assert elapsed <= 3 * COMMAND_TIMEOUT + 2 * 0.2 + SLACK, elapsed
    assert not isinstance(failed.value, HandOffError)  # unreachable, not refused
    assert lock_name in str(failed.value)
    # Nobody holds it: the exporter let go at export, the adopter adopted nothing
    # (whatever the server ran once thawed expires with the TTL, renewed by no one).
    with pytest.raises(LockNotOwnedError):
        alice(lock.unlock)
    assert carol(third.get_lock(lock_name).try_lock, 3 * watchdog) is True
    freed = time.monotonic() - exported
    print(
        f"\n{flavor.name}: adoption failed after {elapsed:.2f} s, free {freed:.2f} s after export"
    )
    assert freed <= elapsed + watchdog + SLACK + 1.0, freed
    with pytest.raises(HandOffError):
        bob(adopter.adopt_hold, token)
    carol(third.get_lock(lock_name).unlock)


def test_server_frozen_during_the_export_leaves_the_hold_with_the_exporter(
    flavor: Flavor, topology_factory: Callable[..., Topology], lock_name: str
) -> None:
    """An export that cannot reach the server raises, hands out no token, and the
    hold stays its owner's, renewed once the server is back."""
    topology = topology_factory("single")
    watchdog = 3.0
    exporter = flavor.create_client(_frozen_config(topology, watchdog))
    third = flavor.create_client(_frozen_config(topology, watchdog))
    alice, carol = flavor.owner("alice"), flavor.owner("carol")
    lock = exporter.get_lock(lock_name)
    alice(lock.lock)
    master = topology.master()
    master.pause()
    try:
        started = time.monotonic()
        with pytest.raises(RedissonError) as failed:
            alice(lock.export_hold)
        elapsed = time.monotonic() - started
    finally:
        master.resume()
    assert not isinstance(failed.value, HandOffError)
    assert elapsed <= 3 * COMMAND_TIMEOUT + 2 * 0.2 + SLACK, elapsed
    print(f"\n{flavor.name}: export failed after {elapsed:.2f} s ({type(failed.value).__name__})")
    time.sleep(watchdog)  # past the TTL the export would have left
    assert carol(third.get_lock(lock_name).try_lock) is False
    alice(lock.unlock)
    assert carol(third.get_lock(lock_name).try_lock) is True
    carol(third.get_lock(lock_name).unlock)


def test_server_killed_between_export_and_adoption(
    flavor: Flavor, topology_factory: Callable[..., Topology], lock_name: str
) -> None:
    """The server dies after the export: the adoption fails with one of our errors
    within its retry budget; restarted (empty: no persistence in the harness), it has
    nothing to adopt, and the lock is free."""
    topology = topology_factory("single")
    exporter = flavor.create_client(_frozen_config(topology, 3.0))
    adopter = flavor.create_client(_frozen_config(topology, 3.0))
    alice, bob = flavor.owner("alice"), flavor.owner("bob")
    alice(exporter.get_lock(lock_name).lock)
    token = alice(exporter.get_lock(lock_name).export_hold)
    master = topology.master()
    master.kill()
    started = time.monotonic()
    with pytest.raises(RedissonError) as failed:
        bob(adopter.adopt_hold, token)
    elapsed = time.monotonic() - started
    assert elapsed <= 3 * COMMAND_TIMEOUT + 2 * 0.2 + SLACK, elapsed
    print(f"\n{flavor.name}: adoption failed after {elapsed:.2f} s ({type(failed.value).__name__})")
    assert lock_name in str(failed.value)
    master.restart()
    with pytest.raises(HandOffError) as gone:
        bob(adopter.adopt_hold, token)
    assert gone.value.reason == "gone"
    assert bob(adopter.get_lock(lock_name).try_lock, 5.0) is True
    bob(adopter.get_lock(lock_name).unlock)


ADOPTER = textwrap.dedent(
    """
    import asyncio, sys
    from redisson_py import Config, Redisson
    from redisson_py import asyncio as aio

    config = Config.from_yaml(open(sys.argv[1]).read())

    def sync_main():
        client = Redisson.create(config)
        print("ready", flush=True)
        lock = client.adopt_hold(sys.stdin.readline().strip())
        print("adopted", flush=True)
        sys.stdin.readline()
        lock.unlock()
        print("released", flush=True)
        client.shutdown()

    async def async_main():
        client = await aio.Redisson.create(config)
        print("ready", flush=True)
        token = await asyncio.to_thread(sys.stdin.readline)
        lock = await client.adopt_hold(token.strip())
        print("adopted", flush=True)
        await asyncio.to_thread(sys.stdin.readline)
        await lock.unlock()
        print("released", flush=True)
        await client.shutdown()

    sync_main() if sys.argv[2] == "sync" else asyncio.run(async_main())
    """
)


def _line(process: subprocess.Popen[str], timeout: float) -> str:
    assert process.stdout is not None
    ready, _, _ = select.select([process.stdout], [], [], timeout)
    assert ready, f"the adopter printed nothing within {timeout} s"
    return process.stdout.readline().strip()


def test_hand_off_to_another_process_survives_the_exporters_shutdown(
    flavor: Flavor,
    family_topology: Topology,
    topology_config: Any,
    tmp_path: Path,
    lock_name: str,
) -> None:
    """Export in this process, adopt in a child: the child holds the lock past several
    watchdog timeouts after the exporter shut down, and its unlock frees it."""
    config = topology_config(family_topology, lock_watchdog_timeout=WATCHDOG)
    path = tmp_path / "redisson.yaml"
    path.write_text(config.to_yaml())
    exporter = flavor.create_client(config)
    other = flavor.create_client(config)
    alice, carol = flavor.owner("alice"), flavor.owner("carol")
    alice(exporter.get_lock(lock_name).lock)
    child = subprocess.Popen(
        [sys.executable, "-c", ADOPTER, str(path), flavor.name],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdin is not None
        # The child connects first: the adoption window is one watchdog timeout (1.5 s
        # here), less than an interpreter's start on a loaded machine.
        assert _line(child, 60) == "ready"
        token = alice(exporter.get_lock(lock_name).export_hold)
        child.stdin.write(token + "\n")
        child.stdin.flush()
        assert _line(child, 30) == "adopted"
        flavor.run(exporter.shutdown())  # an exported hold is not the exporter's to free
        time.sleep(2.5 * WATCHDOG)
        assert carol(other.get_lock(lock_name).try_lock) is False
        child.stdin.write("release\n")
        child.stdin.flush()
        assert _line(child, 30) == "released"
        assert carol(other.get_lock(lock_name).try_lock, 5.0) is True
        carol(other.get_lock(lock_name).unlock)
        assert child.wait(timeout=30) == 0
    finally:
        child.kill()
        child.wait(timeout=10)


def test_adoption_latency(flavor: Flavor, make_client: Callable[..., Any], lock_name: str) -> None:
    """How long an adoption takes (one round trip), and an export: printed for the
    docs' figures; asserted only against a generous bound."""
    exporter, adopter = make_client(), make_client()
    alice, bob = flavor.owner("alice"), flavor.owner("bob")
    exports: list[float] = []
    adoptions: list[float] = []
    for index in range(30):
        lock = exporter.get_lock(f"{lock_name}:{index}")
        alice(lock.lock)
        started = time.perf_counter()
        token = alice(lock.export_hold)
        exports.append(time.perf_counter() - started)
        started = time.perf_counter()
        adopted = bob(adopter.adopt_hold, token)
        adoptions.append(time.perf_counter() - started)
        bob(adopted.unlock)
    exports.sort()
    adoptions.sort()
    print(
        f"\n{flavor.name}: export median {exports[15] * 1000:.2f} ms,"
        f" adoption median {adoptions[15] * 1000:.2f} ms, p90 {adoptions[27] * 1000:.2f} ms"
    )
    assert adoptions[15] < 0.5
