"""The container image the container backend runs.

Choice, first match wins:

1. ``REDISSON_PY_REDIS_IMAGE``, when set (pulled if it is not present);
2. ``redis:7``, when it is present locally or a registry answers (then it is pulled). Whether
   a registry answers is asked of the Docker engine once, bounded to a few seconds, and the
   answer is cached for an hour in the run root, so an offline machine pays for it once;
3. a local image built with ``docker import`` from the redis-server binary on this machine
   (the one the process backend would run) and the shared libraries ``ldd`` lists for it.
   It is tagged ``redisson-py/redis:<version>-<digest of the files>``, so building is a
   no-op when it exists and a changed binary gets a new image.

``python -m redisson_py.testing.backends.image build`` builds the local image (the setup script
runs it); ``python -m redisson_py.testing.backends.image`` prints the image that would be used.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import re
import subprocess
import sys
import tarfile
import threading
import time
from pathlib import Path
from typing import Any

from redisson_py.testing.backends.binaries import RedisServerBinary, find_redis_server
from redisson_py.testing.backends.docker_engine import docker_client, engine_location
from redisson_py.testing.errors import TopologyError
from redisson_py.testing.topologies.paths import run_root

__all__ = ["LOCAL_REPOSITORY", "ensure_local_image", "registry_answers", "resolve_image"]

ENV_VAR = "REDISSON_PY_REDIS_IMAGE"
OFFICIAL_IMAGE = "redis:7"
LOCAL_REPOSITORY = "redisson-py/redis"
_REGISTRY_CHECK_TTL = 3600.0
_REGISTRY_CHECK_TIMEOUT = 4

_lock = threading.Lock()
_resolved: dict[str, str] = {}


def resolve_image(client: Any | None = None) -> str:
    """The image to run, made present locally (pulled or built) before returning.

    Cached per engine for the life of the process. Raises
    [`TopologyError`][redisson_py.testing.TopologyError] when
    ``REDISSON_PY_REDIS_IMAGE`` names an image that is neither present nor pullable.
    """
    key = engine_location()
    with _lock:
        if key in _resolved:
            return _resolved[key]
        client = client or docker_client()
        image = _choose(client)
        _resolved[key] = image
        return image


def _choose(client: Any) -> str:
    wanted = os.environ.get(ENV_VAR)
    if wanted:
        if not _present(client, wanted):
            try:
                client.images.pull(wanted)
            except Exception:
                raise TopologyError(
                    f"{ENV_VAR} names the image {wanted!r}, which is not present and could "
                    "not be pulled; build or load it, or unset the variable."
                ) from None
        return wanted
    if _present(client, OFFICIAL_IMAGE):
        return OFFICIAL_IMAGE
    if registry_answers():
        try:
            client.images.pull(OFFICIAL_IMAGE)
            return OFFICIAL_IMAGE
        except Exception:
            pass  # the registry answered but the pull failed: fall back to a local build
    return ensure_local_image(client)


def _present(client: Any, image: str) -> bool:
    import docker.errors  # noqa: PLC0415 - optional dependency

    try:
        client.images.get(image)
    except docker.errors.ImageNotFound:
        return False
    return True


def registry_answers() -> bool:
    """Whether the engine can reach a registry holding ``redis:7`` (cached for an hour)."""
    cache = run_root() / "registry-check.json"
    try:
        cached = json.loads(cache.read_text())
        if (
            cached.get("engine") == engine_location()
            and time.time() - float(cached["checked"]) < _REGISTRY_CHECK_TTL
        ):
            return bool(cached["answered"])
    except (OSError, ValueError, KeyError, TypeError):
        pass
    import docker  # noqa: PLC0415

    quick = docker.from_env(timeout=_REGISTRY_CHECK_TIMEOUT)
    try:
        # The engine asks its configured registry for the manifest; nothing here names a
        # registry address, and a failure of any kind means "no registry".
        quick.images.get_registry_data(OFFICIAL_IMAGE)
        answered = True
    except Exception:
        answered = False
    finally:
        quick.close()
    with contextlib.suppress(OSError):
        cache.write_text(
            json.dumps({"engine": engine_location(), "answered": answered, "checked": time.time()})
        )
    return answered


def _shared_libraries(binary: Path) -> list[Path]:
    """The libraries the dynamic loader would map for ``binary`` (from ``ldd``)."""
    try:
        result = subprocess.run(
            ["ldd", str(binary)], capture_output=True, text=True, timeout=30, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise TopologyError(
            f"cannot run ldd on {binary} ({exc}); install libc-bin or set {ENV_VAR}."
        ) from None
    libraries: list[Path] = []
    for line in result.stdout.splitlines():
        # "libssl.so.3 => /lib/x86_64-linux-gnu/libssl.so.3 (0x...)" or
        # "/lib64/ld-linux-x86-64.so.2 (0x...)"; the vdso has no file.
        match = re.search(r"(?:=>\s*)?(/\S+)\s+\(0x", line)
        if match:
            libraries.append(Path(match.group(1)))
    if result.returncode != 0 and not libraries:
        # A static binary: ldd says "not a dynamic executable" and nothing is needed.
        return []
    return libraries


def _rootfs_tar(binary: RedisServerBinary, libraries: list[Path]) -> tuple[bytes, str]:
    """The image's root filesystem as a tar archive, and a digest of its contents."""
    digest = hashlib.sha256()
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for directory in ("tmp", "data", "usr", "usr/bin"):
            info = tarfile.TarInfo(directory)
            info.type = tarfile.DIRTYPE
            info.mode = 0o1777 if directory == "tmp" else 0o755
            tar.addfile(info)
        files = [(binary.path, "usr/bin/redis-server")]
        files += [(lib, str(lib).lstrip("/")) for lib in libraries]
        for source, name in files:
            # Follow symlinks (like cp -L): the archive holds the real bytes at the path
            # the loader will look for.
            data = source.resolve().read_bytes()
            digest.update(name.encode() + b"\0" + data)
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = 0o755
            tar.addfile(info, io.BytesIO(data))
        link = tarfile.TarInfo("usr/bin/redis-sentinel")
        link.type = tarfile.SYMTYPE
        link.linkname = "redis-server"
        tar.addfile(link)
    return buffer.getvalue(), digest.hexdigest()[:12]


