"""A node that answers but refuses (NOREPLICAS, BUSY, READONLY, LOADING): the waits
retry the refusal to their deadline and then raise ``ServerRefusedError`` naming the
lock, the node and the refusal; a wait that sees the refusal end gets the lock; an
``unlock()`` retries it through its retries; a key of another type still says so
(WRONGTYPE, with its hint).

Each test breaks a topology of its own (``topology_factory``), but READONLY's, which
only points a client at a replica of the shared master-replica topology.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import redis

from redisson_py import Config, ConnectError, RedissonError, ServerRefusedError
from redisson_py.config import ConstantDelay
from redisson_py.testing import Node, Topology
from redisson_py.testing.owners import Flavor

COMMAND_TIMEOUT = 1.0
"""The config's ``timeout`` here (seconds): a wait ends within its time plus this."""

RETRY_DELAY = 0.2

SLACK = 0.5
"""Allowance on top of a promised bound for thread hand-offs on a loaded 2-core box."""


def _config(source: Topology | str, **section: Any) -> Config:
    """A config for ``source``'s topology, or for one server at the address ``source``,
    with ``section`` settings (a grant waits 0.5 s at most for its replicas)."""
    if isinstance(source, str):
        config = Config()
        config.use_single_server(address=source)
    else:
        config = Config.from_yaml(source.redisson_yaml())
    config.slaves_sync_timeout = 0.5
    server = config.server_config
    server.timeout = section.pop("timeout", COMMAND_TIMEOUT)
    server.retry_delay = ConstantDelay(RETRY_DELAY)
    for key, value in section.items():
        setattr(server, key, value)
    return config


