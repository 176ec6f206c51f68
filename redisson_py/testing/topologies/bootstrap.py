"""Starting a topology: [`start_topology`][redisson_py.testing.start_topology].

Order of events, chosen so each step finds the state it needs:

1. the spec is loaded and validated, the backend checked (no Docker engine, no binary:
   one sentence, nothing started), and for ``network="namespace"`` what partitions need
   (`redisson_py.testing.network.support`);
2. ports are reserved (``base_port`` given: exactly those, or one sentence naming the
   taken port; else free ones at random); with ``network="namespace"`` the nodes get
   their addresses, the state file names the namespace, then it is made;
3. masters, then replicas, are launched and waited for until replication is up; only then
   the sentinels, so their first look at the replicas sees them in sync (Sentinel looks
   again only every 10 s). Cluster nodes are launched together, then joined;
4. the topology waits until ready
   ([`Topology.wait_ready`][redisson_py.testing.Topology.wait_ready]).

If anything fails or is interrupted, everything launched so far is removed before the
error propagates. A node that loses its randomly chosen port to another program between
the check and its bind is relaunched with fresh ports (up to three attempts).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shlex
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from redisson_py.testing.backends import create_backend
from redisson_py.testing.backends.base import LaunchPlan
from redisson_py.testing.backends.binaries import supports_tls
from redisson_py.testing.errors import TopologyError
from redisson_py.testing.network.support import require_partition_support
from redisson_py.testing.network.topology_network import TopologyNetwork
from redisson_py.testing.topologies import cleanup
from redisson_py.testing.topologies.cluster_setup import form_cluster
from redisson_py.testing.topologies.conf import render_redis_conf, render_sentinel_conf
from redisson_py.testing.topologies.node import Node, PortConflictError
from redisson_py.testing.topologies.node_environment import Environment, node_environments
from redisson_py.testing.topologies.paths import topologies_root
from redisson_py.testing.topologies.ports import allocate_ports, release_ports, reserve_ports
from redisson_py.testing.topologies.readiness import check_replication
from redisson_py.testing.topologies.security import make_secrets
from redisson_py.testing.topologies.spec import TopologySpec, load_spec
from redisson_py.testing.topologies.state import current_owner
from redisson_py.testing.topologies.topology import DEFAULT_TIMEOUT, Topology
from redisson_py.testing.topologies.waiting import wait_until

__all__ = ["NETWORKS", "start_topology"]

_PORT_ATTEMPTS = 3

NETWORKS = ("host", "namespace")
"""``network="host"``: every node on 127.0.0.1 of this machine. ``"namespace"``: each node
on its own 127.0.0.x inside a network namespace of the topology's, where partitions can
cut it off (process backend, root, iptables, Redis >= 7.0)."""


def start_topology(
    kind: str | os.PathLike[str] | TopologySpec,
    *,
    backend: str = "auto",
    base_port: int | None = None,
    detached: bool = False,
    timeout: float = DEFAULT_TIMEOUT,
    network: str = "host",
    node_environment: Mapping[str, Mapping[str, str]] | None = None,
    **overrides: Any,
) -> Topology:
    """Start the topology ``kind`` and return it once ready.

    ``kind`` is a spec name from ``topologies/`` (``"single"``, ``"master-replica"``,
    ``"sentinel"``, ``"cluster"``, ``"redlock"``), a path to a spec file, or a
    `TopologySpec`. ``backend`` is ``"container"``, ``"process"`` or ``"auto"``
    (containers when a Docker engine answers). ``overrides`` change spec fields for this
    start (``replicas_per_master=1``, ``redis_conf={"maxmemory": "64mb"}``,
    ``sentinel={"down_after_ms": 2000}``; mappings are merged). ``base_port`` pins the
    nodes to consecutive ports from there (data nodes first, then sentinels); by default
    free ones are picked. ``detached`` topologies outlive this process (stop them with
    ``redisson-py topology down``). ``timeout`` bounds the whole start.

    ``network="namespace"`` starts the nodes in a network namespace of their own
    (``rpy-<topology id>``), each on its own 127.0.0.x, so that ``topology.partition``,
    ``isolate`` and ``heal`` can cut them apart while they keep running; ``backend="auto"``
    means the process backend then. It raises
    [`NetworkUnavailableError`][redisson_py.testing.NetworkUnavailableError] where that cannot
    run (see [`partition_support`][redisson_py.testing.partition_support]).

    ``node_environment`` maps node names (``"master-0"``) to extra environment variables
    for their processes, kept across restarts (process backend only): a node run under
    libfaketime, whose clock a test moves (`redisson_py.testing.faults.faketime`).

    The returned topology is stopped by
    [`Topology.stop`][redisson_py.testing.Topology.stop], by leaving it as a context
    manager, or at the latest when this process exits or gets SIGTERM.

    Raises [`TopologyError`][redisson_py.testing.TopologyError] (one sentence per problem) for a
    bad spec or override, a backend that cannot run here, a taken ``base_port``, a node
    that fails to start, or a topology not ready in time; nothing is left running then.
    """
    if isinstance(kind, TopologySpec):
        if overrides:
            raise TopologyError(
                "overrides cannot be combined with a TopologySpec; change the spec."
            )
        spec = kind
    else:
        spec = load_spec(kind, overrides)
    if network not in NETWORKS:
        raise TopologyError(f"unknown network {network!r}; use one of: {', '.join(NETWORKS)}.")
    if network == "namespace":
        # Only the process backend can put nodes in a namespace: "auto" means it here.
        backend = "process" if backend == "auto" else backend
        if backend == "container":
            require_partition_support(backend)
    backend_impl = create_backend(backend)
    if network == "namespace":
        require_partition_support(backend_impl.name, getattr(backend_impl, "binary", None))
    cleanup.sweep_leftovers(backend=backend_impl.name)
    topology_id = f"{spec.name}-{secrets.token_hex(4)}"
    directory = topologies_root() / topology_id
    directory.mkdir(mode=0o755)
    topology = Topology(
        spec,
        backend_impl,
        topology_id=topology_id,
        directory=directory,
        owner=current_owner(),
        detached=detached,
        explicit_ports=base_port is not None,
        network=TopologyNetwork(topology_id) if network == "namespace" else None,
    )
    if not detached:
        cleanup.register(topology)
    deadline = time.monotonic() + timeout
    try:
        _plan_nodes(topology)
        environments = node_environments(
            [n.name for n in topology.nodes], node_environment, backend=backend_impl.name
        )
        _assign_ports(topology, base_port)
        _arm(topology)
        topology.save_state()
        if topology.network_mode == "namespace":
            # After the state file names it: a namespace is never made that a sweep or
            # `topology down` could not find.
            topology.network.create()
        _launch_all(topology, deadline, environments)
        topology.wait_ready(_left(deadline))
        topology.save_state()
    except BaseException:
        with contextlib.suppress(Exception):
            topology.stop()
        raise
    return topology


def _left(deadline: float) -> float:
    return max(1.0, deadline - time.monotonic())


def _plan_nodes(topology: Topology) -> None:
    spec = topology.spec
    guard = topology.guard

    def add(name: str, kind: str, shard: int | None) -> None:
        directory = topology.directory / name
        directory.mkdir(mode=0o755)
        config = directory / ("sentinel.conf" if kind == "sentinel" else "redis.conf")
        topology.nodes.append(
            Node(
                name=name,
                kind="sentinel" if kind == "sentinel" else "redis",
                port=0,
                directory=directory,
                config_path=config,
                shard=shard,
                guard=guard,
            )
        )

    for shard in range(spec.masters):
        add(f"master-{shard}", "redis", shard)
    for shard in range(spec.masters):
        for number in range(1, spec.replicas_per_master + 1):
            add(f"replica-{shard}-{number}", "redis", shard)
    for number in range(spec.sentinels):
        add(f"sentinel-{number}", "sentinel", None)
    if topology.network_mode == "namespace":
        topology.network.assign(topology.nodes)


def _assign_ports(topology: Topology, base_port: int | None) -> None:
    cluster = topology.layout == "cluster"
    count = len(topology.nodes)
    if base_port is not None:
        ports = reserve_ports(range(base_port, base_port + count), with_bus=cluster)
    else:
        ports = allocate_ports(count, with_bus=cluster)
    for node, port in zip(topology.nodes, ports, strict=True):
        node.port = port


def _launch_all(
    topology: Topology, deadline: float, environments: Mapping[str, Environment]
) -> None:
    spec = topology.spec
    masters = [n for n in topology.data_nodes if n.name.startswith("master-")]
    replicas = [n for n in topology.data_nodes if n.name.startswith("replica-")]

    if topology.layout == "cluster":
        _launch_group(
            topology,
            topology.data_nodes,
            _redis_conf_renderer(topology, {}),
            deadline,
            environments,
        )
        form_cluster(masters, replicas, _left(deadline))
        return

    _launch_group(topology, masters, _redis_conf_renderer(topology, {}), deadline, environments)
    if replicas:
        master_of = {r.name: masters[r.shard or 0] for r in replicas}
        _launch_group(
            topology, replicas, _redis_conf_renderer(topology, master_of), deadline, environments
        )
    if topology.layout in ("replication", "sentinel") and replicas:
        wait_until(
            lambda: check_replication(topology),
            timeout=_left(deadline),
            what=f"replication of {topology.kind} topology {topology.id}",
        )
    if spec.sentinels:
        ids = {s.name: secrets.token_hex(20) for s in topology.sentinels}
        _launch_group(
            topology,
            topology.sentinels,
            _sentinel_conf_renderer(topology, ids),
            deadline,
            environments,
        )


def _arm(topology: Topology) -> None:
    """Make the start's secrets (spec ``security``) and give every node its client
    options; nothing to do for an open topology."""
    if not topology.spec.security.enabled:
        return
    binary = getattr(topology.backend_impl, "binary", None)
    if topology.spec.security.tls and binary is not None and not supports_tls(binary.path):
        raise TopologyError(
            f"security tls: {binary.path} (redis-server {binary.version}) is not built with"
            " TLS; install Debian's redis-server, point REDISSON_PY_REDIS_SERVER at a TLS"
            " build, or use the container backend"
        )
    secrets = make_secrets(
        topology.spec.security, topology.directory, [n.host for n in topology.nodes]
    )
    topology.secrets = secrets
    options = secrets.client_options()
    tls_only = {k: v for k, v in options.items() if k.startswith("ssl")}
    for node in topology.nodes:
        node.tls = secrets.security.tls
        # Sentinels ask for no password: only the data nodes are protected.
        node.client_options = tls_only if node.kind == "sentinel" else options
    if secrets.environment():
        env_file = topology.directory / "secrets.env"
        env_file.touch(mode=0o600)
        env_file.write_text(
            "".join(f"export {k}={shlex.quote(v)}\n" for k, v in secrets.environment().items())
        )


def _redis_conf_renderer(
    topology: Topology, master_of: Mapping[str, Node]
) -> Callable[[Node], str]:
    def render(node: Node) -> str:
        master = master_of.get(node.name)
        text = render_redis_conf(
            topology.spec,
            port=node.port,
            directory=node.directory,
            replica_of=master.port if master is not None else None,
            hosts=_hosts(topology),
            in_namespace=topology.network_mode == "namespace",
        )
        if topology.secrets is None:
            return text
        lines = topology.secrets.redis_directives(
            port=node.port,
            cluster=topology.layout == "cluster",
            files=topology.secrets.copy_tls_to(node.directory),
        )
        return text + "".join(f"{line}\n" for line in lines)

    return render


def _sentinel_conf_renderer(topology: Topology, ids: Mapping[str, str]) -> Callable[[Node], str]:
    def render(node: Node) -> str:
        masters = [n for n in topology.data_nodes if n.name.startswith("master-")]
        return render_sentinel_conf(
            topology.spec,
            port=node.port,
            directory=node.directory,
            my_id=ids[node.name],
            master_port=masters[0].port,
            replica_ports=[n.port for n in topology.data_nodes if n is not masters[0]],
            peers=[(s.port, ids[s.name]) for s in topology.sentinels if s is not node],
            hosts=_hosts(topology),
            in_namespace=topology.network_mode == "namespace",
        ) + _sentinel_security(topology, node)

    return render


def _hosts(topology: Topology) -> dict[int, str]:
    return {node.port: node.host for node in topology.nodes}


def _sentinel_security(topology: Topology, node: Node) -> str:
    if topology.secrets is None:
        return ""
    assert topology.master_name is not None
    lines = topology.secrets.sentinel_directives(
        port=node.port,
        master_name=topology.master_name,
        files=topology.secrets.copy_tls_to(node.directory),
    )
    return "".join(f"{line}\n" for line in lines)


def _launch_group(
    topology: Topology,
    nodes: list[Node],
    render: Callable[[Node], str],
    deadline: float,
    environments: Mapping[str, Environment],
) -> None:
    """Launch ``nodes`` (rendering each config file; each with its extra variables from
    ``environments``, by node name) and wait until they all answer.

    The group is relaunched on fresh ports if one of them lost its port (see module doc):
    a group's configs may name each other's ports, so the whole group moves together.
    """
    backend = topology.backend_impl
    for attempt in range(_PORT_ATTEMPTS):
        for node in nodes:
            node.config_path.write_text(render(node))
            node.attach(backend.create(_plan(topology, node, environments.get(node.name, ()))))

        def start(node: Node) -> None:
            node.runtime.start()
            node.state = "running"

        if backend.parallel_launch and len(nodes) > 1:
            with ThreadPoolExecutor(max_workers=min(8, len(nodes))) as pool:
                for future in [pool.submit(start, n) for n in nodes]:
                    future.result()
        else:
            for node in nodes:
                start(node)
        topology.save_state()
        try:
            for node in nodes:
                node.wait_answering(_left(deadline))
            return
        except PortConflictError:
            if topology.explicit_ports or attempt == _PORT_ATTEMPTS - 1:
                raise
            for node in nodes:
                node.runtime.remove()
            cluster = topology.layout == "cluster"
            release_ports([n.port for n in nodes], with_bus=cluster)
            for node, port in zip(nodes, allocate_ports(len(nodes), with_bus=cluster), strict=True):
                node.port = port


def _plan(topology: Topology, node: Node, environment: Environment = ()) -> LaunchPlan:
    return LaunchPlan(
        topology_id=topology.id,
        node_name=node.name,
        kind=node.kind,
        port=node.port,
        directory=Path(node.directory),
        config_path=node.config_path,
        owner=topology.owner,
        detached=topology.detached,
        network_namespace=topology.network.name if topology.network_mode == "namespace" else None,
        environment=environment,
    )