def ensure_local_image(client: Any | None = None, binary: RedisServerBinary | None = None) -> str:
    """Build (or find) the local image from this machine's redis-server; return its tag.

    Idempotent: the tag carries a digest of the packed files, and an existing tag is
    reused without rebuilding. Raises
    [`TopologyError`][redisson_py.testing.TopologyError] if no redis-server is found.
    """
    client = client or docker_client()
    binary = binary or find_redis_server()
    archive, digest = _rootfs_tar(binary, _shared_libraries(binary.path))
    tag = f"{binary.version}-{digest}"
    name = f"{LOCAL_REPOSITORY}:{tag}"
    if _present(client, name):
        return name
    client.api.import_image_from_data(
        archive,
        repository=LOCAL_REPOSITORY,
        tag=tag,
        changes=['ENTRYPOINT ["/usr/bin/redis-server"]'],
    )
    if not _present(client, name):
        raise TopologyError(
            f"docker import did not produce the image {name}; see the engine's log."
        )
    return name


def main(argv: list[str] | None = None) -> int:
    """``python -m redisson_py.testing.backends.image [build|resolve]``."""
    args = sys.argv[1:] if argv is None else argv
    command = args[0] if args else "resolve"
    try:
        if command == "build":
            print(ensure_local_image())
        elif command == "resolve":
            print(resolve_image())
        else:
            print(f"unknown command {command!r}; use build or resolve.", file=sys.stderr)
            return 2
    except TopologyError as exc:
        print(f"redisson-py: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
