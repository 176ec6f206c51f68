"""Whether this machine can run topologies with ``network="namespace"`` (partitions).

They need: the process backend (the container backend leaves partitions out: its
containers share the host's network), root (network namespaces and iptables), ``ip``
and ``iptables`` (with ``iptables-restore``) that work inside a namespace, and a
redis-server of 7.0 or later (``bind-source-addr``, so a node's own connections leave
from its address).
"""

from __future__ import annotations

import functools
import os
import secrets
import shutil
import subprocess

from redisson_py.testing.backends.binaries import RedisServerBinary, find_redis_server
from redisson_py.testing.errors import TopologyError
from redisson_py.testing.network.namespace import NetworkNamespace

__all__ = [
    "MIN_REDIS_VERSION",
    "NetworkUnavailableError",
    "binary_reason",
    "partition_support",
    "require_partition_support",
]

MIN_REDIS_VERSION = (7, 0)
"""The first Redis with ``bind-source-addr``."""


class NetworkUnavailableError(TopologyError):
    """``network="namespace"`` cannot run here; the message says why, in one sentence."""


def partition_support(binary: RedisServerBinary | None = None) -> str | None:
    """None when topologies with ``network="namespace"`` can run here (on the process
    backend), else the reason they cannot, in one sentence (for ``pytest.skip``).

    ``binary`` is the redis-server to check (default: the one the process backend would
    run). The iptables check makes and deletes a scratch namespace once per process.
    """
    reason = _system_reason()
    if reason is not None:
        return reason
    try:
        binary = binary or find_redis_server()
    except TopologyError as exc:
        return f"network partitions need a redis-server: {exc}"
    return binary_reason(binary)


def binary_reason(binary: RedisServerBinary) -> str | None:
    """Why ``binary`` cannot run nodes in a namespace (older than 7.0), or None."""
    if binary.version_tuple[:2] >= MIN_REDIS_VERSION:
        return None
    return (
        f"network partitions need redis-server 7.0 or later (bind-source-addr); "
        f"{binary.path} is {binary.version}: install Debian's redis-server or point "
        "REDISSON_PY_REDIS_SERVER at a newer one."
    )


def require_partition_support(backend: str, binary: RedisServerBinary | None = None) -> None:
    """Raise [`NetworkUnavailableError`][redisson_py.testing.NetworkUnavailableError]
    unless ``network="namespace"`` can run on ``backend`` here."""
    if backend != "process":
        raise NetworkUnavailableError(
            f'network="namespace" needs the process backend, not {backend}: the container '
            "backend leaves partitions out (its containers share the host's network)."
        )
    reason = partition_support(binary)
    if reason is not None:
        raise NetworkUnavailableError(reason)


@functools.cache
def _system_reason() -> str | None:
    if not hasattr(os, "geteuid") or not os.path.isdir("/proc/self/ns"):
        return "network partitions need Linux network namespaces."
    if os.geteuid() != 0:
        return "network partitions need root (network namespaces and iptables)."
    for tool in ("ip", "iptables", "iptables-restore"):
        if shutil.which(tool) is None:
            package = "iproute2" if tool == "ip" else "iptables (scripts/setup-test-env does)"
            return f"network partitions need `{tool}` on PATH; install Debian's {package}."
    return _iptables_in_namespace_reason()


def _iptables_in_namespace_reason() -> str | None:
    """Add and flush a rule in a scratch namespace; the reason if that fails."""
    name = f"rpy-check-{os.getpid()}-{secrets.token_hex(3)}"
    try:
        namespace = NetworkNamespace.create(name)
    except (TopologyError, OSError) as exc:
        return f"network partitions need `ip netns add` to work: {exc}"
    try:
        namespace.run(
            ["iptables", "-A", "OUTPUT", "-s", "127.0.0.2", "-d", "127.0.0.3", "-j", "DROP"]
        )
        namespace.run(["iptables", "-F", "OUTPUT"])
    except (TopologyError, OSError, subprocess.SubprocessError) as exc:
        return f"network partitions need iptables to work inside a network namespace: {exc}"
    finally:
        namespace.delete()
    return None
