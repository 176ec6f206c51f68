"""One node of a topology: a redis-server or a sentinel, on 127.0.0.1 (or, with
``network="namespace"``, on an address of its own inside the topology's namespace).

A [`Node`][redisson_py.testing.Node] is the same object whatever the backend; the
backend only supplies the `NodeRuntime` behind it. Everything that asks Redis something
(role, INFO) is live: it asks the node now.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from redisson_py.testing.backends.base import NodeKind, NodeRuntime
from redisson_py.testing.errors import TopologyError
from redisson_py.testing.network.harness_connections import connect_in_namespace
from redisson_py.testing.network.namespace import NetworkNamespace
from redisson_py.testing.topologies.ports import BUS_PORT_OFFSET
from redisson_py.testing.topologies.replies import parse_client_list, parse_info
from redisson_py.testing.topologies.waiting import NotYet, wait_until

__all__ = ["Node", "NodeStartError", "PortConflictError"]

HOST = "127.0.0.1"
_ADMIN_TIMEOUT = 1.0


class NodeStartError(TopologyError):
    """A node exited, or never answered, right after being started."""


class PortConflictError(NodeStartError):
    """A node could not bind its port: something else took it after it was chosen."""


class Node:
    """A node of a started topology.

    ``name`` says what it was started as: ``master-0``, ``replica-0-1`` (first replica of
    shard 0), ``sentinel-2``. After a failover the names stay and the live roles change;
    [`role`][redisson_py.testing.Node.role] says what a node is now. ``kind`` is
    ``"redis"`` or ``"sentinel"``.

    ``host`` is the address it binds and announces: 127.0.0.1, or its own 127.0.0.x in a
    topology with ``network="namespace"``.

    Destructive methods (kill, pause, resume, restart, stop) raise
    [`TopologyError`][redisson_py.testing.TopologyError] on nodes of a topology shared
    by a test session (see the pytest plugin).
    """

    def __init__(
        self,
        *,
        name: str,
        kind: NodeKind,
        port: int,
        directory: Path,
        config_path: Path,
        shard: int | None = None,
        guard: Callable[[str], None] | None = None,
        host: str = HOST,
    ):
        self.name = name
        self.host = host
        self.kind = kind
        self.port = port
        self.directory = directory
        self.config_path = config_path
        self.shard = shard
        self.cluster_id: str | None = None
        self._runtime: NodeRuntime | None = None
        self._guard = guard
        self._admin: redis.Redis | None = None
        self.tls = False
        """The node speaks TLS only (its port is a ``tls-port``)."""
        self.client_options: dict[str, Any] = {}
        """Credentials and TLS settings every harness client of this node uses."""
        self.network_namespace: NetworkNamespace | None = None
        """The namespace the node runs in (``network="namespace"``), where harness clients
        make their sockets; None on the host's network."""
        # What the harness last did to the node: "running", "paused", "killed", "stopped".
        # Readiness checks use it to know which nodes should answer.
        self.state = "new"

    def __repr__(self) -> str:
        return f"<Node {self.name} {self.kind} {self.address} {self.state}>"

    # -- identity ----------------------------------------------------------------------

    @property
    def address(self) -> str:
        """``redis://HOST:PORT`` (``rediss://`` over TLS), as Redisson configs write node
        addresses."""
        return f"{'rediss' if self.tls else 'redis'}://{self.host}:{self.port}"

    @property
    def bus_port(self) -> int:
        """The cluster bus port (cluster nodes only use it): port + 10000."""
        return self.port + BUS_PORT_OFFSET

    @property
    def runtime(self) -> NodeRuntime:
        """The backend's handle on the started node (process or container)."""
        if self._runtime is None:
            raise TopologyError(f"node {self.name} has not been started.")
        return self._runtime

    @property
    def has_runtime(self) -> bool:
        """Whether the node has been launched (it has a process or container, maybe dead)."""
        return self._runtime is not None

    def attach(self, runtime: NodeRuntime) -> None:
        """Give the node its runtime (done by the harness when launching it)."""
        self._runtime = runtime
        self._close_admin()

    # -- talking to it -------------------------------------------------------------------

    def client(self, **kwargs: Any) -> redis.Redis:
        """A new redis-py client for this node.

        Defaults: ``decode_responses=True``, 2 s socket and connect timeouts, and no
        retries, so a dead or frozen node fails a call within the timeout instead of
        redis-py's retry-with-backoff. Any keyword overrides the defaults.

        In a topology with ``network="namespace"`` this is a harness client: it works from
        the test process and connects from 127.0.0.1, which no partition cuts. A client on
        a side is made inside ``topology.network.joined(host)`` with plain redis-py.
        """
        options: dict[str, Any] = {
            "host": self.host,
            "port": self.port,
            "decode_responses": True,
            "socket_timeout": 2.0,
            "socket_connect_timeout": 2.0,
            "retry": Retry(NoBackoff(), 0),
            **self.client_options,
        }
        options.update(kwargs)
        client = redis.Redis(**options)
        if self.network_namespace is not None:
            connect_in_namespace(client, self.network_namespace)
        return client

    @property
    def admin(self) -> redis.Redis:
        """The harness's own client: 1 s timeouts, no retries, raw (unparsed) replies."""
        if self._admin is None:
            # RESP2 and raw replies: redis-py's default protocol and its parsed shapes differ
            # between versions (see replies.py); the harness reads what Redis documents.
            client = self.client(
                socket_timeout=_ADMIN_TIMEOUT, socket_connect_timeout=_ADMIN_TIMEOUT, protocol=2
            )
            client.response_callbacks.clear()
            self._admin = client
        return self._admin

    def _close_admin(self) -> None:
        if self._admin is not None:
            self._admin.close()
            self._admin = None

    def command(self, *args: Any) -> Any:
        """Send one command on the harness's client and return Redis's raw reply (RESP2,
        strings decoded). Raises redis-py's errors (``ConnectionError``, ``TimeoutError``,
        ``ResponseError``) as they come."""
        return self.admin.execute_command(*args)  # type: ignore[no-untyped-call]

    def info(self, section: str = "replication") -> dict[str, str]:
        """``INFO <section>`` as a flat mapping; raises redis errors if unreachable."""
        return parse_info(str(self.command("INFO", section)))

    def connections(self, name: str | None = None) -> list[dict[str, str]]:
        """This node's client connections (``CLIENT LIST``, one mapping of field to
        value each), only those named ``name`` (``clientName``) when given."""
        entries = parse_client_list(str(self.command("CLIENT", "LIST")))
        return [e for e in entries if name is None or e.get("name") == name]

    def role(self) -> str:
        """The live role: ``"master"``, ``"slave"`` or ``"sentinel"`` (``ROLE``).

        Raises redis-py's ``ConnectionError``/``TimeoutError`` if the node does not answer.
        """
        reply = self.command("ROLE")
        return str(reply[0])

    def ping(self) -> bool:
        """Whether the node answers ``PING`` within 1 s."""
        try:
            return str(self.command("PING")) == "PONG"
        except (redis.ConnectionError, redis.TimeoutError):
            return False

    def wait_answering(self, timeout: float = 30.0) -> None:
        """Return once the node answers PING; raise `NodeStartError` if it exits.

        A node that could not bind its port raises `PortConflictError`.
        """

        def answering() -> None:
            if not self.runtime.is_running():
                self._raise_start_failure()
            if not self.ping():
                raise NotYet(f"{self.name} on port {self.port} does not answer PING yet")

        wait_until(answering, timeout=timeout, what=f"{self.name} answering on port {self.port}")

    def _raise_start_failure(self) -> None:
        log = self.log()
        how = self.runtime.exit_description() or "stopped"
        if re.search(r"Address already in use|bind: .*in use", log):
            raise PortConflictError(
                f"node {self.name} could not bind port {self.port} on {self.host}: it is already "
                "in use; free it or let the harness pick free ports."
            )
        last = _last_meaningful_line(log)
        detail = f"; its log ends with: {last}" if last else " without writing a log"
        raise NodeStartError(
            f"node {self.name} ({self.kind}, port {self.port}) {how} right after starting{detail}"
        )

    # -- breaking it ----------------------------------------------------------------------

    def _check(self, action: str) -> None:
        if self._guard is not None:
            self._guard(f"{action} {self.name}")

    def kill(self) -> None:
        """Kill the node at once, like a crash (SIGKILL / ``docker kill``)."""
        self._check("kill")
        self._close_admin()
        self.runtime.kill()
        self.state = "killed"

    def pause(self) -> None:
        """Freeze the node (SIGSTOP / ``docker pause``): its sockets stay open but it answers
        nothing until [`resume`][redisson_py.testing.Node.resume]. Returns once it is frozen."""
        self._check("pause")
        self.runtime.pause()
        self.state = "paused"

    def resume(self) -> None:
        """Thaw a paused node. Returns once it runs again (it may take a moment to answer)."""
        self._check("resume")
        self.runtime.resume()
        self.state = "running"

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the node cleanly (SIGTERM / ``docker stop``);
        [`restart`][redisson_py.testing.Node.restart] brings it back."""
        self._check("stop")
        self._close_admin()
        self.runtime.terminate(timeout)
        self.state = "stopped"

    def restart(self, timeout: float = 30.0, *, replica_of: Node | None = None) -> None:
        """Stop the node if it runs, start it again, and wait until it answers.

        Same port, same directory, same config file as Redis last wrote it: a cluster node
        keeps its node id and its view of the cluster (``nodes.conf``), a sentinel its
        view of the master. A former master of a sentinel topology therefore comes back
        as a master, as in production, until the sentinels demote it (Sentinel waits 8 s
        and looks every 10 s: allow ~20 s). ``replica_of`` makes it come back as a
        replica of that node at once, as an operator would restart it. Raises
        `NodeStartError` if it does not come back.
        """
        self._check("restart")
        self._close_admin()
        if self.runtime.is_running():
            self.runtime.terminate(10.0)
        if replica_of is not None:
            # Redis keeps the last value of a directive, so appending overrides any earlier
            # replicaof line.
            with self.config_path.open("a") as config:
                config.write(f"\nreplicaof {replica_of.host} {replica_of.port}\n")
        self.runtime.start()
        self.state = "running"
        self.wait_answering(timeout)

    def is_running(self) -> bool:
        """Whether the node's process or container exists and has not exited (a paused
        node is running)."""
        return self._runtime is not None and self._runtime.is_running()

    def is_paused(self) -> bool:
        """Whether the node is paused now (SIGSTOP or ``docker pause``)."""
        return self._runtime is not None and self._runtime.is_paused()

    @property
    def expected_up(self) -> bool:
        """Whether the harness last left this node running and unpaused."""
        return self.state == "running"

    def log(self) -> str:
        """Everything the node wrote to stdout/stderr (its Redis log), across restarts."""
        return self._runtime.log() if self._runtime is not None else ""

    def close(self) -> None:
        """Close the harness's connections to the node (the node keeps running)."""
        self._close_admin()


def _last_meaningful_line(log: str) -> str:
    for raw in reversed(log.strip().splitlines()):
        line = raw.strip()
        if line and not set(line) <= set("*#-=_ "):
            return line[:300]
    return ""
