"""The interface both backends implement: launch a node, and act on it.

A *backend* turns a `LaunchPlan` (which node, which port, which config file) into a
`NodeRuntime`: the running thing, a process or a container, with the few
operations the harness needs. Everything above this interface (nodes, topologies,
failover) is the same for both backends.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

__all__ = ["Backend", "LaunchPlan", "NodeKind", "NodeRuntime", "Owner"]

NodeKind = Literal["redis", "sentinel"]


@dataclass(frozen=True)
class Owner:
    """The process that owns a topology, recorded so leftovers can be swept safely.

    ``start_time`` is the process's start time in clock ticks since boot (from
    ``/proc/<pid>/stat``), so a recycled pid is not mistaken for the owner.
    """

    pid: int
    start_time: int


@dataclass(frozen=True)
class LaunchPlan:
    """Everything a backend needs to start one node.

    The node's directory holds its config file and whatever Redis writes (``nodes.conf``
    for cluster nodes, the rewritten ``sentinel.conf``); the container backend mounts it at
    the same path so the config reads the same in both backends. ``detached`` nodes must
    outlive the process that started them. ``network_namespace`` names the ``ip netns``
    namespace the node runs in (process backend only; None: the host's network).
    ``environment`` is extra environment for the node's process, as (name, value) pairs
    added to this process's environment (process backend only; a tuple so the plan stays
    hashable), such as libfaketime's variables for a node whose clock a test moves.
    """

    topology_id: str
    node_name: str
    kind: NodeKind
    port: int
    directory: Path
    config_path: Path
    owner: Owner
    detached: bool = False
    network_namespace: str | None = None
    environment: tuple[tuple[str, str], ...] = ()


class NodeRuntime(Protocol):
    """One started node (process or container).

    ``start`` may be called again after ``kill``/``terminate`` and brings the node back
    with the same config file, directory and port. ``remove`` is final and idempotent.
    No method waits for Redis to answer; callers poll.
    """

    def start(self) -> None: ...

    def kill(self) -> None:
        """Stop at once, like a crash (SIGKILL); returns once the node is gone."""

    def terminate(self, timeout: float) -> None:
        """Stop cleanly (SIGTERM), then SIGKILL after ``timeout`` seconds."""

    def pause(self) -> None:
        """Freeze (SIGSTOP / cgroup freezer); returns once frozen."""

    def resume(self) -> None:
        """Thaw a frozen node; returns once it runs again."""

    def is_running(self) -> bool:
        """Whether the node exists and has not exited (a frozen node counts as running)."""

    def is_paused(self) -> bool: ...

    def exit_description(self) -> str | None:
        """How the node ended (``"exited with code 1"``), or None while it runs."""

    def log(self) -> str:
        """Everything the node has written to stdout/stderr, across restarts."""

    def remove(self) -> None:
        """Kill the node if needed and release what it holds (the container itself)."""

    def record(self) -> dict[str, Any]:
        """JSON-able facts that let another process find and stop this node."""


class Backend(Protocol):
    """A way of running nodes. ``name`` is ``"process"`` or ``"container"``.

    ``parallel_launch`` says whether several nodes may be launched from worker threads at
    once (containers: yes; processes: no, because a child's parent-death signal is tied to
    the thread that forked it).
    """

    name: str
    parallel_launch: bool

    def create(self, plan: LaunchPlan) -> NodeRuntime:
        """A runtime for ``plan``, not started yet."""

    def describe(self) -> str:
        """What runs the nodes, for messages (``"redis-server 7.0.15 at /usr/bin/..."``)."""

    def close(self) -> None: ...
