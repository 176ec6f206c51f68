"""A pub/sub connection that silently stops delivering is noticed (issue 38, item 7).

Pub/sub connections had no health check (redis-py's is off for them), so a half-open
subscription (a middlebox or peer that stops forwarding without closing the socket) lost
every wake-up: a waiter slept until the holder's TTL ran out. Now a reader that heard
nothing for ``pingConnectionInterval`` sends a PING, and one left unanswered for the
command ``timeout`` fails the connection: its waiters are woken to retry at once and its
channels subscribed again on a new one. Shown with a loopback proxy that keeps the
subscriber's socket open but stops forwarding what the server sends it; sync and
asyncio, on a single server (the reader is the same for every topology).
"""

from __future__ import annotations

import socket
import threading
import time
from typing import Any

from redisson_py import Config
from redisson_py.config import ConstantDelay
from redisson_py.testing import Topology, eventually
from redisson_py.testing.faults.proxy import LoopbackProxy
from redisson_py.testing.owners import Flavor

PING_INTERVAL = 1.0
TIMEOUT = 1.0
LEASE = 20.0
"""The holder's lease: what a waiter whose wake-up is lost sleeps for."""
SLACK = 2.0
"""Allowance for a loaded 2-core box (seconds), on top of the reader's tick (0.5 s)."""


class SilencingProxy(LoopbackProxy):
    """Forwards everything until `silence`; then the connections that had subscribed by
    then get nothing more from the server, and stay open (a half-open subscription).
    Connections made later are forwarded as before."""

    name = "silencing-proxy"

    def __init__(self, target_port: int):
        self._states: list[dict[str, bool]] = []
        self._states_lock = threading.Lock()
        super().__init__(target_port)

    def _connection_state(self) -> dict[str, bool]:
        state = {"subscriber": False, "silent": False}
        with self._states_lock:
            self._states.append(state)
        return state

    def silence(self) -> int:
        """Stop the subscribers' incoming bytes; how many connections were silenced."""
        with self._states_lock:
            subscribers = [state for state in self._states if state["subscriber"]]
        for state in subscribers:
            state["silent"] = True
        return len(subscribers)

    def _up(self, client: socket.socket, server: socket.socket, state: Any) -> None:
        while chunk := client.recv(65536):
            if b"SUBSCRIBE" in chunk.upper():
                state["subscriber"] = True
            server.sendall(chunk)

    def _down(self, server: socket.socket, client: socket.socket, state: Any) -> None:
        while chunk := server.recv(65536):
            if not state["silent"]:
                client.sendall(chunk)


def test_a_waiter_on_a_silent_subscription_is_woken_within_the_ping_interval(
    flavor: Flavor, single_topology: Topology, topology_config: Any, lock_name: str
) -> None:
    master = single_topology.master()
    with SilencingProxy(master.port) as proxy:
        config = Config()
        section = config.use_single_server(address=f"redis://127.0.0.1:{proxy.port}")
        section.retry_delay = ConstantDelay(0.05)
        section.ping_connection_interval = PING_INTERVAL
        section.timeout = TIMEOUT
        waiting_client = flavor.create_client(config)
        holding_client = flavor.create_client(topology_config(single_topology))
        alice, bob = flavor.owner("alice"), flavor.owner("bob")
        held = holding_client.get_lock(lock_name)
        alice(held.lock, LEASE)
        waiting = bob.start_timed(waiting_client.get_lock(lock_name).try_lock, LEASE + 10.0)
        channel = f"redisson_lock__channel:{{{lock_name}}}"
        eventually(
            lambda: master.command("PUBSUB", "NUMSUB", channel)[1] == 1,
            timeout=10,
            what="the waiter subscribed",
        )
        time.sleep(0.2)  # the waiter asleep on its subscription
        assert proxy.silence() == 1
        _, released = alice.start_timed(held.unlock).result(timeout=10)
        acquired, granted = waiting.result(timeout=LEASE + 20.0)
        assert acquired is True
        # Its wake-up was lost; the health check noticed within the interval plus the
        # PING's timeout, far sooner than the holder's lease.
        delay = granted - released
        assert delay <= PING_INTERVAL + TIMEOUT + 0.5 + SLACK < LEASE / 2, delay
        bob(waiting_client.get_lock(lock_name).unlock)


def test_a_healthy_subscription_answers_its_pings_and_is_kept(
    flavor: Flavor, single_topology: Topology, topology_config: Any, lock_name: str
) -> None:
    master = single_topology.master()
    config = topology_config(single_topology)
    config.server_config.ping_connection_interval = 0.3
    config.server_config.timeout = TIMEOUT
    waiting_client = flavor.create_client(config)
    alice, bob = flavor.owner("alice"), flavor.owner("bob")
    held = waiting_client.get_lock(lock_name)
    alice(held.lock, LEASE)
    waiting = bob.start_timed(waiting_client.get_lock(lock_name).try_lock, LEASE + 10.0)
    channel = f"redisson_lock__channel:{{{lock_name}}}"
    eventually(
        lambda: master.command("PUBSUB", "NUMSUB", channel)[1] == 1,
        timeout=10,
        what="the waiter subscribed",
    )

    def subscribers() -> dict[str, str]:
        """Each pub/sub connection's id and the last command it sent."""
        listed = str(master.command("CLIENT", "LIST", "TYPE", "pubsub"))
        fields = [dict(f.split("=", 1) for f in line.split()) for line in listed.splitlines()]
        return {entry["id"]: entry["cmd"] for entry in fields if entry}

    before = subscribers()
    time.sleep(PING_INTERVAL * 3)  # ten pings, each answered
    after = subscribers()
    assert after.keys() == before.keys()  # the same connection: none was failed
    assert set(after.values()) == {"ping"}  # it was pinged
    _, released = alice.start_timed(held.unlock).result(timeout=10)
    acquired, granted = waiting.result(timeout=LEASE + 20.0)
    assert acquired is True and granted - released < 1.0  # woken by the message
    bob(waiting_client.get_lock(lock_name).unlock)
