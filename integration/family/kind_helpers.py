"""Helpers for the lock family's tests: what a Java client sees of a lock (redis-py on the
master of the lock's slot, its pub/sub), owner fields, and child processes that hold or
wait on a lock until they are killed with SIGKILL."""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import multiprocessing.connection
import time
from collections.abc import Iterator
from typing import Any

import pytest
import redis

import redisson_py
from redisson_py import Config, Redisson
from redisson_py import asyncio as aio
from redisson_py.core.routing import naming
from redisson_py.errors import LockNotOwnedError
from redisson_py.testing import Topology
from redisson_py.testing.owners import Flavor, Owner

# --- raw access, as a Java client (or an operator) sees the lock ---------------------------


def by_slot(topology: Topology) -> bool:
    """True on a cluster: auxiliary names take the slot-safe form."""
    return topology.layout == "cluster"


@contextlib.contextmanager
def raw_master(topology: Topology, name: str) -> Iterator[redis.Redis]:
    """A redis-py client on the master that serves ``name`` (closed on exit)."""
    if by_slot(topology):
        node = topology.master_for_slot(naming.key_slot(name))
    else:
        node = topology.master()
    client = node.client()
    try:
        yield client
    finally:
        client.close()


def sharded(client: redis.Redis) -> bool:
    """True when locks on this node publish with SPUBLISH (a Redis 7 cluster), as both
    Redisson and redisson-py do there."""
    info = client.info("server")
    major = int(str(info["redis_version"]).split(".")[0])
    return bool(client.info("cluster").get("cluster_enabled")) and major >= 7


def publish_command(client: redis.Redis) -> str:
    return "spublish" if sharded(client) else "publish"


def subscribers(topology: Topology, channel: str) -> int:
    """How many connections subscribe to ``channel`` on any data node, by plain or
    sharded pub/sub."""
    total = 0
    for node in topology.data_nodes:
        if node.state != "running":
            continue
        client = node.client()
        try:
            total += int(dict(client.pubsub_numsub(channel)).get(channel, 0))
            major = int(str(client.info("server")["redis_version"]).split(".")[0])
            if major >= 7:
                reply = client.execute_command("PUBSUB", "SHARDNUMSUB", channel)
                total += int(reply[1])
        finally:
            client.close()
    return total


class Listener:
    """A redis-py subscriber on one lock channel, as a Java waiter subscribes (sharded
    on a Redis 7 cluster)."""

    def __init__(self, client: redis.Redis, channel: str):
        self.channel = channel
        self.sharded = sharded(client)
        self.pubsub = client.pubsub()
        if self.sharded:
            self.pubsub.ssubscribe(channel)
        else:
            self.pubsub.subscribe(channel)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            message = self.pubsub.get_message(timeout=0.1)
            if message is not None and message["type"] in ("subscribe", "ssubscribe"):
                return
        raise AssertionError(f"no subscribe confirmation for {channel}")

    def message(self, timeout: float) -> str | None:
        """The next message's data, or None when none comes within ``timeout``."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            message = self.pubsub.get_message(timeout=min(left, 0.1))
            if message is not None and message["type"] in ("message", "smessage"):
                return str(message["data"])

    def close(self) -> None:
        self.pubsub.close()


@contextlib.contextmanager
def listening(client: redis.Redis, channel: str) -> Iterator[Listener]:
    listener = Listener(client, channel)
    try:
        yield listener
    finally:
        listener.close()


def owner_field(flavor: Flavor, owner: Owner, client: Any) -> str:
    """``<client id>:<owner id>``: the hash field (and queue entry) ``owner`` writes
    through ``client``."""
    current = redisson_py.current_owner_id if flavor.name == "sync" else aio.current_owner_id
    return f"{client.id}:{owner(current)}"


# --- child processes: a lock user that is killed -------------------------------------------


def _fair_waiter(config_yaml: str, name: str, api: str = "sync") -> None:
    """Join fair lock ``name``'s queue with ``lock()`` (of the ``api``: sync or asyncio)
    and wait there until killed."""
    config = Config.from_yaml(config_yaml)
    if api == "asyncio":

        async def wait() -> None:
            client = await aio.Redisson.create(config)
            await client.get_fair_lock(name).lock()
            await asyncio.sleep(3600)  # granted after all: hold it until killed

        asyncio.run(wait())
        return
    client = Redisson.create(config)
    client.get_fair_lock(name).lock()
    time.sleep(3600)  # granted after all: hold it until killed


def _reader(config_yaml: str, name: str, ready: multiprocessing.connection.Connection) -> None:
    """Hold read-write lock ``name`` for reading (watchdog), say so, wait to be killed."""
    client = Redisson.create(Config.from_yaml(config_yaml))
    client.get_read_write_lock(name).read_lock().lock()
    ready.send("held")
    time.sleep(3600)


def fair_waiter(config: Config, name: str, api: str = "sync") -> Any:
    """A process (not started) that waits on fair lock ``name`` with the ``api``."""
    spawn = multiprocessing.get_context("spawn")
    return spawn.Process(target=_fair_waiter, args=(config.to_yaml(), name, api), daemon=True)


def reader(config: Config, name: str) -> tuple[Any, multiprocessing.connection.Connection]:
    """A process (not started) that holds read lock ``name``, and the end of the pipe on
    which it says ``held``."""
    spawn = multiprocessing.get_context("spawn")
    receive, send = spawn.Pipe(duplex=False)
    process = spawn.Process(target=_reader, args=(config.to_yaml(), name, send), daemon=True)
    return process, receive


@contextlib.contextmanager
def running(process: Any) -> Iterator[Any]:
    """Start ``process``; SIGKILL it on exit whatever happened."""
    process.start()
    try:
        yield process
    finally:
        if process.is_alive():
            process.kill()
        process.join(timeout=10)


def kill(process: Any) -> None:
    """SIGKILL ``process`` and reap it."""
    process.kill()
    process.join(timeout=10)
    assert not process.is_alive()


# --- behaviour every reentrant kind shares ---------------------------------------------------


def assert_reentrant(lock: Any, alice: Owner, bob: Owner) -> None:
    """``lock`` (a reentrant kind, free) counts its holder's holds: the holder takes it
    again at once, another owner gets it only after the last unlock, and the holder can
    unlock no more than it took."""
    alice(lock.lock)
    assert alice(lock.try_lock, 1.0) is True
    assert alice(lock.hold_count) == 2
    assert bob(lock.try_lock, 0.2) is False
    alice(lock.unlock)
    assert alice(lock.hold_count) == 1
    assert bob(lock.try_lock) is False
    alice(lock.unlock)
    assert bob(lock.try_lock) is True
    with pytest.raises(LockNotOwnedError):
        alice(lock.unlock)
    bob(lock.unlock)
    assert alice(lock.is_locked) is False
