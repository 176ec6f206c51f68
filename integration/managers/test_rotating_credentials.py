"""Rotating credentials (`Config.set_credential_provider`) on a real server, sync and
asyncio: the user's password changes (``ACL SETUSER ... resetpass``) while a client holds
a lock; the provider hands out the new one; new connections, pub/sub ones after a
``CLIENT KILL TYPE pubsub`` included, keep working; a provider that still returns the
old password once (a cache refreshed late) is asked again; the passwords never show in
reprs or logs."""

from __future__ import annotations

import logging
import secrets
import threading
from collections.abc import Callable
from typing import Any

import pytest

from integration.wake_ups import release_wakes_waiter
from redisson_py import Config
from redisson_py.testing import Node, Topology
from redisson_py.testing.owners import Flavor

USER = "rotator"


class Tokens:
    """A provider whose password the test rotates; ``stale`` calls still hand out the
    previous password, as a cache refreshed late would. Counts its calls."""

    def __init__(self, password: str):
        self.password = password
        self.previous = password
        self.stale = 0
        self.calls = 0
        self._lock = threading.Lock()

    def get_credentials(self) -> tuple[str, str]:
        with self._lock:
            self.calls += 1
            if self.stale:
                self.stale -= 1
                return USER, self.previous
            return USER, self.password

    def rotate(self, node: Node, *, stale: int = 0) -> None:
        new = secrets.token_hex(12)
        node.command("ACL", "SETUSER", USER, "resetpass", f">{new}")
        with self._lock:
            self.previous, self.password, self.stale = self.password, new, stale


def _client(flavor: Flavor, node: Node, tokens: Tokens, **section: Any) -> Any:
    config = Config().set_credential_provider(tokens)
    config.use_single_server(node.address, **section)
    return flavor.create_client(config)


@pytest.fixture
def node(topology_factory: Callable[..., Topology]) -> Node:
    node: Node = topology_factory("single").master()
    return node


@pytest.fixture
def tokens(node: Node) -> Tokens:
    tokens = Tokens(secrets.token_hex(12))
    node.command("ACL", "SETUSER", USER, "on", f">{tokens.password}", "~*", "&*", "+@all")
    return tokens


def test_a_rotation_is_survived_by_held_locks_new_connections_and_pubsub(
    flavor: Flavor,
    node: Node,
    tokens: Tokens,
    lock_name: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="redisson_py")
    client = _client(flavor, node, tokens)
    alice = flavor.owner("alice")
    held = client.get_lock(lock_name)
    alice(held.lock)  # the watchdog renews it across the rotation
    first = tokens.password

    tokens.rotate(node)
    # Every connection of the user closed: the next ones must authenticate anew.
    node.command("CLIENT", "KILL", "USER", USER)
    calls = tokens.calls
    assert alice(held.is_held_by_current_thread) is True
    assert tokens.calls > calls, "a new connection did not ask the provider"
    users = {c.get("user") for c in node.client().client_list() if c.get("user") != "default"}
    assert users == {USER}
    alice(held.unlock)

    # Pub/sub: its connection killed, it comes back with the new password and a waiter
    # is still woken by the release message.
    subscribed = client.get_lock(lock_name + ":sub")
    flavor.owner("warm")(subscribed.try_lock, 0.0, 1.0)
    node.command("CLIENT", "KILL", "TYPE", "pubsub")
    release_wakes_waiter(flavor, held, client.get_lock(lock_name), within=2.0)

    shown = repr(client.connection_manager.config) + repr(tokens) + caplog.text
    for password in (first, tokens.password):
        assert password not in shown


def test_a_stale_password_is_asked_again(
    flavor: Flavor, node: Node, tokens: Tokens, lock_name: str
) -> None:
    tokens.rotate(node, stale=1)  # the first connection gets the old password, once
    # No retries: the one re-read after a refused AUTH is the connection's own.
    client = _client(flavor, node, tokens, retry_attempts=0)
    assert tokens.calls >= 2  # refused once, asked again
    alice = flavor.owner("alice")
    lock = client.get_lock(lock_name)
    assert alice(lock.try_lock, 0.0, 30.0) is True
    alice(lock.unlock)


def test_the_provider_replaces_the_configured_password(
    flavor: Flavor, node: Node, tokens: Tokens, lock_name: str
) -> None:
    # A wrong password in the section does not matter: the provider's is used.
    client = _client(flavor, node, tokens, username=USER, password="not-the-password")
    alice = flavor.owner("alice")
    assert alice(client.get_lock(lock_name).try_lock, 0.0, 30.0) is True
    alice(client.get_lock(lock_name).unlock)