def _wait_until(predicate: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "the server did not get there in time"
        time.sleep(0.02)


def _refuses(node: Node, code: str) -> bool:
    """Whether ``node`` refuses a write with ``code`` (a write in a script, as a lock's)."""
    try:
        node.command("EVAL", "return redis.call('set', KEYS[1], '1')", 1, "probe:refusal")
        # Refused too once the state set in meanwhile (a busy script past the threshold).
        node.command("DEL", "probe:refusal")
    except redis.ResponseError as error:
        return code in str(error)
    return False


def _timed(flavor: Flavor, call: Any, *args: Any) -> tuple[BaseException | Any, float]:
    """``call(*args)``'s result or error, and how long it took."""
    started = time.monotonic()
    try:
        outcome: Any = flavor.run(call(*args))
    except Exception as error:
        outcome = error
    return outcome, time.monotonic() - started


def _assert_refused(error: Any, code: str, lock_name: str, node: Node) -> ServerRefusedError:
    assert isinstance(error, ServerRefusedError), repr(error)
    assert isinstance(error, ConnectError)  # what such failures were raised as before
    assert (error.refusal, error.lock_name, error.address) == (code, lock_name, node.address)
    assert error.transient
    message = str(error)
    assert f"lock {lock_name!r}" in message and node.address in message and code in message
    assert error.text in message and "something other than" not in message
    return error


# --- NOREPLICAS: min-replicas-to-write on a master whose replica is gone -----------------


@pytest.fixture
def guarded_master(topology_factory: Callable[..., Topology]) -> Iterator[tuple[Topology, Node]]:
    """A master-replica topology (one replica) whose master takes writes only while its
    replica is connected (``min-replicas-to-write 1``); the replica is resumed after."""
    topology = topology_factory("master-replica", replicas_per_master=1)
    master = topology.master()
    master.command("CONFIG", "SET", "min-replicas-to-write", "1")
    _wait_until(lambda: not _refuses(master, "NOREPLICAS"))  # the replica is in sync
    yield topology, master
    for node in topology.data_nodes:
        if node.is_paused():
            node.resume()


def _cut_replica(topology: Topology, master: Node) -> Node:
    """Pause the replica and drop its link: the master refuses writes from now on."""
    [replica] = [node for node in topology.data_nodes if node is not master]
    replica.pause()
    master.command("CLIENT", "KILL", "TYPE", "replica")
    _wait_until(lambda: _refuses(master, "NOREPLICAS"))
    return replica


def _evalsha_calls(master: Node) -> int:
    stats = master.info("commandstats")
    return sum(
        int(dict(part.split("=") for part in stats.get(name, "calls=0").split(","))["calls"])
        for name in ("cmdstat_evalsha", "cmdstat_eval")
    )


def test_a_wait_retries_noreplicas_to_its_deadline_then_names_it(
    flavor: Flavor, guarded_master: tuple[Topology, Node], lock_name: str
) -> None:
    topology, master = guarded_master
    client = flavor.create_client(_config(topology))
    lock = client.get_lock(lock_name)
    alice = flavor.owner("alice")
    assert alice(lock.try_lock, 0.0) is True  # scripts loaded, a connection warm
    alice(lock.unlock)
    semaphore = client.get_semaphore(f"{lock_name}:permits")
    assert flavor.run(semaphore.try_set_permits(1)) is True
    replica = _cut_replica(topology, master)
    master.command("CONFIG", "RESETSTAT")

    error, elapsed = _timed(flavor, lock.try_lock, 2.0)

    _assert_refused(error, "NOREPLICAS", lock_name, master)
    assert 2.0 - 0.05 <= elapsed <= 2.0 + COMMAND_TIMEOUT + SLACK, elapsed  # the whole wait
    # Retried, not given up at once (each try also waits out its WAIT for the replica:
    # the WAIT is sent with the acquire, and answers when its timeout ends).
    assert _evalsha_calls(master) >= 2
    assert master.command("EXISTS", lock_name) == 0
    # A semaphore's wait, the same: named by its subject and name.
    error, elapsed = _timed(flavor, semaphore.try_acquire, 1, 0.5)
    assert isinstance(error, ServerRefusedError), repr(error)
    assert (error.refusal, error.lock_name) == ("NOREPLICAS", f"{lock_name}:permits")
    assert str(error).startswith(f"semaphore '{lock_name}:permits': {master.address} refused")
    assert 0.5 - 0.05 <= elapsed <= 0.5 + COMMAND_TIMEOUT + SLACK, elapsed

    # The replica comes back within the wait: the wait gets the lock.
    pending = alice.start(lock.try_lock, 10.0)
    time.sleep(0.5)
    assert not pending.done()
    replica.resume()
    assert pending.result(timeout=10.0 + COMMAND_TIMEOUT + SLACK) is True
    assert alice(lock.hold_count) == 1
    alice(lock.unlock)


def test_unlock_on_a_refusing_master_raises_the_refusal_within_its_bound(
    flavor: Flavor, guarded_master: tuple[Topology, Node], lock_name: str
) -> None:
    topology, master = guarded_master
    retry_attempts = 3
    client = flavor.create_client(_config(topology, retry_attempts=retry_attempts))
    lock = client.get_lock(lock_name)
    alice = flavor.owner("alice")
    assert alice(lock.try_lock, 0.0) is True
    [replica] = [node for node in topology.data_nodes if node is not master]
    replica.kill()
    _wait_until(lambda: _refuses(master, "NOREPLICAS"))

    started = time.monotonic()
    with pytest.raises(ServerRefusedError) as raised:
        alice(lock.unlock)
    elapsed = time.monotonic() - started

    _assert_refused(raised.value, "NOREPLICAS", lock_name, master)
    # README's bound: (retryAttempts + 1) x timeout + the retry delay of each retry. The
    # node answers at once, so the retries are nearly all of it.
    bound = (retry_attempts + 1) * COMMAND_TIMEOUT + retry_attempts * RETRY_DELAY
    assert retry_attempts * RETRY_DELAY - 0.05 <= elapsed <= bound + SLACK, elapsed
    assert master.command("EXISTS", lock_name) == 1  # refused: nothing was released


# --- BUSY: a script that runs on and on -------------------------------------------------


@contextlib.contextmanager
def _busy_script(node: Node) -> Iterator[None]:
    """A Lua busy loop running on ``node`` from a connection of its own, past the busy
    threshold (other clients get BUSY); ended by SCRIPT KILL when the block exits."""
    node.command("CONFIG", "SET", "lua-time-limit", "50")  # busy-reply-threshold in 7
    looping = node.client(socket_timeout=60)

    def run() -> None:
        with contextlib.suppress(redis.ResponseError):  # "Script killed by user"
            looping.eval("while true do end", 0)

    runner = threading.Thread(target=run, name="busy-script", daemon=True)
    runner.start()
    try:
        _wait_until(lambda: _refuses(node, "BUSY"))
        yield
    finally:
        with contextlib.suppress(redis.ResponseError):  # NOTBUSY: already killed
            node.command("SCRIPT", "KILL")
        runner.join(timeout=10)
        looping.close()


def test_a_wait_retries_busy_to_its_deadline_or_until_script_kill(
    flavor: Flavor, topology_factory: Callable[..., Topology], lock_name: str
) -> None:
    topology = topology_factory("single")
    node = topology.master()
    client = flavor.create_client(_config(topology))
    lock = client.get_lock(lock_name)
    alice = flavor.owner("alice")
    assert alice(lock.try_lock, 0.0) is True
    alice(lock.unlock)

    with _busy_script(node):
        error, elapsed = _timed(flavor, lock.try_lock, 1.5)
        _assert_refused(error, "BUSY", lock_name, node)
        assert 1.5 - 0.05 <= elapsed <= 1.5 + COMMAND_TIMEOUT + SLACK, elapsed

        # SCRIPT KILL ends the script within the wait: the wait gets the lock.
        pending = alice.start(lock.try_lock, 10.0)
        time.sleep(0.5)
        assert not pending.done()
        node.command("SCRIPT", "KILL")
        assert pending.result(timeout=10.0 + COMMAND_TIMEOUT + SLACK) is True
    alice(lock.unlock)
    assert node.command("EXISTS", lock_name) == 0


# --- READONLY: a config that names a replica as the master --------------------------------


def test_a_replica_named_as_the_master_refuses_with_readonly(
    flavor: Flavor, master_replica_topology: Topology, lock_name: str
) -> None:
    master = master_replica_topology.master()
    replica = next(n for n in master_replica_topology.data_nodes if n is not master)
    client = flavor.create_client(_config(replica.address))
    lock = client.get_lock(lock_name)

    error, elapsed = _timed(flavor, lock.try_lock, 1.0)

    _assert_refused(error, "READONLY", lock_name, replica)
    assert 1.0 - 0.05 <= elapsed <= 1.0 + COMMAND_TIMEOUT + SLACK, elapsed
    # Calls without a wait retry it too, then name it; reads are served.
    with pytest.raises(ServerRefusedError, match="READONLY"):
        flavor.run(lock.force_unlock())
    assert flavor.run(lock.is_locked()) is False


# --- LOADING: a restart that loads a large dataset ------------------------------------------


def test_a_wait_retries_loading_to_its_deadline_or_until_loaded(
    flavor: Flavor, topology_factory: Callable[..., Topology], lock_name: str
) -> None:
    topology = topology_factory("single")
    node = topology.master()
    # A dataset that takes about 2.5 s to load: 125 incompressible values, 20 ms each.
    values = node.client()
    with values.pipeline(transaction=False) as pipe:
        for index in range(125):
            pipe.set(f"ballast:{index}", os.urandom(200_000))
        pipe.execute()
    values.close()
    node.command("SAVE")
    node.command("CONFIG", "SET", "key-load-delay", "20000")
    with contextlib.suppress(redis.ResponseError):  # Redis 7: answer within 1 KiB read
        node.command("CONFIG", "SET", "loading-process-events-interval-bytes", "1024")
    node.command("CONFIG", "REWRITE")
    # Replies come while loading only between chunks of the file: allow for that.
    client = flavor.create_client(_config(topology, timeout=3.0))
    lock = client.get_lock(lock_name)
    alice = flavor.owner("alice")
    assert alice(lock.try_lock, 0.0) is True
    alice(lock.unlock)

    node.stop()
    node.runtime.start()  # not node.restart(): that waits until the node has loaded
    node.state = "running"
    _wait_until(lambda: _loading(node))

    error, elapsed = _timed(flavor, lock.try_lock, 1.0)
    _assert_refused(error, "LOADING", lock_name, node)
    assert 1.0 - 0.05 <= elapsed <= 1.0 + 3.0 + SLACK, elapsed
    assert "cannot reach" not in str(error)

    # The load ends within the next wait: the wait gets the lock.
    assert alice(lock.try_lock, 10.0) is True
    assert _loading(node) is False
    alice(lock.unlock)


def _loading(node: Node) -> bool:
    try:
        node.command("GET", "probe:loading")
    except redis.BusyLoadingError:
        return True
    except (redis.ConnectionError, redis.TimeoutError):
        return False  # not listening yet, or not answering between chunks of the file
    return False


# --- WRONGTYPE: not a refusal; the hint stays ------------------------------------------------


def test_a_key_of_another_type_is_no_refusal_and_keeps_the_hint(
    flavor: Flavor, single_topology: Topology, lock_name: str
) -> None:
    node = single_topology.master()
    node.command("SET", lock_name, "not a lock")
    try:
        client = flavor.create_client(_config(single_topology))
        lock = client.get_lock(lock_name)
        started = time.monotonic()
        with pytest.raises(RedissonError) as raised:
            flavor.run(lock.try_lock(5.0))
        assert time.monotonic() - started < 1.0  # not retried: it would not change
        error = raised.value
        assert not isinstance(error, ServerRefusedError | ConnectError)
        message = str(error)
        assert message.startswith(f"lock {lock_name!r}: {node.address} answered with an error:")
        assert "WRONGTYPE" in message
        assert message.endswith("(is the key used by something other than a lock?)")
    finally:
        node.command("DEL", lock_name)
