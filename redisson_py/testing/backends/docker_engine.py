"""Is there a Docker engine to talk to? Answered cheaply, without Testcontainers.

Used by the ``auto`` backend choice and by the pytest plugin before any container is
started. Needs the ``docker`` package (installed with the ``test`` extra, as a dependency
of Testcontainers); without it there is no engine as far as the harness is concerned.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

from redisson_py.testing.errors import TopologyError

__all__ = ["docker_client", "docker_engine_answers", "engine_location", "require_docker_engine"]

_DEFAULT_SOCKET = "/var/run/docker.sock"
_cache: dict[str, bool] = {}
_cache_lock = threading.Lock()


def engine_location() -> str:
    """Where the engine is looked for: ``DOCKER_HOST`` or the default socket."""
    return os.environ.get("DOCKER_HOST") or f"unix://{_DEFAULT_SOCKET}"


def docker_engine_answers(timeout: float = 3.0, *, refresh: bool = False) -> bool:
    """Whether a Docker engine answers a ping within ``timeout`` seconds.

    The answer is cached per engine location for the life of the process (pass
    ``refresh=True`` to ask again).
    """
    location = engine_location()
    with _cache_lock:
        if not refresh and location in _cache:
            return _cache[location]
    answers = _ping(timeout)
    with _cache_lock:
        _cache[location] = answers
    return answers


def _ping(timeout: float) -> bool:
    if "DOCKER_HOST" not in os.environ and not Path(_DEFAULT_SOCKET).exists():
        return False
    try:
        import docker  # noqa: PLC0415 - optional dependency, only needed here
    except ImportError:
        return False
    try:
        client = docker.from_env(timeout=max(1, int(timeout)))
        try:
            return bool(client.ping())
        finally:
            client.close()
    except Exception:  # any failure to reach the engine means "no engine"
        return False


def require_docker_engine() -> None:
    """Raise [`TopologyError`][redisson_py.testing.TopologyError] in one sentence when
    the container backend cannot run."""
    try:
        import docker  # noqa: F401, PLC0415
    except ImportError:
        raise TopologyError(
            "the container backend needs the docker and testcontainers packages; run "
            "`pip install 'redisson-py[test]'` or use the process backend."
        ) from None
    if not docker_engine_answers():
        raise TopologyError(
            f"the container backend needs a Docker engine and none answers at "
            f"{engine_location()}; start one (scripts/setup-test-env does) or use the "
            "process backend (--redis-backend=process, or --backend process on the CLI)."
        )


def docker_client(timeout: float = 60.0) -> Any:
    """A ``docker.DockerClient`` for the engine, after checking that one answers."""
    require_docker_engine()
    import docker  # noqa: PLC0415

    return docker.from_env(timeout=int(timeout))
