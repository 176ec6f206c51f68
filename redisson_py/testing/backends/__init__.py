"""Choosing and creating a backend by name: ``"process"``, ``"container"`` or ``"auto"``.

``auto`` means containers when a Docker engine answers, else processes. The container
backend module (and with it Testcontainers) is imported only when containers are chosen.
"""

from __future__ import annotations

from redisson_py.testing.backends.base import Backend, LaunchPlan, NodeRuntime, Owner
from redisson_py.testing.backends.docker_engine import docker_engine_answers, require_docker_engine
from redisson_py.testing.errors import TopologyError

__all__ = [
    "BACKENDS",
    "Backend",
    "LaunchPlan",
    "NodeRuntime",
    "Owner",
    "create_backend",
    "resolve_backend",
]

BACKENDS = ("container", "process", "auto")


def resolve_backend(name: str) -> str:
    """Turn ``"auto"`` into ``"container"`` or ``"process"``; check the name.

    Raises [`TopologyError`][redisson_py.testing.TopologyError] for an unknown name.
    Does not check that the chosen backend can run; `create_backend` does.
    """
    if name not in BACKENDS:
        raise TopologyError(f"unknown backend {name!r}; use one of: {', '.join(BACKENDS)}.")
    if name == "auto":
        return "container" if docker_engine_answers() else "process"
    return name


def create_backend(name: str) -> Backend:
    """A ready backend for ``name`` (``auto`` resolved first).

    Raises [`TopologyError`][redisson_py.testing.TopologyError] in one sentence when it
    cannot run here: no Docker engine for containers, no redis-server binary for
    processes.
    """
    resolved = resolve_backend(name)
    if resolved == "container":
        require_docker_engine()
        from redisson_py.testing.backends.container import ContainerBackend  # noqa: PLC0415

        return ContainerBackend()
    from redisson_py.testing.backends.process import ProcessBackend  # noqa: PLC0415

    return ProcessBackend()
