"""The messages a newcomer meets first say what happened and what to do (issue 41):
a wrong port names the config file, the line and the command that checks it; a second
``unlock()`` and another owner's ``unlock()`` read differently and name the owners as a
reader knows them; an asyncio lock used without ``async with`` or without ``await``
says what to write instead. Sync and asyncio, on a real server."""

from __future__ import annotations

import asyncio
import gc
import socket
import warnings
from pathlib import Path
from typing import Any

import pytest
import redis

import redisson_py
import redisson_py.asyncio
from redisson_py import Config, ConnectError, LockNotOwnedError, UsageError
from redisson_py.cli import main
from redisson_py.testing import Topology
from redisson_py.testing.owners import Flavor


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port  # nothing listens on it once the probe is closed


def test_a_wrong_port_names_the_file_the_line_and_the_next_step(
    flavor: Flavor, tmp_path: Path
) -> None:
    config_file = tmp_path / "redisson.yaml"
    port = _closed_port()
    config_file.write_text(f"singleServerConfig:\n  address: redis://127.0.0.1:{port}\n")
    with pytest.raises(ConnectError) as raised:
        flavor.create_client(Config.from_yaml(config_file))
    message = str(raised.value)
    assert f"127.0.0.1:{port}" in message and "Connection refused" in message
    assert f"singleServerConfig.address in {config_file}, line 2" in message, message
    assert message.endswith(f"redisson-py config check {config_file} --connect"), message
    assert raised.value.next_step is not None and message.endswith(raised.value.next_step)


def test_a_wrong_port_in_code_says_what_to_check(flavor: Flavor) -> None:
    config = Config()
    config.use_single_server(address=f"redis://127.0.0.1:{_closed_port()}")
    with pytest.raises(ConnectError) as raised:
        flavor.create_client(config)
    message = str(raised.value)
    assert "Check singleServerConfig.address (host and port)" in message, message
    assert "redisson-py config check FILE --connect" in message


def test_the_cli_says_the_next_step_and_config_check_does_not_repeat_itself(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config_file = tmp_path / "redisson.yaml"
    config_file.write_text(f"singleServerConfig:\n  address: redis://127.0.0.1:{_closed_port()}\n")
    assert main(["lock", "status", "a", "--config", str(config_file)]) == 1
    err = capsys.readouterr().err
    assert f"redisson-py config check {config_file} --connect" in err, err
    assert main(["config", "check", str(config_file), "--connect"]) == 1
    captured = capsys.readouterr()
    assert "could not connect" in captured.out + captured.err
    assert "config check" not in captured.out + captured.err


def _field(client: Any) -> str:
    return f"field {client.id}:"


def test_a_second_unlock_says_this_owner_never_held_it_or_released_it(
    flavor: Flavor, single_topology: Topology, topology_config: Any, lock_name: str
) -> None:
    client = flavor.create_client(topology_config(single_topology))
    alice = flavor.owner("alice")
    lock = client.get_lock(lock_name)
    alice(lock.lock)
    alice(lock.unlock)
    with pytest.raises(LockNotOwnedError) as raised:
        alice(lock.unlock)
    message = str(raised.value)
    assert "is not locked by this owner" in message, message
    assert "it never locked it, or already released every hold it had" in message
    # the owner as a reader knows it, and the field Redisson's data holds
    owner = "thread owner-alice" if flavor.name == "sync" else "task "
    assert owner in message and _field(client) in message, message


def test_another_owners_unlock_names_the_holder_and_the_caller(
    flavor: Flavor, single_topology: Topology, topology_config: Any, lock_name: str
) -> None:
    client = flavor.create_client(topology_config(single_topology))
    alice, bob = flavor.owner("alice"), flavor.owner("bob")
    lock = client.get_lock(lock_name)
    alice(lock.lock)
    with pytest.raises(LockNotOwnedError) as raised:
        bob(lock.unlock)
    message = str(raised.value)
    assert "it is held by another owner of this client" in message, message
    assert "only the owner that locked it can unlock it" in message
    if flavor.name == "sync":
        holder, caller = message.index("thread owner-alice"), message.index("thread owner-bob")
        assert holder < caller, message
    assert message.count(_field(client)) == 2, message
    assert alice(lock.is_held_by_current_thread if flavor.name == "sync" else lock.is_locked)
    alice(lock.unlock)


def test_a_lost_hold_says_it_was_lost(
    flavor: Flavor, single_topology: Topology, topology_config: Any, lock_name: str
) -> None:
    client = flavor.create_client(topology_config(single_topology))
    alice = flavor.owner("alice")
    lock = client.get_lock(lock_name)
    alice(lock.lock, 30.0)
    master = single_topology.master()
    with redis.Redis(host=master.host, port=master.port, socket_timeout=2) as admin:
        admin.delete(lock_name)
    with pytest.raises(LockNotOwnedError) as raised:
        alice(lock.unlock)
    assert "it was lost" in str(raised.value) and "vanished" in str(raised.value)


async def _async_slips(config: Config, lock_name: str) -> list[str]:
    said: list[str] = []
    client = await redisson_py.asyncio.Redisson.create(config)
    try:
        lock = client.get_lock(lock_name)
        with pytest.raises(UsageError) as raised, lock:
            pass
        said.append(str(raised.value))
        with pytest.raises(UsageError) as raised, lock.acquired(1.0):
            pass
        said.append(str(raised.value))
        with pytest.raises(UsageError) as raised:
            if lock.try_lock(0.0):
                pass
        said.append(str(raised.value))
        assert await lock.is_locked() is False  # nothing was taken by the slips
        # the coroutines still work everywhere a coroutine does
        assert await asyncio.wait_for(lock.try_lock(1.0), 5) is True
        await asyncio.gather(lock.unlock())
        await asyncio.create_task(lock.lock())
        await asyncio.shield(lock.unlock())
        async with lock:
            assert await lock.is_locked()
    finally:
        await client.shutdown()
    return said


def test_asyncio_slips_say_what_to_write(
    single_topology: Topology, topology_config: Any, lock_name: str
) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with_lock, with_acquired, truth = asyncio.run(
            _async_slips(topology_config(single_topology), lock_name)
        )
        gc.collect()  # a coroutine never awaited warns when collected
    assert not [w for w in caught if "never awaited" in str(w.message)]
    assert "write `async with ...:`, not `with ...:`" in with_lock, with_lock
    assert "(Lock)" in with_lock and "(Acquired)" in with_acquired
    assert "write `if await lock.try_lock(...):`" in truth, truth


def test_the_threaded_lock_keeps_with_and_truth(
    single_topology: Topology, topology_config: Any, lock_name: str
) -> None:
    client = redisson_py.Redisson.create(topology_config(single_topology))
    try:
        lock = client.get_lock(lock_name)
        with lock:
            assert lock.is_held_by_current_thread()
        if lock.try_lock(1.0):
            lock.unlock()
    finally:
        client.shutdown()
